//! Reads what a request is about once, for every later layer and the
//! handler (kube's `WithRequestInfo`).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use crate::request::RequestInfo;

pub(super) async fn request_info(mut request: Request, next: Next) -> Response {
    let watch = request
        .uri()
        .query()
        .map(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"))
        .unwrap_or(false);
    let info = RequestInfo::parse(request.method(), request.uri().path(), watch);
    request.extensions_mut().insert(info);
    next.run(request).await
}
