//! One member: its store, identity, write path and limits, shared by every
//! service.
//!
//! The fields are private: the node is built once by [`Node::open`] and the
//! rest of the server reaches its parts through accessors. Duties that need
//! the node but are not part of it (leader forwarding, lease timers,
//! membership changes) live in their own modules and depend on this one,
//! never the other way around.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use prost::Message;
use rtcd_proto::etcdserverpb::{
    AlarmRequest, AlarmType, PutRequest, RequestOp, ResponseHeader, alarm_request::AlarmAction, request_op,
};
use rtcd_proto::rtcdraftpb::raft_server::RaftServer;
use rtcd_raft::{RaftConfig, RaftNode};
use rtcd_store::{Access, Applied, Caller, Store, StoreError, StoreOptions, WriteRequest, WriteResponse};

use crate::auth::jwt::JwtTokens;
use crate::auth::tokens::SimpleTokens;
use crate::auth::{Authenticator, Credentials, Tokens};
use crate::errors::EtcdError;
use crate::header::{Identity, WithHeader};
use crate::hub::Hub;
use crate::identity::IdentityError;
use crate::lessor::Lessor;
use crate::metrics::ServerMetrics;
use crate::settings::{AuthTokens, Settings};

/// The Raft directory inside `--data-dir`.
pub const RAFT_DIR: &str = "raft";

/// etcd's quota estimates: a key's metadata, and a lease.
const KV_OVERHEAD: u64 = 256;
const LEASE_OVERHEAD: u64 = 64;

/// The store's directory inside `--data-dir`.
pub const STORE_DIR: &str = "store";

#[derive(Debug)]
pub struct Node {
    settings: Settings,
    store: Arc<Store>,
    identity: Identity,
    /// Lease timers; live only while this member leads.
    lessor: Arc<Lessor>,
    /// Where committed events go out to watch streams.
    hub: Hub,
    /// Replication: every write goes through the Raft log, even on a
    /// one-member cluster.
    raft: RaftNode,
    /// Who each client request is from.
    authenticator: Arc<Authenticator>,
    next_lease_id: AtomicI64,
    /// What `/metrics` counts as it happens (shared with the apply sink).
    metrics: Arc<ServerMetrics>,
}

impl Node {
    /// Opens the store and starts Raft with the initial cluster.
    pub async fn open(settings: Settings) -> Result<Arc<Self>, NodeError> {
        // Keys first: a bad one stops the member before anything is opened.
        let tokens = match &settings.auth_tokens {
            AuthTokens::Simple { ttl } => Tokens::Simple(SimpleTokens::new(*ttl)),
            AuthTokens::Jwt(jwt) => Tokens::Jwt(Box::new(JwtTokens::load(jwt)?)),
        };
        let dir = settings.data_dir.clone();
        std::fs::create_dir_all(&dir).map_err(|e| NodeError::DataDir(dir.display().to_string(), e))?;
        // The Raft log is fsynced; the store replays from it after a crash.
        let options = StoreOptions {
            sync: false,
            max_txn_ops: settings.max_txn_ops,
            block_cache_bytes: settings.block_cache_bytes,
            warning_apply_duration: settings.warning_apply_duration,
        };
        let store = Arc::new(Store::open(dir.join(STORE_DIR), options)?);
        let dialer = crate::tls::peer_dialer(settings.peer_tls.as_ref())?;
        let (identity, members) = crate::identity::resolve(&settings, &dir, &dialer).await?;
        let hub = Hub::default();
        let lessor = Arc::new(Lessor::default());
        let raft_config = RaftConfig {
            id: identity.member_id,
            dir: dir.join(RAFT_DIR),
            members,
            heartbeat_ms: millis(settings.heartbeat_interval),
            election_timeout_ms: millis(settings.election_timeout),
            snapshot_count: settings.snapshot_count,
            logs_to_keep: settings.snapshot_catchup_entries,
            request_timeout: settings.request_timeout(),
            dial_overrides: settings.peer_dial_overrides.clone(),
            dialer,
        };
        let common_name_is_user = settings.client_tls.as_ref().is_some_and(|t| t.client_cert_auth);
        let authenticator = Arc::new(Authenticator::new(tokens, common_name_is_user));
        let metrics = Arc::new(ServerMetrics::new(settings.extensive_metrics));
        let sink = crate::applied::sink(hub.clone(), lessor.clone(), authenticator.clone(), metrics.clone());
        let raft = RaftNode::start(raft_config, store.clone(), sink).await?;
        let next_lease_id = AtomicI64::new(first_lease_id(identity.member_id));
        Ok(Arc::new(Self {
            settings,
            store,
            identity,
            lessor,
            hub,
            raft,
            authenticator,
            next_lease_id,
            metrics,
        }))
    }

    /// What this member was started with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The MVCC store, which the Raft log applies to (write through
    /// [`Node::propose`] or [`Node::write`], never directly).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Replication: leadership, membership, read barriers.
    pub fn raft(&self) -> &RaftNode {
        &self.raft
    }

    /// What `/metrics` counts as it happens.
    pub fn metrics(&self) -> &ServerMetrics {
        &self.metrics
    }

    /// This member's and its cluster's IDs.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    pub fn member_id(&self) -> u64 {
        self.identity.member_id
    }

    /// The lease timers (primary only on the leader).
    pub fn lessor(&self) -> &Lessor {
        &self.lessor
    }

    /// Where committed events are published for watch streams.
    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    /// The Raft service peers call on the peer URLs; snapshots they send
    /// are received into the data directory.
    pub fn raft_service(&self) -> RaftServer<rtcd_raft::peer_service::PeerService> {
        self.raft.peer_service(self.settings.data_dir.join(RAFT_DIR).join("incoming"))
    }

    /// Whether this member leads the cluster now (it runs lease expiry and
    /// auto-compaction).
    pub fn is_leader(&self) -> bool {
        self.raft.leader() == Some(self.identity.member_id)
    }

    /// A fresh lease ID: unique per member (its ID in the top bits, the time
    /// of startup below), never 0 or negative.
    pub fn new_lease_id(&self) -> i64 {
        self.next_lease_id.fetch_add(1, Ordering::Relaxed) & i64::MAX
    }

    /// etcd's minimum lease TTL: 1.5 election timeouts, in whole seconds
    /// rounded up (2 s with the default flags).
    pub fn min_lease_ttl(&self) -> i64 {
        let heartbeat = millis(self.settings.heartbeat_interval).max(1);
        let ticks = millis(self.settings.election_timeout) / heartbeat;
        let millis = (3 * ticks / 2) * heartbeat;
        millis.div_ceil(1000) as i64
    }

    pub fn term(&self) -> u64 {
        self.raft.term()
    }

    pub fn authenticator(&self) -> &Authenticator {
        &self.authenticator
    }

    /// Who a client request is from (see `auth`).
    pub fn caller<T>(&self, request: &tonic::Request<T>) -> Result<Caller, EtcdError> {
        self.authenticator.caller(&self.store, &Credentials::of(request))
    }

    /// A read check where etcd makes it, on the member serving the read.
    pub fn check_read(&self, caller: &Caller, key: &[u8], range_end: &[u8]) -> Result<(), EtcdError> {
        if !self.store.auth_enabled() {
            return Ok(());
        }
        Ok(self.store.auth()?.check(caller, key, range_end, Access::Read).map_err(StoreError::from)?)
    }

    /// etcd's admin check for calls only root may make (defragment, hashes,
    /// snapshots, leadership transfer, membership changes) while auth is on.
    pub fn check_admin<T>(&self, request: &tonic::Request<T>) -> Result<(), EtcdError> {
        let caller = self.caller(request)?;
        Ok(self.store.auth()?.check_admin(&caller).map_err(StoreError::from)?)
    }

    /// Waits until this member has applied everything committed when the
    /// call came (a linearizable read's barrier); a failure is counted as
    /// etcd counts a failed read index.
    pub async fn read_barrier(&self) -> Result<(), EtcdError> {
        let reached = self.raft().read_barrier().await.map_err(EtcdError::from);
        if reached.is_err() {
            self.metrics.read_index_failed();
        }
        reached
    }

    /// Sends a write the member makes itself through the write path.
    pub async fn propose(&self, req: WriteRequest) -> Result<Applied, EtcdError> {
        self.propose_for(req, &Caller::Member).await
    }

    /// Sends a write through the write path, refusing requests over
    /// `--max-request-bytes` as etcd does; `caller`'s permissions are
    /// checked when it applies.
    pub async fn propose_for(&self, req: WriteRequest, caller: &Caller) -> Result<Applied, EtcdError> {
        if request_len(&req) > self.settings.max_request_bytes {
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
        let proposal = self.metrics.proposal();
        match self.raft.propose_for(req, caller).await {
            Ok(outcome) => {
                proposal.succeeded();
                outcome.map_err(EtcdError::from)
            }
            Err(e) => Err(EtcdError::from(e)),
        }
    }

    /// Whether `req` would take the store past `--quota-backend-bytes`
    /// (etcd's estimate: key, value and a fixed overhead per put).
    fn over_quota(&self, req: &WriteRequest) -> bool {
        let cost = quota_cost(req);
        cost > 0 && self.store.size_bytes() + cost >= self.settings.quota_backend_bytes
    }

    /// Proposes `req` for `caller` and returns the response `pick` expects,
    /// header filled.
    pub async fn write<T: WithHeader>(
        &self,
        caller: &Caller,
        req: WriteRequest,
        pick: fn(WriteResponse) -> Option<T>,
    ) -> Result<T, tonic::Status> {
        let applied = self.propose_for(req, caller).await?;
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
        // Small, and made by the member from a request already checked.
        WriteRequest::Auth(_) => 0,
    }
}

/// Whole milliseconds, as the command line gave them and Raft takes them.
fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("cannot create data dir {0}: {1}")]
    DataDir(String, std::io::Error),
    #[error("cannot open the store: {0}")]
    Store(#[from] StoreError),
    #[error(transparent)]
    Identity(#[from] IdentityError),
    #[error("cannot start replication: {0}")]
    Raft(#[from] rtcd_raft::ReplicationError),
    #[error("peer TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
    #[error("--auth-token: {0}")]
    Jwt(#[from] crate::auth::jwt::JwtError),
}

fn first_lease_id(member_id: u64) -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    (((member_id & 0xffff) << 48) | ((since_epoch << 8) & 0xffff_ffff_ffff)) as i64 & i64::MAX
}
