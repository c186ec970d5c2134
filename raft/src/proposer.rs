//! Proposals into the Raft log, in batches.
//!
//! Every write a member's clients send becomes one proposal. Handing each to
//! openraft on its own costs a message to the Raft core and, on a follower,
//! one gRPC call to the leader per write (a stream on the leader's HTTP/2
//! connection, headers and all): under load that per-write overhead was
//! most of the leader's CPU. Instead, proposals queue here and one task takes
//! whatever has queued since it last looked:
//!
//! * on the leader, the group goes to openraft in one call
//!   (`client_write_many`);
//! * on a follower, it goes to the leader in one `forward_batch` call, which
//!   the leader hands to openraft the same way.
//!
//! A lone proposal is sent at once (no timer), so a single client waits no
//! longer than before; groups form only when proposals arrive faster than
//! they can be handed on. A follower keeps at most `MAX_FORWARDS` forwarded
//! calls in flight: what arrives meanwhile becomes the next, larger group,
//! which is what keeps the number of calls per write low under load. On the
//! leader a group's slot is free as soon as openraft has it.
//!
//! A proposal's outcome here is only whether the leader put it in its log
//! and committed it; what it did is learnt from this member's own apply (see
//! `node`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::future::Future;

use futures_util::StreamExt;
use futures_util::future::join_all;
use futures_util::stream::FuturesUnordered;
use openraft::async_runtime::watch::WatchReceiver;
use openraft::error::ClientWriteError;
use rtcd_proto::rtcdraftpb::RaftMessage;
use rtcd_proto::rtcdraftpb::raft_client::RaftClient;
use serde_bytes::ByteBuf;
use tokio::sync::{mpsc, oneshot};

use crate::error::ReplicationError;
use crate::network::PeerNetwork;
use crate::types::{Command, Member};
use crate::{RtcdRaft, codec, read_index, wire};

/// At most this many proposals per group...
const MAX_GROUP: usize = 1024;
/// ...and at most about this many bytes (a proposal may be up to etcd's
/// 1.5 MiB request limit; a group always takes at least one).
const MAX_GROUP_BYTES: usize = 4 * 1024 * 1024;
/// Forwarded groups in flight at once, per member.
const MAX_FORWARDS: usize = 2;

/// What the leader answers for each proposal of a forwarded group: the log
/// index it committed at, or why not.
pub(crate) type ForwardOutcome = Result<u64, ReplicationError>;

struct Queued {
    proposal: Vec<u8>,
    done: oneshot::Sender<Result<(), ReplicationError>>,
}

/// The queue of proposals not yet handed on; cheap to share.
#[derive(Clone)]
pub(crate) struct Proposer {
    queue: mpsc::UnboundedSender<Queued>,
    route: Arc<Route>,
}

/// What sending a group needs.
struct Route {
    raft: RtcdRaft,
    id: u64,
    network: PeerNetwork,
    /// Groups handed on since startup (fewer than proposals under load).
    groups: AtomicU64,
}

impl Proposer {
    /// Starts the task that hands queued proposals on; it ends when the
    /// last `Proposer` is dropped.
    pub(crate) fn start(raft: RtcdRaft, id: u64, network: PeerNetwork) -> Self {
        let (queue, queued) = mpsc::unbounded_channel();
        let route = Arc::new(Route { raft, id, network, groups: AtomicU64::new(0) });
        tokio::spawn(take_groups(queued, route.clone()));
        Self { queue, route }
    }

    /// Groups handed to Raft or the leader since startup.
    pub(crate) fn groups(&self) -> u64 {
        self.route.groups.load(Ordering::Relaxed)
    }

    /// Resolves once the leader has committed `proposal`, or with why it
    /// will not be.
    pub(crate) async fn submit(&self, proposal: Vec<u8>) -> Result<(), ReplicationError> {
        let (done, outcome) = oneshot::channel();
        self.queue
            .send(Queued { proposal, done })
            .map_err(|_| ReplicationError::Stopped("the proposer stopped".into()))?;
        outcome.await.map_err(|_| ReplicationError::Stopped("the proposer stopped".into()))?
    }
}

async fn take_groups(mut queued: mpsc::UnboundedReceiver<Queued>, route: Arc<Route>) {
    let mut forwarding = FuturesUnordered::new();
    loop {
        tokio::select! {
            Some(()) = forwarding.next(), if !forwarding.is_empty() => {}
            next = queued.recv(), if forwarding.len() < MAX_FORWARDS => {
                let Some(first) = next else { break };
                let group = gather(first, &mut queued);
                forwarding.push(route.clone().send_group(group));
            }
        }
    }
}

/// `first` and whatever queued behind it, up to a group's limits.
fn gather(first: Queued, queued: &mut mpsc::UnboundedReceiver<Queued>) -> Vec<Queued> {
    let mut bytes = first.proposal.len();
    let mut group = vec![first];
    while group.len() < MAX_GROUP && bytes < MAX_GROUP_BYTES {
        let Ok(next) = queued.try_recv() else { break };
        bytes += next.proposal.len();
        group.push(next);
    }
    group
}

/// The same failure for each of `count` proposals.
fn all_failed(count: usize, error: ReplicationError) -> Vec<Result<(), ReplicationError>> {
    vec![Err(error); count]
}

/// Answers each proposal of a group with its outcome.
fn answer(
    waiting: Vec<oneshot::Sender<Result<(), ReplicationError>>>,
    outcomes: Vec<Result<(), ReplicationError>>,
) {
    for (done, outcome) in waiting.into_iter().zip(outcomes) {
        let _ = done.send(outcome);
    }
}

impl Route {
    /// Hands a group on. As leader, it returns once openraft has the group
    /// (its outcomes are awaited in a task of their own); as follower, once
    /// the leader has answered, so at most `MAX_FORWARDS` forwarded calls
    /// are in flight and proposals meanwhile gather into the next group.
    async fn send_group(self: Arc<Self>, group: Vec<Queued>) {
        self.groups.fetch_add(1, Ordering::Relaxed);
        let (proposals, waiting): (Vec<_>, Vec<_>) = group.into_iter().map(|q| (q.proposal, q.done)).unzip();
        let count = proposals.len();
        let all = |e| all_failed(count, e);
        let leader = {
            let metrics = self.raft.metrics();
            let m = metrics.borrow_watched();
            m.current_leader.map(|id| (id, m.membership_config.membership().get_node(&id).cloned()))
        };
        match leader {
            Some((id, _)) if id == self.id => {
                let written = write_many(&self.raft, proposals);
                match written.await {
                    Ok(outcomes) => {
                        tokio::spawn(async move { answer(waiting, committed(outcomes.await)) });
                    }
                    Err(stopped) => answer(waiting, all(stopped)),
                }
            }
            Some((id, Some(member))) => {
                // A leader that went silent is replaced within an election
                // or two; do not wait the whole request timeout for it.
                let outcomes = tokio::select! {
                    forwarded = self.forward(id, &member, proposals) => forwarded,
                    () = read_index::leader_changed(&self.raft, id) => all(ReplicationError::LeaderChanged),
                };
                answer(waiting, outcomes);
            }
            _ => answer(waiting, all(ReplicationError::NoLeader)),
        }
    }

    async fn forward(
        &self,
        id: u64,
        leader: &Member,
        proposals: Vec<Vec<u8>>,
    ) -> Vec<Result<(), ReplicationError>> {
        let count = proposals.len();
        let all = |e| all_failed(count, e);
        let counters = self.network.stats().peer(id);
        let Ok(channel) = self.network.channel(leader) else {
            counters.failed();
            return all(ReplicationError::NoLeader);
        };
        let group: Vec<ByteBuf> = proposals.into_iter().map(ByteBuf::from).collect();
        let Ok(payload) = wire::encode(&group) else { return all(ReplicationError::NoLeader) };
        counters.sent(payload.len());
        let message = RaftMessage { kind: wire::FORWARD_BATCH.into(), payload: payload.into() };
        let answered = match RaftClient::new(channel.clone()).call(message).await {
            Ok(reply) => reply.into_inner(),
            // A leader older than `forward_batch` knows only one proposal
            // per call (only while a cluster is being upgraded).
            Err(status) if status.code() == tonic::Code::Unimplemented => {
                let singles = group.into_iter().map(|p| forward_one(channel.clone(), p.into_vec()));
                return join_all(singles).await;
            }
            Err(_) => {
                counters.failed();
                return all(ReplicationError::NoLeader);
            }
        };
        let outcomes = wire::decode::<Result<Vec<ForwardOutcome>, String>>(&answered.payload);
        match outcomes.and_then(|answer| answer) {
            Ok(outcomes) if outcomes.len() == count => committed(outcomes),
            Ok(_) => {
                all(ReplicationError::Stopped("the leader answered a forwarded group out of step".into()))
            }
            Err(_) => all(ReplicationError::LeaderChanged),
        }
    }
}

/// The single-proposal `Forward` call that leaders before `forward_batch`
/// serve.
async fn forward_one(channel: tonic::transport::Channel, proposal: Vec<u8>) -> Result<(), ReplicationError> {
    let message = RaftMessage { kind: wire::FORWARD.into(), payload: proposal.into() };
    let reply = RaftClient::new(channel).forward(message).await.map_err(|_| ReplicationError::NoLeader)?;
    // Leaders before `forward_batch` answer a text.
    let committed: Result<u64, String> =
        wire::decode(&reply.into_inner().payload).map_err(ReplicationError::Stopped)?;
    committed.map(|_| ()).map_err(|_| ReplicationError::LeaderChanged)
}

/// Hands `proposals` to this member's Raft in one call; the returned
/// future resolves once each is committed (or refused: this member no
/// longer leads), with the outcomes in order.
async fn write_many(
    raft: &RtcdRaft,
    proposals: Vec<Vec<u8>>,
) -> Result<impl Future<Output = Vec<ForwardOutcome>> + Send + 'static, ReplicationError> {
    let count = proposals.len();
    let commands = proposals.into_iter().map(|proposal| Command { proposal });
    let mut written = raft
        .client_write_many(commands)
        .await
        .map_err(|fatal| ReplicationError::Stopped(fatal.to_string()))?;
    Ok(async move {
        let mut outcomes = Vec::with_capacity(count);
        for _ in 0..count {
            outcomes.push(match written.next().await {
                Some(Ok(Ok(response))) => Ok(response.log_id.index),
                Some(Ok(Err(ClientWriteError::ForwardToLeader(_)))) => Err(ReplicationError::NotLeader),
                Some(Ok(Err(ClientWriteError::LogEntryDiscarded(_)))) => Err(ReplicationError::LeaderChanged),
                Some(Ok(Err(other))) => Err(ReplicationError::Rejected(other.to_string())),
                Some(Err(fatal)) => Err(ReplicationError::Stopped(fatal.to_string())),
                None => Err(ReplicationError::Stopped("raft stopped".to_string())),
            });
        }
        outcomes
    })
}

/// The leader's outcomes as this member's clients hear them: a leader that
/// no longer leads dropped the proposal, which etcd's clients know as
/// "leader changed"; every other refusal is passed on as it is.
fn committed(outcomes: Vec<ForwardOutcome>) -> Vec<Result<(), ReplicationError>> {
    let heard = |error| match error {
        ReplicationError::NotLeader => ReplicationError::LeaderChanged,
        other => other,
    };
    outcomes.into_iter().map(|o| o.map(|_| ()).map_err(heard)).collect()
}

/// The leader's side of `forward_batch`: what a follower forwarded, written
/// as one group. Proposals that do not decode are refused here: once
/// committed, an entry no member can decode would stop every member's state
/// machine.
pub(crate) async fn accept_forwarded(raft: &RtcdRaft, proposals: Vec<ByteBuf>) -> Vec<ForwardOutcome> {
    let mut refused: Vec<Option<ReplicationError>> = Vec::with_capacity(proposals.len());
    let mut valid = Vec::with_capacity(proposals.len());
    for proposal in proposals {
        match codec::decode(&proposal) {
            Ok(_) => {
                refused.push(None);
                valid.push(proposal.into_vec());
            }
            Err(e) => refused.push(Some(ReplicationError::Undecodable(e.to_string()))),
        }
    }
    let count = valid.len();
    let mut written = match write_many(raft, valid).await {
        Ok(outcomes) => outcomes.await,
        Err(stopped) => vec![Err(stopped); count],
    }
    .into_iter();
    refused
        .into_iter()
        .map(|refusal| match refusal {
            Some(why) => Err(why),
            None => written.next().unwrap_or_else(|| Err(ReplicationError::Stopped("raft stopped".into()))),
        })
        .collect()
}
