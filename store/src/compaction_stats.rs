//! What compactions cost, as etcd reports it: how long applying one held
//! the index (etcd's index compaction pause), how long each chunk of
//! deletions held the engine (its database pauses), how long each
//! compaction's deletions took in all, how many records they removed, and
//! when the last one finished. etcd reports these in milliseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rtcd_metrics::Histogram;

#[derive(Debug)]
pub struct CompactionStats {
    index_pauses: Histogram,
    db_pauses: Histogram,
    totals: Histogram,
    records: AtomicU64,
    /// Seconds since the epoch when the last compaction's deletions ended;
    /// 0 before any (etcd resets it at start too).
    last: AtomicU64,
}

impl Default for CompactionStats {
    fn default() -> Self {
        // etcd's buckets, in milliseconds.
        CompactionStats {
            index_pauses: Histogram::exponential(0.5, 2.0, 14),
            db_pauses: Histogram::exponential(1.0, 2.0, 13),
            totals: Histogram::exponential(100.0, 2.0, 14),
            records: AtomicU64::new(0),
            last: AtomicU64::new(0),
        }
    }
}

fn millis(took: Duration) -> f64 {
    took.as_secs_f64() * 1000.0
}

impl CompactionStats {
    pub(crate) fn index_compacted(&self, took: Duration) {
        self.index_pauses.observe(millis(took));
    }

    pub(crate) fn chunk_deleted(&self, records: usize, took: Duration) {
        self.db_pauses.observe(millis(took));
        self.records.fetch_add(records as u64, Ordering::Relaxed);
    }

    pub(crate) fn compaction_done(&self, took: Duration) {
        self.totals.observe(millis(took));
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        self.last.store(now, Ordering::Relaxed);
    }

    pub fn index_pauses(&self) -> &Histogram {
        &self.index_pauses
    }

    pub fn db_pauses(&self) -> &Histogram {
        &self.db_pauses
    }

    pub fn totals(&self) -> &Histogram {
        &self.totals
    }

    pub fn records_deleted(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    pub fn last_finished(&self) -> u64 {
        self.last.load(Ordering::Relaxed)
    }
}
