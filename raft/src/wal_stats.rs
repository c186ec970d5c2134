//! What the Raft log's disk work costs, as etcd reports its WAL's: how
//! long each write of appended entries took, how many bytes they were, and
//! how long each sync that made them durable took.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rtcd_metrics::Histogram;

#[derive(Debug)]
pub struct WalStats {
    writes: Histogram,
    written_bytes: AtomicU64,
    fsyncs: Histogram,
}

impl Default for WalStats {
    fn default() -> Self {
        // etcd's buckets: 1 ms to 8.192 s.
        WalStats {
            writes: Histogram::exponential(0.001, 2.0, 14),
            written_bytes: AtomicU64::new(0),
            fsyncs: Histogram::exponential(0.001, 2.0, 14),
        }
    }
}

impl WalStats {
    pub(crate) fn written(&self, bytes: usize, took: Duration) {
        self.writes.observe_duration(took);
        self.written_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn synced(&self, took: Duration) {
        self.fsyncs.observe_duration(took);
    }

    pub fn write_durations(&self) -> &Histogram {
        &self.writes
    }

    pub fn written_bytes(&self) -> u64 {
        self.written_bytes.load(Ordering::Relaxed)
    }

    pub fn fsync_durations(&self) -> &Histogram {
        &self.fsyncs
    }
}
