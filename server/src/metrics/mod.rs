//! `/metrics`: etcd's metric families, with etcd's names, types, labels and
//! help texts, so etcd's alerting rules and dashboards read rtcd as they
//! read etcd. Counted here: proposals and leader changes
//! ([`ServerMetrics`]) and gRPC calls (`grpc`); the rest is read from the
//! member's state at each scrape.

pub mod grpc;

use rtcd_metrics::text;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::node::Node;
use crate::version::ETCD_COMPAT_VERSION;

/// What is counted as it happens.
#[derive(Debug, Default)]
pub struct ServerMetrics {
    /// Proposals that failed (timed out, leader lost, refused).
    proposals_failed: AtomicU64,
    /// Proposals waiting to be committed and applied.
    proposals_pending: AtomicI64,
    /// Leaders this member has seen take over since it started.
    leader_changes: AtomicU64,
    pub grpc: Arc<grpc::GrpcCounters>,
}

/// Counts one proposal from submission to outcome: pending while it lives,
/// failed unless [`Proposal::succeeded`] is called.
pub struct Proposal<'a> {
    metrics: &'a ServerMetrics,
    succeeded: bool,
}

impl ServerMetrics {
    pub fn proposal(&self) -> Proposal<'_> {
        self.proposals_pending.fetch_add(1, Ordering::Relaxed);
        Proposal { metrics: self, succeeded: false }
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

/// How often the leader is looked at for `etcd_server_leader_changes_seen_total`.
const LEADER_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Counts leader changes as this member sees them, until it is dropped: as
/// etcd counts them, each time a leader is known that is not the one known
/// before (a leader that lost its quorum and won it back counts again).
/// The leader is `etcd_server_has_leader`'s, which a leader without a
/// quorum for a lease no longer is.
pub async fn count_leader_changes(node: Weak<Node>) {
    let mut tick = tokio::time::interval(LEADER_POLL);
    let mut known = None;
    loop {
        tick.tick().await;
        let Some(node) = node.upgrade() else { return };
        let leader = node.raft().leader();
        if leader.is_some() && leader != known {
            node.metrics().leader_changes.fetch_add(1, Ordering::Relaxed);
        }
        known = leader;
    }
}

/// Every family, in Prometheus text format.
pub fn render(node: &Node) -> String {
    let mut out = String::new();
    let counted = node.metrics();
    let store = node.store();
    let (applied, committed) = node.raft().indexes();
    let gauge =
        |out: &mut String, name: &str, help: &str, value: f64| text::single(out, name, "gauge", help, value);
    let counter = |out: &mut String, name: &str, help: &str, value: f64| {
        text::single(out, name, "counter", help, value)
    };

    let has_leader = f64::from(u8::from(node.raft().leader().is_some()));
    gauge(
        &mut out,
        "etcd_server_has_leader",
        "Whether or not a leader exists. 1 is existence, 0 is not.",
        has_leader,
    );
    let is_leader = f64::from(u8::from(node.is_leader()));
    gauge(
        &mut out,
        "etcd_server_is_leader",
        "Whether or not this member is a leader. 1 if is, 0 otherwise.",
        is_leader,
    );
    let changes = counted.leader_changes.load(Ordering::Relaxed) as f64;
    counter(&mut out, "etcd_server_leader_changes_seen_total", "The number of leader changes seen.", changes);
    let id = format!("server_id=\"{:x}\"", node.member_id());
    text::family(
        &mut out,
        "etcd_server_id",
        "gauge",
        "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
        [(id, 1.0)],
    );
    let version = format!("server_version=\"{ETCD_COMPAT_VERSION}\"");
    text::family(
        &mut out,
        "etcd_server_version",
        "gauge",
        "Which version is running. 1 for 'server_version' label with current version.",
        [(version, 1.0)],
    );
    counter(
        &mut out,
        "etcd_server_proposals_committed_total",
        "The total number of consensus proposals committed.",
        committed as f64,
    );
    counter(
        &mut out,
        "etcd_server_proposals_applied_total",
        "The total number of consensus proposals applied.",
        applied as f64,
    );
    let pending = counted.proposals_pending.load(Ordering::Relaxed) as f64;
    gauge(
        &mut out,
        "etcd_server_proposals_pending",
        "The current number of pending proposals to commit.",
        pending,
    );
    let failed = counted.proposals_failed.load(Ordering::Relaxed) as f64;
    counter(
        &mut out,
        "etcd_server_proposals_failed_total",
        "The total number of failed proposals seen.",
        failed,
    );
    let quota = node.settings().quota_backend_bytes as f64;
    gauge(&mut out, "etcd_server_quota_backend_bytes", "Current backend storage quota size in bytes.", quota);

    let installed = node.raft().snapshots_installed() as f64;
    counter(
        &mut out,
        "etcd_network_snapshot_receive_success",
        "Total number of successful snapshot receives",
        installed,
    );
    let size = store.size_bytes() as f64;
    gauge(
        &mut out,
        "etcd_mvcc_db_total_size_in_bytes",
        "Total size of the underlying database physically allocated in bytes.",
        size,
    );
    let in_use = store.size_in_use_bytes() as f64;
    gauge(
        &mut out,
        "etcd_mvcc_db_total_size_in_use_in_bytes",
        "Total size of the underlying database logically in use in bytes.",
        in_use,
    );
    let rev = store.revision().unwrap_or(0) as f64;
    gauge(&mut out, "etcd_debugging_mvcc_current_revision", "The current revision of store.", rev);
    let compacted = store.compacted_revision().unwrap_or(0) as f64;
    gauge(
        &mut out,
        "etcd_debugging_mvcc_compact_revision",
        "The revision of the last compaction in store.",
        compacted,
    );
    let fsyncs = [(String::new(), node.raft().fsync_durations())];
    text::histogram(
        &mut out,
        "etcd_disk_wal_fsync_duration_seconds",
        "The latency distributions of fsync called by WAL.",
        &fsyncs,
    );
    let commits = [(String::new(), store.commit_durations())];
    text::histogram(
        &mut out,
        "etcd_disk_backend_commit_duration_seconds",
        "The latency distributions of commit called by backend.",
        &commits,
    );
    counted.grpc.render(&mut out);
    if let Some(rss) = resident_memory_bytes() {
        gauge(&mut out, "process_resident_memory_bytes", "Resident memory size in bytes.", rss as f64);
    }
    out
}

/// From /proc (Linux); other systems simply do not report it.
fn resident_memory_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
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
}
