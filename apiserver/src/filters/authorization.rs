//! May the user do this? (kube's `WithAuthorization`): the authorizers'
//! union decides before the request is routed, so a user without a grant
//! gets 403 even for a path that does not exist.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::audit::AuditContext;
use crate::authz::{Attributes, Decision, Union};

/// The audit annotations kube's authorization filter adds.
const DECISION: &str = "authorization.k8s.io/decision";
const REASON: &str = "authorization.k8s.io/reason";
use crate::errors::ApiError;
use crate::request::{RequestInfo, UserInfo};

pub(super) async fn authorize(
    State(authorizer): State<Arc<Union>>,
    request: Request,
    next: Next,
) -> Response {
    let (Some(info), Some(user)) =
        (request.extensions().get::<RequestInfo>(), request.extensions().get::<Arc<UserInfo>>())
    else {
        return ApiError::Internal("the request reached authorization without its user".into())
            .into_response();
    };
    let attributes = Attributes::of_request(user.clone(), info);
    let (decision, reason) = authorizer.authorize(&attributes);
    if let Some(audit) = request.extensions().get::<AuditContext>() {
        audit.annotate(DECISION, if decision == Decision::Allow { "allow" } else { "forbid" });
        audit.annotate(REASON, reason.clone());
    }
    match decision {
        Decision::Allow => next.run(request).await,
        _ => attributes.forbidden(&reason).into_response(),
    }
}
