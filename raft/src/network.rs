//! The peer transport, client side: openraft's RPCs to other members over
//! gRPC on their peer URLs (`rtcdraftpb.Raft`). Messages are postcard-encoded
//! openraft types inside an opaque `RaftMessage`, so an openraft upgrade does
//! not change the protobuf contract. One lazily connected channel per peer,
//! cached and reused; tonic reconnects it after failures.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::Stream;
use openraft::base::{BoxFuture, BoxStream};
use openraft::error::{NetworkError, RPCError, ReplicationClosed, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, stream_append_sequential, v2::RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, StreamAppendResult, TransferLeaderRequest,
    TransferLeaderResponse, VoteRequest, VoteResponse,
};
use rtcd_proto::rtcdraftpb::{RaftMessage, SnapshotChunk, raft_client::RaftClient};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::transport::Channel;

use crate::append_stream;
use crate::peer_stats::{PeerCounters, PeerStats, Transfer};
use crate::rpc_error::{network, timed_out, unreachable};
use crate::types::{Member, SnapshotFile, TypeConfig, Vote};
use crate::wire;

/// The least time an append-entries call gets before it counts as lost.
const APPEND_TIMEOUT_FLOOR: std::time::Duration = std::time::Duration::from_millis(500);

/// Snapshot bytes per gRPC message: well under any message limit.
pub const SNAPSHOT_CHUNK: usize = 1024 * 1024;

/// Opens a lazily connected channel to a URL. The member's settings
/// decide how (plain text, or TLS with its peer certificate, read again
/// for each new connection); this crate only says where.
#[derive(Clone)]
pub struct Dialer(Arc<DialFn>);

type DialFn = dyn Fn(&str) -> Result<Channel, String> + Send + Sync;

impl Dialer {
    pub fn new(dial: impl Fn(&str) -> Result<Channel, String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(dial))
    }

    /// Plain-text channels (http:// peers).
    pub fn plain() -> Self {
        Self::new(|url| Ok(Channel::from_shared(url.to_owned()).map_err(|e| e.to_string())?.connect_lazy()))
    }

    pub fn dial(&self, url: &str) -> Result<Channel, String> {
        (self.0)(url)
    }
}

impl std::fmt::Debug for Dialer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dialer")
    }
}

impl Default for Dialer {
    fn default() -> Self {
        Self::plain()
    }
}

/// Creates (and caches) one client per peer.
#[derive(Debug, Clone, Default)]
pub struct PeerNetwork {
    channels: Arc<Mutex<HashMap<String, Channel>>>,
    /// Peer URL -> the URL actually dialled. Fault-injection harnesses put a
    /// proxy on every directed link this way; empty in normal operation.
    dial_overrides: Arc<HashMap<String, String>>,
    /// Since when each peer has been answering (etcd's transport "active
    /// since"): what strict reconfiguration checks count as connected.
    active_since: ActiveSince,
    /// Opens channels to peers.
    dialer: Dialer,
    /// What is sent to each peer, and how long probes take.
    stats: Arc<PeerStats>,
}

/// Peer -> (first answer of the current run, last answer).
type ActiveSince = Arc<Mutex<HashMap<u64, (Instant, Instant)>>>;

/// A peer silent this long is no longer active (heartbeats go out every
/// 100 ms; one slow RPC on a busy machine must not count as a disconnect).
const ACTIVE_GAP: Duration = Duration::from_secs(1);

impl PeerNetwork {
    pub fn new(dial_overrides: HashMap<String, String>, dialer: Dialer) -> Self {
        Self {
            channels: Arc::default(),
            dial_overrides: Arc::new(dial_overrides),
            active_since: ActiveSince::default(),
            dialer,
            stats: Arc::default(),
        }
    }

    /// The counters, shared with the peer service (bytes received).
    pub(crate) fn stats_handle(&self) -> Arc<PeerStats> {
        self.stats.clone()
    }

    pub fn stats(&self) -> &PeerStats {
        &self.stats
    }

    /// How long peer `id` has been answering without a silence of
    /// `ACTIVE_GAP` (`None`: it is silent now).
    pub fn active_for(&self, id: u64) -> Option<Duration> {
        let active = self.active_since.lock().unwrap_or_else(|e| e.into_inner());
        let (since, last) = active.get(&id)?;
        (last.elapsed() < ACTIVE_GAP).then(|| since.elapsed())
    }

    /// The cached channel to the first peer URL of `member`.
    pub fn channel(&self, member: &Member) -> Result<Channel, String> {
        let url = member.peer_urls.first().ok_or("member has no peer URL")?.clone();
        let mut channels = self.channels.lock().map_err(|_| "peer channel cache poisoned")?;
        if let Some(channel) = channels.get(&url) {
            return Ok(channel.clone());
        }
        let channel = self.dialer.dial(&dial_target(&url, &self.dial_overrides))?;
        channels.insert(url, channel.clone());
        Ok(channel)
    }
}

/// The URL to dial for peer URL `url`: itself, or the proxy a test hook
/// put in front of it (which passes TLS through, so an https:// peer is
/// dialled over https:// at the proxy too).
pub fn dial_target(url: &str, overrides: &HashMap<String, String>) -> String {
    match overrides.get(url) {
        Some(proxy) if url.starts_with("https://") => proxy.replacen("http://", "https://", 1),
        Some(proxy) => proxy.clone(),
        None => url.to_owned(),
    }
}

impl RaftNetworkFactory<TypeConfig> for PeerNetwork {
    type Network = PeerClient;

    async fn new_client(&mut self, target: u64, node: &Member) -> PeerClient {
        PeerClient {
            target,
            channel: self.channel(node),
            active_since: self.active_since.clone(),
            single_appends: false,
            counters: self.stats.peer(target),
        }
    }
}

pub struct PeerClient {
    target: u64,
    channel: Result<Channel, String>,
    active_since: ActiveSince,
    /// The peer answered that it serves no append stream (an older rtcd):
    /// appends go one unary call at a time, as before.
    single_appends: bool,
    counters: Arc<PeerCounters>,
}

/// Peer `target` answered just now.
fn record_answer(active_since: &ActiveSince, target: u64) {
    let now = Instant::now();
    let mut active = active_since.lock().unwrap_or_else(|e| e.into_inner());
    let (since, last) = active.entry(target).or_insert((now, now));
    if now.duration_since(*last) >= ACTIVE_GAP {
        *since = now;
    }
    *last = now;
}

impl PeerClient {
    fn client(&self) -> Result<RaftClient<Channel>, RPCError<TypeConfig>> {
        let channel = self.channel.clone().map_err(unreachable)?;
        Ok(RaftClient::new(channel)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX))
    }

    fn record_answer(&self) {
        record_answer(&self.active_since, self.target);
    }

    /// One request/response RPC, bounded by openraft's deadline.
    async fn call<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        kind: &str,
        req: &Req,
        option: &RPCOption,
    ) -> Result<Resp, RPCError<TypeConfig>> {
        let payload = wire::encode(req).map_err(network)?;
        let mut client = self.client().inspect_err(|_| self.counters.failed())?;
        self.counters.sent(payload.len());
        let message = RaftMessage { kind: kind.to_string(), payload: payload.into() };
        let ttl = option.hard_ttl();
        let reply = match tokio::time::timeout(ttl, client.call(message)).await {
            Ok(Ok(reply)) => {
                self.record_answer();
                reply.into_inner()
            }
            Ok(Err(status)) => {
                self.counters.failed();
                return Err(unreachable(status.message()));
            }
            Err(_) => {
                self.counters.failed();
                return Err(timed_out(self.target, ttl));
            }
        };
        let answer: Result<Resp, String> = wire::decode(&reply.payload).map_err(network)?;
        answer.map_err(network)
    }
}

impl RaftNetworkV2<TypeConfig> for PeerClient {
    type SnapshotData = std::fs::File;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        // openraft bounds an append by one heartbeat interval; a large batch
        // (and the follower's fsync) on a busy machine can take longer, and
        // giving up only resends the same entries later.
        let option = RPCOption::new(option.hard_ttl().max(APPEND_TIMEOUT_FLOOR));
        self.call(wire::APPEND, &rpc, &option).await
    }

    /// Appends go on one long-lived stream to the follower, pipelined
    /// (`append_stream`); openraft opens a new one after an error.
    fn stream_append<'s, S>(
        &'s mut self,
        input: S,
        option: RPCOption,
    ) -> BoxFuture<
        's,
        Result<
            BoxStream<'s, Result<StreamAppendResult<TypeConfig>, RPCError<TypeConfig>>>,
            RPCError<TypeConfig>,
        >,
    >
    where
        S: Stream<Item = AppendEntriesRequest<TypeConfig>> + Send + Unpin + 'static,
    {
        if self.single_appends {
            return stream_append_sequential(self, input, option);
        }
        // As for a single append: a follower's fsync on a busy machine can
        // take longer than the heartbeat interval openraft allows.
        let patience = option.soft_ttl().max(APPEND_TIMEOUT_FLOOR);
        let (target, active_since) = (self.target, self.active_since.clone());
        let (client, counters) = (self.client(), self.counters.clone());
        Box::pin(async move {
            let on_answer = move || record_answer(&active_since, target);
            let client = client.inspect_err(|_| counters.failed())?;
            match append_stream::open(client, target, input, patience, on_answer, counters).await? {
                Some(answers) => Ok(answers as BoxStream<'s, _>),
                None => {
                    // openraft retries with a new stream, which goes the old way.
                    self.single_appends = true;
                    Err(unreachable("the peer serves no append stream: falling back to single appends"))
                }
            }
        })
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.call(wire::VOTE, &rpc, &option).await
    }

    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.call(wire::PRE_VOTE, &rpc, &option).await
    }

    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        self.call(wire::TRANSFER_LEADER, &req, &option).await
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: SnapshotFile,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let network = |e: String| StreamingError::Network(NetworkError::from_string(e));
        let meta = wire::encode(&(vote, snapshot.meta.clone())).map_err(network)?;
        let mut client = self.client().map_err(|e| network(e.to_string()))?;
        let transfer = Transfer::sending(self.counters.clone());
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        // Reads the file in bounded chunks; the channel bounds memory.
        tokio::task::spawn_blocking(move || send_chunks(snapshot.snapshot, meta, &tx));
        let send = client.install_snapshot(tokio_stream::wrappers::ReceiverStream::new(rx));
        let reply = tokio::select! {
            closed = cancel => return Err(StreamingError::Closed(closed)),
            reply = send => reply.map_err(|s| {
                self.counters.failed();
                StreamingError::Unreachable(Unreachable::new(&std::io::Error::other(s.message().to_string())))
            })?,
        };
        let answer: Result<SnapshotResponse<TypeConfig>, String> =
            wire::decode(&reply.into_inner().payload).map_err(network)?;
        let installed = answer.map_err(network)?;
        transfer.succeeded();
        Ok(installed)
    }
}

fn send_chunks(mut file: std::fs::File, meta: Vec<u8>, tx: &tokio::sync::mpsc::Sender<SnapshotChunk>) {
    use std::io::{Read, Seek};
    if file.rewind().is_err() {
        return;
    }
    let mut meta = Some(meta);
    let mut offset = 0u64;
    loop {
        let mut data = vec![0; SNAPSHOT_CHUNK];
        let n = match file.read(&mut data) {
            Ok(n) => n,
            // Dropping the sender ends the stream without `done`: the
            // receiver rejects the incomplete snapshot.
            Err(_) => return,
        };
        data.truncate(n);
        let chunk = SnapshotChunk {
            meta: meta.take().unwrap_or_default().into(),
            offset,
            data: data.into(),
            done: n == 0,
        };
        offset += n as u64;
        if tx.blocking_send(chunk).is_err() || n == 0 {
            return;
        }
    }
}
