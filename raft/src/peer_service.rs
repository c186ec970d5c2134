//! The peer transport, server side: `rtcdraftpb.Raft` on the peer URL,
//! handing openraft's RPCs to the local Raft and accepting proposals that
//! followers forward to the leader.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use openraft::raft::{AppendEntriesRequest, VoteRequest};
use rtcd_proto::rtcdraftpb::{RaftMessage, SnapshotChunk, raft_server};
use serde::Serialize;
use tonic::{Request, Response, Status, Streaming};

use crate::RtcdRaft;
use crate::append_stream;
use crate::error::ReplicationError;
use crate::peer_stats::{PeerStats, Transfer};
use crate::proposer;
use crate::types::{SnapshotFile, SnapshotMeta, TypeConfig, Vote};
use crate::wire;

/// When this member last accepted an append from a leader: a follower that
/// has not heard from its leader for an election timeout no longer counts it
/// as leader (etcd clears its leader when its election timer fires, even if
/// pre-vote then keeps it from campaigning).
#[derive(Debug)]
pub struct LeaderContact {
    base: Instant,
    /// Milliseconds since `base`; 0 = never.
    last: AtomicU64,
}

impl Default for LeaderContact {
    fn default() -> Self {
        Self { base: Instant::now(), last: AtomicU64::new(0) }
    }
}

impl LeaderContact {
    pub(crate) fn heard(&self) {
        let ms = self.base.elapsed().as_millis() as u64;
        self.last.store(ms.max(1), Ordering::Relaxed);
    }

    pub fn heard_within(&self, window: Duration) -> bool {
        let last = self.last.load(Ordering::Relaxed);
        last != 0 && self.base.elapsed().as_millis() as u64 <= last + window.as_millis() as u64
    }
}

pub struct PeerService {
    raft: RtcdRaft,
    /// Updated on every append (heartbeats included) this member accepts.
    contact: Arc<LeaderContact>,
    /// Where incoming snapshots are written before they are installed.
    incoming_dir: PathBuf,
    /// Bytes received are counted by the peer whose vote a message carries.
    stats: Arc<PeerStats>,
}

impl PeerService {
    pub fn new(
        raft: RtcdRaft,
        contact: Arc<LeaderContact>,
        incoming_dir: PathBuf,
        stats: Arc<PeerStats>,
    ) -> Self {
        Self { raft, contact, incoming_dir, stats }
    }

    /// Counts `bytes` received from the member that `vote` is for (the
    /// leader sending an append or snapshot, the candidate asking a vote).
    fn received(&self, vote: &Vote, bytes: usize) {
        self.stats.peer(vote.leader_id().node_id).received(bytes);
    }

    pub fn into_server(self) -> raft_server::RaftServer<Self> {
        raft_server::RaftServer::new(self)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX)
    }
}

fn reply<T: Serialize, E: ToString>(
    kind: &str,
    result: Result<T, E>,
) -> Result<Response<RaftMessage>, Status> {
    let answer: Result<T, String> = result.map_err(|e| e.to_string());
    let payload = wire::encode(&answer).map_err(Status::internal)?;
    Ok(Response::new(RaftMessage { kind: kind.to_string(), payload: payload.into() }))
}

#[tonic::async_trait]
impl raft_server::Raft for PeerService {
    async fn call(&self, request: Request<RaftMessage>) -> Result<Response<RaftMessage>, Status> {
        let message = request.into_inner();
        let bad = |e: String| Status::invalid_argument(format!("rtcd peer: {e}"));
        match message.kind.as_str() {
            wire::APPEND => {
                let rpc: AppendEntriesRequest<TypeConfig> = wire::decode(&message.payload).map_err(bad)?;
                self.received(&rpc.vote, message.payload.len());
                let appended = self.raft.append_entries(rpc).await;
                if appended.as_ref().is_ok_and(|r| r.is_success()) {
                    self.contact.heard();
                }
                reply(wire::APPEND, appended)
            }
            wire::VOTE => {
                let rpc: VoteRequest<TypeConfig> = wire::decode(&message.payload).map_err(bad)?;
                self.received(&rpc.vote, message.payload.len());
                reply(wire::VOTE, self.raft.vote(rpc).await)
            }
            wire::PRE_VOTE => {
                let rpc: VoteRequest<TypeConfig> = wire::decode(&message.payload).map_err(bad)?;
                self.received(&rpc.vote, message.payload.len());
                reply(wire::PRE_VOTE, self.raft.pre_vote(rpc).await)
            }
            wire::TRANSFER_LEADER => {
                let rpc = wire::decode(&message.payload).map_err(bad)?;
                reply(wire::TRANSFER_LEADER, self.raft.handle_transfer_leader(rpc).await)
            }
            wire::READ_INDEX => {
                let confirmed = self.raft.ensure_linearizable(openraft::ReadPolicy::ReadIndex).await;
                reply(wire::READ_INDEX, confirmed.map(|read| read.index()))
            }
            wire::FORWARD_BATCH => {
                let proposals: Vec<serde_bytes::ByteBuf> = wire::decode(&message.payload).map_err(bad)?;
                let outcomes = proposer::accept_forwarded(&self.raft, proposals).await;
                reply(wire::FORWARD_BATCH, Ok::<_, String>(outcomes))
            }
            wire::PROBE => reply(wire::PROBE, Ok::<(), String>(())),
            other => Err(Status::unimplemented(format!("rtcd peer: unknown call {other:?}"))),
        }
    }

    type AppendStreamStream = append_stream::Replies;

    async fn append_stream(
        &self,
        request: Request<Streaming<RaftMessage>>,
    ) -> Result<Response<Self::AppendStreamStream>, Status> {
        let contact = self.contact.clone();
        let stats = self.stats.clone();
        let received = move |rpc: &AppendEntriesRequest<TypeConfig>, bytes: usize| {
            stats.peer(rpc.vote.leader_id().node_id).received(bytes)
        };
        Ok(Response::new(append_stream::serve(
            &self.raft,
            move || contact.heard(),
            received,
            request.into_inner(),
        )))
    }

    async fn install_snapshot(
        &self,
        request: Request<Streaming<SnapshotChunk>>,
    ) -> Result<Response<RaftMessage>, Status> {
        // Counted from the first chunk, which names the sender.
        let mut transfer = None;
        let received = self.receive_snapshot(request.into_inner(), |vote| {
            transfer = Some(Transfer::receiving(self.stats.peer(vote.leader_id().node_id)));
        });
        let (vote, meta, file, bytes) = received.await?;
        self.received(&vote, bytes as usize);
        let installing = self.stats.installing();
        let outcome = self.raft.install_full_snapshot(vote, SnapshotFile { meta, snapshot: file }).await;
        drop(installing);
        if let (Some(transfer), Ok(_)) = (transfer, &outcome) {
            transfer.succeeded();
        }
        reply("snapshot", outcome)
    }

    async fn forward(&self, request: Request<RaftMessage>) -> Result<Response<RaftMessage>, Status> {
        // What followers before `forward_batch` send: a group of one.
        let proposal = serde_bytes::ByteBuf::from(request.into_inner().payload.to_vec());
        let outcome = proposer::accept_forwarded(&self.raft, vec![proposal]).await.pop();
        // Such followers read a text.
        let outcome = outcome.unwrap_or_else(|| Err(ReplicationError::Stopped("raft stopped".into())));
        reply(wire::FORWARD, outcome.map_err(|e| e.to_string()))
    }
}

impl PeerService {
    /// Writes the streamed snapshot to a file; only a stream that ends with
    /// `done` counts (a broken one leaves nothing to install). With the
    /// file, its size.
    async fn receive_snapshot(
        &self,
        mut chunks: Streaming<SnapshotChunk>,
        mut on_header: impl FnMut(&Vote),
    ) -> Result<(Vote, SnapshotMeta, std::fs::File, u64), Status> {
        use std::io::{Seek, Write};
        std::fs::create_dir_all(&self.incoming_dir).map_err(|e| Status::internal(e.to_string()))?;
        let path = self.incoming_dir.join("incoming.snap");
        let mut file = std::fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| Status::internal(e.to_string()))?;
        let mut header: Option<(Vote, SnapshotMeta)> = None;
        let mut expected = 0u64;
        while let Some(chunk) = chunks.message().await? {
            if header.is_none() {
                let decoded: (Vote, SnapshotMeta) =
                    wire::decode(&chunk.meta).map_err(Status::invalid_argument)?;
                on_header(&decoded.0);
                header = Some(decoded);
            }
            if chunk.offset != expected {
                return Err(Status::invalid_argument("rtcd peer: snapshot chunk out of order"));
            }
            file.write_all(&chunk.data).map_err(|e| Status::internal(e.to_string()))?;
            expected += chunk.data.len() as u64;
            if chunk.done {
                let (vote, meta) =
                    header.ok_or_else(|| Status::invalid_argument("rtcd peer: snapshot without meta"))?;
                file.sync_all().map_err(|e| Status::internal(e.to_string()))?;
                file.rewind().map_err(|e| Status::internal(e.to_string()))?;
                return Ok((vote, meta, file, expected));
            }
        }
        Err(Status::aborted("rtcd peer: snapshot stream ended early"))
    }
}
