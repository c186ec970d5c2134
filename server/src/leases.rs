//! The leader's lease duties: holding the primary lessor while it leads,
//! expiring leases by proposing revokes, checkpointing remaining TTLs, and
//! answering keep-alives and TTL queries (followers hand those over, see
//! `leader`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rtcd_proto::etcdserverpb::{
    LeaseCheckpoint, LeaseCheckpointRequest, LeaseRevokeRequest, LeaseTimeToLiveRequest,
    LeaseTimeToLiveResponse,
};
use rtcd_store::{StoreError, WriteRequest};

use crate::errors::EtcdError;
use crate::node::Node;

/// How often expired leases are looked for.
const TICK: Duration = Duration::from_millis(500);
/// Leases per checkpoint proposal (etcd's batch limit).
const CHECKPOINT_BATCH: usize = 1000;
/// How long a keep-alive on a new leader waits for its lessor.
const PROMOTION_POLL: Duration = Duration::from_millis(20);

/// Runs the lease duties until the process ends (idle on followers).
pub fn spawn(node: Arc<Node>, checkpoint_interval: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TICK);
        let mut next_checkpoint = Instant::now() + checkpoint_interval;
        loop {
            tick.tick().await;
            if !node.sync_lessor() {
                continue;
            }
            expire(&node).await;
            if Instant::now() >= next_checkpoint {
                checkpoint(&node).await;
                next_checkpoint = Instant::now() + checkpoint_interval;
            }
        }
    });
}

/// Revokes every expired lease; the revokes replicate like client ones.
async fn expire(node: &Node) {
    for id in node.lessor().expired() {
        match node.propose(WriteRequest::LeaseRevoke(LeaseRevokeRequest { id })).await {
            Ok(_) => node.metrics().lease.expired(),
            // Revoked meanwhile by a client: nothing left to time.
            Err(EtcdError::Store(StoreError::LeaseNotFound)) => node.lessor().revoked(id),
            Err(e) => tracing::warn!(lease = id, error = %e, "revoking an expired lease failed"),
        }
    }
}

/// Records every live lease's remaining TTL in the log.
async fn checkpoint(node: &Node) {
    let remaining = node.lessor().remaining_ttls();
    for batch in remaining.chunks(CHECKPOINT_BATCH) {
        let checkpoints =
            batch.iter().map(|&(id, remaining_ttl)| LeaseCheckpoint { id, remaining_ttl }).collect();
        let request = WriteRequest::LeaseCheckpoint(LeaseCheckpointRequest { checkpoints });
        if let Err(e) = node.propose(request).await {
            tracing::warn!(error = %e, "checkpointing lease TTLs failed");
        }
    }
}

impl Node {
    /// Keeps the lessor's role in step with leadership: promoted once this
    /// member leads and has applied an entry of its term (every earlier
    /// grant and revoke is then in the store), demoted when it no longer
    /// leads. Returns whether the lessor is primary.
    pub fn sync_lessor(&self) -> bool {
        let term = self.term();
        if !self.is_leader() {
            if self.lessor().primary_term().is_some() {
                self.lessor().demote();
                tracing::info!(term, "lease timers stopped: no longer the leader");
            }
            return false;
        }
        if self.lessor().primary_term() == Some(term) {
            return true;
        }
        if !self.raft().leads_applied_term() {
            return false;
        }
        let extend = self.settings().election_timeout;
        let store = self.store();
        self.lessor().promote(
            term,
            || {
                store.leases().unwrap_or_else(|e| {
                    tracing::error!(error = %e, "reading leases for promotion");
                    Vec::new()
                })
            },
            extend,
        );
        tracing::info!(term, "lease timers started: this member leads");
        true
    }

    /// Waits (briefly) for the lessor of a member that just became leader.
    async fn primary_lessor(&self) -> Result<(), EtcdError> {
        let deadline = Instant::now() + self.settings().request_timeout();
        loop {
            if self.sync_lessor() {
                return Ok(());
            }
            if !self.is_leader() {
                return Err(EtcdError::NotLeader);
            }
            if Instant::now() >= deadline {
                return Err(EtcdError::Timeout);
            }
            tokio::time::sleep(PROMOTION_POLL).await;
        }
    }

    /// A keep-alive at the leader: the lease's TTL, or 0 for an unknown or
    /// expired lease (not an error, as in etcd).
    pub async fn renew_lease(&self, id: i64) -> Result<i64, EtcdError> {
        self.primary_lessor().await?;
        let Some(renewed) = self.lessor().renew(id) else { return Ok(0) };
        self.metrics().lease.renewed();
        if renewed.clear_checkpoint {
            // A stale checkpoint would make the next leader expire this lease
            // early; 0 clears it.
            let clear = LeaseCheckpoint { id, remaining_ttl: 0 };
            let request = WriteRequest::LeaseCheckpoint(LeaseCheckpointRequest { checkpoints: vec![clear] });
            self.propose(request).await?;
        }
        // A leader cut off from the others would otherwise renew leases a
        // new leader is about to expire (etcd 3.4 has this window). Once a
        // quorum has acknowledged this leader after the renewal, any later
        // leader starts its timers later still, so the TTL we answer holds.
        self.raft().confirm_leadership().await?;
        Ok(renewed.ttl)
    }

    /// A TTL query at the leader: TTL -1 for an unknown lease.
    pub async fn lease_time_to_live(
        &self,
        req: &LeaseTimeToLiveRequest,
    ) -> Result<LeaseTimeToLiveResponse, EtcdError> {
        self.primary_lessor().await?;
        let lease = self.store().lease(req.id)?;
        let remaining = self.lessor().remaining(req.id);
        Ok(match (lease, remaining) {
            (Some(lease), Some(ttl)) => LeaseTimeToLiveResponse {
                header: self.header(),
                id: req.id,
                ttl,
                granted_ttl: lease.ttl,
                keys: if req.keys { lease.keys.into_iter().collect() } else { Vec::new() },
            },
            // Unknown (or being revoked): TTL -1, not an error.
            _ => LeaseTimeToLiveResponse { header: self.header(), id: req.id, ttl: -1, ..Default::default() },
        })
    }
}
