//! rtcd-jepsen in short mode, as users run it: the binary against a real
//! rtcd cluster and against real etcd (the control), with partitions, kills
//! and pauses. Both histories must check out valid: registers linearizable,
//! watchers complete, ordered and in agreement with the final history.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

/// Runs a short scenario and returns the parsed summary.
fn short_run(target: &str, nemesis: &str, seed: u64) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("results");
    let run = Command::new(env!("CARGO_BIN_EXE_rtcd-jepsen"))
        .args(["run", "--target", target, "--time", "24", "--nemesis", nemesis])
        .args(["--quiet", "2", "--fault-time", "3", "--clients", "6", "--keys", "3", "--quiet-progress"])
        .args(["--seed", &seed.to_string(), "--out"])
        .arg(&results)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{target} run not valid:\n{stdout}\n{stderr}");
    assert!(stdout.contains("VALID"), "{stdout}");
    assert!(std::fs::read_to_string(results.join("report.html")).unwrap().contains("<svg"));
    let history = std::fs::read_to_string(results.join("history.jsonl")).unwrap();
    assert!(history.lines().count() > 50, "a history was recorded");
    serde_json::from_str(&std::fs::read_to_string(results.join("summary.json")).unwrap()).unwrap()
}

fn assert_exercised(summary: &serde_json::Value) {
    assert_eq!(summary["register"]["valid"], true, "{summary}");
    assert!(summary["fault_windows"].as_u64().unwrap() >= 3, "faults were injected: {summary}");
    assert!(summary["register"]["ok"].as_u64().unwrap() >= 100, "enough operations succeeded: {summary}");
    assert_eq!(summary["watch"]["valid"], true, "{summary}");
    assert!(summary["watch"]["events"].as_u64().unwrap() >= 100, "watchers received events: {summary}");
}

#[test]
fn rtcd_register_stays_linearizable_under_partitions_kills_and_pauses() {
    assert_exercised(&short_run("rtcd", "partition,kill,pause", 7));
}

#[test]
fn etcd_control_run_is_valid() {
    assert_exercised(&short_run("etcd", "partition,kill,pause", 7));
}
