//! rtcd-bench against a real rtcd member: the requests it reports were
//! made, and the keys it put are there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `rtcd`, built beside this test's binaries.
fn rtcd() -> PathBuf {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_rtcd-bench"));
    bench.with_file_name("rtcd")
}

struct Member(Child);

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(dir: &std::path::Path) -> (Member, String) {
    let (client, peer) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new(rtcd())
        .args(["--name", "bench", "--data-dir"])
        .arg(dir)
        .args(["--listen-client-urls", &client_url, "--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("bench={peer_url}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let endpoint = format!("127.0.0.1:{client}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !etcdctl(&endpoint, &["endpoint", "health"]).status.success() {
        assert!(Instant::now() < deadline, "rtcd never became healthy");
        std::thread::sleep(Duration::from_millis(200));
    }
    (Member(child), endpoint)
}

fn etcdctl(endpoint: &str, args: &[&str]) -> Output {
    Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", endpoint])
        .args(args)
        .output()
        .unwrap()
}

/// Every key (etcdctl's JSON: `kvs` and the header).
fn all_keys(endpoint: &str) -> serde_json::Value {
    let out = etcdctl(endpoint, &["get", "", "--from-key", "--keys-only", "-w", "json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn bench(endpoint: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rtcd-bench"))
        .args(["--endpoints", endpoint, "--json"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn put_and_range_make_the_requests_they_report() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start(dir.path());

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
    let (_member, endpoint) = start(dir.path());
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
    let (_member, endpoint) = start(dir.path());
    // 40 requests at 100/s over 2 clients cannot finish in much under 0.4 s.
    let put = bench(&endpoint, &["--clients", "2", "put", "--total", "40", "--rate", "100"]);
    assert_eq!(put["requests"], 40, "{put}");
    assert!(put["elapsed_secs"].as_f64().unwrap() >= 0.35, "{put}");
}

#[test]
fn target_leader_finds_the_member_that_leads() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start(dir.path());
    let unreachable = format!("127.0.0.1:{}", free_port());
    let put = bench(&format!("{unreachable},{endpoint}"), &["--target-leader", "put", "--total", "20"]);
    assert_eq!(put["requests"], 20, "{put}");
}
