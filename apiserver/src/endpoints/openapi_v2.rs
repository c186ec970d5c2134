//! `GET /openapi/v2`: the Swagger 2.0 document in JSON or in gnostic protobuf, as kube-openapi's
//! handler serves it: the first media type of the client's `Accept` that it has (`*/*` and
//! `application/*` get JSON), 406 when there is none; one ETag for both encodings (so `Vary:
//! Accept`), and 304 to a request whose `If-None-Match` holds it.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::negotiate::preferred_media_types;
use crate::openapi::OpenApiDocs;

/// What kube answers protobuf with, whichever of its two names the client asked for.
const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/// The name client-go asks for.
const PROTOBUF_DEPRECATED: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const JSON: &str = "application/json";

#[derive(Clone, Copy)]
enum Encoding {
    Json,
    Protobuf,
}

pub(super) fn serve(docs: &OpenApiDocs, headers: &HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let Some(encoding) = preferred_media_types(accept).iter().find_map(|t| encoding_for(t)) else {
        return with_vary(empty(StatusCode::NOT_ACCEPTABLE));
    };
    let doc = docs.swagger();
    let etag = format!("\"{}\"", doc.etag);
    let mut response = if none_match(headers, &etag) {
        let (body, content_type) = match encoding {
            Encoding::Json => (doc.json.clone(), JSON),
            Encoding::Protobuf => (doc.protobuf.clone(), PROTOBUF),
        };
        let mut response = Response::new(Body::from(body));
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        response
    } else {
        empty(StatusCode::NOT_MODIFIED)
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    with_vary(response)
}

/// The encoding a media type (or range) of `Accept` gets.
fn encoding_for(media_type: &str) -> Option<Encoding> {
    match media_type {
        "*/*" | "application/*" | JSON => Some(Encoding::Json),
        PROTOBUF | PROTOBUF_DEPRECATED => Some(Encoding::Protobuf),
        _ => None,
    }
}

/// False when `If-None-Match` names `etag` (weakly, as HTTP compares for GET) or is `*`.
fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    let Some(listed) = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    !listed.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag)
}

fn empty(code: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

fn with_vary(mut response: Response) -> Response {
    response.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}
