//! etcdctl's KV commands against rtcd and against real etcd, side by side:
//! the same command sequence must print the same output and errors on both
//! (after removing the member/cluster IDs and raft term from JSON output).

use serde_json::Value;

use crate::harness::{Kind, etcdctl, start};

/// Member IDs, cluster IDs and terms legitimately differ between servers.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for id in ["cluster_id", "member_id", "raft_term"] {
                map.remove(id);
            }
            map.values_mut().for_each(normalize);
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn comparable(out: &std::process::Output, json: bool) -> (bool, String, String) {
    let mut stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if json && out.status.success() {
        let mut v: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        normalize(&mut v);
        stdout = v.to_string();
    }
    // etcdctl's client also logs retries (with timestamps) to stderr; the
    // error it reports is the `Error:` line.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Error:")).collect();
    (out.status.success(), stdout, errors.join("\n"))
}

const TXN_SUCCESS: &str = "value(\"a\") = \"2\"\nmod(\"b\") > \"0\"\n\nput x 1\nget a\n\nput y 1\n\n";
const TXN_FAILURE: &str = "version(\"a\") = \"7\"\n\ndel a\n\nput y 2\nget --prefix \"\"\n\n";

type Step<'a> = (Vec<&'a str>, Option<&'a str>);

/// Every etcdctl KV command with its flags, in an order whose outcomes
/// depend on what came before. `too_large` is over --max-request-bytes.
fn kv_steps(too_large: &str) -> Vec<Step<'_>> {
    vec![
        (vec!["put", "a", "1"], None),
        (vec!["put", "a", "2", "--prev-kv"], None),
        (vec!["put", "b", "10"], None),
        (vec!["put", "c", "20"], None),
        (vec!["put", "d/x", "5"], None),
        (vec!["get", "a"], None),
        (vec!["get", "a", "--rev=2"], None),
        (vec!["get", "a", "c"], None),
        (vec!["get", "--from-key", "b"], None),
        (vec!["get", "--prefix", "d/"], None),
        (vec!["get", "--prefix", "", "--limit", "2"], None),
        (vec!["get", "--prefix", "", "--sort-by=VALUE", "--order=DESCEND"], None),
        (vec!["get", "--prefix", "", "--sort-by=MODIFY", "--order=ASCEND", "--limit", "3"], None),
        (vec!["get", "--prefix", "", "--sort-by=CREATE"], None),
        (vec!["get", "--prefix", "", "--sort-by=VERSION", "--order=DESCEND"], None),
        (vec!["get", "--prefix", "", "--keys-only"], None),
        (vec!["get", "a", "--print-value-only"], None),
        (vec!["get", "--prefix", "", "--count-only", "-w", "json"], None),
        (vec!["get", "--prefix", "", "--limit", "1", "-w", "json"], None),
        (vec!["get", "a", "--consistency=s"], None),
        (vec!["get", "missing"], None),
        (vec!["txn"], Some(TXN_SUCCESS)),
        (vec!["txn"], Some(TXN_FAILURE)),
        (vec!["txn", "-w", "json"], Some(TXN_SUCCESS)),
        (vec!["del", "b", "--prev-kv"], None),
        (vec!["del", "--prefix", "d/"], None),
        (vec!["put", "a", "--ignore-value"], None),
        (vec!["put", "nope", "--ignore-value"], None),
        (vec!["put", "big"], Some(too_large)),
        (vec!["get", "a", "--rev=1000"], None),
        (vec!["compaction", "4"], None),
        (vec!["get", "a", "--rev=3"], None),
        (vec!["get", "a", "--rev=4", "-w", "json"], None),
        (vec!["compaction", "4"], None),
        (vec!["compaction", "1000"], None),
        (vec!["del", "--from-key", ""], None),
        (vec!["get", "--prefix", "", "-w", "json"], None),
    ]
}

/// The KV session's comparable outputs through `endpoints`.
fn kv_session(endpoints: &str) -> Vec<(bool, String, String)> {
    // Over --max-request-bytes (1.5 MiB) but under the gRPC limit (2 MiB).
    let too_large = "v".repeat(1_600_000);
    kv_steps(&too_large)
        .into_iter()
        .map(|(args, stdin)| comparable(&etcdctl(endpoints, &args, stdin), args.contains(&"json")))
        .collect()
}

fn assert_same(ours: &[(bool, String, String)], theirs: &[(bool, String, String)], through: &str) {
    let too_large = "v".repeat(1_600_000);
    for ((step, a), b) in kv_steps(&too_large).iter().zip(ours).zip(theirs) {
        assert_eq!(a, b, "etcdctl {:?} through {through}: rtcd vs etcd", step.0);
    }
    assert_eq!(ours.len(), theirs.len());
}

#[test]
fn kv_commands_print_what_etcd_prints() {
    let rtcd = start(Kind::Rtcd, "e2e");
    let etcd = start(Kind::Etcd, "e2e");
    assert_same(&kv_session(&rtcd.client_url), &kv_session(&etcd.client_url), "one member");
}

/// The same session against a three-member rtcd cluster, through a single
/// member and through all three: clients cannot tell the difference.
#[test]
fn kv_commands_through_a_three_member_cluster_print_what_etcd_prints() {
    let etcd = start(Kind::Etcd, "e2e");
    let theirs = kv_session(&etcd.client_url);
    let cluster = crate::harness::start_cluster(Kind::Rtcd, 3);
    assert_same(&kv_session(&cluster[2].client_url), &theirs, "member m3");
    let cluster = crate::harness::start_cluster(Kind::Rtcd, 3);
    let all: Vec<&str> = cluster.iter().map(|m| m.client_url.as_str()).collect();
    assert_same(&kv_session(&all.join(",")), &theirs, "all three members");
}

#[test]
fn member_list_and_status_describe_this_member() {
    let rtcd = start(Kind::Rtcd, "solo");
    let list = etcdctl(&rtcd.client_url, &["member", "list"], None);
    let list = String::from_utf8_lossy(&list.stdout);
    let expected = format!("started, solo, {}, {}, false", rtcd.peer_url, rtcd.client_url);
    assert!(list.trim_end().ends_with(&expected), "member list: {list}");

    // etcdctl 3.4 sends the endpoint whole ("http://...") as the HTTP/2
    // :authority of this call; rtcd mends it (`authority`).
    let status = etcdctl(&rtcd.client_url, &["endpoint", "status", "-w", "json"], None);
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    let s = &status[0]["Status"];
    assert_eq!(s["version"], "3.5.17");
    assert_eq!(s["leader"], s["header"]["member_id"], "a single member leads itself");

    let health = etcdctl(&rtcd.client_url, &["endpoint", "health"], None);
    // etcdctl 3.4 reports health on stderr.
    let report = String::from_utf8_lossy(&health.stderr);
    assert!(
        health.status.success() && report.contains(&format!("{} is healthy", rtcd.client_url)),
        "{report}"
    );
}

/// etcdctl 3.4's `--cluster` commands dial every member's published
/// `http://` client URL and send it whole as the HTTP/2 authority: each
/// member answers (`authority` mends the authority), and `defrag` too.
#[test]
fn cluster_wide_commands_reach_every_member_through_http_urls() {
    let cluster = crate::harness::start_cluster(Kind::Rtcd, 3);
    let url = &cluster[0].client_url;
    // Each member publishes its client URL once it serves.
    for _ in 0..100 {
        let list = String::from_utf8_lossy(&etcdctl(url, &["member", "list"], None).stdout).into_owned();
        if cluster.iter().all(|m| list.contains(&m.client_url)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for args in [
        &["endpoint", "status", "--cluster"][..],
        &["endpoint", "hashkv", "--cluster"],
        &["endpoint", "health", "--cluster"],
        &["defrag", "--cluster"],
    ] {
        let out = etcdctl(url, args, None);
        assert!(out.status.success(), "etcdctl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        // Status, hashes and defrag report on stdout; health on stderr.
        let report = [out.stdout, out.stderr].concat();
        let report = String::from_utf8_lossy(&report);
        for member in &cluster {
            assert!(report.contains(&member.client_url), "etcdctl {args:?} misses {}: {report}", member.name);
        }
    }
}
