//! Linearizable reads share quorum rounds, as etcd batches its ReadIndex
//! requests.
//!
//! A read may be served once this member has applied a read index confirmed
//! by a quorum round that *started after the read arrived*. So every read
//! that arrives while a round is in flight waits for the next one, and that
//! next round serves all of them: under load a member runs one round (on a
//! follower, one call to the leader) per round trip rather than one per
//! read, and no read waits for more than two rounds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::ReadPolicy;
use openraft::error::{LinearizableReadError, RaftError};
use rtcd_proto::rtcdraftpb::RaftMessage;
use rtcd_proto::rtcdraftpb::raft_client::RaftClient;
use tokio::sync::oneshot;

use crate::error::ReplicationError;
use crate::network::PeerNetwork;
use crate::types::Member;
use crate::{RtcdRaft, wire};

/// Pause before asking a new leader again.
const LEADER_RETRY_PAUSE: Duration = Duration::from_millis(20);

type Waiter = oneshot::Sender<Result<(), ReplicationError>>;

pub(crate) struct ReadBatcher {
    raft: RtcdRaft,
    network: PeerNetwork,
    /// Bounds one round, so a lost leader fails the batch rather than
    /// leaving later reads queued behind it.
    round_timeout: Duration,
    /// How long a round waits for a leader while none is known (etcd's
    /// reads wait for the next leader rather than fail).
    leader_wait: Duration,
    queue: Mutex<Queue>,
    /// Rounds run so far (fewer than reads when batching works).
    rounds: AtomicU64,
}

#[derive(Default)]
struct Queue {
    /// Reads that arrived after the current round (if any) started.
    waiting: Vec<Waiter>,
    /// Whether a task is running rounds.
    running: bool,
}

impl ReadBatcher {
    pub(crate) fn new(
        raft: RtcdRaft,
        network: PeerNetwork,
        round_timeout: Duration,
        leader_wait: Duration,
    ) -> Arc<Self> {
        let (queue, rounds) = (Mutex::default(), AtomicU64::new(0));
        Arc::new(Self { raft, network, round_timeout, leader_wait, queue, rounds })
    }

    /// Resolves once this member has applied everything committed before
    /// the call (a read index from a quorum round that started after it).
    pub(crate) async fn barrier(self: &Arc<Self>) -> Result<(), ReplicationError> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut queue = self.queue.lock().map_err(|_| stopped(&"read queue poisoned"))?;
            queue.waiting.push(tx);
            !std::mem::replace(&mut queue.running, true)
        };
        if start {
            tokio::spawn(self.clone().run_rounds());
        }
        rx.await.map_err(|_| stopped(&"read rounds stopped"))?
    }

    pub(crate) fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Runs rounds while reads are waiting: each takes every read queued
    /// before it starts.
    async fn run_rounds(self: Arc<Self>) {
        loop {
            let batch = match self.queue.lock() {
                Ok(mut queue) if queue.waiting.is_empty() => {
                    queue.running = false;
                    return;
                }
                Ok(mut queue) => std::mem::take(&mut queue.waiting),
                // A poisoned queue (a panic while it was held): nothing more
                // can be served here; queued reads end at their timeout.
                Err(_) => return,
            };
            self.rounds.fetch_add(1, Ordering::Relaxed);
            let outcome = tokio::time::timeout(self.round_timeout, self.round())
                .await
                .unwrap_or(Err(ReplicationError::Timeout));
            for waiter in batch {
                let _ = waiter.send(outcome.clone());
            }
        }
    }

    /// One round: a read index confirmed by a quorum, applied here.
    async fn round(&self) -> Result<(), ReplicationError> {
        loop {
            let (leader_id, leader) = match self.raft.ensure_linearizable(ReadPolicy::ReadIndex).await {
                Ok(_) => return Ok(()),
                Err(RaftError::APIError(LinearizableReadError::ForwardToLeader(to))) => {
                    match (to.leader_id, to.leader_node) {
                        (Some(id), Some(node)) => (id, node),
                        // Leadership is moving (an election, a transfer):
                        // wait for the next leader, then ask it.
                        (None, _) => {
                            self.await_leader().await?;
                            tokio::time::sleep(LEADER_RETRY_PAUSE).await;
                            continue;
                        }
                        _ => return Err(ReplicationError::NoLeader),
                    }
                }
                Err(RaftError::APIError(_)) => return Err(ReplicationError::NoLeader),
                Err(RaftError::Fatal(e)) => return Err(stopped(&e)),
            };
            // A follower asks the leader for the read index, then waits until
            // its own apply has reached it. If the leader is replaced
            // meanwhile, ask the new one: reads can be retried safely.
            let asked = tokio::select! {
                index = self.ask_leader(&leader) => index,
                () = leader_changed(&self.raft, leader_id) => {
                    tokio::time::sleep(LEADER_RETRY_PAUSE).await;
                    continue;
                }
            };
            let index = match asked {
                Ok(index) => index,
                // The leader asked has just stepped down (a transfer): ask
                // the next one once this member knows it.
                Err(e) => {
                    let moved =
                        tokio::time::timeout(self.leader_wait, leader_changed(&self.raft, leader_id)).await;
                    if moved.is_err() {
                        return Err(e);
                    }
                    tokio::time::sleep(LEADER_RETRY_PAUSE).await;
                    continue;
                }
            };
            return self
                .raft
                .wait(None)
                .applied_index_at_least(Some(index), "read index")
                .await
                .map(|_| ())
                .map_err(|e| stopped(&e));
        }
    }

    /// Waits (a bounded while) until this member knows a leader.
    async fn await_leader(&self) -> Result<(), ReplicationError> {
        let known =
            self.raft.wait(Some(self.leader_wait)).metrics(|m| m.current_leader.is_some(), "a leader").await;
        known.map(drop).map_err(|_| ReplicationError::NoLeader)
    }

    async fn ask_leader(&self, leader: &Member) -> Result<u64, ReplicationError> {
        let channel = self.network.channel(leader).map_err(|_| ReplicationError::NoLeader)?;
        let message = RaftMessage { kind: wire::READ_INDEX.into(), payload: Default::default() };
        let reply = RaftClient::new(channel).call(message).await.map_err(|_| ReplicationError::NoLeader)?;
        let index: Result<u64, String> =
            wire::decode(&reply.into_inner().payload).map_err(ReplicationError::Stopped)?;
        index.map_err(|_| ReplicationError::NoLeader)
    }
}

/// Resolves once `raft`'s view of the leader is no longer `leader`.
pub(crate) async fn leader_changed(raft: &RtcdRaft, leader: u64) {
    let _ = raft.wait(None).metrics(|m| m.current_leader != Some(leader), "leader change").await;
}

fn stopped(e: &dyn std::fmt::Display) -> ReplicationError {
    ReplicationError::Stopped(e.to_string())
}
