//! One member: its store, identity, write path and limits, shared by every
//! service.

use std::sync::Arc;

use prost::Message;
use rtcd_proto::etcdserverpb::{
    AlarmRequest, AlarmType, PutRequest, RequestOp, ResponseHeader, alarm_request::AlarmAction, request_op,
};
use rtcd_store::{Applied, Store, StoreError, StoreOptions, WriteRequest, WriteResponse};

use crate::config::Config;
use crate::errors::EtcdError;
use crate::header::{Identity, WithHeader};
use crate::lessor::Lessor;
use crate::watch::Hub;
use rtcd_raft::{RaftConfig, RaftNode};

/// The Raft directory inside `--data-dir`.
pub const RAFT_DIR: &str = "raft";

/// The space quota when `--quota-backend-bytes` is 0 (etcd's default).
const DEFAULT_QUOTA_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// etcd's quota estimates: a key's metadata, and a lease.
const KV_OVERHEAD: u64 = 256;
const LEASE_OVERHEAD: u64 = 64;

/// The store's directory inside `--data-dir`.
pub const STORE_DIR: &str = "store";

#[derive(Debug)]
pub struct Node {
    pub config: Config,
    pub store: Arc<Store>,
    pub identity: Identity,
    /// Lease timers; live only while this member leads.
    pub lessor: Arc<Lessor>,
    /// Where committed events go out to watch streams.
    pub hub: Hub,
    /// Replication: every write goes through the Raft log, even on a
    /// one-member cluster.
    pub raft: Arc<RaftNode>,
    next_lease_id: std::sync::atomic::AtomicI64,
}

impl Node {
    /// Opens the store and starts Raft with the initial cluster.
    pub async fn open(config: Config) -> Result<Arc<Self>, NodeError> {
        let dir = config.data_dir();
        std::fs::create_dir_all(&dir).map_err(|e| NodeError::DataDir(dir.display().to_string(), e))?;
        // The Raft log is fsynced; the store replays from it after a crash.
        let options = StoreOptions { sync: false, max_txn_ops: config.max_txn_ops };
        let store = Arc::new(Store::open(dir.join(STORE_DIR), options)?);
        let (identity, members) = crate::identity::resolve(&config, &dir).await?;
        let hub = Hub::default();
        let lessor = Arc::new(Lessor::default());
        let raft_config = RaftConfig {
            id: identity.member_id,
            dir: dir.join(RAFT_DIR),
            members,
            heartbeat_ms: config.heartbeat_interval,
            election_timeout_ms: config.election_timeout,
            snapshot_count: config.snapshot_count,
            logs_to_keep: config.experimental_snapshot_catchup_entries,
            request_timeout: request_timeout(&config),
            dial_overrides: config.peer_dial_overrides()?,
        };
        let sink = crate::applied::sink(hub.clone(), lessor.clone());
        let raft = RaftNode::start(raft_config, store.clone(), sink).await?;
        let next_lease_id = std::sync::atomic::AtomicI64::new(first_lease_id(identity.member_id));
        Ok(Arc::new(Self { config, store, identity, lessor, hub, raft: Arc::new(raft), next_lease_id }))
    }

    /// Whether this member leads the cluster now (it runs lease expiry and
    /// auto-compaction).
    pub fn is_leader(&self) -> bool {
        self.raft.leader() == Some(self.identity.member_id)
    }

    /// A fresh lease ID: unique per member (its ID in the top bits, the time
    /// of startup below), never 0 or negative.
    pub fn new_lease_id(&self) -> i64 {
        self.next_lease_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed) & i64::MAX
    }

    /// etcd's minimum lease TTL: 1.5 election timeouts, in whole seconds
    /// rounded up (2 s with the default flags).
    pub fn min_lease_ttl(&self) -> i64 {
        let heartbeat = self.config.heartbeat_interval.max(1);
        let ticks = self.config.election_timeout / heartbeat;
        let millis = (3 * ticks / 2) * heartbeat;
        millis.div_ceil(1000) as i64
    }

    pub fn term(&self) -> u64 {
        self.raft.term()
    }

    /// Sends a write through the write path, refusing requests over
    /// `--max-request-bytes` as etcd does.
    pub async fn propose(&self, req: WriteRequest) -> Result<Applied, EtcdError> {
        if request_len(&req) > self.config.max_request_bytes {
            return Err(EtcdError::RequestTooLarge);
        }
        if self.over_quota(&req) {
            // Raise NOSPACE through the write path, so every member (and a
            // restart) agrees writes are capped until an operator disarms it.
            let alarm = AlarmRequest {
                action: AlarmAction::Activate as i32,
                member_id: self.identity.member_id,
                alarm: AlarmType::Nospace as i32,
            };
            if let Err(e) = self.raft.propose(WriteRequest::Alarm(alarm)).await {
                tracing::warn!(error = %e, "raising the NOSPACE alarm failed");
            }
            return Err(StoreError::NoSpace.into());
        }
        match self.raft.propose(req).await {
            Ok(outcome) => outcome.map_err(EtcdError::from),
            Err(e) => Err(EtcdError::from(e)),
        }
    }

    /// Whether `req` would take the store past `--quota-backend-bytes`
    /// (etcd's estimate: key, value and a fixed overhead per put).
    fn over_quota(&self, req: &WriteRequest) -> bool {
        let cost = quota_cost(req);
        let quota = match self.config.quota_backend_bytes {
            0 => DEFAULT_QUOTA_BYTES,
            q => q,
        };
        cost > 0 && self.store.size_bytes() + cost >= quota
    }

    /// Proposes `req` and returns the response `pick` expects, header filled.
    pub async fn write<T: WithHeader>(
        &self,
        req: WriteRequest,
        pick: fn(WriteResponse) -> Option<T>,
    ) -> Result<T, tonic::Status> {
        let applied = self.propose(req).await?;
        // Another kind of response than asked for would be a bug in the write
        // path: report it rather than panic.
        let mut resp = pick(applied.response)
            .ok_or_else(|| tonic::Status::internal("rtcd: mismatched write response"))?;
        self.fill(resp.header_mut());
        Ok(resp)
    }

    /// Completes a response header: IDs, term and (if unset) the revision.
    pub fn fill(&self, header: &mut Option<ResponseHeader>) {
        // Most responses carry their revision already; read the store's only
        // when one is missing.
        let has_revision = header.as_ref().is_some_and(|h| h.revision != 0);
        let revision = if has_revision { 0 } else { self.store.revision().unwrap_or(0) };
        self.identity.fill(header, revision, self.term());
    }

    /// A header for responses that carry no revision of their own.
    pub fn header(&self) -> Option<ResponseHeader> {
        let mut h = None;
        self.fill(&mut h);
        h
    }
}

fn quota_cost(req: &WriteRequest) -> u64 {
    let put_cost = |p: &PutRequest| KV_OVERHEAD + (p.key.len() + p.value.len()) as u64;
    let branch_cost = |ops: &[RequestOp]| -> u64 {
        ops.iter()
            .map(|op| match &op.request {
                Some(request_op::Request::RequestPut(p)) => put_cost(p),
                _ => 0,
            })
            .sum()
    };
    match req {
        WriteRequest::Put(p) => put_cost(p),
        WriteRequest::Txn(t) => branch_cost(&t.success).max(branch_cost(&t.failure)),
        WriteRequest::LeaseGrant(_) => LEASE_OVERHEAD,
        _ => 0,
    }
}

/// The size etcd compares with `--max-request-bytes`: the encoded request.
fn request_len(req: &WriteRequest) -> usize {
    match req {
        WriteRequest::Put(r) => r.encoded_len(),
        WriteRequest::DeleteRange(r) => r.encoded_len(),
        WriteRequest::Txn(r) => r.encoded_len(),
        WriteRequest::Compact(r) => r.encoded_len(),
        WriteRequest::LeaseGrant(r) => r.encoded_len(),
        WriteRequest::LeaseRevoke(r) => r.encoded_len(),
        WriteRequest::LeaseCheckpoint(r) => r.encoded_len(),
        WriteRequest::Alarm(r) => r.encoded_len(),
    }
}

/// How long a write may wait: etcd's 5 s plus two election timeouts.
fn request_timeout(config: &Config) -> std::time::Duration {
    std::time::Duration::from_millis(5000 + 2 * config.election_timeout)
}

impl Node {
    /// How long a request may wait for replication or for a leader.
    pub fn request_timeout(&self) -> std::time::Duration {
        request_timeout(&self.config)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("cannot create data dir {0}: {1}")]
    DataDir(String, std::io::Error),
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("cannot join the cluster: {0}")]
    Join(String),
    #[error("damaged member identity file {0}")]
    Identity(String),
    #[error("cannot start replication: {0}")]
    Raft(#[from] rtcd_raft::ReplicationError),
}

fn first_lease_id(member_id: u64) -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (((member_id & 0xffff) << 48) | ((since_epoch << 8) & 0xffff_ffff_ffff)) as i64 & i64::MAX
}
