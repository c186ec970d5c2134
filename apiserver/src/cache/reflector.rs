//! Keeps one cache current: list the prefix at a revision, then watch it
//! from the next revision with previous values and progress notifications;
//! relist when the watch breaks or falls behind a compaction.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use rtcd_proto::etcdserverpb::watch_client::WatchClient;
use rtcd_proto::etcdserverpb::watch_request::RequestUnion;
use rtcd_proto::etcdserverpb::{
    RangeRequest, WatchCreateRequest, WatchProgressRequest, WatchRequest, WatchResponse,
};
use rtcd_proto::mvccpb::{self, KeyValue};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

use super::{CachedObject, Cacher, Event, EventType};
use crate::storage::prefix_end;

/// Objects per list page (kube's reflector pages its lists by 10,000).
const LIST_PAGE: i64 = 10_000;
/// Large lists come back in one gRPC message per page.
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Why a watch ended: relist, or retry after a pause.
#[derive(Debug)]
enum Ended {
    Compacted,
    Broken(String),
}

pub(super) async fn run(cacher: Cacher, channel: Channel, mut progress: mpsc::Receiver<()>) {
    let kv = KvClient::new(channel.clone()).max_decoding_message_size(MAX_MESSAGE);
    let watch = WatchClient::new(channel).max_decoding_message_size(MAX_MESSAGE);
    loop {
        let rv = match list(&kv, &cacher).await {
            Ok(rv) => rv,
            Err(status) => {
                tracing::warn!(prefix = cacher.prefix(), error = %status.message(), "watch cache list failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        match watch_from(&watch, &cacher, rv + 1, &mut progress).await {
            Ended::Compacted => {
                tracing::info!(prefix = cacher.prefix(), "watch cache relists after compaction")
            }
            Ended::Broken(why) => {
                tracing::warn!(prefix = cacher.prefix(), error = %why, "watch cache watch broke");
                cacher.not_ready();
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Loads every object under the prefix at one revision; that revision.
async fn list(kv: &KvClient<Channel>, cacher: &Cacher) -> Result<i64, tonic::Status> {
    let prefix = cacher.prefix().as_bytes().to_vec();
    let end = Bytes::from(prefix_end(&prefix));
    let mut start = Bytes::from(prefix);
    let mut revision = 0;
    let mut objects = Vec::new();
    loop {
        let req = RangeRequest {
            key: start,
            range_end: end.clone(),
            limit: LIST_PAGE,
            revision,
            ..Default::default()
        };
        let resp = kv.clone().range(req).await?.into_inner();
        if revision == 0 {
            revision = resp.header.as_ref().map_or(0, |h| h.revision);
        }
        objects.extend(resp.kvs.iter().filter_map(decode));
        match resp.kvs.last() {
            Some(last) if resp.more => {
                let mut next = last.key.to_vec();
                next.push(0);
                start = next.into();
            }
            _ => break,
        }
    }
    cacher.reset(objects, revision);
    Ok(revision)
}

/// Follows the prefix from `start` until the watch ends.
async fn watch_from(
    client: &WatchClient<Channel>,
    cacher: &Cacher,
    start: i64,
    progress: &mut mpsc::Receiver<()>,
) -> Ended {
    let prefix = cacher.prefix().as_bytes().to_vec();
    let (requests, rx) = mpsc::channel(4);
    let create = WatchCreateRequest {
        range_end: prefix_end(&prefix).into(),
        key: prefix.into(),
        start_revision: start,
        progress_notify: true,
        prev_kv: true,
        ..Default::default()
    };
    let _ = requests.send(WatchRequest { request_union: Some(RequestUnion::CreateRequest(create)) }).await;
    let mut responses = match client.clone().watch(ReceiverStream::new(rx)).await {
        Ok(resp) => resp.into_inner(),
        Err(status) => return Ended::Broken(status.message().to_string()),
    };
    loop {
        tokio::select! {
            resp = responses.next() => match resp {
                Some(Ok(resp)) => {
                    if let Some(ended) = handle(cacher, resp) {
                        return ended;
                    }
                }
                Some(Err(status)) => return Ended::Broken(status.message().to_string()),
                None => return Ended::Broken("watch stream ended".into()),
            },
            Some(()) = progress.recv() => {
                let ask = WatchRequest { request_union: Some(RequestUnion::ProgressRequest(WatchProgressRequest {})) };
                let _ = requests.send(ask).await;
            }
        }
    }
}

/// Applies one watch response; Some when the watch is over.
fn handle(cacher: &Cacher, resp: WatchResponse) -> Option<Ended> {
    if resp.compact_revision > 0 {
        return Some(Ended::Compacted);
    }
    if resp.canceled {
        return Some(Ended::Broken(format!("watch canceled: {}", resp.cancel_reason)));
    }
    let revision = resp.header.as_ref().map_or(0, |h| h.revision);
    if resp.events.is_empty() {
        // The creation answer's revision says nothing of what is delivered
        // (but the watch is up); a progress notification says everything
        // up to it is.
        if resp.created {
            cacher.ready_again();
        } else {
            cacher.progress(revision);
        }
        return None;
    }
    let events = resp.events.into_iter().filter_map(|event| to_event(cacher, event)).collect();
    cacher.apply_all(events);
    None
}

/// etcd's event as the cache's; None for a value that is not JSON.
fn to_event(cacher: &Cacher, event: mvccpb::Event) -> Option<Event> {
    let kv = event.kv?;
    let key = String::from_utf8_lossy(&kv.key).into_owned();
    let prev = match event.prev_kv.as_ref().and_then(decode) {
        Some(prev) => Some(Arc::new(prev)),
        // Without the previous value (compacted away), the cached one.
        None => cacher.get(&key).0,
    };
    if event.r#type == mvccpb::event::EventType::Delete as i32 {
        let prev = prev?;
        let object = Arc::new(prev.at_revision(kv.mod_revision));
        return Some(Event {
            kind: EventType::Deleted,
            object,
            prev: Some(prev),
            resource_version: kv.mod_revision,
        });
    }
    let object = Arc::new(decode(&kv)?);
    let kind = if kv.create_revision == kv.mod_revision { EventType::Added } else { EventType::Modified };
    Some(Event { kind, object, prev, resource_version: kv.mod_revision })
}

fn decode(kv: &KeyValue) -> Option<CachedObject> {
    let key = String::from_utf8_lossy(&kv.key).into_owned();
    match serde_json::from_slice(&kv.value) {
        Ok(value) => Some(CachedObject::new(key, value, kv.mod_revision)),
        Err(err) => {
            tracing::warn!(key, error = %err, "skipping a value that is not JSON");
            None
        }
    }
}
