//! Who sent the request (kube's `WithAuthentication`): the configured
//! authenticators (`crate::authn`) name the user, who goes into the
//! request's extensions as an `Arc<UserInfo>`; the credential itself is
//! removed so nothing later can forward it. A request whose credential is
//! not recognized, or that has none when anonymous requests are off,
//! answers 401 `Unauthorized`.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::audit::{AuditId, Auditor};
use crate::authn::Authenticator;
use crate::errors::ApiError;
use crate::metrics::authn::{Attempt, AuthnMetrics};
use crate::request::RequestInfo;

/// The authenticators, and the auditor that records a 401 (the audit
/// filter, further in, never sees one).
#[derive(Debug, Clone)]
pub struct AuthenticationState {
    pub authenticator: Arc<Authenticator>,
    pub auditor: Option<Arc<Auditor>>,
    /// Attempts by result (kube's `authentication_attempts`).
    pub metrics: Arc<AuthnMetrics>,
}

pub(super) async fn authenticate(
    State(state): State<AuthenticationState>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let started = Instant::now();
    let authenticated = state.authenticator.authenticate(&parts).await;
    let attempt = match &authenticated {
        Ok(user) => Attempt::Success { user: &user.name },
        // A credential presented and refused is kube's authenticator error;
        // none at all (anonymous requests off), its failure.
        Err(failure) if failure.attempted.is_empty() => Attempt::Failure,
        Err(_) => Attempt::Error,
    };
    state.metrics.attempt(attempt, started.elapsed());
    match authenticated {
        Ok(user) => {
            parts.headers.remove(AUTHORIZATION);
            parts.extensions.insert(user);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(failure) => {
            let message = failure.audit_message();
            tracing::debug!(path = parts.uri.path(), message, "unauthenticated request");
            if let (Some(auditor), Some(info)) = (&state.auditor, parts.extensions.get::<RequestInfo>()) {
                let id = parts.extensions.get::<AuditId>().map(|id| id.0.to_string()).unwrap_or_default();
                auditor.failed_authentication(&parts, info, &id, &message);
            }
            ApiError::Unauthorized.into_response()
        }
    }
}
