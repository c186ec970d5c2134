//! The handler chain, outermost first, in kube-apiserver's order
//! (`DefaultBuildHandlerChain`), one file per layer:
//!
//! 1. `audit_init`: the request's audit ID, echoed as `Audit-Id`;
//! 2. `panic_recovery`: a panicking handler answers 500, the server goes on;
//! 3. `request_info`: what the request is about, for everything below;
//! 4. `observe`: metrics (the rest of the chain runs in the request's
//!    metrics tracker) and request logging;
//! 5. `timeout`: kube's 504 for what is not long-running and outlives its
//!    deadline (`--request-timeout`, or the `timeout` parameter if shorter);
//! 6. `authentication`: who sent it (an `Arc<UserInfo>` in the extensions),
//!    or 401 (audited);
//! 7. `audit`: the request's events, when the policy selects it;
//! 8. `impersonation`: acting as another user, if allowed to;
//! 9. `priority_and_fairness`: API Priority and Fairness, each request
//!    waiting for seats at its priority level or refused with 429; with
//!    `--enable-priority-and-fairness=false`, `max_in_flight` instead: 429
//!    beyond `--max-requests-inflight` / `--max-mutating-requests-inflight`
//!    (watches are not counted);
//! 10. `authorization`: 403 unless an authorizer allows the request, before
//!     it is routed;
//! 11. the handler (admission runs inside the registry's writes).
//!
//! [`UserInfo`]: crate::request::UserInfo

mod audit;
mod audit_init;
mod authentication;
mod authorization;
mod impersonation;
mod max_in_flight;
mod observe;
mod panic_recovery;
mod priority_and_fairness;
mod request_info;
mod timeout;

use std::sync::Arc;

use axum::Router;
use axum::middleware;

pub use max_in_flight::Limits;

use crate::audit::Auditor;
use crate::authn::Authenticator;
use crate::authz::Union;
use crate::metrics::Metrics;
use authentication::AuthenticationState;

/// What the layers share.
#[derive(Debug, Clone)]
pub struct FilterState {
    pub metrics: Arc<Metrics>,
    pub limits: Arc<Limits>,
    pub authenticator: Arc<Authenticator>,
    pub authorizer: Arc<Union>,
    /// None: nothing is audited.
    pub auditor: Option<Arc<Auditor>>,
    /// `--request-timeout`.
    pub request_timeout: std::time::Duration,
    /// API Priority and Fairness, unless `--enable-priority-and-fairness=false`.
    pub flow_control: Option<Arc<crate::flowcontrol::FlowControl>>,
}

/// Wraps `handler` in the chain.
pub fn build(handler: Router, state: FilterState) -> Router {
    // Innermost first: each layer wraps the ones added before it.
    let handler =
        handler.layer(middleware::from_fn_with_state(state.authorizer.clone(), authorization::authorize));
    let handler = match &state.flow_control {
        Some(flow_control) => handler.layer(middleware::from_fn_with_state(
            flow_control.clone(),
            priority_and_fairness::priority_and_fairness,
        )),
        None => handler.layer(middleware::from_fn_with_state(state.limits.clone(), max_in_flight::limit)),
    };
    let handler =
        handler.layer(middleware::from_fn_with_state(state.authorizer.clone(), impersonation::impersonate));
    let handler = match &state.auditor {
        Some(auditor) => handler.layer(middleware::from_fn_with_state(auditor.clone(), audit::audit)),
        None => handler,
    };
    let authentication = AuthenticationState {
        authenticator: state.authenticator.clone(),
        auditor: state.auditor.clone(),
        metrics: state.metrics.authn.clone(),
    };
    handler
        .layer(middleware::from_fn_with_state(authentication, authentication::authenticate))
        .layer(middleware::from_fn_with_state(state.request_timeout, timeout::timeout))
        .layer(middleware::from_fn_with_state(state.metrics.clone(), observe::observe))
        .layer(middleware::from_fn(request_info::request_info))
        .layer(middleware::from_fn(panic_recovery::recover_panics))
        .layer(middleware::from_fn(audit_init::audit_init))
}

/// kube's refusal of a request the server has no room for (plain text,
/// not a Status), and when to try again.
fn too_many_requests(retry_after: u64) -> axum::response::Response {
    use axum::http::{HeaderValue, StatusCode, header};
    let text = "Too many requests, please try again later.";
    let mut response = crate::endpoints::respond::go_http_error(StatusCode::TOO_MANY_REQUESTS, text);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    response
}
