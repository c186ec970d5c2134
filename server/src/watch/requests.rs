//! The client's requests on one Watch stream, taken off the connection as
//! fast as they arrive.
//!
//! Why: HTTP/2 (the h2 crate) counts small DATA frames left unread and, when
//! too many pile up, tears the whole connection down (GOAWAY
//! ENHANCE_YOUR_CALM), ending every stream on it. A client that sends
//! thousands of creates back to back (etcd creates them all) would trip it
//! while the stream's task is busy answering the first ones. So a reader
//! task queues requests for the stream, bounded in bytes: at the bound it
//! stops reading and HTTP/2's flow control holds the client back.

use std::sync::Arc;

use prost::Message;
use rtcd_proto::etcdserverpb::WatchRequest;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_stream::{Stream, StreamExt};
use tonic::Status;

/// Bytes of requests queued per stream (decoded size, roughly).
const QUEUED_BYTES: usize = 4 << 20;
/// What a decoded request costs beyond its encoding.
const PER_REQUEST: usize = 128;

type Queued = Result<(WatchRequest, OwnedSemaphorePermit), Status>;

/// The stream's queue of requests; the reader task ends with it.
pub struct Requests {
    queue: mpsc::UnboundedReceiver<Queued>,
    reader: tokio::task::JoinHandle<()>,
}

impl Requests {
    /// Reads `incoming`: a gRPC stream, or the JSON gateway's requests.
    pub fn spawn<S>(incoming: S) -> Requests
    where
        S: Stream<Item = Result<WatchRequest, Status>> + Send + Unpin + 'static,
    {
        let (tx, queue) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read(incoming, tx));
        Requests { queue, reader }
    }

    /// The next request; `Ok(None)` once the client has half-closed, an
    /// error if its bytes did not decode (or the connection broke).
    /// Cancel-safe, for `select!`.
    pub async fn next(&mut self) -> Result<Option<WatchRequest>, Status> {
        match self.queue.recv().await {
            Some(Ok((request, _room))) => Ok(Some(request)),
            Some(Err(status)) => Err(status),
            None => Ok(None),
        }
    }
}

impl Drop for Requests {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

async fn read<S>(mut incoming: S, queue: mpsc::UnboundedSender<Queued>)
where
    S: Stream<Item = Result<WatchRequest, Status>> + Unpin,
{
    let room = Arc::new(Semaphore::new(QUEUED_BYTES));
    loop {
        let queued = match incoming.next().await {
            Some(Ok(request)) => {
                let cost = (request.encoded_len() + PER_REQUEST).min(QUEUED_BYTES) as u32;
                let Ok(permit) = room.clone().acquire_many_owned(cost).await else { return };
                Ok((request, permit))
            }
            None => return,
            Some(Err(status)) => Err(status),
        };
        let failed = queued.is_err();
        if queue.send(queued).is_err() || failed {
            return;
        }
    }
}
