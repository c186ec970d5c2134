//! What the peer transport counts for each peer, the way etcd's rafthttp
//! counts it for `/metrics`: bytes sent and received (Raft messages and
//! snapshots, received ones by the sender their vote names), sends that
//! failed, whether the peer answers probes (etcd's active peers, and how
//! often one stopped answering), and round trip
//! times measured by the prober (`prober`; etcd's
//! `etcdMemberCommunicationSlow` alert reads them).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rtcd_metrics::Histogram;

/// Every peer's counters, by member ID.
#[derive(Debug, Default)]
pub struct PeerStats {
    peers: Mutex<BTreeMap<u64, Arc<PeerCounters>>>,
}

/// One peer's counters.
#[derive(Debug)]
pub struct PeerCounters {
    sent_bytes: AtomicU64,
    received_bytes: AtomicU64,
    sent_failures: AtomicU64,
    /// The last probe was answered.
    active: AtomicBool,
    /// Times the peer went from answering probes to not.
    disconnections: AtomicU64,
    round_trips: Histogram,
}

impl PeerStats {
    /// The counters of peer `id`, made on first use.
    pub fn peer(&self, id: u64) -> Arc<PeerCounters> {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.entry(id).or_insert_with(|| Arc::new(PeerCounters::new())).clone()
    }

    /// Every peer counted so far, by ID.
    pub fn all(&self) -> Vec<(u64, Arc<PeerCounters>)> {
        let peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.iter().map(|(id, counters)| (*id, counters.clone())).collect()
    }
}

impl Default for PeerCounters {
    fn default() -> Self {
        Self::new()
    }
}

impl PeerCounters {
    fn new() -> Self {
        // etcd's buckets: 0.1 ms doubling up to 3.2768 s.
        let round_trips = Histogram::exponential(0.0001, 2.0, 16);
        Self {
            sent_bytes: AtomicU64::new(0),
            received_bytes: AtomicU64::new(0),
            sent_failures: AtomicU64::new(0),
            active: AtomicBool::new(false),
            disconnections: AtomicU64::new(0),
            round_trips,
        }
    }

    pub(crate) fn sent(&self, bytes: usize) {
        self.sent_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn received(&self, bytes: usize) {
        self.received_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn failed(&self) {
        self.sent_failures.fetch_add(1, Ordering::Relaxed);
    }

    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes.load(Ordering::Relaxed)
    }

    pub fn received_bytes(&self) -> u64 {
        self.received_bytes.load(Ordering::Relaxed)
    }

    pub fn sent_failures(&self) -> u64 {
        self.sent_failures.load(Ordering::Relaxed)
    }

    /// A probe answered in `elapsed`.
    pub(crate) fn round_trip(&self, elapsed: std::time::Duration) {
        self.round_trips.observe_duration(elapsed);
        self.active.store(true, Ordering::Relaxed);
    }

    /// A probe not answered: an active peer is now disconnected.
    pub(crate) fn unanswered(&self) {
        if self.active.swap(false, Ordering::Relaxed) {
            self.disconnections.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    pub fn disconnections(&self) -> u64 {
        self.disconnections.load(Ordering::Relaxed)
    }

    pub fn round_trips(&self) -> &Histogram {
        &self.round_trips
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_peer_is_active_while_it_answers_and_each_silence_counts_once() {
        let peer = PeerCounters::default();
        peer.unanswered();
        assert!(!peer.active());
        assert_eq!(peer.disconnections(), 0, "never connected: nothing lost");
        peer.round_trip(Duration::from_millis(1));
        assert!(peer.active());
        peer.unanswered();
        peer.unanswered();
        assert!(!peer.active());
        assert_eq!(peer.disconnections(), 1);
    }
}
