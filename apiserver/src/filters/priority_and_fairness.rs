//! kube's API Priority and Fairness filter, its classifying half: each
//! request (after impersonation, so as the user it acts as) is classified
//! by the FlowSchemas, and its response carries kube's headers naming the
//! schema and priority level by uid. Seats and queues are not built yet.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

use crate::flowcontrol::FlowControl;
use crate::request::{RequestInfo, UserInfo};

const SCHEMA_HEADER: &str = "X-Kubernetes-PF-FlowSchema-UID";
const LEVEL_HEADER: &str = "X-Kubernetes-PF-PriorityLevel-UID";

pub(super) async fn classify(
    State(flow_control): State<Arc<FlowControl>>,
    request: Request,
    next: Next,
) -> Response {
    let extensions = request.extensions();
    let classification = match (extensions.get::<Arc<UserInfo>>(), extensions.get::<RequestInfo>()) {
        (Some(user), Some(info)) => flow_control.classify(user, info),
        _ => None,
    };
    let mut response = next.run(request).await;
    if let Some(classification) = classification {
        let headers = response.headers_mut();
        for (name, uid) in
            [(SCHEMA_HEADER, classification.schema_uid), (LEVEL_HEADER, classification.level_uid)]
        {
            if let Ok(value) = HeaderValue::from_str(&uid) {
                headers.insert(name, value);
            }
        }
    }
    response
}
