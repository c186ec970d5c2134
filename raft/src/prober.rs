//! Measures the round trip to every other member, as etcd's prober does:
//! etcd probes each peer every four seconds (`/raft/probing`) and records
//! the smoothed time every thirty; rtcd probes as often and records every
//! probe, so the histogram fills sooner with the same distribution.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use openraft::async_runtime::watch::WatchReceiver;
use rtcd_proto::rtcdraftpb::{RaftMessage, raft_client::RaftClient};
use rtcd_store::Store;

use crate::RtcdRaft;
use crate::network::PeerNetwork;
use crate::peer_stats::PeerCounters;
use crate::types::Member;
use crate::wire;

/// How often each peer is probed (etcd's `proberInterval`).
const PROBE_EVERY: Duration = Duration::from_secs(4);
/// A probe not answered by then is lost (etcd's connection read timeout).
const PROBE_PATIENCE: Duration = Duration::from_secs(5);

/// Probes every other member every `PROBE_EVERY` while `raft` runs. Any
/// answer counts, a refusal included (a member that does not know the
/// probe still answered it); a peer that does not answer records nothing,
/// as etcd's prober does.
pub(crate) fn spawn(raft: RtcdRaft, id: u64, network: PeerNetwork, store: Weak<Store>) {
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
        Ok(Ok(_)) => counters.round_trip(started.elapsed()),
        // Answered by a member that does not know the probe.
        Ok(Err(status)) if status.code() == tonic::Code::Unimplemented => {
            counters.round_trip(started.elapsed())
        }
        Ok(Err(_)) | Err(_) => counters.unanswered(),
    }
}
