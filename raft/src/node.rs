//! One member's replication, as the server sees it: propose a write and get
//! its outcome (from this member's own apply), wait for a linearizable read
//! point, know the leader and term. Nothing here leaks openraft types.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::wal_stats::WalStats;
use openraft::Instant as _;
use openraft::async_runtime::watch::WatchReceiver;
use openraft::error::RaftError;
use openraft::vote::RaftLeaderId;
use openraft::{Config, ReadPolicy, SnapshotPolicy};
use rtcd_store::{Applied, Caller, Store, StoreError, WriteRequest};
use tokio::sync::oneshot;

use crate::error::ReplicationError;
use crate::log_store::RocksLogStore;
use crate::network::PeerNetwork;
use crate::peer_service::{LeaderContact, PeerService};
use crate::proposer::Proposer;
use crate::read_index::ReadBatcher;
use crate::state_machine::{AppliedEntry, ApplyListener, StoreStateMachine};
use crate::types::Member;
use crate::{RtcdRaft, codec};
use rtcd_proto::rtcdraftpb::raft_server::RaftServer;

/// What a member does with every applied batch, in log order, before the
/// proposers hear back (feed its watch hub, its lease timers). It may take
/// the events out of the outcomes.
pub type ApplySink = Arc<dyn Fn(&mut [AppliedEntry]) + Send + Sync>;

#[derive(Debug, Clone)]
pub struct RaftConfig {
    pub id: u64,
    /// Holds `log/` (the Raft log) and `snapshots/`.
    pub dir: PathBuf,
    /// The initial cluster, including this member.
    pub members: BTreeMap<u64, Member>,
    pub heartbeat_ms: u64,
    pub election_timeout_ms: u64,
    /// Log entries between snapshots (etcd's --snapshot-count), at least: see
    /// `snapshot_policy`.
    pub snapshot_count: u64,
    /// Entries kept in the log behind a snapshot, for followers slightly
    /// behind (further behind, they get the snapshot).
    pub logs_to_keep: u64,
    /// How long a proposal may take before the client hears "request timed out".
    pub request_timeout: Duration,
    /// Peer URL -> URL to dial instead (fault-injection proxies); usually empty.
    pub dial_overrides: HashMap<String, String>,
    /// How peers are dialled (TLS for https:// peer URLs).
    pub dialer: crate::network::Dialer,
}

/// Proposals waiting for this member's apply, and the member's apply sink.
struct Waiters {
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Applied, StoreError>>>>,
    sink: ApplySink,
}

impl ApplyListener for Waiters {
    fn applied(&self, mut entries: Vec<AppliedEntry>) {
        (self.sink)(&mut entries);
        let Ok(mut pending) = self.pending.lock() else { return };
        for entry in entries {
            if let Some(waiter) = pending.remove(&entry.proposal) {
                let _ = waiter.send(entry.outcome);
            }
        }
    }
}

pub struct RaftNode {
    raft: RtcdRaft,
    /// The log's WAL sync durations.
    /// What the Raft log's writes and syncs cost (etcd's WAL metrics).
    wal: Arc<WalStats>,
    id: u64,
    waiters: Arc<Waiters>,
    reads: Arc<ReadBatcher>,
    /// High 32 bits: this process's salt; low: a counter. Unique across the
    /// cluster because every member applies every proposal and must not
    /// mistake another member's proposal for its own.
    next_proposal: AtomicU64,
    pub(crate) network: PeerNetwork,
    /// Hands proposals to the leader in groups.
    proposer: Proposer,
    request_timeout: Duration,
    /// When a leader last reached this member (see `peer_service`).
    contact: Arc<LeaderContact>,
    /// How long a leader counts as one without hearing from a quorum
    /// (openraft's lease: the longest election timeout, see `start`).
    leader_lease: Duration,
}

impl std::fmt::Debug for RaftNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RaftNode").field("id", &self.id).finish_non_exhaustive()
    }
}

impl RaftNode {
    /// Starts Raft over `store`; a brand-new cluster is initialized by its
    /// lowest-ID member.
    pub async fn start(
        config: RaftConfig,
        store: Arc<Store>,
        sink: ApplySink,
    ) -> Result<Self, ReplicationError> {
        let stopped = |e: &dyn std::fmt::Display| ReplicationError::Stopped(e.to_string());
        let raft_config = Config {
            cluster_name: "rtcd".into(),
            heartbeat_interval: config.heartbeat_ms,
            // openraft's leader lease is the longest election timeout:
            // followers refuse votes until it has passed since they last
            // heard from the leader. Timers in [ET/2, ET] keep that lease at
            // one election timeout, so a lost leader is replaced about as
            // fast as etcd's [ET, 2 ET) timers with no lease replace it.
            election_timeout_min: (config.election_timeout_ms / 2).max(config.heartbeat_ms * 2),
            election_timeout_max: config.election_timeout_ms,
            // `snapshot_policy` decides (it knows the store's size).
            snapshot_policy: SnapshotPolicy::Never,
            max_in_snapshot_log_to_keep: config.logs_to_keep,
            // Further behind than what the log still holds: send a snapshot.
            replication_lag_threshold: config.snapshot_count.max(1) + config.logs_to_keep,
            // A member whose timer fires while the others still hear the
            // leader must not bump its term and depose that leader (etcd's
            // --pre-vote, on by default since 3.5).
            enable_pre_vote: Some(true),
            // A leader restarted after SIGKILL may lack entries of its own
            // term that the followers acknowledged (its fsync runs beside
            // replication); resuming that term without an election, it
            // could write other entries under their indexes. It joins an
            // election instead, as etcd's members do, which only a member
            // holding every committed entry can win.
            enable_leader_restore: Some(false),
            ..Default::default()
        }
        .validate()
        .map_err(|e| stopped(&e))?;
        let lag = crate::fault::leader_lag();
        let log = RocksLogStore::open(config.dir.join("log"), config.id)
            .map_err(|e| stopped(&e))?
            .with_own_entries_late(lag);
        let wal = log.wal_stats();
        let waiters = Arc::new(Waiters { pending: Mutex::default(), sink });
        let sm = StoreStateMachine::new(store.clone(), config.dir.join("snapshots"), waiters.clone())
            .map_err(|e| stopped(&e))?
            .with_own_entries_late(config.id, lag);
        let network = PeerNetwork::new(config.dial_overrides.clone(), config.dialer.clone());
        let raft = RtcdRaft::new(config.id, Arc::new(raft_config), network.clone(), log, sm)
            .await
            .map_err(|e| stopped(&e))?;
        let first = config.members.keys().next().copied();
        if first == Some(config.id) && !raft.is_initialized().await.map_err(|e| stopped(&e))? {
            raft.initialize(config.members.clone()).await.map_err(|e| stopped(&e))?;
        }
        let salt = (config.id ^ startup_nanos()) << 32;
        // A read arriving while leadership moves waits this long for the
        // next leader (an election or a transfer ends well within it).
        let leader_wait = Duration::from_millis(config.election_timeout_ms * 2);
        let reads = ReadBatcher::new(raft.clone(), network.clone(), config.request_timeout, leader_wait);
        let proposer = Proposer::start(raft.clone(), config.id, network.clone());
        crate::snapshot_policy::spawn(raft.clone(), Arc::downgrade(&store), config.snapshot_count.max(1));
        crate::prober::spawn(raft.clone(), config.id, network.clone(), Arc::downgrade(&store));
        Ok(Self {
            raft,
            wal,
            id: config.id,
            waiters,
            reads,
            proposer,
            next_proposal: AtomicU64::new(salt),
            network,
            request_timeout: config.request_timeout,
            leader_lease: Duration::from_millis(config.election_timeout_ms),
            contact: Arc::default(),
        })
    }

    pub fn raft(&self) -> &RtcdRaft {
        &self.raft
    }

    /// The peer service for this member's Raft, to serve on its peer URLs;
    /// incoming snapshots are staged in `incoming_dir`.
    pub fn peer_service(&self, incoming_dir: PathBuf) -> RaftServer<PeerService> {
        let stats = self.network.stats_handle();
        PeerService::new(self.raft.clone(), self.contact.clone(), incoming_dir, stats).into_server()
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Replicates `request` and returns its outcome as applied here. A
    /// follower hands the proposal to the leader and still answers from its
    /// own apply, so the response reflects this member's state.
    pub async fn propose(
        &self,
        request: WriteRequest,
    ) -> Result<Result<Applied, StoreError>, ReplicationError> {
        self.propose_for(request, &Caller::Member).await
    }

    /// [`Node::propose`] for a client: its permissions are checked when the
    /// request applies.
    pub async fn propose_for(
        &self,
        request: WriteRequest,
        caller: &Caller,
    ) -> Result<Result<Applied, StoreError>, ReplicationError> {
        let id = self.next_proposal.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.waiters.pending.lock() {
            pending.insert(id, tx);
        }
        let proposal = codec::encode(id, request, caller);
        let outcome = tokio::time::timeout(self.request_timeout, self.committed_and_applied(proposal, rx))
            .await
            .unwrap_or(Err(ReplicationError::Timeout));
        if outcome.is_err()
            && let Ok(mut pending) = self.waiters.pending.lock()
        {
            pending.remove(&id);
        }
        outcome
    }

    /// Submits `proposal` and waits for this member to apply it. The apply
    /// (signalled on `applied`) usually comes before the proposer hears that
    /// the leader committed it, and answers the client at once; the
    /// proposer's answer matters only when it is a failure.
    async fn committed_and_applied(
        &self,
        proposal: Vec<u8>,
        mut applied: oneshot::Receiver<Result<Applied, StoreError>>,
    ) -> Result<Result<Applied, StoreError>, ReplicationError> {
        let dropped = |_| ReplicationError::Stopped("apply listener dropped".into());
        tokio::select! {
            biased;
            outcome = &mut applied => outcome.map_err(dropped),
            submitted = self.proposer.submit(proposal) => {
                submitted?;
                applied.await.map_err(dropped)
            }
        }
    }

    /// Confirms that this member still leads: a heartbeat round acknowledged
    /// by a quorum after the call started. `NotLeader` if another member
    /// leads now.
    pub async fn confirm_leadership(&self) -> Result<(), ReplicationError> {
        let confirmed = self.raft.ensure_linearizable(ReadPolicy::ReadIndex);
        match tokio::time::timeout(self.request_timeout, confirmed).await {
            Err(_) => Err(ReplicationError::Timeout),
            Ok(Ok(_)) => Ok(()),
            Ok(Err(RaftError::APIError(_))) => Err(ReplicationError::NotLeader),
            Ok(Err(RaftError::Fatal(e))) => Err(ReplicationError::Stopped(e.to_string())),
        }
    }

    /// Waits until this member has applied everything committed when the
    /// call started (a read index confirmed by a quorum), so a read that
    /// follows sees every write acknowledged before it. Concurrent reads
    /// share quorum rounds (`read_index`).
    pub async fn read_barrier(&self) -> Result<(), ReplicationError> {
        tokio::time::timeout(self.request_timeout, self.reads.barrier())
            .await
            .map_err(|_| ReplicationError::Timeout)?
    }

    /// Groups of proposals handed to Raft (as leader) or to the leader since
    /// startup: fewer than the proposals when concurrent ones share groups.
    pub fn proposal_groups(&self) -> u64 {
        self.proposer.groups()
    }

    /// Quorum rounds run for linearizable reads since startup (fewer than
    /// the reads when concurrent ones share rounds).
    pub fn read_rounds(&self) -> u64 {
        self.reads.rounds()
    }

    /// Asks the current leader (this member) to hand leadership to `to` and
    /// waits until `to` leads.
    pub async fn transfer_leadership(&self, to: u64) -> Result<(), ReplicationError> {
        self.raft
            .trigger()
            .transfer_leader(to)
            .await
            .map_err(|e| ReplicationError::Stopped(e.to_string()))?;
        self.raft
            .wait(Some(self.request_timeout))
            .metrics(|m| m.current_leader == Some(to), "leadership transfer")
            .await
            .map(|_| ())
            .map_err(|_| ReplicationError::Timeout)
    }

    /// A channel to the leader's peer URL, for requests only the leader can
    /// answer; `Ok(None)` when this member leads.
    pub fn leader_channel(&self) -> Result<Option<tonic::transport::Channel>, ReplicationError> {
        let m = self.raft.metrics().borrow_watched().clone();
        let leader = m.current_leader.ok_or(ReplicationError::NoLeader)?;
        if leader == self.id {
            return Ok(None);
        }
        let member = m.membership_config.membership().get_node(&leader).ok_or(ReplicationError::NoLeader)?;
        self.network.channel(member).map(Some).map_err(|_| ReplicationError::NoLeader)
    }

    /// Whether this member leads and has applied an entry of its own term,
    /// hence everything earlier leaders committed (when etcd promotes its
    /// lessor).
    pub fn leads_applied_term(&self) -> bool {
        if self.leader() != Some(self.id) {
            return false;
        }
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        m.last_applied.as_ref().is_some_and(|l| l.committed_leader_id().term() == m.current_term)
    }

    /// The leader as this member sees it. A leader that has not heard from
    /// a quorum for a leader lease does not count: etcd's CheckQuorum would
    /// have made it step down, while openraft keeps it in place (refusing
    /// its proposals) until it learns of a newer leader. Nor does, for a
    /// follower, a leader it has not heard from for that long.
    pub fn leader(&self) -> Option<u64> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        let leader = m.current_leader?;
        if leader != self.id {
            return self.contact.heard_within(self.leader_lease).then_some(leader);
        }
        let sole_voter = m.membership_config.membership().voter_ids().count() <= 1;
        let quorum_heard = m.last_quorum_acked.as_ref().is_some_and(|at| at.elapsed() < self.leader_lease);
        (sole_voter || quorum_heard).then_some(leader)
    }

    /// What the peer transport counted for each peer.
    pub fn peer_stats(&self) -> Vec<(u64, Arc<crate::peer_stats::PeerCounters>)> {
        self.network.stats().all()
    }

    /// What the Raft log's writes and syncs cost (etcd's WAL metrics).
    pub fn wal_stats(&self) -> &WalStats {
        &self.wal
    }

    pub fn term(&self) -> u64 {
        self.raft.metrics().borrow_watched().current_term
    }

    /// The last log index applied here and the last committed one known.
    pub fn indexes(&self) -> (u64, u64) {
        let m = self.raft.metrics().borrow_watched().clone();
        let applied = m.last_applied.map_or(0, |l| l.index);
        (applied, m.last_log_index.unwrap_or(0).max(applied))
    }

    /// Snapshots from a leader being installed now.
    pub fn snapshots_installing(&self) -> i64 {
        self.network.stats().snapshots_installing()
    }

    /// Whether this member is a learner: in the membership, without a vote.
    pub fn is_learner(&self) -> bool {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        let config = m.membership_config.membership();
        config.get_node(&self.id).is_some() && !config.voter_ids().any(|id| id == self.id)
    }

    /// The current voters and learners, by ID.
    pub fn members(&self) -> Vec<(u64, Member, bool)> {
        let m = self.raft.metrics().borrow_watched().clone();
        let config = m.membership_config.membership();
        let voters: std::collections::BTreeSet<u64> = config.voter_ids().collect();
        config.nodes().map(|(id, member)| (*id, member.clone(), !voters.contains(id))).collect()
    }

    /// Resolves when this member's Raft has stopped on a fatal error (its
    /// storage failed, or a committed entry could not be applied), with the
    /// cause. A member in that state can serve nothing correctly.
    ///
    /// Checked once a second rather than on every metrics change: those come
    /// with every write, and waking a task for each cost writes measurably.
    pub async fn stopped(&self) -> String {
        let mut every_second = tokio::time::interval(Duration::from_secs(1));
        loop {
            every_second.tick().await;
            if let Err(fatal) = &self.raft.metrics().borrow_watched().running_state {
                return fatal.to_string();
            }
        }
    }

    pub async fn shutdown(&self) {
        let _ = self.raft.shutdown().await;
    }
}

fn startup_nanos() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
