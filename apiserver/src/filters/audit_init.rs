//! Every request gets an audit ID (kube's `WithAuditInit`): the client's
//! `Audit-ID` header kept as sent, or a new UUID; it goes with the request
//! (`audit::AuditId`) and back in the response's `Audit-Id` header, so a
//! client can find its request in the audit log.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

use crate::audit::AuditId;

const HEADER: &str = "audit-id";

pub(super) async fn audit_init(mut request: Request, next: Next) -> Response {
    let id: Arc<str> =
        match request.headers().get(HEADER).and_then(|v| v.to_str().ok()).filter(|v| !v.is_empty()) {
            Some(given) => given.into(),
            None => uuid::Uuid::new_v4().to_string().into(),
        };
    request.extensions_mut().insert(AuditId(id.clone()));
    let mut response = next.run(request).await;
    if !response.headers().contains_key(HEADER)
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(HEADER, value);
    }
    response
}
