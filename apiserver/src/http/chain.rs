//! The handler chain, outermost first, in kube-apiserver's order
//! (`DefaultBuildHandlerChain`):
//!
//! 1. panic recovery: a panicking handler answers 500, the server goes on;
//! 2. request info: what the request is about, for everything below;
//! 3. metrics and request logging;
//! 4. authentication, audit, impersonation: a later issue's layers go here;
//! 5. max in flight: 429 beyond `--max-requests-inflight` /
//!    `--max-mutating-requests-inflight` (watches are not counted);
//! 6. authorization: a later issue's layer goes here;
//! 7. the dispatcher (admission runs inside the registry's writes).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use tokio::sync::Semaphore;

use super::SharedApp;
use super::request_info::RequestInfo;
use crate::errors::ApiError;

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

pub fn build(dispatcher: Router, app: SharedApp) -> Router {
    dispatcher
        // Innermost first: each layer wraps the ones added before it.
        .layer(middleware::from_fn_with_state(app.clone(), max_in_flight))
        .layer(middleware::from_fn_with_state(app.clone(), observe))
        .layer(middleware::from_fn(request_info))
        .layer(middleware::from_fn(recover_panics))
}

async fn recover_panics(request: Request, next: Next) -> Response {
    match std::panic::AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(_) => {
            tracing::error!("a request handler panicked");
            ApiError::Internal("the server could not handle the request".into()).into_response()
        }
    }
}

async fn request_info(mut request: Request, next: Next) -> Response {
    let watch = request
        .uri()
        .query()
        .map(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"))
        .unwrap_or(false);
    let info = RequestInfo::parse(request.method(), request.uri().path(), watch);
    request.extensions_mut().insert(info);
    next.run(request).await
}

async fn observe(State(app): State<SharedApp>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let info = request.extensions().get::<RequestInfo>().cloned();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let code = response.status().as_u16();
    if let Some(info) = &info {
        app.metrics.observe(info, code, started.elapsed());
    }
    tracing::debug!(%method, path, code, elapsed_ms = started.elapsed().as_millis() as u64, "request");
    response
}

async fn max_in_flight(State(app): State<SharedApp>, request: Request, next: Next) -> Response {
    let info = request.extensions().get::<RequestInfo>();
    if info.is_some_and(RequestInfo::is_long_running) {
        return next.run(request).await;
    }
    let mutating = !matches!(info.map(RequestInfo::verb), Some("get" | "list" | "watch") | None);
    let semaphore = if mutating { &app.limits.mutating } else { &app.limits.read_only };
    match semaphore.clone().try_acquire_owned() {
        Ok(_permit) => next.run(request).await,
        Err(_) => ApiError::TooManyRequests.into_response(),
    }
}
