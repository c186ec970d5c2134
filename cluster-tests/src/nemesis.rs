//! Faults, injected one at a time: a quiet period, a fault for a few
//! seconds, then healing; every window is recorded in the history.

use std::time::{Duration, Instant};

use crate::cluster::{Cluster, ClusterError};
use crate::history::{FaultWindow, Record};
use crate::recorder::{Recorder, Rng};
use crate::workload::watch::Reference;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The leader cut off from everyone else.
    PartitionLeader,
    /// A random minority cut off from the majority.
    PartitionHalves,
    /// Two halves that cannot talk to each other, and one member (the
    /// bridge) that talks to both.
    PartitionBridge,
    /// Partitions that come and go every few hundred milliseconds.
    Flapping,
    /// Every peer link slowed down.
    Delay,
    /// Every peer connection dropped at once.
    DropConnections,
    KillOne,
    KillLeader,
    /// The leader SIGKILLed and started again at once, inside the election
    /// timeout: it must not resume leading the term it led (its disk may
    /// lack entries the followers hold) but join an election.
    KillLeaderFastRestart,
    /// A minority SIGKILLed and restarted.
    KillMinority,
    /// Every member SIGKILLed at once, then restarted.
    KillAll,
    /// SIGSTOP one member, SIGCONT later.
    PauseOne,
    PauseLeader,
    /// A physical compaction at the current revision, under load.
    Compact,
    /// A member removed from the membership, its data wiped, then added
    /// back as a new member.
    Membership,
}

impl Fault {
    pub const ALL: [Fault; 15] = [
        Fault::PartitionLeader,
        Fault::PartitionHalves,
        Fault::PartitionBridge,
        Fault::Flapping,
        Fault::Delay,
        Fault::DropConnections,
        Fault::KillOne,
        Fault::KillLeader,
        Fault::KillLeaderFastRestart,
        Fault::KillMinority,
        Fault::KillAll,
        Fault::PauseOne,
        Fault::PauseLeader,
        Fault::Compact,
        Fault::Membership,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::PartitionLeader => "partition-leader",
            Fault::PartitionHalves => "partition-halves",
            Fault::PartitionBridge => "partition-bridge",
            Fault::Flapping => "partition-flapping",
            Fault::Delay => "delay",
            Fault::DropConnections => "drop-connections",
            Fault::KillOne => "kill-one",
            Fault::KillLeader => "kill-leader",
            Fault::KillLeaderFastRestart => "kill-leader-fast-restart",
            Fault::KillMinority => "kill-minority",
            Fault::KillAll => "kill-all",
            Fault::PauseOne => "pause-one",
            Fault::PauseLeader => "pause-leader",
            Fault::Compact => "compact",
            Fault::Membership => "membership",
        }
    }

    /// A comma-separated list of fault names, or the groups "all",
    /// "partition", "kill", "pause", "none".
    pub fn parse_list(list: &str) -> Result<Vec<Fault>, String> {
        let mut faults = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "none" => {}
                "all" => faults.extend(Fault::ALL),
                group @ ("partition" | "kill" | "pause") => {
                    faults.extend(Fault::ALL.iter().filter(|f| f.name().starts_with(group)));
                }
                name => faults.push(
                    *Fault::ALL
                        .iter()
                        .find(|f| f.name() == name)
                        .ok_or_else(|| format!("unknown fault {name:?}"))?,
                ),
            }
        }
        Ok(faults)
    }
}

/// How long the membership fault keeps asking for a removal the cluster
/// refuses (strict reconfiguration refuses it until every voter has been
/// connected for five seconds).
const REMOVAL_WITHIN: Duration = Duration::from_secs(10);

/// Quiet time between faults, and how long each fault lasts.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub quiet: Duration,
    pub fault: Duration,
}

/// Injects random faults from `faults` until `until`, then heals everything.
pub async fn run(
    cluster: &mut Cluster,
    faults: &[Fault],
    schedule: Schedule,
    until: Instant,
    rec: &Recorder,
    rng: &mut Rng,
    reference: &mut Reference,
) -> Result<(), ClusterError> {
    while !faults.is_empty() && Instant::now() + schedule.quiet + schedule.fault < until {
        tokio::time::sleep(schedule.quiet).await;
        let fault = faults[rng.below(faults.len() as u64) as usize];
        let start = rec.now();
        let targets = inject(cluster, fault, schedule.fault, rng, rec, reference).await?;
        cluster.heal()?;
        let names = targets.iter().map(|&i| cluster.members[i].name.clone()).collect();
        rec.record(Record::Fault(FaultWindow {
            kind: fault.name().into(),
            targets: names,
            start,
            end: rec.now(),
        }));
    }
    cluster.heal()
}

/// Applies `fault` for `length` (healing is the caller's); returns the
/// members it touched.
async fn inject(
    cluster: &mut Cluster,
    fault: Fault,
    length: Duration,
    rng: &mut Rng,
    rec: &Recorder,
    reference: &mut Reference,
) -> Result<Vec<usize>, ClusterError> {
    let n = cluster.members.len();
    let all: Vec<usize> = (0..n).collect();
    let random = |rng: &mut Rng| rng.below(n as u64) as usize;
    let minority = |rng: &mut Rng| {
        let mut picked: Vec<usize> = Vec::new();
        while picked.len() < (n - 1) / 2 {
            let i = random(rng);
            if !picked.contains(&i) {
                picked.push(i);
            }
        }
        picked
    };
    let leader_or_random = async |cluster: &Cluster, rng: &mut Rng| match cluster.leader().await {
        Some(l) => l,
        None => random(rng),
    };
    let others = |chosen: &[usize]| all.iter().copied().filter(|i| !chosen.contains(i)).collect::<Vec<_>>();
    let targets = match fault {
        Fault::PartitionLeader => {
            let leader = vec![leader_or_random(cluster, rng).await];
            cluster.net.cut(&leader, &others(&leader));
            tokio::time::sleep(length).await;
            leader
        }
        Fault::PartitionHalves => {
            let small = minority(rng);
            cluster.net.cut(&small, &others(&small));
            tokio::time::sleep(length).await;
            small
        }
        Fault::PartitionBridge => {
            // Shuffle, then: [bridge | first half | second half].
            let mut order = all.clone();
            for k in (1..n).rev() {
                order.swap(k, rng.below(k as u64 + 1) as usize);
            }
            let (bridge, rest) = order.split_at(1);
            let (a, b) = rest.split_at(rest.len() / 2);
            cluster.net.cut(a, b);
            tokio::time::sleep(length).await;
            bridge.to_vec()
        }
        Fault::Membership => {
            let victim = random(rng);
            if !cluster.remove_member(victim, REMOVAL_WITHIN).await {
                // Refused (no leader, say): nothing to add back.
                tokio::time::sleep(length).await;
                return Ok(Vec::new());
            }
            tokio::time::sleep(length).await;
            cluster.add_member(victim, Duration::from_secs(60)).await?;
            vec![victim]
        }
        Fault::Flapping => {
            let end = Instant::now() + length;
            let mut touched = Vec::new();
            while Instant::now() < end {
                let small = minority(rng);
                cluster.net.cut(&small, &others(&small));
                tokio::time::sleep(Duration::from_millis(300 + rng.below(500))).await;
                cluster.net.heal();
                tokio::time::sleep(Duration::from_millis(200 + rng.below(300))).await;
                touched.extend(small);
            }
            touched.sort_unstable();
            touched.dedup();
            touched
        }
        Fault::Delay => {
            cluster.net.slow_all(n, Duration::from_millis(50 + rng.below(100)));
            tokio::time::sleep(length).await;
            all.clone()
        }
        Fault::DropConnections => {
            cluster.net.drop_connections();
            tokio::time::sleep(length).await;
            all.clone()
        }
        Fault::KillOne | Fault::KillLeader | Fault::KillMinority | Fault::KillAll => {
            let victims = match fault {
                Fault::KillOne => vec![random(rng)],
                Fault::KillLeader => vec![leader_or_random(cluster, rng).await],
                Fault::KillMinority => minority(rng),
                _ => all.clone(),
            };
            for &i in &victims {
                cluster.kill(i);
            }
            tokio::time::sleep(length).await;
            victims
        }
        Fault::KillLeaderFastRestart => {
            let leader = leader_or_random(cluster, rng).await;
            cluster.kill(leader);
            cluster.restart(leader)?;
            tokio::time::sleep(length).await;
            vec![leader]
        }
        Fault::Compact => {
            let victim = random(rng);
            compact(&cluster.members[victim].client_url, rec, reference).await;
            tokio::time::sleep(length).await;
            vec![victim]
        }
        Fault::PauseOne | Fault::PauseLeader => {
            let victim =
                if fault == Fault::PauseOne { random(rng) } else { leader_or_random(cluster, rng).await };
            cluster.pause(victim);
            tokio::time::sleep(length).await;
            vec![victim]
        }
    };
    Ok(targets)
}

/// Compacts (physically) at the revision `endpoint` reports, after reading
/// the reference history up to it (the checkers need what compaction
/// erases); a failure is not an error of the run (the cluster may be busy
/// electing) and then nothing is compacted.
async fn compact(endpoint: &str, rec: &Recorder, reference: &mut Reference) {
    let Ok(revision) = reference.read_to_current(endpoint, rec).await else { return };
    let Ok(mut client) = crate::cluster::connect(endpoint).await else { return };
    let options = etcd_client::CompactionOptions::new().with_physical();
    let _ = client.compact(revision, Some(options)).await;
}
