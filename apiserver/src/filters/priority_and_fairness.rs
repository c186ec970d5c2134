//! kube's API Priority and Fairness filter (`WithPriorityAndFairness`):
//! each request (after impersonation, so as the user it acts as) is
//! classified by the FlowSchemas and waits for its seats at its priority
//! level; a refused one gets kube's 429 with `Retry-After`. Every response
//! names the schema and level by uid. A watch holds its seats only until
//! its handler has answered (its initial events are computed by then).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

use crate::flowcontrol::FlowControl;
use crate::metrics::tracker;
use crate::request::{RequestInfo, UserInfo, deadline};

const SCHEMA_HEADER: &str = "X-Kubernetes-PF-FlowSchema-UID";
const LEVEL_HEADER: &str = "X-Kubernetes-PF-PriorityLevel-UID";

pub(super) async fn priority_and_fairness(
    State(flow_control): State<Arc<FlowControl>>,
    request: Request,
    next: Next,
) -> Response {
    let extensions = request.extensions();
    let (Some(user), Some(info)) = (extensions.get::<Arc<UserInfo>>(), extensions.get::<RequestInfo>())
    else {
        return next.run(request).await;
    };
    // Before the configuration is first read, nothing is limited.
    let Some(classification) = flow_control.classify(user, info) else {
        return next.run(request).await;
    };
    // kube's in-flight watermark: mutating unless the verb reads.
    let mutating = !matches!(info.verb(), "get" | "list" | "watch");
    let queued = Instant::now();
    let admitted =
        flow_control.admit(&classification, (info, request.uri(), user), deadline::current()).await;
    tracker::waited_in_queue(queued.elapsed());
    let mut response = match admitted {
        Ok(admission) => {
            let executing = tracker::executing(mutating);
            let response = next.run(request).await;
            drop(executing);
            drop(admission);
            response
        }
        Err(refused) => {
            tracker::dropped();
            super::too_many_requests(refused.retry_after)
        }
    };
    let headers = response.headers_mut();
    for (name, uid) in [(SCHEMA_HEADER, classification.schema_uid), (LEVEL_HEADER, classification.level_uid)]
    {
        if let Ok(value) = HeaderValue::from_str(&uid) {
            headers.insert(name, value);
        }
    }
    response
}
