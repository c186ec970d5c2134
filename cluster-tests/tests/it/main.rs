//! rtcd-jepsen in short mode, as users run it: the binary against a real
//! rtcd cluster and against real etcd (the control), every workload at once
//! (registers, list-append transactions, leases, watchers) under every kind
//! of fault. Every checker must find the histories valid.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

/// Runs a scenario of `seconds` and returns the parsed summary.
fn run(target: &str, nemesis: &str, seconds: u64, seed: u64, extra: &[&str]) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("results");
    let run = Command::new(env!("CARGO_BIN_EXE_rtcd-jepsen"))
        .args(["run", "--target", target, "--time", &seconds.to_string(), "--nemesis", nemesis])
        .args([
            "--quiet",
            "2",
            "--fault-time",
            "3",
            "--clients",
            "5",
            "--txn-clients",
            "3",
            "--quiet-progress",
        ])
        .args(extra)
        .args(["--seed", &seed.to_string(), "--out"])
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    println!("{stdout}\n{stderr}");
    assert!(run.status.success(), "{target} run not valid:\n{stdout}\n{stderr}");
    assert!(stdout.contains("VALID"), "{stdout}");
    assert!(std::fs::read_to_string(results.join("report.html")).unwrap().contains("<svg"));
    assert!(std::fs::read_to_string(results.join("report.svg")).unwrap().starts_with("<svg"));
    let history = std::fs::read_to_string(results.join("history.jsonl")).unwrap();
    assert!(history.lines().count() > 50, "a history was recorded");
    serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap()).unwrap()
}

/// Every checker ran on enough operations and found them valid.
fn assert_exercised(summary: &serde_json::Value) {
    let count = |path: &[&str]| path.iter().fold(summary, |v, k| &v[*k]).as_u64().unwrap_or(0);
    assert!(count(&["fault_windows"]) >= 3, "faults were injected: {summary}");
    assert_eq!(summary["register"]["valid"], true, "{summary}");
    assert!(count(&["register", "ok"]) >= 100, "register operations succeeded: {summary}");
    assert_eq!(summary["append"]["valid"], true, "{summary}");
    assert!(count(&["append", "ok"]) >= 50, "transactions committed: {summary}");
    assert_eq!(summary["lease"]["valid"], true, "{summary}");
    assert!(count(&["lease", "leases"]) >= 10, "leases were granted: {summary}");
    assert_eq!(summary["watch"]["valid"], true, "{summary}");
    assert!(count(&["watch", "events"]) >= 100, "watchers received events: {summary}");
}

#[test]
fn rtcd_stays_consistent_under_partitions_kills_and_pauses() {
    assert_exercised(&run("rtcd", "partition,kill,pause", 45, 7, &[]));
}

#[test]
fn rtcd_stays_consistent_through_membership_changes_compaction_and_slow_links() {
    let faults = "membership,compact,partition-bridge,delay,drop-connections,kill-all";
    assert_exercised(&run("rtcd", faults, 45, 11, &[]));
}

/// With auth on (every client authenticates as root, again after every
/// failure, as members lose their tokens when killed) and the peer links
/// over TLS through the fault proxies.
#[test]
fn rtcd_stays_consistent_with_auth_and_peer_tls() {
    assert_exercised(&run("rtcd", "partition,kill", 45, 5, &["--auth", "--peer-tls"]));
}

/// The control: the same suite against Debian's etcd 3.4.23. Its watchers
/// do not ask for progress notifications: 3.4.23 can answer one ahead of
/// events it has not sent yet (etcd issue 15220, fixed in 3.4.24), which the
/// watch checker reports as a broken bookmark. Nor is it paused: a leader of
/// 3.4.23 stopped past an election still revokes leases by its own clock
/// when it resumes (etcd issue 15247), which the lease checker reports as
/// expired early (one run in a few here).
#[test]
fn etcd_control_run_is_valid() {
    let faults = "partition,kill,membership,compact";
    assert_exercised(&run("etcd", faults, 45, 7, &["--progress-requests", "false"]));
}
