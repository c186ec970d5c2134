//! `etcdctl watch` against rtcd and real etcd side by side: history with
//! --rev, --prev-kv, --prefix, a live event, interactive mode with
//! `progress`, and a watch from a compacted revision.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::harness::{Kind, etcdctl, etcdctl_command, start};

/// Everything `etcdctl watch <args>` prints until it has been quiet for
/// `quiet` (or exits), then stops it. `stdin` is fed for `-i` and kept open,
/// as an interactive user would.
fn watch_output(endpoint: &str, args: &[&str], stdin: Option<&str>, quiet: Duration) -> Vec<String> {
    let mut child = etcdctl_command(endpoint)
        .arg("watch")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("etcdctl");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
        input.flush().unwrap();
    }
    let (tx, lines) = mpsc::channel();
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
    }
    drop(tx);
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut out = Vec::new();
    while Instant::now() < deadline {
        match lines.recv_timeout(quiet) {
            Ok(line) => out.push(line),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(input);
    out
}

/// JSON output carries the server's IDs and term: drop them.
fn normalize(line: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(mut v) => {
            if let Some(h) = v.get_mut("Header").and_then(|h| h.as_object_mut()) {
                for field in ["cluster_id", "member_id", "raft_term"] {
                    h.remove(field);
                }
            }
            v.to_string()
        }
        Err(_) => line.to_string(),
    }
}

fn session(url: &str) -> Vec<Vec<String>> {
    for args in [["put", "foo", "1"], ["put", "foo", "2"], ["put", "foo2", "x"], ["del", "foo", ""]] {
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        assert!(etcdctl(url, &args, None).status.success());
    }
    let quiet = Duration::from_millis(1500);
    let mut outputs = vec![
        watch_output(url, &["foo", "--rev", "1"], None, quiet),
        watch_output(url, &["foo", "--rev", "1", "--prev-kv"], None, quiet),
        watch_output(url, &["foo", "--prefix", "--rev", "2", "-w", "json"], None, quiet),
    ];
    // A live event: watch from the next revision, then write it.
    let live = std::thread::scope(|s| {
        let watcher = s.spawn(|| watch_output(url, &["bar", "--rev", "6"], None, quiet));
        std::thread::sleep(Duration::from_millis(300));
        assert!(etcdctl(url, &["put", "bar", "live"], None).status.success());
        watcher.join().unwrap()
    });
    outputs.push(live);
    // etcd 3.4 answers `progress` at once even while a watcher replays
    // history (3.5 waits, as rtcd does): compare on a watcher that is synced.
    outputs.push(watch_output(url, &["-i", "-w", "json"], Some("watch foo2\nprogress\n"), quiet));
    assert!(etcdctl(url, &["compaction", "5"], None).status.success());
    outputs.push(watch_output(url, &["foo", "--rev", "2"], None, quiet));
    outputs.into_iter().map(|lines| lines.iter().map(|l| normalize(l)).collect()).collect()
}

#[test]
fn watch_prints_what_etcd_prints() {
    let etcd = start(Kind::Etcd, "watch");
    let rtcd = start(Kind::Rtcd, "watch");
    let (theirs, ours) = std::thread::scope(|s| {
        let theirs = s.spawn(|| session(&etcd.client_url));
        let ours = session(&rtcd.client_url);
        (theirs.join().unwrap(), ours)
    });
    assert_same(&ours, &theirs);
}

fn assert_same(ours: &[Vec<String>], theirs: &[Vec<String>]) {
    for (step, (want, got)) in theirs.iter().zip(ours).enumerate() {
        assert!(!want.is_empty(), "step {step}: etcd printed nothing");
        assert_eq!(got, want, "step {step}");
    }
    assert_eq!(ours.len(), theirs.len());
}

/// The same session through a follower of a three-member cluster: its
/// watchers are fed by its own apply, writes go through the leader.
#[test]
fn watch_through_a_follower_prints_what_etcd_prints() {
    let etcd = start(Kind::Etcd, "watch");
    let cluster = crate::harness::start_cluster(Kind::Rtcd, 3);
    let leader = crate::cluster::status(&cluster[0])["leader"].as_u64();
    let follower =
        cluster.iter().find(|m| crate::cluster::status(m)["header"]["member_id"].as_u64() != leader).unwrap();
    let (theirs, ours) = std::thread::scope(|s| {
        let theirs = s.spawn(|| session(&etcd.client_url));
        let ours = session(&follower.client_url);
        (theirs.join().unwrap(), ours)
    });
    assert_same(&ours, &theirs);
}
