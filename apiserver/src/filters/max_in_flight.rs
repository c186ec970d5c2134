//! kube's max-in-flight limits, when API Priority and Fairness is off: a
//! request beyond them answers 429 with Retry-After at once instead of
//! queueing; watches are not counted, and `system:masters` is never
//! refused.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tokio::sync::Semaphore;

use crate::metrics::tracker;
use crate::request::{RequestInfo, UserInfo};

/// kube's privileged group, which a full server still answers.
const MASTERS: &str = "system:masters";

/// The in-flight limits (kube's defaults: 400 read-only, 200 mutating);
/// 0 is no limit.
#[derive(Debug)]
pub struct Limits {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl Limits {
    pub fn new(read_only: usize, mutating: usize) -> Limits {
        let limit = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        Limits { read_only: limit(read_only), mutating: limit(mutating) }
    }
}

pub(super) async fn limit(State(limits): State<Arc<Limits>>, request: Request, next: Next) -> Response {
    let info = request.extensions().get::<RequestInfo>();
    if info.is_some_and(RequestInfo::is_long_running) {
        return next.run(request).await;
    }
    let mutating = !matches!(info.map(RequestInfo::verb), Some("get" | "list" | "watch") | None);
    let semaphore = if mutating { &limits.mutating } else { &limits.read_only };
    let Some(semaphore) = semaphore else { return next.run(request).await };
    match semaphore.clone().try_acquire_owned() {
        Ok(_permit) => {
            let _executing = tracker::executing(mutating);
            next.run(request).await
        }
        Err(_) if is_master(&request) => next.run(request).await,
        Err(_) => {
            tracker::dropped();
            super::too_many_requests(1)
        }
    }
}

fn is_master(request: &Request) -> bool {
    request.extensions().get::<Arc<UserInfo>>().is_some_and(|user| user.groups.iter().any(|g| g == MASTERS))
}
