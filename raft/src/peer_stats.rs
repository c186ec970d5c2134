//! What the peer transport counts for each peer, the way etcd's rafthttp
//! counts it for `/metrics`: bytes sent, sends that failed, and round trip
//! times measured by a prober (etcd's `etcdMemberCommunicationSlow` alert
//! reads them).
//!
//! etcd probes each peer every four seconds (`/raft/probing`) and records
//! the smoothed time every thirty; rtcd probes as often and records every
//! probe, so the histogram fills sooner with the same distribution.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use openraft::async_runtime::watch::WatchReceiver;
use rtcd_metrics::Histogram;
use rtcd_proto::rtcdraftpb::{RaftMessage, raft_client::RaftClient};
use rtcd_store::Store;

use crate::RtcdRaft;
use crate::network::PeerNetwork;
use crate::types::Member;
use crate::wire;

/// How often each peer is probed (etcd's `proberInterval`).
const PROBE_EVERY: Duration = Duration::from_secs(4);
/// A probe not answered by then is lost (etcd's connection read timeout).
const PROBE_PATIENCE: Duration = Duration::from_secs(5);

/// Every peer's counters, by member ID.
#[derive(Debug, Default)]
pub struct PeerStats {
    peers: Mutex<BTreeMap<u64, Arc<PeerCounters>>>,
}

/// One peer's counters.
#[derive(Debug)]
pub struct PeerCounters {
    sent_bytes: AtomicU64,
    sent_failures: AtomicU64,
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
        Self { sent_bytes: AtomicU64::new(0), sent_failures: AtomicU64::new(0), round_trips }
    }

    pub(crate) fn sent(&self, bytes: usize) {
        self.sent_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn failed(&self) {
        self.sent_failures.fetch_add(1, Ordering::Relaxed);
    }

    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes.load(Ordering::Relaxed)
    }

    pub fn sent_failures(&self) -> u64 {
        self.sent_failures.load(Ordering::Relaxed)
    }

    pub fn round_trips(&self) -> &Histogram {
        &self.round_trips
    }
}

/// Probes every other member every `PROBE_EVERY` while `raft` runs. Any
/// answer counts, a refusal included (a member that does not know the
/// probe still answered it); a peer that does not answer records nothing,
/// as etcd's prober does.
pub(crate) fn spawn_prober(raft: RtcdRaft, id: u64, network: PeerNetwork, store: Weak<Store>) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(PROBE_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let (members, running) = {
                let metrics = raft.metrics();
                let m = metrics.borrow_watched();
                let members: Vec<(u64, Member)> = (m.membership_config.membership().nodes())
                    .filter(|(peer, _)| **peer != id)
                    .map(|(peer, member)| (*peer, member.clone()))
                    .collect();
                (members, m.running_state.is_ok())
            };
            // Gone with its member.
            if !running || store.strong_count() == 0 {
                return;
            }
            for (peer, member) in members {
                let Ok(channel) = network.channel(&member) else { continue };
                tokio::spawn(probe(RaftClient::new(channel), network.stats().peer(peer)));
            }
        }
    });
}

async fn probe(mut client: RaftClient<tonic::transport::Channel>, counters: Arc<PeerCounters>) {
    let message = RaftMessage { kind: wire::PROBE.to_string(), payload: Vec::new().into() };
    let started = Instant::now();
    match tokio::time::timeout(PROBE_PATIENCE, client.call(message)).await {
        Ok(Ok(_)) => counters.round_trips.observe_duration(started.elapsed()),
        // Answered by a member that does not know the probe.
        Ok(Err(status)) if status.code() == tonic::Code::Unimplemented => {
            counters.round_trips.observe_duration(started.elapsed())
        }
        Ok(Err(_)) | Err(_) => {}
    }
}
