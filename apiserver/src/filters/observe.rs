//! Counts and times every request (`/metrics`) and logs it at debug level.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::metrics::Metrics;
use crate::request::RequestInfo;

pub(super) async fn observe(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let info = request.extensions().get::<RequestInfo>().cloned();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let code = response.status().as_u16();
    if let Some(info) = &info {
        metrics.observe(info, code, started.elapsed());
    }
    tracing::debug!(%method, path, code, elapsed_ms = started.elapsed().as_millis() as u64, "request");
    response
}
