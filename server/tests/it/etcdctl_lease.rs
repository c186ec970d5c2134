//! etcdctl's lease commands against rtcd and real etcd side by side. Lease
//! IDs differ between servers and the seconds remaining may tick apart, so
//! both are replaced by placeholders before comparing.

use std::time::Duration;

use crate::harness::{Kind, Member, etcdctl, start, start_cluster};

fn text(out: &std::process::Output) -> (bool, String, String) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Error:")).collect();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), errors.join("\n"))
}

/// The hex ID from "lease <id> granted with TTL(..)".
fn granted_id(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout.split_whitespace().nth(1).unwrap_or_else(|| panic!("no lease in {stdout:?}")).to_string()
}

fn normalize(s: &str, ids: &[&str]) -> String {
    let mut s = s.to_string();
    for id in ids {
        s = s.replace(id, "<ID>");
    }
    // "remaining(59s)": the second may differ between the two servers.
    let mut from = 0;
    while let Some(at) = s[from..].find("remaining(").map(|i| i + from) {
        let Some(len) = s[at..].find(')') else { break };
        s.replace_range(at..at + len + 1, "remaining(_)");
        from = at + "remaining(_)".len();
    }
    // etcd lists a lease's keys in Go map order, which varies run to run.
    if let Some(at) = s.find("attached keys([").map(|i| i + "attached keys([".len())
        && let Some(len) = s[at..].find("])")
    {
        let mut keys: Vec<&str> = s[at..at + len].split(' ').collect();
        keys.sort_unstable();
        let sorted = keys.join(" ");
        s.replace_range(at..at + len, &sorted);
    }
    s
}

/// Runs the scripted lease session through `url` (one endpoint or a comma
/// separated list); outputs normalized.
fn session(url: &str) -> Vec<(bool, String, String)> {
    let grant = etcdctl(url, &["lease", "grant", "60"], None);
    let id = granted_id(&grant);
    let short = etcdctl(url, &["lease", "grant", "1"], None);
    let short_id = granted_id(&short);
    let lease_flag = format!("--lease={id}");
    let steps: Vec<Vec<&str>> = vec![
        vec!["put", "k", "v", &lease_flag],
        vec!["put", "k2", "v", &lease_flag],
        vec!["lease", "timetolive", &id, "--keys"],
        vec!["lease", "list"],
        vec!["lease", "keep-alive", "--once", &id],
        vec!["lease", "revoke", &id],
        vec!["get", "--prefix", "k"],
        vec!["lease", "timetolive", &id],
        vec!["lease", "revoke", &id],
        vec!["lease", "keep-alive", "--once", &id],
        vec!["put", "z", "v", "--lease=1234abcd"],
        vec!["lease", "grant", "9000000001"],
        // Leaves nothing behind for a later session on the same cluster.
        vec!["lease", "revoke", &short_id],
    ];
    let mut outputs = vec![text(&grant), text(&short)];
    outputs.extend(steps.iter().map(|args| text(&etcdctl(url, args, None))));
    outputs
        .into_iter()
        .map(|(ok, out, err)| (ok, normalize(&out, &[&id, &short_id]), normalize(&err, &[&id])))
        .collect()
}

#[test]
fn lease_commands_print_what_etcd_prints() {
    let rtcd = start(Kind::Rtcd, "lease");
    let etcd = start(Kind::Etcd, "lease");
    let theirs = session(&etcd.client_url);
    assert_same(&session(&rtcd.client_url), &theirs, "one member");
}

fn assert_same(ours: &[(bool, String, String)], theirs: &[(bool, String, String)], through: &str) {
    for (i, (o, t)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(o, t, "step {i} through {through}: rtcd vs etcd");
    }
    assert_eq!(ours.len(), theirs.len());
}

/// Through a follower (keep-alives and TTLs are answered by the leader's
/// lessor) and through all three endpoints, etcdctl prints what it prints
/// for a single etcd.
#[test]
fn lease_commands_through_a_three_member_cluster_print_what_etcd_prints() {
    let etcd = start(Kind::Etcd, "lease");
    let theirs = session(&etcd.client_url);
    let cluster = start_cluster(Kind::Rtcd, 3);
    let follower = cluster.iter().find(|m| !is_leader(m)).unwrap();
    assert_same(&session(&follower.client_url), &theirs, "a follower");
    let all: Vec<&str> = cluster.iter().map(|m| m.client_url.as_str()).collect();
    assert_same(&session(&all.join(",")), &theirs, "all endpoints");
}

fn is_leader(m: &Member) -> bool {
    // endpoint status dials host:port (see docs/architecture.md).
    let out =
        etcdctl(m.client_url.trim_start_matches("http://"), &["endpoint", "status", "-w", "json"], None);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    status[0]["Status"]["leader"] == status[0]["Status"]["header"]["member_id"]
}

#[test]
fn expired_leases_take_their_keys_along() {
    let rtcd = start(Kind::Rtcd, "expiry");
    let url = rtcd.client_url.as_str();
    let id = granted_id(&etcdctl(url, &["lease", "grant", "2"], None));
    etcdctl(url, &["put", "short", "lived", &format!("--lease={id}")], None);
    etcdctl(url, &["put", "stays", "here"], None);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let keys = etcdctl(url, &["get", "--prefix", "", "--keys-only"], None);
        let keys = String::from_utf8_lossy(&keys.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        if keys == "stays" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "lease {id} never expired: keys {keys}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let ttl = etcdctl(url, &["lease", "timetolive", &id], None);
    assert_eq!(String::from_utf8_lossy(&ttl.stdout).trim(), format!("lease {id} already expired"));
}
