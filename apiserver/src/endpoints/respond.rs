//! Response bodies: objects, lists and Tables as JSON, errors as
//! `metav1.Status` with their HTTP code, and kube's `Warning` headers.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::cacher::ListResult;
use crate::errors::ApiError;
use crate::registry::{Resource, Store};

pub const JSON: &str = "application/json";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = json_response(code, &self.status());
        // client-go backs off and retries only when this header is there.
        if let Some(seconds) = self.retry_after() {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

pub fn json_response(code: StatusCode, body: &Value) -> Response {
    json_bytes(code, serde_json::to_vec(body).unwrap_or_default(), JSON)
}

pub fn json_bytes(code: StatusCode, body: Vec<u8>, content_type: &str) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

/// Adds one `Warning: 299 - "<text>"` header per warning, as kube does.
pub fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for warning in warnings {
        let text = format!("299 - \"{}\"", warning.replace('\\', "\\\\").replace('"', "\\\""));
        if let Ok(value) = HeaderValue::from_str(&text) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// How the client wants objects: as themselves, or as a Table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Object,
    /// `includeObject`: None, Metadata (default) or Object.
    Table(IncludeObject),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

impl Shape {
    pub fn negotiate(accept: &str, include_object: Option<&str>) -> Result<Shape, ApiError> {
        let wants_table = accept.split(',').any(|media| {
            let params: Vec<&str> = media.split(';').map(str::trim).collect();
            params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io")
        });
        if !wants_table {
            return Ok(Shape::Object);
        }
        let include = match include_object {
            None | Some("") | Some("Metadata") => IncludeObject::Metadata,
            Some("None") => IncludeObject::None,
            Some("Object") => IncludeObject::Object,
            Some(other) => {
                return Err(ApiError::BadRequest(format!(
                    "includeObject: Unsupported value: \"{other}\": supported values: \"Metadata\", \"None\", \"Object\""
                )));
            }
        };
        Ok(Shape::Table(include))
    }
}

/// A list response in the resource's List kind.
pub fn list_body(resource: &Resource, list: ListResult) -> Value {
    let mut meta = json!({"resourceVersion": list.resource_version.to_string()});
    if let Some(token) = list.continue_token {
        meta["continue"] = json!(token);
    }
    if let Some(remaining) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(remaining);
    }
    json!({"kind": resource.list_kind(), "apiVersion": resource.api_version(), "metadata": meta, "items": list.items})
}

/// A Table of `objects`; `headers` false leaves out the column
/// definitions (watch events after the first).
pub fn table_body(
    store: &Store,
    objects: &[Value],
    list_meta: Value,
    include: IncludeObject,
    headers: bool,
) -> Value {
    let now = jiff::Timestamp::now().as_second();
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let mut row = json!({"cells": store.strategy().table_cells(object, now)});
            match include {
                IncludeObject::None => {}
                IncludeObject::Metadata => {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": object["metadata"],
                    });
                }
                IncludeObject::Object => row["object"] = object.clone(),
            }
            row
        })
        .collect();
    let mut body =
        json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "rows": rows});
    if headers {
        body["columnDefinitions"] = json!(store.strategy().table_columns());
    }
    body
}

/// The body for one object in the shape the client asked for.
pub fn object_body(store: &Store, object: Value, shape: Shape) -> Value {
    match shape {
        Shape::Object => object,
        Shape::Table(include) => {
            let meta = json!({"resourceVersion": object["metadata"]["resourceVersion"]});
            table_body(store, &[object], meta, include, true)
        }
    }
}

/// kube's answer to a delete that removed the object at once.
pub fn deleted_status(resource: &Resource, object: &Value) -> Value {
    let meta = &object["metadata"];
    let mut details = json!({"name": meta["name"], "kind": resource.plural, "uid": meta["uid"]});
    if !resource.group.is_empty() {
        details["group"] = json!(resource.group);
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}
