//! etcdctl's lease commands against rtcd and real etcd side by side. Lease
//! IDs differ between servers and the seconds remaining may tick apart, so
//! both are replaced by placeholders before comparing.

use std::time::Duration;

use crate::harness::{Kind, Member, etcdctl, start};

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

/// Runs the scripted lease session against one member; outputs normalized.
fn session(m: &Member) -> Vec<(bool, String, String)> {
    let url = m.client_url.as_str();
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
    let ours = session(&rtcd);
    let theirs = session(&etcd);
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(o, t, "step {i}: rtcd vs etcd");
    }
    assert_eq!(ours.len(), theirs.len());
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
