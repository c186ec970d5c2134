//! What `/metrics` counts as it happens: proposals, leader changes and
//! health checks ([`ServerMetrics`]), gRPC calls (`grpc`), store operations
//! (`mvcc`), leases (`lease`), watches (`watch`) and maintenance calls
//! (`maintenance`). The page itself, with
//! what is read from the member at each scrape, is `metrics_page`'s.

pub mod grpc;
pub mod lease;
pub mod maintenance;
mod messages;
pub mod mvcc;
pub mod watch;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// What is counted as it happens.
#[derive(Debug, Default)]
pub struct ServerMetrics {
    /// Proposals that failed (timed out, leader lost, refused).
    proposals_failed: AtomicU64,
    /// Proposals waiting to be committed and applied.
    proposals_pending: AtomicI64,
    /// Leaders this member has seen take over since it started.
    leader_changes: AtomicU64,
    /// The leader last seen (0: none; no member has ID 0).
    leader_seen: AtomicU64,
    /// `/metrics` scrapes served, and being served.
    scrapes: AtomicU64,
    scrapes_in_flight: AtomicI64,
    /// Linearizable reads whose read barrier failed.
    read_indexes_failed: AtomicU64,
    /// `/health` answers: healthy, and not.
    health_successes: AtomicU64,
    health_failures: AtomicU64,
    pub grpc: Arc<grpc::GrpcCounters>,
    pub mvcc: mvcc::MvccCounters,
    pub lease: lease::LeaseCounters,
    pub watch: watch::WatchCounters,
    pub maintenance: maintenance::MaintenanceTimes,
}

/// Counts one proposal from submission to outcome: pending while it lives,
/// failed unless [`Proposal::succeeded`] is called.
pub struct Proposal<'a> {
    metrics: &'a ServerMetrics,
    succeeded: bool,
}

impl ServerMetrics {
    /// With gRPC handling times measured when `extensive` (`--metrics`).
    pub fn new(extensive: bool) -> Self {
        ServerMetrics { grpc: Arc::new(grpc::GrpcCounters::new(extensive)), ..ServerMetrics::default() }
    }

    pub fn proposal(&self) -> Proposal<'_> {
        self.proposals_pending.fetch_add(1, Ordering::Relaxed);
        Proposal { metrics: self, succeeded: false }
    }

    /// Records the leader as seen now. As etcd counts leader changes: each
    /// time a leader is known that is not the one known before (a leader
    /// that lost its quorum and won it back counts again).
    pub fn leader_seen(&self, leader: Option<u64>) {
        let now = leader.unwrap_or(0);
        let before = self.leader_seen.swap(now, Ordering::Relaxed);
        if now != 0 && now != before {
            self.leader_changes.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn leader_changes(&self) -> u64 {
        self.leader_changes.load(Ordering::Relaxed)
    }

    pub fn proposals_pending(&self) -> i64 {
        self.proposals_pending.load(Ordering::Relaxed)
    }

    pub fn proposals_failed(&self) -> u64 {
        self.proposals_failed.load(Ordering::Relaxed)
    }

    /// A scrape starts; it is counted as served when the guard goes.
    pub fn scrape(&self) -> Scrape<'_> {
        self.scrapes_in_flight.fetch_add(1, Ordering::Relaxed);
        Scrape { metrics: self }
    }

    /// `(served, in flight)` scrapes.
    pub fn scrapes(&self) -> (u64, i64) {
        (self.scrapes.load(Ordering::Relaxed), self.scrapes_in_flight.load(Ordering::Relaxed))
    }

    pub fn read_index_failed(&self) {
        self.read_indexes_failed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn read_indexes_failed(&self) -> u64 {
        self.read_indexes_failed.load(Ordering::Relaxed)
    }

    /// A `/health` answer, healthy or not.
    pub fn health_checked(&self, healthy: bool) {
        let counter = if healthy { &self.health_successes } else { &self.health_failures };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// `(successes, failures)` of `/health`.
    pub fn health_checks(&self) -> (u64, u64) {
        (self.health_successes.load(Ordering::Relaxed), self.health_failures.load(Ordering::Relaxed))
    }
}

/// A `/metrics` scrape being served.
pub struct Scrape<'a> {
    metrics: &'a ServerMetrics,
}

impl Drop for Scrape<'_> {
    fn drop(&mut self) {
        self.metrics.scrapes_in_flight.fetch_sub(1, Ordering::Relaxed);
        self.metrics.scrapes.fetch_add(1, Ordering::Relaxed);
    }
}

impl Proposal<'_> {
    pub fn succeeded(mut self) {
        self.succeeded = true;
    }
}

impl Drop for Proposal<'_> {
    fn drop(&mut self) {
        self.metrics.proposals_pending.fetch_sub(1, Ordering::Relaxed);
        if !self.succeeded {
            self.metrics.proposals_failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proposal_is_pending_while_it_lives_and_failed_unless_it_succeeded() {
        let metrics = ServerMetrics::default();
        let first = metrics.proposal();
        let second = metrics.proposal();
        assert_eq!(metrics.proposals_pending.load(Ordering::Relaxed), 2);
        first.succeeded();
        drop(second);
        assert_eq!(metrics.proposals_pending.load(Ordering::Relaxed), 0);
        assert_eq!(metrics.proposals_failed.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_leader_change_is_a_new_leader_after_another_or_none() {
        let metrics = ServerMetrics::default();
        for leader in [None, Some(1), Some(1), None, Some(1), Some(2)] {
            metrics.leader_seen(leader);
        }
        assert_eq!(metrics.leader_changes(), 3);
    }
}
