//! `rtcd-bench kube` against a real rtcd member and a real etcd: the
//! operations it reports were made, and the store holds exactly what they
//! wrote (the seeded objects, one object per create, one revision and one
//! version per write).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Command, Output};

use common::{etcdctl, free_port, start_etcd, start_rtcd};

use serde_json::Value;

const OBJECTS: usize = 100;
const TOTAL: u64 = 500;

/// Every key under /registry/ (etcdctl's JSON: `kvs` without values, and
/// the header).
fn registry(endpoint: &str) -> Value {
    let out = etcdctl(endpoint, &["get", "/registry/", "--prefix", "--keys-only", "-w", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A small kube mix: 8 clients, 3 watchers, pages of 30 keys so every list
/// takes several, progress requests every 100 ms. `json` or the text output.
fn kube(endpoint: &str, json: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rtcd-bench"));
    command.args(["--endpoints", endpoint, "--conns", "2", "--clients", "8"]);
    if json {
        command.arg("--json");
    }
    let objects = OBJECTS.to_string();
    let total = TOTAL.to_string();
    command.args(["kube", "--objects", &objects, "--namespaces", "4", "--total", &total]);
    command.args(["--watchers", "3", "--page-size", "30", "--progress-interval", "0.1", "--val-size", "512"]);
    command.output().unwrap()
}

/// What a run left: (seeded objects, created objects, the sum of every
/// key's version, the revision), checking every key's version is ≥ 1.
fn store(endpoint: &str) -> (usize, usize, i64, i64) {
    let all = registry(endpoint);
    let kvs = all["kvs"].as_array().cloned().unwrap_or_default();
    let (mut seeded, mut created, mut versions) = (0, 0, 0);
    for kv in &kvs {
        // etcdctl's JSON has keys in base64; the names are ASCII.
        let key = String::from_utf8(base64(kv["key"].as_str().unwrap())).unwrap();
        let version = kv["version"].as_i64().unwrap();
        assert!(version >= 1, "{key}: version {version}");
        if key.contains("/pod-") {
            seeded += 1;
        } else if key.contains("/new-") {
            assert_eq!(version, 1, "{key}: created objects are never updated");
            created += 1;
        } else {
            panic!("a key the mix does not make: {key}");
        }
        assert!(key.starts_with("/registry/pods/ns-000"), "{key}");
        versions += version;
    }
    (seeded, created, versions, all["header"]["revision"].as_i64().unwrap())
}

fn base64(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {text}"),
    };
    let mut out = Vec::new();
    let (mut bits, mut held) = (0u32, 0);
    for d in text.bytes().filter(|&c| c != b'=').map(digit) {
        bits = (bits << 6) | u32::from(d);
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    out
}

/// One JSON run on a new member: every operation made, no errors, and the
/// store as the writes left it: exactly the seeded objects plus one per
/// create, and (no deletes, one put per write) the revision grown from the
/// first one by the sum of the versions, i.e. seeds + creates + updates.
fn kube_mix_leaves_what_it_wrote(endpoint: &str) {
    let before = registry(endpoint)["header"]["revision"].as_i64().unwrap();
    let out = kube(endpoint, true);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        (summary["requests"].as_u64(), summary["errors"].as_u64()),
        (Some(TOTAL), Some(0)),
        "{summary}"
    );

    let (seeded, created, versions, revision) = store(endpoint);
    assert_eq!(seeded, OBJECTS);
    // About 10% of the operations create (the default mix), 60% update.
    assert!((20..=100).contains(&created), "{created} creates");
    let updates = versions - (seeded + created) as i64;
    assert!((200..=400).contains(&updates), "{updates} updates");
    assert_eq!(revision - before, versions, "revision {before} -> {revision}");
}

/// A second run, with the text output, on the same store: the seeded
/// objects are found rather than made again, every watcher saw every write
/// once with its prev_kv, and the breakdown names all four operations.
/// Returns the breakdown.
fn kube_rerun_reports_its_breakdown(endpoint: &str) -> String {
    let out = kube(endpoint, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for op in ["create", "update", "list", "get"] {
        assert!(stderr.contains(&format!("  {op} ")), "no {op} line: {stderr}");
    }
    assert!(stderr.contains("0 already existed"), "{stderr}");
    assert!(stderr.contains("(0 missing, 0 extra, 0 out of order, 0 updates without prev_kv"), "{stderr}");
    let (seeded, _, versions, revision) = store(endpoint);
    assert_eq!(seeded, OBJECTS);
    // The member started at revision 1; every write since is one version.
    assert_eq!(revision - 1, versions);
    stderr.into_owned()
}

#[test]
fn kube_mix_against_rtcd() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_rtcd(dir.path());
    kube_mix_leaves_what_it_wrote(&endpoint);
    let breakdown = kube_rerun_reports_its_breakdown(&endpoint);
    // rtcd keeps the bookmark guarantee (etcd 3.4.23 may not: etcd#15220).
    assert!(breakdown.contains(" 0 below a progress revision"), "{breakdown}");
}

#[test]
fn kube_mix_against_real_etcd() {
    let dir = tempfile::tempdir().unwrap();
    let (_member, endpoint) = start_etcd(dir.path());
    kube_mix_leaves_what_it_wrote(&endpoint);
    kube_rerun_reports_its_breakdown(&endpoint);
}

#[test]
fn nonsense_kube_flags_exit_2_with_a_message() {
    let unreachable = format!("127.0.0.1:{}", free_port());
    for args in [
        &["--mix", "1,2,3"][..],
        &["--mix", "0,0,0,0"],
        &["--objects", "0"],
        &["--page-size", "0"],
        &["--progress-interval=-1"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rtcd-bench"))
            .args(["--endpoints", &unreachable, "kube"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let flag = args[0].split('=').next().unwrap();
        assert!(stderr.contains(flag) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
