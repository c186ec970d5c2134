//! kube's max-in-flight limits: a request beyond them answers 429 with
//! Retry-After at once instead of queueing; watches are not counted.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::Semaphore;

use crate::errors::ApiError;
use crate::request::RequestInfo;

/// The in-flight limits (kube's defaults: 400 read-only, 200 mutating).
#[derive(Debug)]
pub struct Limits {
    read_only: Arc<Semaphore>,
    mutating: Arc<Semaphore>,
}

impl Limits {
    pub fn new(read_only: usize, mutating: usize) -> Limits {
        Limits {
            read_only: Arc::new(Semaphore::new(read_only)),
            mutating: Arc::new(Semaphore::new(mutating)),
        }
    }
}

pub(super) async fn limit(State(limits): State<Arc<Limits>>, request: Request, next: Next) -> Response {
    let info = request.extensions().get::<RequestInfo>();
    if info.is_some_and(RequestInfo::is_long_running) {
        return next.run(request).await;
    }
    let mutating = !matches!(info.map(RequestInfo::verb), Some("get" | "list" | "watch") | None);
    let semaphore = if mutating { &limits.mutating } else { &limits.read_only };
    match semaphore.clone().try_acquire_owned() {
        Ok(_permit) => next.run(request).await,
        Err(_) => ApiError::TooManyRequests.into_response(),
    }
}
