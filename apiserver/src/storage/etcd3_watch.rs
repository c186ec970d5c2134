//! A watch on an etcd prefix, as kube's watch cache opens it: from a
//! revision, with previous values and progress notifications, progress
//! requests sent on the same stream.

use super::etcd3::{MAX_MESSAGE, etcd_error, prefix_end};
use super::interface::{Change, StorageWatch, WatchEnd, WatchUpdate};
use super::{Endpoints, StorageError};
use async_trait::async_trait;
use futures_util::StreamExt;
use rtcd_proto::etcdserverpb::watch_client::WatchClient;
use rtcd_proto::etcdserverpb::watch_request::RequestUnion;
use rtcd_proto::etcdserverpb::{WatchCreateRequest, WatchProgressRequest, WatchRequest, WatchResponse};
use rtcd_proto::mvccpb;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;

#[derive(Debug)]
pub(super) struct Etcd3Watch {
    requests: mpsc::Sender<WatchRequest>,
    responses: Streaming<WatchResponse>,
}

impl Etcd3Watch {
    pub(super) async fn start(etcd: Endpoints, prefix: &str, start: i64) -> Result<Self, StorageError> {
        let client = WatchClient::new(etcd).max_decoding_message_size(MAX_MESSAGE);
        let prefix = prefix.as_bytes().to_vec();
        let (requests, rx) = mpsc::channel(4);
        let create = WatchCreateRequest {
            range_end: prefix_end(&prefix).into(),
            key: prefix.into(),
            start_revision: start,
            progress_notify: true,
            prev_kv: true,
            ..Default::default()
        };
        let _ =
            requests.send(WatchRequest { request_union: Some(RequestUnion::CreateRequest(create)) }).await;
        let responses = client.clone().watch(ReceiverStream::new(rx)).await.map_err(etcd_error)?.into_inner();
        Ok(Etcd3Watch { requests, responses })
    }
}

#[async_trait]
impl StorageWatch for Etcd3Watch {
    async fn next(&mut self) -> Result<WatchUpdate, WatchEnd> {
        match self.responses.next().await {
            Some(Ok(resp)) => update_of(resp),
            Some(Err(status)) => Err(WatchEnd::Broken(status.message().to_string())),
            None => Err(WatchEnd::Broken("watch stream ended".into())),
        }
    }

    async fn request_progress(&mut self) {
        let ask =
            WatchRequest { request_union: Some(RequestUnion::ProgressRequest(WatchProgressRequest {})) };
        let _ = self.requests.send(ask).await;
    }
}

fn update_of(resp: WatchResponse) -> Result<WatchUpdate, WatchEnd> {
    if resp.compact_revision > 0 {
        return Err(WatchEnd::Compacted);
    }
    if resp.canceled {
        return Err(WatchEnd::Broken(format!("watch canceled: {}", resp.cancel_reason)));
    }
    if resp.events.is_empty() {
        // The creation answer's revision says nothing of what is delivered;
        // a progress notification says everything up to it is.
        if resp.created {
            return Ok(WatchUpdate::Created);
        }
        return Ok(WatchUpdate::Progress(resp.header.as_ref().map_or(0, |h| h.revision)));
    }
    Ok(WatchUpdate::Changes(resp.events.into_iter().filter_map(change_of).collect()))
}

fn change_of(event: mvccpb::Event) -> Option<Change> {
    let kv = event.kv?;
    Some(Change {
        key: String::from_utf8_lossy(&kv.key).into_owned(),
        value: kv.value,
        prev: event.prev_kv.map(|prev| prev.value),
        deleted: event.r#type == mvccpb::event::EventType::Delete as i32,
        create_revision: kv.create_revision,
        mod_revision: kv.mod_revision,
    })
}
