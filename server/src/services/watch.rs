//! `etcdserverpb.Watch`: each bidirectional stream gets its own task (see
//! `watch::stream`), which reads the client's requests and writes responses
//! into a bounded queue drained by gRPC.
//! Streams with `hasleader` metadata are refused or ended without a leader
//! (see `require_leader`).

use std::sync::Arc;
use std::time::Duration;

use rtcd_proto::etcdserverpb::{WatchRequest, WatchResponse, watch_server::Watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::node::Node;
use crate::watch::stream::WatchStream;

/// Responses queued per stream before the stream's task waits for the
/// client to read: bounds the memory a slow client can pin.
const OUTGOING_QUEUE: usize = 64;

#[derive(Debug)]
pub struct WatchService {
    node: Arc<Node>,
    progress_interval: Duration,
}

impl WatchService {
    pub fn new(node: Arc<Node>, progress_interval: Duration) -> Self {
        Self { node, progress_interval }
    }
}

#[tonic::async_trait]
impl Watch for WatchService {
    type WatchStream = ReceiverStream<Result<WatchResponse, Status>>;

    async fn watch(
        &self,
        request: Request<Streaming<WatchRequest>>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let require_leader = crate::require_leader::requested(&request);
        self.node.check_leader(require_leader)?;
        let (out, responses) = tokio::sync::mpsc::channel(OUTGOING_QUEUE);
        // Permissions are checked at each create, with the stream's token.
        let credentials = crate::auth::Credentials::of(&request);
        let stream = WatchStream::new(self.node.clone(), out, credentials)?;
        tokio::spawn(stream.run(request.into_inner(), self.progress_interval, require_leader));
        Ok(Response::new(ReceiverStream::new(responses)))
    }
}
