//! How long etcd's maintenance calls took, with etcd's names and buckets:
//! defragmentation (and whether one is running), the two consistency
//! hashes, and snapshots sent to clients.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use rtcd_metrics::Histogram;

#[derive(Debug)]
pub struct MaintenanceTimes {
    defrags: Histogram,
    defrags_running: AtomicI64,
    hashes: Histogram,
    kv_hashes: Histogram,
    snapshots: Histogram,
}

impl Default for MaintenanceTimes {
    fn default() -> Self {
        MaintenanceTimes {
            defrags: Histogram::exponential(0.1, 2.0, 13),
            defrags_running: AtomicI64::new(0),
            hashes: Histogram::exponential(0.01, 2.0, 15),
            kv_hashes: Histogram::exponential(0.01, 2.0, 15),
            snapshots: Histogram::exponential(0.01, 2.0, 17),
        }
    }
}

/// A defragmentation under way: running until dropped, then timed.
pub struct Defrag<'a> {
    times: &'a MaintenanceTimes,
    started: Instant,
}

impl Drop for Defrag<'_> {
    fn drop(&mut self) {
        self.times.defrags_running.fetch_sub(1, Ordering::Relaxed);
        self.times.defrags.observe_duration(self.started.elapsed());
    }
}

impl MaintenanceTimes {
    pub fn defrag(&self) -> Defrag<'_> {
        self.defrags_running.fetch_add(1, Ordering::Relaxed);
        Defrag { times: self, started: Instant::now() }
    }

    pub fn hashed(&self, started: Instant) {
        self.hashes.observe_duration(started.elapsed());
    }

    pub fn kv_hashed(&self, started: Instant) {
        self.kv_hashes.observe_duration(started.elapsed());
    }

    /// A snapshot sent whole.
    pub fn snapshot_sent(&self, started: Instant) {
        self.snapshots.observe_duration(started.elapsed());
    }

    pub fn render(&self, out: &mut String) {
        fn one(h: &Histogram) -> [(String, &Histogram); 1] {
            [(String::new(), h)]
        }
        let help = "The latency distribution of backend defragmentation.";
        rtcd_metrics::text::histogram(
            out,
            "etcd_disk_backend_defrag_duration_seconds",
            help,
            &one(&self.defrags),
        );
        let running = f64::from(u8::from(self.defrags_running.load(Ordering::Relaxed) > 0));
        let help = "Whether or not defrag is active on the member. 1 means active, 0 means not.";
        rtcd_metrics::text::single(out, "etcd_disk_defrag_inflight", "gauge", help, running);
        let help = "The latency distribution of backend snapshots.";
        rtcd_metrics::text::histogram(
            out,
            "etcd_disk_backend_snapshot_duration_seconds",
            help,
            &one(&self.snapshots),
        );
        let help = "The latency distribution of storage hash operation.";
        rtcd_metrics::text::histogram(out, "etcd_mvcc_hash_duration_seconds", help, &one(&self.hashes));
        let help = "The latency distribution of storage hash by revision operation.";
        rtcd_metrics::text::histogram(
            out,
            "etcd_mvcc_hash_rev_duration_seconds",
            help,
            &one(&self.kv_hashes),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_defrag_is_in_flight_until_it_ends_then_timed() {
        let times = MaintenanceTimes::default();
        let defrag = times.defrag();
        let mut out = String::new();
        times.render(&mut out);
        assert!(out.contains("\netcd_disk_defrag_inflight 1\n"), "{out}");
        drop(defrag);
        times.kv_hashed(Instant::now() - Duration::from_millis(15));
        let mut out = String::new();
        times.render(&mut out);
        assert!(out.contains("\netcd_disk_defrag_inflight 0\n"), "{out}");
        assert!(out.contains("\netcd_disk_backend_defrag_duration_seconds_count 1\n"), "{out}");
        assert!(out.contains("etcd_mvcc_hash_rev_duration_seconds_bucket{le=\"0.01\"} 0\n"), "{out}");
        assert!(out.contains("etcd_mvcc_hash_rev_duration_seconds_bucket{le=\"0.02\"} 1\n"), "{out}");
    }
}
