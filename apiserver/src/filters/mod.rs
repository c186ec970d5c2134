//! The handler chain, outermost first, in kube-apiserver's order
//! (`DefaultBuildHandlerChain`), one file per layer:
//!
//! 1. `panic_recovery`: a panicking handler answers 500, the server goes on;
//! 2. `request_info`: what the request is about, for everything below;
//! 3. `observe`: metrics and request logging;
//! 4. `authentication`: who sent it (an `Arc<UserInfo>` in the extensions),
//!    or 401;
//! 5. `impersonation`: acting as another user, if allowed to;
//! 6. `max_in_flight`: 429 beyond `--max-requests-inflight` /
//!    `--max-mutating-requests-inflight` (watches are not counted);
//! 7. `authorization`: 403 unless an authorizer allows the request, before
//!    it is routed;
//! 8. the handler (admission runs inside the registry's writes).
//!
//! [`UserInfo`]: crate::request::UserInfo

mod authentication;
mod authorization;
mod impersonation;
mod max_in_flight;
mod observe;
mod panic_recovery;
mod request_info;

use std::sync::Arc;

use axum::Router;
use axum::middleware;

pub use max_in_flight::Limits;

use crate::authn::Authenticator;
use crate::authz::Union;
use crate::metrics::Metrics;

/// What the layers share.
#[derive(Debug, Clone)]
pub struct FilterState {
    pub metrics: Arc<Metrics>,
    pub limits: Arc<Limits>,
    pub authenticator: Arc<Authenticator>,
    pub authorizer: Arc<Union>,
}

/// Wraps `handler` in the chain.
pub fn build(handler: Router, state: FilterState) -> Router {
    handler
        // Innermost first: each layer wraps the ones added before it.
        .layer(middleware::from_fn_with_state(state.authorizer.clone(), authorization::authorize))
        .layer(middleware::from_fn_with_state(state.limits.clone(), max_in_flight::limit))
        .layer(middleware::from_fn_with_state(state.authorizer.clone(), impersonation::impersonate))
        .layer(middleware::from_fn_with_state(state.authenticator.clone(), authentication::authenticate))
        .layer(middleware::from_fn_with_state(state.metrics.clone(), observe::observe))
        .layer(middleware::from_fn(request_info::request_info))
        .layer(middleware::from_fn(panic_recovery::recover_panics))
}
