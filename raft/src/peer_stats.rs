//! What the peer transport counts for each peer, the way etcd's rafthttp
//! counts it for `/metrics`: bytes sent and received (Raft messages and
//! snapshots, received ones by the sender their vote names), sends that
//! failed, snapshots sent and received, whether the peer answers probes (etcd's active peers, and how
//! often one stopped answering), and round trip
//! times measured by the prober (`prober`; etcd's
//! `etcdMemberCommunicationSlow` alert reads them).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rtcd_metrics::Histogram;

/// Every peer's counters, by member ID.
#[derive(Debug, Default)]
pub struct PeerStats {
    peers: Mutex<BTreeMap<u64, Arc<PeerCounters>>>,
    /// Received snapshots being installed (etcd's snapshot apply in
    /// progress).
    installing: AtomicI64,
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
    /// Snapshots sent to the peer, and received from it.
    pub snapshot_sends: Transfers,
    pub snapshot_receives: Transfers,
}

/// Snapshots one way with one peer: how many went through, failed, are
/// under way, and how long the ones that went through took.
#[derive(Debug)]
pub struct Transfers {
    succeeded: AtomicU64,
    failed: AtomicU64,
    in_flight: AtomicI64,
    durations: Histogram,
}

/// One snapshot transfer with a peer: in flight while it lives, failed
/// unless marked as succeeded.
pub struct Transfer {
    peer: Arc<PeerCounters>,
    /// Which way: the peer's sends or receives.
    way: fn(&PeerCounters) -> &Transfers,
    started: Instant,
    succeeded: bool,
}

/// A snapshot being installed (see [`PeerStats::installing`]).
pub struct Installing<'a>(&'a PeerStats);

impl Drop for Installing<'_> {
    fn drop(&mut self) {
        self.0.installing.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Default for Transfers {
    fn default() -> Self {
        // etcd's buckets: 0.1 s doubling to 51.2 s.
        Transfers {
            succeeded: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            in_flight: AtomicI64::new(0),
            durations: Histogram::exponential(0.1, 2.0, 10),
        }
    }
}

impl Transfers {
    pub fn succeeded(&self) -> u64 {
        self.succeeded.load(Ordering::Relaxed)
    }

    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    pub fn durations(&self) -> &Histogram {
        &self.durations
    }
}

impl Transfer {
    /// A snapshot starts going to `peer`.
    pub(crate) fn sending(peer: Arc<PeerCounters>) -> Self {
        Self::start(peer, |p| &p.snapshot_sends)
    }

    /// A snapshot starts coming from `peer`.
    pub(crate) fn receiving(peer: Arc<PeerCounters>) -> Self {
        Self::start(peer, |p| &p.snapshot_receives)
    }

    fn start(peer: Arc<PeerCounters>, way: fn(&PeerCounters) -> &Transfers) -> Self {
        way(&peer).in_flight.fetch_add(1, Ordering::Relaxed);
        Transfer { peer, way, started: Instant::now(), succeeded: false }
    }

    pub(crate) fn succeeded(mut self) {
        self.succeeded = true;
    }
}

impl Drop for Transfer {
    fn drop(&mut self) {
        let transfers = (self.way)(&self.peer);
        transfers.in_flight.fetch_sub(1, Ordering::Relaxed);
        if self.succeeded {
            transfers.succeeded.fetch_add(1, Ordering::Relaxed);
            transfers.durations.observe_duration(self.started.elapsed());
        } else {
            transfers.failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl PeerStats {
    /// The counters of peer `id`, made on first use.
    pub fn peer(&self, id: u64) -> Arc<PeerCounters> {
        let mut peers = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        peers.entry(id).or_insert_with(|| Arc::new(PeerCounters::new())).clone()
    }

    /// A received snapshot is being installed until the guard goes.
    pub(crate) fn installing(&self) -> Installing<'_> {
        self.installing.fetch_add(1, Ordering::Relaxed);
        Installing(self)
    }

    pub fn snapshots_installing(&self) -> i64 {
        self.installing.load(Ordering::Relaxed)
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
            snapshot_sends: Transfers::default(),
            snapshot_receives: Transfers::default(),
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

    #[test]
    fn a_transfer_is_in_flight_then_failed_unless_it_succeeded() {
        let peer = Arc::new(PeerCounters::default());
        let first = Transfer::sending(peer.clone());
        let second = Transfer::sending(peer.clone());
        assert_eq!(peer.snapshot_sends.in_flight(), 2);
        first.succeeded();
        drop(second);
        let sends = &peer.snapshot_sends;
        assert_eq!((sends.in_flight(), sends.succeeded(), sends.failed()), (0, 1, 1));
        assert_eq!(sends.durations().snapshot().1, 1, "only the one that went through is timed");
    }
}
