//! Replication on one long-lived gRPC stream per follower
//! (`rtcdraftpb.Raft/AppendStream`), both ends.
//!
//! The leader sends append-entries requests as openraft produces them,
//! without waiting for the previous answer, and the follower answers each,
//! in order, once its entries are durable (openraft's follower answers only
//! after its log store reports the append flushed). A unary call per append
//! costs a new HTTP/2 stream with headers both ways, and the next append
//! waits a whole round trip; on the stream an append is one DATA frame each
//! way and appends overlap.
//!
//! Requests carry postcard-encoded `AppendEntriesRequest`s (`wire::APPEND`);
//! answers carry `Result<StreamAppendResult, String>`, the error saying why
//! the follower's Raft could not take the request at all (it stopped).

use std::future::ready;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use openraft::error::RPCError;
use openraft::raft::{AppendEntriesRequest, StreamAppendResult};
use rtcd_proto::rtcdraftpb::RaftMessage;
use rtcd_proto::rtcdraftpb::raft_client::RaftClient;
use tonic::transport::Channel;
use tonic::{Status, Streaming};

use crate::RtcdRaft;
use crate::peer_stats::PeerCounters;
use crate::rpc_error::{network, timed_out, unreachable};
use crate::types::TypeConfig;
use crate::wire;

/// The follower's answer to one request.
type Answer = Result<StreamAppendResult<TypeConfig>, String>;

/// The leader's view of the answers, in request order.
pub type Answers =
    Pin<Box<dyn Stream<Item = Result<StreamAppendResult<TypeConfig>, RPCError<TypeConfig>>> + Send>>;

/// The follower's side, as tonic serves it.
pub type Replies = Pin<Box<dyn Stream<Item = Result<RaftMessage, Status>> + Send>>;

/// Leader side: opens the stream to `target` and sends `requests` on it;
/// `None` when the follower does not serve the stream (an rtcd from before
/// it, during a rolling upgrade). An answer that takes longer than
/// `patience` after its request went out ends the stream with a timeout (a
/// cut link is silent, not closed), and openraft opens a new one.
/// `on_answer` runs for every answer received; `counters` count the bytes
/// sent and the failures.
///
/// Nothing is dialed before the first request is ready: openraft waits out
/// its backoff (after failures to reach the follower) while producing that
/// request, and dialing first would skip the wait, so a dead follower was
/// redialed thousands of times a second.
pub async fn open<S>(
    mut client: RaftClient<Channel>,
    target: u64,
    requests: S,
    patience: Duration,
    on_answer: impl FnMut() + Send + 'static,
    counters: Arc<PeerCounters>,
) -> Result<Option<Answers>, RPCError<TypeConfig>>
where
    S: Stream<Item = AppendEntriesRequest<TypeConfig>> + Send + Unpin + 'static,
{
    let mut requests = requests.peekable();
    if Pin::new(&mut requests).peek().await.is_none() {
        return Ok(Some(Box::pin(stream::empty())));
    }
    let sent = Arc::new(AtomicU64::new(0));
    let (counted, bytes) = (sent.clone(), counters.clone());
    // A request that cannot be encoded ends the stream: skipping it would
    // leave the follower with a gap. Counted as it is handed to the transport.
    let outbound = requests
        .map(|rpc| wire::encode(&rpc))
        .take_while(|encoded| ready(encoded.is_ok()))
        .filter_map(move |encoded| {
            counted.fetch_add(1, Ordering::Relaxed);
            bytes.sent(encoded.as_ref().map_or(0, Vec::len));
            ready(
                encoded
                    .ok()
                    .map(|payload| RaftMessage { kind: wire::APPEND.to_string(), payload: payload.into() }),
            )
        });
    let inbound = match tokio::time::timeout(patience, client.append_stream(outbound)).await {
        Ok(Ok(response)) => response.into_inner(),
        Ok(Err(status)) if status.code() == tonic::Code::Unimplemented => return Ok(None),
        Ok(Err(status)) => {
            counters.failed();
            return Err(unreachable(status.message()));
        }
        Err(_) => {
            counters.failed();
            return Err(timed_out(target, patience));
        }
    };
    let reader = Reader { inbound, sent, answered: 0, patience, target, on_answer };
    Ok(Some(Box::pin(stream::unfold(Some(reader), move |reader| {
        let counters = counters.clone();
        async move {
            let mut reader = reader?;
            match reader.next().await? {
                Ok(answer) => Some((Ok(answer), Some(reader))),
                Err(e) => {
                    counters.failed();
                    Some((Err(e), None))
                }
            }
        }
    }))))
}

/// Reads the follower's answers and notices a stuck stream.
struct Reader<F> {
    inbound: Streaming<RaftMessage>,
    /// Requests handed to the transport so far.
    sent: Arc<AtomicU64>,
    answered: u64,
    patience: Duration,
    target: u64,
    on_answer: F,
}

impl<F: FnMut()> Reader<F> {
    /// The next answer; `None` when the follower closed the stream.
    async fn next(&mut self) -> Option<Result<StreamAppendResult<TypeConfig>, RPCError<TypeConfig>>> {
        loop {
            // Requests already out when the wait starts: if one of them is
            // still unanswered after `patience`, the follower or the link is
            // stuck. With none out, the stream is idle, which is fine.
            let out = self.sent.load(Ordering::Relaxed);
            match tokio::time::timeout(self.patience, self.inbound.message()).await {
                Ok(Ok(Some(message))) => {
                    self.answered += 1;
                    (self.on_answer)();
                    return Some(decode_answer(&message));
                }
                Ok(Ok(None)) => return None,
                Ok(Err(status)) => return Some(Err(unreachable(status.message()))),
                Err(_) if self.answered < out => return Some(Err(timed_out(self.target, self.patience))),
                Err(_) => continue,
            }
        }
    }
}

fn decode_answer(message: &RaftMessage) -> Result<StreamAppendResult<TypeConfig>, RPCError<TypeConfig>> {
    let answer: Answer = wire::decode(&message.payload).map_err(network)?;
    answer.map_err(network)
}

/// Follower side: hands the leader's requests to the local Raft and answers
/// each in order; `on_accepted` runs for every append accepted. A request
/// that does not decode ends the stream with `InvalidArgument` after the
/// answers to the requests before it.
pub fn serve(
    raft: &RtcdRaft,
    on_accepted: impl Fn() + Send + 'static,
    on_received: impl Fn(&AppendEntriesRequest<TypeConfig>, usize) + Send + Sync + 'static,
    inbound: Streaming<RaftMessage>,
) -> Replies {
    let refused: Arc<Mutex<Option<Status>>> = Arc::default();
    let noted = refused.clone();
    let requests = inbound
        .map(move |message| match message {
            Ok(message) if message.kind == wire::APPEND => {
                let request = wire::decode::<AppendEntriesRequest<TypeConfig>>(&message.payload)
                    .map_err(|e| Status::invalid_argument(format!("rtcd peer: {e}")))?;
                on_received(&request, message.payload.len());
                Ok(request)
            }
            Ok(message) => {
                Err(Status::invalid_argument(format!("rtcd peer: {:?} on the append stream", message.kind)))
            }
            Err(status) => Err(status),
        })
        .take_while(move |request| {
            if let Err(status) = request {
                *noted.lock().unwrap_or_else(|e| e.into_inner()) = Some(status.clone());
            }
            ready(request.is_ok())
        })
        .filter_map(|request| ready(request.ok()));
    let answers = raft.stream_append(requests).map(move |outcome| {
        if matches!(outcome, Ok(Ok(_))) {
            on_accepted();
        }
        let answer: Answer = outcome.map_err(|fatal| fatal.to_string());
        wire::encode(&answer)
            .map(|payload| RaftMessage { kind: wire::APPEND.to_string(), payload: payload.into() })
            .map_err(Status::internal)
    });
    let refusal = stream::once(async move { refused.lock().unwrap_or_else(|e| e.into_inner()).take() })
        .filter_map(|status| ready(status.map(Err)));
    Box::pin(answers.chain(refusal))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::net::SocketAddr;

    use rtcd_proto::rtcdraftpb::SnapshotChunk;
    use rtcd_proto::rtcdraftpb::raft_server::{Raft, RaftServer};
    use tokio_stream::wrappers::TcpListenerStream;
    use tonic::{Request, Response};

    use super::*;

    /// A peer that takes append streams: a silent one never answers (a
    /// stuck follower, or a cut link that drops packets); otherwise it
    /// answers every request at once, as a healthy follower would.
    struct Peer {
        silent: bool,
    }

    #[tonic::async_trait]
    impl Raft for Peer {
        type AppendStreamStream = Replies;

        async fn call(&self, _: Request<RaftMessage>) -> Result<Response<RaftMessage>, Status> {
            Err(Status::unimplemented("test peer"))
        }

        async fn append_stream(
            &self,
            request: Request<Streaming<RaftMessage>>,
        ) -> Result<Response<Replies>, Status> {
            if self.silent {
                return Ok(Response::new(Box::pin(stream::pending())));
            }
            let accepted: Answer = Ok(Ok(None));
            let payload = wire::encode(&accepted).unwrap();
            Ok(Response::new(Box::pin(request.into_inner().map(move |_| {
                Ok(RaftMessage { kind: wire::APPEND.to_string(), payload: payload.clone().into() })
            }))))
        }

        async fn install_snapshot(
            &self,
            _: Request<Streaming<SnapshotChunk>>,
        ) -> Result<Response<RaftMessage>, Status> {
            Err(Status::unimplemented("test peer"))
        }

        async fn forward(&self, _: Request<RaftMessage>) -> Result<Response<RaftMessage>, Status> {
            Err(Status::unimplemented("test peer"))
        }
    }

    async fn serve(router: tonic::transport::server::Router) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
        addr
    }

    fn client(addr: SocketAddr) -> RaftClient<Channel> {
        RaftClient::new(Channel::from_shared(format!("http://{addr}")).unwrap().connect_lazy())
    }

    async fn peer(silent: bool) -> SocketAddr {
        serve(tonic::transport::Server::builder().add_service(RaftServer::new(Peer { silent }))).await
    }

    fn heartbeat() -> AppendEntriesRequest<TypeConfig> {
        AppendEntriesRequest {
            vote: crate::types::Vote::new_committed(1, 1),
            prev_log_id: None,
            leader_commit: None,
            entries: Vec::new(),
        }
    }

    /// One request and then nothing more: `open` dials only once a first
    /// request is ready.
    fn one_request() -> impl Stream<Item = AppendEntriesRequest<TypeConfig>> + Send + Unpin + 'static {
        stream::iter([heartbeat()]).chain(stream::pending())
    }

    /// An rtcd from before append streams answers Unimplemented: the leader
    /// must tell that apart from a failure, to fall back to single appends.
    #[tokio::test]
    async fn a_peer_without_the_stream_is_told_apart() {
        let addr =
            serve(tonic::transport::Server::builder().add_routes(tonic::service::Routes::default())).await;
        let opened =
            open(client(addr), 2, one_request(), Duration::from_secs(5), || {}, Arc::default()).await;
        assert!(matches!(opened, Ok(None)), "expected no stream from a peer without the method");
    }

    /// A request left unanswered for longer than the patience ends the
    /// stream with a timeout (openraft then backs off and opens a new one);
    /// an idle stream, with nothing unanswered, stays open.
    #[tokio::test]
    async fn an_unanswered_append_times_out_but_an_idle_stream_does_not() {
        let patience = Duration::from_millis(200);

        let prompt = peer(false).await;
        let mut idle =
            open(client(prompt), 2, one_request(), patience, || {}, Arc::default()).await.unwrap().unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), idle.next()).await.unwrap();
        assert!(matches!(answer, Some(Ok(Ok(None)))), "expected the append accepted, got {answer:?}");
        let waited = tokio::time::timeout(patience * 4, idle.next()).await;
        assert!(waited.is_err(), "an idle stream must not end or fail");

        let silent = peer(true).await;
        let mut answers =
            open(client(silent), 2, one_request(), patience, || {}, Arc::default()).await.unwrap().unwrap();
        let started = std::time::Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(5), answers.next()).await.unwrap();
        assert!(matches!(answer, Some(Err(RPCError::Timeout(_)))), "expected a timeout, got {answer:?}");
        assert!(started.elapsed() >= patience, "gave up before the patience ran out");
        assert!(answers.next().await.is_none(), "the stream ends after its timeout");
    }
}
