//! Membership changes with etcdctl on real processes: a learner is added,
//! started with `--initial-cluster-state existing`, catches up and is
//! promoted, and an original member is removed (and stops), all while
//! writers keep going; no acknowledged write is lost. Refused changes print
//! what etcd prints.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::{assert_all_present, assert_same_hashkv, ok, spawn_writers, status};
use crate::harness::{Kind, Member, etcdctl, fresh_urls, join, start, start_cluster, wait_healthy};

/// The hex member ID in "Member <id> added to cluster <id>" (and promoted,
/// removed); etcdctl pads IDs to 16 characters there.
fn member_id_in(out: &str) -> String {
    out.split_whitespace().nth(1).unwrap().to_string()
}

fn id_of(m: &Member) -> String {
    format!("{:x}", status(m)["header"]["member_id"].as_u64().unwrap())
}

/// The value of `NAME="value"` in `member add` output.
fn env_value(out: &str, name: &str) -> String {
    let line = out.lines().find(|l| l.starts_with(&format!("{name}="))).unwrap();
    line.split_once('=').unwrap().1.trim_matches('"').to_string()
}

/// etcdctl's `Error:` lines, joined.
fn error_lines(out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr.lines().filter(|l| l.starts_with("Error:")).collect::<Vec<_>>().join("|")
}

/// Runs an etcdctl membership command until it succeeds (within 30 s);
/// meanwhile it may only be refused with `refusal`. Returns its output.
fn until_allowed(via: &str, args: &[&str], refusal: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = etcdctl(via, args, None);
        if out.status.success() {
            return String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(refusal), "{args:?} refused for another reason: {err}");
        assert!(Instant::now() < deadline, "{args:?} was never allowed");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn learner_added_promoted_and_old_member_removed_under_writes() {
    let mut cluster = start_cluster(Kind::Rtcd, 3);
    let via = cluster[1].client_url.clone();
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let endpoints: Vec<String> = cluster.iter().skip(1).map(|m| m.client_url.clone()).collect();
    let writers = spawn_writers(&endpoints, "mw", &acknowledged, &stop);
    std::thread::sleep(Duration::from_secs(1));

    // Add m4 as a learner: etcdctl prints the settings to start it with.
    let urls = fresh_urls();
    let added = ok(etcdctl(&via, &["member", "add", "m4", "--peer-urls", &urls.1, "--learner"], None));
    let new_id = member_id_in(&added);
    assert!(added.contains(" added to cluster "), "{added}");
    assert_eq!(env_value(&added, "ETCD_NAME"), "m4");
    assert_eq!(env_value(&added, "ETCD_INITIAL_ADVERTISE_PEER_URLS"), urls.1);
    assert_eq!(env_value(&added, "ETCD_INITIAL_CLUSTER_STATE"), "existing");
    let initial_cluster = env_value(&added, "ETCD_INITIAL_CLUSTER");
    for m in &cluster {
        assert!(initial_cluster.contains(&format!("{}={}", m.name, m.peer_url)), "{initial_cluster}");
    }
    let list = ok(etcdctl(&via, &["member", "list"], None));
    assert!(list.contains(&format!("{new_id}, unstarted, , {}, , true", urls.1)), "{list}");

    // Start it; it learns its ID from the cluster and publishes its name.
    let m4 = join(Kind::Rtcd, "m4", &initial_cluster, urls.clone());
    wait_healthy(&m4);
    let promoted = until_allowed(&via, &["member", "promote", &new_id], "in sync with leader");
    assert!(promoted.starts_with(&format!("Member {new_id:>16} promoted in cluster ")), "{promoted}");
    assert_eq!(id_of(&m4), new_id, "the joined member uses the ID the cluster gave it");

    // Remove m1 (perhaps the leader): it stops, the others go on.
    let m1_id = id_of(&cluster[0]);
    // Strict reconfiguration refuses it until the voters left have been
    // connected for five seconds, as etcd does.
    let removed = until_allowed(&via, &["member", "remove", &m1_id], "etcdserver: unhealthy cluster");
    assert!(removed.starts_with(&format!("Member {m1_id:>16} removed from cluster ")), "{removed}");
    assert!(cluster[0].exits_within(Duration::from_secs(15)), "a removed member stops");
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() > 20, "writes went on: {}", acknowledged.len());

    let list = ok(etcdctl(&via, &["member", "list"], None));
    let mut rows: Vec<&str> = list.lines().collect();
    rows.sort_unstable();
    assert_eq!(rows.len(), 3, "{list}");
    for m in cluster.iter().skip(1).chain([&m4]) {
        let row = format!("{}, started, {}, {}, {}, false", id_of(m), m.name, m.peer_url, m.client_url);
        assert!(rows.contains(&row.as_str()), "{row} missing from {list}");
    }
    let remaining: Vec<Member> = cluster.drain(1..).chain([m4]).collect();
    assert_all_present(&remaining, "mw", &acknowledged);
    assert_same_hashkv(&remaining.iter().collect::<Vec<_>>());
}

/// Refused membership changes: the same `Error:` lines as etcd's.
#[test]
fn refused_membership_changes_print_what_etcd_prints() {
    let session = |m: &Member| -> Vec<String> {
        let url = m.client_url.as_str();
        let own = id_of(m);
        let learner_urls = fresh_urls();
        let added =
            ok(etcdctl(url, &["member", "add", "l1", "--peer-urls", &learner_urls.1, "--learner"], None));
        let learner = member_id_in(&added);
        let other = fresh_urls();
        let steps: Vec<Vec<&str>> = vec![
            vec!["member", "remove", "1234"],
            vec!["member", "promote", &own],
            vec!["member", "promote", "1234"],
            vec!["member", "promote", &learner],
            vec!["member", "add", "x", "--peer-urls", &m.peer_url],
            vec!["member", "add", "l2", "--peer-urls", &other.1, "--learner"],
            vec!["member", "update", "1234", "--peer-urls", &other.1],
            vec!["member", "update", &learner, "--peer-urls", &m.peer_url],
            vec!["member", "remove", &learner],
        ];
        steps
            .iter()
            .map(|args| {
                let out = etcdctl(url, args, None);
                // IDs differ (and etcdctl pads them to 16 columns).
                let stdout = String::from_utf8_lossy(&out.stdout).replace(&learner, "<ID>");
                let stdout = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
                format!(
                    "{} {} {}",
                    out.status.success(),
                    stdout.split(" from cluster").next().unwrap(),
                    error_lines(&out)
                )
            })
            .collect()
    };
    let ours = session(&start(Kind::Rtcd, "members"));
    let theirs = session(&start(Kind::Etcd, "members"));
    assert_eq!(ours, theirs);
}

/// etcd's strict reconfiguration check (on by default) on a three-member
/// cluster: a second unstarted voter is refused while the first is not
/// connected, and a removal that would leave too few started voters is
/// refused — rtcd without it once removed a member while a re-added one
/// had not started, and the cluster lost its quorum for good (found by
/// rtcd-jepsen's membership fault). Same outputs as etcd.
#[test]
fn membership_changes_that_would_lose_the_quorum_are_refused_like_etcd() {
    let session = |kind: Kind| -> Vec<String> {
        let cluster = start_cluster(kind, 3);
        // Members count as connected after five seconds of answering.
        std::thread::sleep(Duration::from_secs(6));
        let leader_id = status(&cluster[0])["leader"].as_u64().unwrap();
        let leader = cluster.iter().find(|m| status(m)["header"]["member_id"] == leader_id).unwrap();
        let url = leader.client_url.as_str();
        let others: Vec<String> = cluster.iter().filter(|m| m.name != leader.name).map(id_of).collect();
        let (x, y) = (fresh_urls(), fresh_urls());
        let added = ok(etcdctl(url, &["member", "add", "x", "--peer-urls", &x.1], None));
        let x_id = member_id_in(&added);
        let steps: Vec<Vec<&str>> = vec![
            vec!["member", "add", "y", "--peer-urls", &y.1],
            vec!["member", "remove", &others[0]],
            vec!["member", "remove", &others[1]],
            vec!["member", "remove", &x_id],
            vec!["put", "after", "reconfig"],
        ];
        steps
            .iter()
            .map(|args| {
                let out = etcdctl(url, args, None);
                let stdout = String::from_utf8_lossy(&out.stdout);
                let stdout = stdout.split(" removed from cluster").next().unwrap().split_whitespace().next();
                format!("{} {} {}", out.status.success(), stdout.unwrap_or(""), error_lines(&out))
            })
            .collect()
    };
    let ours = session(Kind::Rtcd);
    assert_eq!(
        ours[..3],
        [
            "false  Error: etcdserver: unhealthy cluster",
            "true Member ",
            "false  Error: etcdserver: re-configuration failed due to not enough started members",
        ]
    );
    assert_eq!(ours, session(Kind::Etcd));
}
