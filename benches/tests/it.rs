//! rtcd-bench against a real rtcd member (and, for the watch and lease
//! benchmarks, a real etcd too): the requests it reports were made, and the
//! keys and leases it made are there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

use common::{etcdctl, free_port, start_etcd, start_rtcd};

/// Every key (etcdctl's JSON: `kvs` and the header).
fn all_keys(endpoint: &str) -> serde_json::Value {
    let out = etcdctl(endpoint, &["get", "", "--from-key", "--keys-only", "-w", "json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn bench(endpoint: &str, args: &[&str]) -> serde_json::Value {
    bench_noting(endpoint, args).0
}

/// The JSON summary and the notes beside it on stderr.
fn bench_noting(endpoint: &str, args: &[&str]) -> (serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rtcd-bench"))
        .args(["--endpoints", endpoint, "--json"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stdout}\n{stderr}");
    (serde_json::from_str(stdout.trim()).unwrap(), stderr)
}

#[test]
fn put_and_range_make_the_requests_they_report() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());

    let put = bench(
        &endpoint,
        &[
            "--conns",
            "2",
            "--clients",
            "4",
            "put",
            "--total",
            "300",
            "--key-space-size",
            "50",
            "--sequential-keys",
        ],
    );
    assert_eq!(put["requests"], 300, "{put}");
    assert_eq!(put["errors"], 0, "{put}");
    assert!(put["requests_per_sec"].as_f64().unwrap() > 0.0);
    let p50 = put["p50_ms"].as_f64().unwrap();
    assert!(p50 > 0.0 && p50 <= put["p99_ms"].as_f64().unwrap(), "{put}");
    // 50 distinct 8-byte keys, each put 6 times: revision 1 + 300.
    let all = all_keys(&endpoint);
    assert_eq!(all["kvs"].as_array().map(Vec::len), Some(50), "{all}");
    assert_eq!(all["header"]["revision"], 301, "{all}");

    for consistency in ["l", "s"] {
        let range = bench(
            &endpoint,
            &["--clients", "3", "range", "\u{1}", "--consistency", consistency, "--total", "120"],
        );
        assert_eq!((range["requests"].as_u64(), range["errors"].as_u64()), (Some(120), Some(0)), "{range}");
    }
}

#[test]
fn txn_put_commits_every_put_of_each_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    let txns = bench(
        &endpoint,
        &["--clients", "4", "txn-put", "--total", "100", "--txn-ops", "3", "--key-space-size", "1000"],
    );
    assert_eq!((txns["requests"].as_u64(), txns["errors"].as_u64()), (Some(100), Some(0)), "{txns}");
    // One revision per transaction, whatever its number of puts.
    let all = all_keys(&endpoint);
    assert_eq!(all["header"]["revision"], 101, "{all}");
    let keys = all["kvs"].as_array().map_or(0, Vec::len);
    assert!(keys > 100 && keys <= 300, "3 puts per transaction over 1000 keys: {keys}");
}

#[test]
fn a_rate_limit_paces_the_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    // 40 requests at 100/s over 2 clients cannot finish in much under 0.4 s.
    let put = bench(&endpoint, &["--clients", "2", "put", "--total", "40", "--rate", "100"]);
    assert_eq!(put["requests"], 40, "{put}");
    assert!(put["elapsed_secs"].as_f64().unwrap() >= 0.35, "{put}");
}

#[test]
fn target_leader_finds_the_member_that_leads() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    let unreachable = format!("127.0.0.1:{}", free_port());
    let put = bench(&format!("{unreachable},{endpoint}"), &["--target-leader", "put", "--total", "20"]);
    assert_eq!(put["requests"], 20, "{put}");
}

/// 2 streams x 5 watchers on one key, 50 puts at 100/s: one latency per
/// watcher per put, all of them there, ordered quantiles.
fn watch_latency_times_every_event(endpoint: &str) {
    let args = [
        "--conns",
        "2",
        "watch-latency",
        "--streams",
        "2",
        "--watchers-per-stream",
        "5",
        "--put-total",
        "50",
        "--put-rate",
        "100",
    ];
    let (latency, notes) = bench_noting(endpoint, &args);
    assert_eq!((latency["requests"].as_u64(), latency["errors"].as_u64()), (Some(500), Some(0)), "{latency}");
    let p50 = latency["p50_ms"].as_f64().unwrap();
    assert!(p50 > 0.0 && p50 <= latency["p99_ms"].as_f64().unwrap(), "{latency}");
    assert!(
        notes.contains("10 watchers on one key (10 created") && notes.contains("50 of 50 puts"),
        "{notes}"
    );
}

/// 20 watchers over 4 keys (5 each), 40 puts round-robin over the keys (10
/// each): 20 creations measured and 5 x 10 x 4 = 200 events delivered.
fn watch_delivers_every_event_to_every_watcher(endpoint: &str) {
    let args = [
        "--conns",
        "2",
        "--clients",
        "2",
        "watch",
        "--streams",
        "2",
        "--watch-per-stream",
        "10",
        "--watched-key-total",
        "4",
        "--key-space-size",
        "100",
        "--sequential-keys",
        "--put-total",
        "40",
    ];
    let (watch, notes) = bench_noting(endpoint, &args);
    assert_eq!((watch["requests"].as_u64(), watch["errors"].as_u64()), (Some(20), Some(0)), "{watch}");
    assert!(notes.contains("20 watchers on 4 keys; 200 of 200 expected events received"), "{notes}");
    // etcd's default: every watcher on the one key, so 20 x 40 events.
    let args =
        ["watch", "--streams", "2", "--watch-per-stream", "10", "--put-total", "40", "--put-rate", "200"];
    let (watch, notes) = bench_noting(endpoint, &args);
    assert_eq!((watch["requests"].as_u64(), watch["errors"].as_u64()), (Some(20), Some(0)), "{watch}");
    assert!(notes.contains("20 watchers on 1 keys; 800 of 800 expected events received"), "{notes}");
}

/// 4 clients renew their leases 200 times in all; the 4 leases outlive it.
fn lease_keepalive_renews_one_lease_per_client(endpoint: &str) {
    let renewals = bench(endpoint, &["--conns", "2", "--clients", "4", "lease-keepalive", "--total", "200"]);
    assert_eq!(
        (renewals["requests"].as_u64(), renewals["errors"].as_u64()),
        (Some(200), Some(0)),
        "{renewals}"
    );
    let out = etcdctl(endpoint, &["lease", "list", "-w", "json"]);
    let leases: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(leases["leases"].as_array().map(Vec::len), Some(4), "{leases}");
}

#[test]
fn watch_latency_times_every_watcher_for_every_put() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    watch_latency_times_every_event(&endpoint);
}

#[test]
fn watch_creates_every_watcher_and_delivers_every_event() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    watch_delivers_every_event_to_every_watcher(&endpoint);
}

#[test]
fn lease_keepalive_makes_every_renewal_and_leaves_the_leases() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    lease_keepalive_renews_one_lease_per_client(&endpoint);
}

/// The same measurements must work on etcd, or the side-by-side numbers
/// compare nothing.
#[test]
fn watch_and_lease_benchmarks_run_against_real_etcd() {
    let dir = tempfile::tempdir().unwrap();
    let (_etcd, endpoint) = start_etcd(dir.path());
    watch_latency_times_every_event(&endpoint);
    watch_delivers_every_event_to_every_watcher(&endpoint);
    lease_keepalive_renews_one_lease_per_client(&endpoint);
}

/// Flags that measure nothing are refused before any connection is made:
/// exit code 2 and the flag's name, never a panic.
#[test]
fn nonsense_flags_exit_2_with_a_message() {
    let unreachable = format!("127.0.0.1:{}", free_port());
    for args in [
        &["watch-latency", "--streams", "0"][..],
        &["watch-latency", "--watchers-per-stream", "0"],
        &["watch", "--key-space-size", "0"],
        &["watch", "--watch-per-stream=-1"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rtcd-bench"))
            .args(["--endpoints", &unreachable])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let flag = args[1].split('=').next().unwrap();
        assert!(stderr.contains(flag) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
