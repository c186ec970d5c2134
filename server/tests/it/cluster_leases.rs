//! Leases in a three-member cluster of real processes: the leader's lessor
//! holds the timers, followers hand keep-alives and TTL queries to it, and
//! when the leader is SIGKILLed a kept-alive lease survives while an idle one
//! still expires on time, from its checkpointed remaining TTL rather than a
//! fresh one.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::harness::{Kind, Member, etcdctl, etcdctl_command, start_cluster_with};

fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn leader_index(cluster: &[Member]) -> usize {
    cluster
        .iter()
        .position(|m| {
            let endpoint = m.client_url.trim_start_matches("http://");
            let out = ok(etcdctl(endpoint, &["endpoint", "status", "-w", "json"], None));
            let status: serde_json::Value = serde_json::from_str(&out).unwrap();
            status[0]["Status"]["leader"] == status[0]["Status"]["header"]["member_id"]
        })
        .expect("a leader")
}

/// The hex ID from "lease <id> granted with TTL(..)".
fn grant(endpoint: &str, ttl: u32) -> String {
    let out = ok(etcdctl(endpoint, &["lease", "grant", &ttl.to_string()], None));
    out.split_whitespace().nth(1).unwrap().to_string()
}

/// Whether `key` exists; `None` while the cluster cannot answer (electing).
fn has_key(endpoint: &str, key: &str) -> Option<bool> {
    let out = etcdctl(endpoint, &["get", key, "--keys-only"], None);
    out.status.success().then(|| !out.stdout.trim_ascii().is_empty())
}

/// Seconds left according to `lease timetolive`; None once expired.
fn remaining(endpoint: &str, id: &str) -> Option<u64> {
    let out = ok(etcdctl(endpoint, &["lease", "timetolive", id], None));
    let at = out.find("remaining(")? + "remaining(".len();
    out[at..].split('s').next()?.parse().ok()
}

#[test]
fn leases_survive_a_leader_kill_only_while_kept_alive() {
    const TTL: u64 = 20;
    let mut cluster = start_cluster_with(Kind::Rtcd, 3, &["--experimental-lease-checkpoint-interval", "1s"]);
    let leader = leader_index(&cluster);
    let followers: Vec<String> =
        cluster.iter().enumerate().filter(|(i, _)| *i != leader).map(|(_, m)| m.client_url.clone()).collect();
    let via = followers[0].as_str();

    let kept = grant(via, TTL as u32);
    let granted_at = Instant::now();
    let idle = grant(via, TTL as u32);
    ok(etcdctl(via, &["put", "kept", "1", &format!("--lease={kept}")], None));
    ok(etcdctl(via, &["put", "idle", "1", &format!("--lease={idle}")], None));
    // `etcdctl lease keep-alive` through a follower, for the whole test.
    let mut keeper = etcdctl_command(&followers.join(","))
        .args(["lease", "keep-alive", &kept])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // TTLs as the leader's lessor counts them, through either follower.
    std::thread::sleep(Duration::from_secs(3));
    let left = remaining(&followers[1], &idle).expect("idle lease alive");
    assert!((TTL - 5..=TTL - 2).contains(&left), "idle lease counts down: {left}s left");
    let left = remaining(via, &kept).expect("kept lease alive");
    assert!(left >= TTL - 8, "kept lease is renewed: {left}s left");

    std::thread::sleep(Duration::from_secs(7));
    cluster[leader].kill();
    let killed_after = granted_at.elapsed().as_secs();

    // The idle lease ends from its checkpointed remaining TTL (about
    // TTL - 10 s, plus an election timeout), not TTL after the new leader
    // took over; never before its TTL.
    let deadline = granted_at + Duration::from_secs(TTL + 8);
    loop {
        let gone = has_key(via, "idle") == Some(false);
        let elapsed = granted_at.elapsed();
        if gone {
            assert!(elapsed >= Duration::from_secs(TTL - 1), "idle lease expired early: after {elapsed:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "idle lease outlived its checkpointed TTL (leader killed after {killed_after}s)"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(remaining(via, &idle), None);

    // The kept-alive lease and its key are still there, well past its TTL.
    while granted_at.elapsed() < Duration::from_secs(TTL + 10) {
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(has_key(via, "kept"), Some(true), "a lease kept alive through the leader change expired");
    assert!(remaining(&followers[1], &kept).is_some_and(|s| s > TTL / 2));
    let _ = keeper.kill();
    let _ = keeper.wait();
}
