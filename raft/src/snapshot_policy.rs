//! When a member snapshots.
//!
//! etcd's `--snapshot-count` is the number of applied entries between
//! snapshots. An etcd snapshot costs little (its backend is a file already);
//! an rtcd snapshot is a dump of the whole store. At a fixed count, a store
//! being loaded is dumped again and again as it grows, so the dumps cost
//! the square of the load: 1M keys put at --snapshot-count 100000 wrote ten
//! dumps of up to the whole store, and on a two-core machine 300k keys went
//! 14% faster, with a 20% lower p99, without them.
//!
//! Here a snapshot is due once `snapshot_count` entries were applied since
//! the last one *and* at least half as many as the store holds key
//! revisions (RocksDB's estimate, so roughly): the dumps
//! then cost about twice the entries written, whatever the load, and a
//! small store snapshots exactly as etcd's count says. The log kept meanwhile
//! is at most about half the store.

use std::sync::Weak;
use std::time::Duration;

use openraft::async_runtime::watch::WatchReceiver;
use rtcd_store::Store;

use crate::RtcdRaft;

/// How often the rule is checked: a snapshot a little late costs nothing.
const CHECK_EVERY: Duration = Duration::from_millis(200);

/// Whether `applied_since` entries since the last snapshot make one due,
/// with `store_revisions` key revisions in the store.
fn due(applied_since: u64, snapshot_count: u64, store_revisions: u64) -> bool {
    applied_since >= snapshot_count.max(store_revisions / 2)
}

/// Triggers snapshots by the rule above until Raft stops. It holds the
/// store only while looking, so a stopped member's store can close.
pub(crate) fn spawn(raft: RtcdRaft, store: Weak<Store>, snapshot_count: u64) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(CHECK_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The applied index a snapshot was last asked at: not again until
        // the rule holds past it (a build takes a while to show in metrics).
        let mut asked_at = 0;
        loop {
            tick.tick().await;
            let (applied, snapshot, running) = {
                let metrics = raft.metrics();
                let m = metrics.borrow_watched();
                let index = |l: Option<&crate::types::LogId>| l.map_or(0, |l| l.index);
                (index(m.last_applied.as_ref()), index(m.snapshot.as_ref()), m.running_state.is_ok())
            };
            let Some(store) = store.upgrade().filter(|_| running) else { return };
            let since = applied.saturating_sub(snapshot.max(asked_at));
            if !due(since, snapshot_count, store.estimated_revisions()) {
                continue;
            }
            if raft.trigger().snapshot().await.is_err() {
                return; // Raft stopped
            }
            asked_at = applied;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::due;

    #[test]
    fn a_small_store_snapshots_at_the_count() {
        assert!(!due(9_999, 10_000, 100));
        assert!(due(10_000, 10_000, 100));
    }

    #[test]
    fn a_large_store_waits_for_half_its_size() {
        assert!(!due(100_000, 100_000, 1_000_000));
        assert!(!due(499_999, 100_000, 1_000_000));
        assert!(due(500_000, 100_000, 1_000_000));
    }
}
