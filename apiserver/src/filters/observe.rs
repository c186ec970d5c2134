//! Counts and times every request (`/metrics`) and logs it at debug level.
//! The rest of the chain runs inside the request's metrics tracker, where
//! the layers and the handler note what kube's metrics are labelled by
//! (see `metrics::tracker`); the request is counted once answered, or,
//! for a watch, once its stream ends.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::metrics::Metrics;
use crate::metrics::labels::Incoming;
use crate::metrics::tracker;

pub(super) async fn observe(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let incoming = Incoming::of(&request);
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let (response, noted) = tracker::scope(metrics.requests.clone(), next.run(request)).await;
    let code = response.status().as_u16();
    let response = metrics.requests.answered(&incoming, noted, response, started);
    tracing::debug!(%method, path, code, elapsed_ms = started.elapsed().as_millis() as u64, "request");
    response
}
