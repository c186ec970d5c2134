//! Watch responses: a chunked stream of `{"type", "object"}` JSON events,
//! one per chunk (or, for a client that asked for protobuf, length-prefixed
//! protobuf WatchEvents), served from the resource's watch cache until the
//! watch's deadline. A watch that cannot start (too old a resourceVersion, or a
//! WatchList whose revision the cache does not reach in time) gets kube's
//! answer: 200 with one ERROR event carrying the Status. A plain watch from
//! a revision ahead of the cache starts anyway, as kube's cacher starts it:
//! it sees the events after that revision once there are any.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};

use super::negotiate::{Encoding, IncludeObject, Shape};
use super::query::Params;
use super::respond;
use crate::cacher::{Delivery, Watch, WatchStart};
use crate::errors::ApiError;
use crate::metrics::watch::WatchEvents;
use crate::metrics::{Metrics, Series};
use crate::protobuf::encode;
use crate::registry::Store;
use crate::runtime::json_order::KubeOrder;

/// The annotation on the bookmark that ends a WatchList's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

pub async fn serve(
    store: &Store,
    namespace: Option<&str>,
    params: &Params,
    shape: Shape,
    encoding: Encoding,
    metrics: &Metrics,
) -> Result<Response, ApiError> {
    let spec = params.watch_spec(store, namespace)?;
    // A stream has one encoding: protobuf only where every event can be.
    let encoding = match shape {
        Shape::Object if encode::supports(&store.resource().api_version(), &store.resource().kind) => {
            encoding
        }
        Shape::Metadata => encoding,
        _ => Encoding::Json,
    };
    let cache = store.reads().cacher();
    // Initial state must be at least as new as asked for: the latest
    // (consistent) when no revision is given.
    let must_see = match (spec.start, spec.not_older_than) {
        (_, rv) if rv > 0 => Some(rv),
        (WatchStart::CurrentState, _) if params.resource_version()?.is_none() => {
            Some(store.reads().current_revision(store.collection()).await?)
        }
        (WatchStart::After(rv), _) => Some(rv),
        _ => None,
    };
    // Nothing is served from a cache before its first list is in.
    let fresh = cache.wait_fresh(must_see.unwrap_or(0)).await;
    if !fresh && !cache.is_ready() {
        return Err(ApiError::TooManyRequests);
    }
    let deadline = tokio::time::Instant::from_std(spec.deadline);
    let encoder = Encoder { store: store.clone(), shape, encoding, headers_sent: false };
    let started = if !fresh && spec.initial_events_end {
        // kube's cacher waits for a WatchList's revision, then ends the
        // watch with the 504 Status as its only event.
        let requested = must_see.unwrap_or(0);
        Err(ApiError::TooLargeResourceVersion { requested, current: cache.resource_version() })
    } else {
        store.watch(spec)
    };
    let content_type = match encoding {
        Encoding::Json => respond::JSON,
        Encoding::Protobuf => encode::PROTOBUF_WATCH,
    };
    // kube counts every event written to the client, by the resource watched.
    let resource = store.resource();
    let sent = metrics.watch_events.of(&resource.group, &resource.version, &resource.plural);
    let body = match started {
        Ok(watch) => stream_body(watch, deadline, encoder, sent),
        Err(err) => {
            let event = encoder.event("ERROR", &err.status());
            sent.value.sent(event.len());
            Body::from(event)
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    Ok(response)
}

fn stream_body(mut watch: Watch, deadline: tokio::time::Instant, encoder: Encoder, sent: Sent) -> Body {
    let initial = std::mem::take(&mut watch.initial).into_iter();
    let state = (initial, watch, encoder);
    let stream = futures_util::stream::unfold(state, move |(mut initial, mut watch, mut encoder)| {
        let sent = sent.clone();
        async move {
            let delivery = match initial.next() {
                Some(delivery) => delivery,
                None => match tokio::time::timeout_at(deadline, watch.live.recv()).await {
                    Ok(Some(delivery)) => delivery,
                    // Deadline, or the cache closed this watcher: the client
                    // watches again from its last resourceVersion.
                    _ => return None,
                },
            };
            let bytes = encoder.encode(&delivery);
            sent.value.sent(bytes.len());
            Some((Ok::<Bytes, Infallible>(bytes), (initial, watch, encoder)))
        }
    });
    Body::from_stream(stream)
}

/// The counters of the events sent to one resource's watch clients.
type Sent = Arc<Series<WatchEvents, 3>>;

/// An event as watch clients read it, borrowing the cached object.
#[derive(Serialize)]
struct WireEvent<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    object: KubeOrder<'a>,
}

/// One event line: JSON, then a newline.
fn line(event: &impl Serialize) -> Bytes {
    let mut line = serde_json::to_vec(event).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// The line `line` writes for an event whose object the cache holds
/// already encoded (in kube's order), without decoding it again.
fn cached_line(kind: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + 32);
    line.extend_from_slice(br#"{"type":""#);
    // The event types are plain ASCII words: nothing to escape.
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(br#"","object":"#);
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

/// Turns deliveries into events in the shape and encoding the client asked
/// for.
struct Encoder {
    store: Store,
    shape: Shape,
    encoding: Encoding,
    /// Table watches carry column definitions on the first event only.
    headers_sent: bool,
}

impl Encoder {
    fn encode(&mut self, delivery: &Delivery) -> Bytes {
        match delivery {
            Delivery::Event { kind, object, encoded } => match (self.shape, self.encoding) {
                // The same bytes for every watcher handed this delivery.
                (Shape::Object, Encoding::Json) => {
                    encoded.json.get_or_init(|| cached_line(kind.as_str(), object.json())).clone()
                }
                (Shape::Object, Encoding::Protobuf) => {
                    encoded.protobuf.get_or_init(|| self.event(kind.as_str(), &object.value())).clone()
                }
                (Shape::Table(include), _) => {
                    let table = self.table(include, &object.value());
                    self.event(kind.as_str(), &table)
                }
                (Shape::Metadata, _) => {
                    self.event(kind.as_str(), &respond::partial_metadata(&object.value()))
                }
            },
            Delivery::Bookmark { resource_version, initial_events_end } => {
                let mut meta = json!({"resourceVersion": resource_version.to_string()});
                if *initial_events_end {
                    meta["annotations"] = json!({INITIAL_EVENTS_END: "true"});
                }
                let resource = self.store.resource();
                let object = match self.shape {
                    Shape::Metadata => respond::partial_metadata(&json!({"metadata": meta})),
                    _ => {
                        json!({"kind": resource.kind, "apiVersion": resource.api_version(), "metadata": meta})
                    }
                };
                self.event("BOOKMARK", &object)
            }
        }
    }

    /// One event in this stream's encoding. An object protobuf cannot
    /// carry (which the types rtcd stores never hold) is sent as an ERROR
    /// event instead, on which clients list and watch again.
    fn event(&self, kind: &str, object: &Value) -> Bytes {
        match self.encoding {
            Encoding::Json => line(&WireEvent { kind, object: KubeOrder(object) }),
            Encoding::Protobuf => match encode::body(object) {
                Ok(framed) => Bytes::from(encode::watch_event(kind, &framed)),
                Err(err) => {
                    tracing::warn!(%err, "a watch event cannot be written in protobuf");
                    let status = ApiError::Internal(format!("unable to encode watch event: {err}")).status();
                    let framed = encode::body(&status).unwrap_or_default();
                    Bytes::from(encode::watch_event("ERROR", &framed))
                }
            },
        }
    }

    /// The event's object as a one-row Table; the column headers go with the
    /// first event of the stream only.
    fn table(&mut self, include: IncludeObject, object: &Value) -> Value {
        let meta = json!({"resourceVersion": object["metadata"]["resourceVersion"]});
        let headers = !self.headers_sent;
        self.headers_sent = true;
        respond::table_body(&self.store, std::slice::from_ref(object), meta, include, headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cacher::CachedObject;

    #[test]
    fn a_cached_object_is_sent_as_the_encoder_would_write_it() {
        let object = CachedObject::new(
            "/registry/configmaps/ns/a".into(),
            json!({"data": {"k": "v\"\n"}, "metadata": {"name": "a", "namespace": "ns"},
                "apiVersion": "v1", "kind": "ConfigMap"}),
            7,
        );
        let written = line(&WireEvent { kind: "MODIFIED", object: KubeOrder(&object.value()) });
        assert_eq!(cached_line("MODIFIED", object.json()), written);
    }
}
