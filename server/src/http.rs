//! The HTTP endpoints etcd serves on its client port beside gRPC: `/health`,
//! `/version` and `/metrics` (Prometheus text, etcd's metric names), and
//! etcd's answer for paths nothing serves.

use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use rtcd_proto::etcdserverpb::RangeRequest;

use crate::node::Node;
use crate::version::ETCD_COMPAT_VERSION;

pub fn routes(node: Arc<Node>) -> Router {
    let (h, m) = (node.clone(), node);
    Router::new()
        .route("/health", get(move || health(h.clone())))
        .route("/version", get(version))
        .route("/metrics", get(move || metrics(m.clone())))
}

/// What a path nothing serves gets, as etcd answers it: a gRPC client gets
/// gRPC's Unimplemented; under the gateway's prefixes, grpc-gateway's 404
/// (`Not Found`); anywhere else, Go's (`404 page not found`).
pub async fn not_found(request: axum::extract::Request) -> axum::response::Response {
    let grpc = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| t.starts_with("application/grpc"));
    if grpc {
        let (parts, ()) = tonic::Status::unimplemented("").into_http::<()>().into_parts();
        return axum::response::Response::from_parts(parts, axum::body::Body::empty());
    }
    let path = request.uri().path();
    let text = match path.starts_with("/v3/") || path.starts_with("/v3beta/") {
        true => "Not Found\n",
        false => "404 page not found\n",
    };
    let headers =
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::X_CONTENT_TYPE_OPTIONS, "nosniff")];
    (StatusCode::NOT_FOUND, headers, text).into_response()
}

fn json(status: StatusCode, body: String) -> impl IntoResponse {
    (status, [(header::CONTENT_TYPE, "application/json")], body)
}

/// Healthy when a read of the store succeeds, as etcd's check does a read.
async fn health(node: Arc<Node>) -> impl IntoResponse {
    let probe = RangeRequest { key: Bytes::from_static(b"health"), ..Default::default() };
    let read = node.store().range(&probe);
    node.metrics().health_checked(read.is_ok());
    match read {
        Ok(_) => json(StatusCode::OK, r#"{"health":"true","reason":""}"#.to_string()),
        Err(e) => json(StatusCode::SERVICE_UNAVAILABLE, format!(r#"{{"health":"false","reason":"{e}"}}"#)),
    }
}

async fn version() -> impl IntoResponse {
    json(StatusCode::OK, format!(r#"{{"etcdserver":"{ETCD_COMPAT_VERSION}","etcdcluster":"3.5.0"}}"#))
}

async fn metrics(node: Arc<Node>) -> impl IntoResponse {
    let page = {
        let _scrape = node.metrics().scrape();
        crate::metrics_page::render(&node)
    };
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], page)
}
