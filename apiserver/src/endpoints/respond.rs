//! Response bodies: objects, lists, Tables and metadata in the encoding
//! negotiated (JSON, or protobuf for the kinds that have it), errors as
//! `metav1.Status` with their HTTP code, and kube's `Warning` headers.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::negotiate::{Encoding, IncludeObject, Shape};
use crate::cacher::{CachedObject, ListResult};
use crate::errors::ApiError;
use crate::protobuf::{self, encode};
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

/// Go's `http.Error`, which kube answers with where there is no Status
/// (429 from flow control, 503 for an unreachable extension server):
/// plain text and a newline, not to be sniffed.
pub fn go_http_error(code: StatusCode, text: &str) -> Response {
    let mut response = Response::new(Body::from(format!("{text}\n")));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// `body` as kube writes JSON: its shared structs in Go's field order, a newline at the end.
pub fn json_response(code: StatusCode, body: &Value) -> Response {
    json_bytes(code, crate::runtime::json_order::to_vec(body), JSON)
}

/// An answer in the encoding negotiated. A body protobuf cannot carry (a
/// custom resource, a Table) is written in JSON, which every client that
/// asks for protobuf also accepts.
pub fn answer(code: StatusCode, body: &Value, encoding: Encoding) -> Response {
    if encoding == Encoding::Protobuf
        && let Ok(bytes) = encode::body(body)
    {
        return json_bytes(code, bytes, protobuf::PROTOBUF);
    }
    json_response(code, body)
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

/// A list response in the shape asked for: the resource's List kind, a
/// Table, or a PartialObjectMetadataList.
pub fn list_body(store: &Store, list: ListResult, shape: Shape) -> Value {
    let resource = store.resource();
    let meta = list_meta(&list);
    match shape {
        Shape::Object => {
            let api_version = resource.api_version();
            // kube's lists of built-in kinds carry their items without kind
            // and apiVersion (the list says them); custom resources' items
            // keep theirs, as kube's do.
            let mut items = list.items;
            if encode::supports(&api_version, &resource.kind) {
                for item in items.iter_mut().filter_map(Value::as_object_mut) {
                    item.remove("kind");
                    item.remove("apiVersion");
                }
            }
            json!({"kind": resource.list_kind(), "apiVersion": api_version, "metadata": meta, "items": items})
        }
        Shape::Table(include) => table_body(store, &list.items, meta, include, true),
        Shape::Metadata => json!({
            "kind": "PartialObjectMetadataList",
            "apiVersion": META_API_VERSION,
            "metadata": meta,
            "items": list.items.iter().map(partial_metadata).collect::<Vec<_>>(),
        }),
    }
}

/// A list served from the watch cache, in JSON, written from the bytes the
/// cache holds (what `list_body` and `json_response` would write, without
/// decoding and encoding every object again); None where an object cannot
/// be written so.
pub fn cached_list_json(
    store: &Store,
    objects: &[Arc<CachedObject>],
    resource_version: i64,
) -> Option<Vec<u8>> {
    let resource = store.resource();
    let api_version = resource.api_version();
    let untyped = encode::supports(&api_version, &resource.kind);
    let list =
        ListResult { items: Vec::new(), resource_version, continue_token: None, remaining_item_count: None };
    let frame = json!({"kind": resource.list_kind(), "apiVersion": api_version, "metadata": list_meta(&list), "items": []});
    let frame = crate::runtime::json_order::to_vec(&frame);
    // `…,"items":[]}` and a newline: the items go between the brackets.
    let (head, tail) = frame.split_at(frame.len().checked_sub(3)?);
    if tail != b"]}\n" {
        return None;
    }
    let mut body =
        Vec::with_capacity(head.len() + objects.iter().map(|o| o.json().len() + 1).sum::<usize>() + 3);
    body.extend_from_slice(head);
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        if !object.write_list_item(untyped, &mut body) {
            return None;
        }
    }
    body.extend_from_slice(tail);
    Some(body)
}

/// A list's ListMeta.
fn list_meta(list: &ListResult) -> Value {
    let mut meta = json!({"resourceVersion": list.resource_version.to_string()});
    if let Some(token) = &list.continue_token {
        meta["continue"] = json!(token);
    }
    if let Some(remaining) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(remaining);
    }
    meta
}

/// The group version of Tables and of metadata-only objects.
const META_API_VERSION: &str = "meta.k8s.io/v1";

/// An object's metadata only, as a PartialObjectMetadata.
pub fn partial_metadata(object: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": META_API_VERSION, "metadata": object["metadata"]})
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
                IncludeObject::Metadata => row["object"] = partial_metadata(object),
                IncludeObject::Object => row["object"] = object.clone(),
            }
            row
        })
        .collect();
    let mut body =
        json!({"kind": "Table", "apiVersion": META_API_VERSION, "metadata": list_meta, "rows": rows});
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
        Shape::Metadata => partial_metadata(&object),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cacher::{ListOptions, Listing};
    use crate::registry::kinds::Kind;
    use crate::registry::tests::{Cluster, Plain, configmap, ctx, eventually};
    use crate::runtime::FieldValidation;

    /// The bytes written from the cache are those written from the decoded list.
    async fn same_both_ways(store: &Store) {
        eventually("the cache to see both", || async {
            let listing = store.listing(&ListOptions::default()).await.unwrap();
            matches!(&listing, Listing::Cached { objects, .. } if objects.len() == 2)
        })
        .await;
        let Listing::Cached { objects, resource_version } =
            store.listing(&ListOptions::default()).await.unwrap()
        else {
            panic!("served from the cache");
        };
        let fast = cached_list_json(store, &objects, resource_version).expect("written from bytes");
        let listing = Listing::Cached { objects, resource_version };
        let slow =
            crate::runtime::json_order::to_vec(&list_body(store, listing.into_result(), Shape::Object));
        assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(slow).unwrap());
    }

    #[tokio::test]
    async fn a_cached_list_is_written_from_bytes_as_from_objects() {
        let c = Cluster::new().await;
        for name in ["a", "b"] {
            let mut cm = configmap(name);
            cm["metadata"]["labels"] = json!({"app": "x"});
            cm["metadata"]["annotations"] = json!({"note": "a \"quoted\" \u{e9}\n"});
            c.create("", "configmaps", Some("default"), cm).await.unwrap();
        }
        // A built-in kind: items without kind and apiVersion.
        same_both_ways(&c.store("", "configmaps")).await;

        // A custom kind: items keep theirs.
        let resource = Resource::new("example.com", "Gadget", "gadgets");
        let store = c.resources.add(Kind::new(resource, Plain)).unwrap().store.clone();
        eventually("its cache to load", || async { store.reads().cacher().is_ready() }).await;
        for name in ["a", "b"] {
            let body = json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": {"n": 1}});
            let (object, _) = store.decode(body, FieldValidation::Strict).unwrap();
            store.create(&ctx(), Some("default"), object).await.unwrap();
        }
        same_both_ways(&store).await;
    }
}
