//! Three real `rtcd` processes forming one cluster: etcdctl works through any
//! member, every member sees the same data, and when the leader is killed
//! with SIGKILL under a write load, writes resume on a new leader and no
//! acknowledged write is lost.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::harness::{Kind, Member, etcdctl, start_cluster, wait_healthy};

pub(crate) fn ok(out: std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub(crate) fn status(m: &Member) -> serde_json::Value {
    let ep = m.client_url.trim_start_matches("http://");
    let json: serde_json::Value =
        serde_json::from_str(&ok(etcdctl(ep, &["endpoint", "status", "-w", "json"], None))).unwrap();
    json[0]["Status"].clone()
}

/// Writers putting `<prefix><n>-<i>` through each endpoint until `stop`;
/// every acknowledged key lands in `acknowledged`.
pub(crate) fn spawn_writers(
    endpoints: &[String],
    prefix: &str,
    acknowledged: &Arc<Mutex<Vec<String>>>,
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<()>> {
    endpoints
        .iter()
        .enumerate()
        .map(|(w, ep)| {
            let (ep, acknowledged, stop) = (ep.clone(), acknowledged.clone(), stop.clone());
            let prefix = prefix.to_string();
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("{prefix}{w}-{i:04}");
                    if etcdctl(&ep, &["put", &key, "v"], None).status.success() {
                        acknowledged.lock().unwrap().push(key);
                    }
                    i += 1;
                }
            })
        })
        .collect()
}

/// Every acknowledged key is readable (linearizably) through every member.
pub(crate) fn assert_all_present(cluster: &[Member], prefix: &str, acknowledged: &[String]) {
    for m in cluster {
        let keys = ok(etcdctl(&m.client_url, &["get", prefix, "--prefix", "--keys-only"], None));
        let present: BTreeSet<&str> = keys.lines().filter(|l| !l.is_empty()).collect();
        let missing: Vec<&String> = acknowledged.iter().filter(|k| !present.contains(k.as_str())).collect();
        assert!(missing.is_empty(), "{} lost {} acknowledged writes: {missing:?}", m.name, missing.len());
    }
}

/// The index in `cluster` of the member every member names as leader.
pub(crate) fn leader_index(cluster: &[Member]) -> usize {
    let leaders: BTreeSet<u64> = cluster.iter().map(|m| status(m)["leader"].as_u64().unwrap()).collect();
    assert_eq!(leaders.len(), 1, "everyone agrees on the leader: {leaders:?}");
    let leader_id = *leaders.iter().next().unwrap();
    cluster.iter().position(|m| status(m)["header"]["member_id"].as_u64() == Some(leader_id)).unwrap()
}

/// `etcdctl endpoint hashkv` is the same on every given member.
pub(crate) fn assert_same_hashkv(members: &[&Member]) {
    let hashes: BTreeSet<String> = members
        .iter()
        .map(|m| ok(etcdctl(m.client_url.trim_start_matches("http://"), &["endpoint", "hashkv"], None)))
        .map(|line| line.rsplit(", ").next().unwrap().to_string())
        .collect();
    assert_eq!(hashes.len(), 1, "members agree on the history: {hashes:?}");
}

#[test]
fn three_members_serve_etcdctl_and_survive_leader_sigkill() {
    let mut cluster = start_cluster(Kind::Rtcd, 3);
    // From the first answer, every member is listed with its client URLs
    // (clients that pick endpoints from the list see the whole cluster).
    let list = ok(etcdctl(&cluster[0].client_url, &["member", "list"], None));
    assert_eq!(list.lines().count(), 3, "{list}");
    for m in &cluster {
        assert!(list.contains(&format!(", {}, {}, {}, false", m.name, m.peer_url, m.client_url)), "{list}");
    }

    // A write through one member is read (linearizably) through every member.
    ok(etcdctl(&cluster[1].client_url, &["put", "greeting", "hello"], None));
    for m in &cluster {
        assert_eq!(ok(etcdctl(&m.client_url, &["get", "greeting", "--print-value-only"], None)), "hello");
    }
    let leader = leader_index(&cluster);

    // Writers through the two followers; kill the leader halfway.
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let endpoints: Vec<String> =
        cluster.iter().enumerate().filter(|(i, _)| *i != leader).map(|(_, m)| m.client_url.clone()).collect();
    let writers = spawn_writers(&endpoints, "w", &acknowledged, &stop);
    std::thread::sleep(Duration::from_secs(2));
    let before = acknowledged.lock().unwrap().len();
    cluster[leader].kill();
    let killed_at = Instant::now();
    // Writes must resume on a new leader.
    loop {
        std::thread::sleep(Duration::from_millis(200));
        if acknowledged.lock().unwrap().len() > before + 10 {
            break;
        }
        assert!(killed_at.elapsed() < Duration::from_secs(30), "writes did not resume after the leader died");
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(before > 0, "some writes before the kill");

    // Bring the old leader back: it catches up, and every member holds every
    // acknowledged write.
    cluster[leader].restart();
    wait_healthy(&cluster[leader]);
    assert_all_present(&cluster, "w", &acknowledged);
    assert_same_hashkv(&cluster.iter().collect::<Vec<_>>());
}

/// Every member SIGKILLed at once under a write load, then restarted: each
/// acknowledged write is there on every member.
#[test]
fn whole_cluster_sigkill_keeps_acknowledged_writes() {
    let mut cluster = start_cluster(Kind::Rtcd, 3);
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let endpoints: Vec<String> = cluster.iter().map(|m| m.client_url.clone()).collect();
    let writers = spawn_writers(&endpoints, "all", &acknowledged, &stop);
    std::thread::sleep(Duration::from_secs(2));
    for m in cluster.iter_mut() {
        m.kill();
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(!acknowledged.is_empty(), "some writes were acknowledged before the kill");
    for m in cluster.iter_mut() {
        m.restart();
    }
    for m in &cluster {
        wait_healthy(m);
    }
    assert_all_present(&cluster, "all", &acknowledged);
}

/// A leader killed before its own entries reached its disk (log and store),
/// after the followers committed and applied them, and restarted at once:
/// it lacks entries a quorum holds. It must not resume as leader of the same
/// term and write other entries under those indexes (openraft's leader
/// restore would); it joins an election, which only a member holding them
/// can win. The fault hook (`rtcd_raft::fault::leader_lag`) holds the
/// leader's own entries off its disk for seconds, so the window is certain.
#[test]
fn a_leader_restarted_before_its_fsync_cannot_fork_the_log() {
    let mut cluster = start_cluster(Kind::Rtcd, 3);
    // Only the member made leader lags: the one that will be killed.
    let lagging = 0;
    cluster[lagging].kill();
    cluster[lagging].set_env(&[(rtcd_raft::fault::LEADER_LAG_ENV, "4000")]);
    cluster[lagging].restart();
    wait_healthy(&cluster[lagging]);
    make_leader(&cluster, lagging);

    // Writes through a follower. The leader answers a forwarded write only
    // once it applied it, which the lag holds up, so they wait; but the
    // followers commit and apply them meanwhile.
    let follower = (lagging + 1) % cluster.len();
    let url = cluster[follower].client_url.clone();
    let pending: Vec<_> = (0..10)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || etcdctl(&url, &["put", &format!("fork/a{i:02}"), "before"], None))
        })
        .collect();
    let committed = wait_for_keys(&cluster[follower], "fork/a", 10);
    cluster[lagging].kill();
    cluster[lagging].set_env(&[]);
    cluster[lagging].restart();
    for put in pending {
        let _ = put.join(); // answered or not: the member they went to knows
    }
    wait_healthy(&cluster[lagging]);

    // Writes through every member, the restarted one first: a forked log
    // would give them indexes the others already hold.
    let mut acknowledged = committed;
    for round in 0..3 {
        for (n, m) in cluster.iter().enumerate() {
            let key = format!("fork/b{round}-{n}");
            ok(etcdctl(&m.client_url, &["put", &key, "after"], None));
            acknowledged.push(key);
        }
    }
    assert_all_present(&cluster, "fork/", &acknowledged);
    assert_same_hashkv(&cluster.iter().collect::<Vec<_>>());
}

/// Waits (up to 10 s) until `m` serves `count` keys under `prefix` from its
/// own data (a serializable read), and returns them.
fn wait_for_keys(m: &Member, prefix: &str, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out =
            ok(etcdctl(&m.client_url, &["get", prefix, "--prefix", "--keys-only", "--consistency=s"], None));
        let keys: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
        if keys.len() >= count {
            return keys;
        }
        assert!(Instant::now() < deadline, "{} applied {} of {count} writes", m.name, keys.len());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Hands leadership to `cluster[target]` (`etcdctl move-leader`) unless it
/// leads already.
fn make_leader(cluster: &[Member], target: usize) {
    if leader_index(cluster) == target {
        return;
    }
    let endpoints: Vec<&str> = cluster.iter().map(|m| m.client_url.trim_start_matches("http://")).collect();
    let id = status(&cluster[target])["header"]["member_id"].as_u64().unwrap();
    ok(etcdctl(&endpoints.join(","), &["move-leader", &format!("{id:x}")], None));
    assert_eq!(leader_index(cluster), target, "leadership moved");
}

/// `etcdctl move-leader` hands leadership to a follower; every member then
/// reports that follower as leader, and writes go on.
#[test]
fn move_leader_transfers_leadership() {
    let cluster = start_cluster(Kind::Rtcd, 3);
    // move-leader dials endpoints as given: host:port (see docs/architecture.md).
    let endpoints: Vec<&str> = cluster.iter().map(|m| m.client_url.trim_start_matches("http://")).collect();
    let endpoints = endpoints.join(",");
    let leader = status(&cluster[0])["leader"].as_u64().unwrap();
    let target = cluster
        .iter()
        .map(|m| status(m)["header"]["member_id"].as_u64().unwrap())
        .find(|id| *id != leader)
        .unwrap();
    let out = ok(etcdctl(&endpoints, &["move-leader", &format!("{target:x}")], None));
    assert_eq!(out, format!("Leadership transferred from {leader:x} to {target:x}"));
    for m in &cluster {
        assert_eq!(status(m)["leader"].as_u64(), Some(target), "{} sees the new leader", m.name);
    }
    ok(etcdctl(&cluster[0].client_url, &["put", "after-move", "1"], None));
    // A follower cannot hand over leadership it does not hold.
    let follower =
        cluster.iter().find(|m| status(m)["header"]["member_id"].as_u64() != Some(target)).unwrap();
    let refused = etcdctl(
        follower.client_url.trim_start_matches("http://"),
        &["move-leader", &format!("{leader:x}")],
        None,
    );
    assert!(!refused.status.success());
}

/// A member stopped while the others take many writes, snapshot, purge their
/// logs and compact: restarted, it catches up by installing the leader's
/// snapshot, holds every acknowledged write and agrees on `hashkv`.
#[test]
fn stopped_member_catches_up_by_snapshot() {
    let flags = ["--snapshot-count", "100", "--experimental-snapshot-catchup-entries", "20"];
    let mut cluster = crate::harness::start_cluster_with(Kind::Rtcd, 3, &flags);
    let leader_id = status(&cluster[0])["leader"].as_u64().unwrap();
    let lagging =
        cluster.iter().position(|m| status(m)["header"]["member_id"].as_u64() != Some(leader_id)).unwrap();
    cluster[lagging].kill();

    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let endpoints: Vec<String> = cluster
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != lagging)
        .map(|(_, m)| m.client_url.clone())
        .collect();
    let writers = spawn_writers(&endpoints, "snap", &acknowledged, &stop);
    let deadline = Instant::now() + Duration::from_secs(120);
    while acknowledged.lock().unwrap().len() < 400 {
        assert!(Instant::now() < deadline, "too few writes: {}", acknowledged.lock().unwrap().len());
        std::thread::sleep(Duration::from_millis(200));
    }
    let via = endpoints[0].as_str();
    let out = ok(etcdctl(via, &["get", "snap", "--prefix", "--limit=1", "-w", "json"], None));
    let revision =
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["header"]["revision"].as_i64().unwrap();
    ok(etcdctl(via, &["compact", &revision.to_string(), "--physical"], None));
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();

    cluster[lagging].restart();
    wait_healthy(&cluster[lagging]);
    // Counted at both ends: received from the leader, sent by it.
    let counted = |member: &crate::harness::Member, series: &str| {
        let (_, metrics) = crate::maintenance::http_get(&member.client_url, "/metrics");
        metrics.lines().filter_map(|l| l.strip_prefix(series)?.parse::<f64>().ok()).sum::<f64>()
    };
    let lagging_id = status(&cluster[lagging])["header"]["member_id"].as_u64().unwrap();
    let from_leader = format!("etcd_network_snapshot_receive_success{{From=\"{leader_id:x}\"}} ");
    let installed = counted(&cluster[lagging], &from_leader);
    assert!(installed >= 1.0, "caught up without a snapshot from the leader: {installed}");
    let leader =
        cluster.iter().find(|m| status(m)["header"]["member_id"].as_u64() == Some(leader_id)).unwrap();
    let to_lagging = format!("etcd_network_snapshot_send_success{{To=\"{lagging_id:x}\"}} ");
    assert!(counted(leader, &to_lagging) >= 1.0, "the leader counted its send");
    assert_all_present(&cluster, "snap", &acknowledged);
    let old = format!("--rev={}", revision - 1);
    let compacted = etcdctl(&cluster[lagging].client_url, &["get", "snap", "--prefix", &old], None);
    assert!(String::from_utf8_lossy(&compacted.stderr).contains("required revision has been compacted"));
    assert_same_hashkv(&cluster.iter().collect::<Vec<_>>());
}

/// What `etcdctl watch` (which asks for a leader) prints when its member
/// loses the other two: the stream ends with "no leader", as with etcd.
fn watch_until_quorum_lost(kind: Kind) -> (Option<i32>, String, Vec<String>) {
    let mut cluster = start_cluster(kind, 3);
    let mut watch = crate::harness::etcdctl_command(&cluster[0].client_url)
        .args(["watch", "k"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    ok(etcdctl(&cluster[0].client_url, &["put", "k", "v1"], None));
    std::thread::sleep(Duration::from_millis(500));
    cluster[1].kill();
    cluster[2].kill();
    let deadline = Instant::now() + Duration::from_secs(30);
    while watch.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = watch.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = watch.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let notes = stderr.lines().filter(|l| !l.starts_with('{')).map(str::to_string).collect();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), notes)
}

#[test]
fn watch_requiring_a_leader_ends_when_quorum_is_lost() {
    let ours = watch_until_quorum_lost(Kind::Rtcd);
    assert_eq!(ours.0, Some(5), "etcdctl watch ended with an error: {ours:?}");
    assert_eq!(ours, watch_until_quorum_lost(Kind::Etcd));
}
