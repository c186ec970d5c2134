//! A handler that panics answers 500; the server and its other requests go
//! on (kube's `WithPanicRecovery`).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;

use crate::errors::ApiError;

pub(super) async fn recover_panics(request: Request, next: Next) -> Response {
    match std::panic::AssertUnwindSafe(next.run(request)).catch_unwind().await {
        Ok(response) => response,
        Err(_) => {
            tracing::error!("a request handler panicked");
            ApiError::Internal("the server could not handle the request".into()).into_response()
        }
    }
}
