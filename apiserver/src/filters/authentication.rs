//! Who sent the request (kube's `WithAuthentication`): the configured
//! authenticators (`crate::authn`) name the user, who goes into the
//! request's extensions as an `Arc<UserInfo>`; the credential itself is
//! removed so nothing later can forward it. A request whose credential is
//! not recognized, or that has none when anonymous requests are off,
//! answers 401 `Unauthorized`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::authn::Authenticator;
use crate::errors::ApiError;

pub(super) async fn authenticate(
    State(authenticator): State<Arc<Authenticator>>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    match authenticator.authenticate(&parts).await {
        Ok(user) => {
            parts.headers.remove(AUTHORIZATION);
            parts.extensions.insert(user);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(failure) => {
            tracing::debug!(
                path = parts.uri.path(),
                message = failure.audit_message(),
                "unauthenticated request"
            );
            ApiError::Unauthorized.into_response()
        }
    }
}
