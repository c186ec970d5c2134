//! etcdctl's maintenance commands: hashes agree between members holding the
//! same history, defrag keeps data.

use std::time::{Duration, Instant};

use crate::harness::{Kind, etcdctl, start, start_with};

fn stdout(out: std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn hashkv_agrees_across_members_and_defrag_keeps_data() {
    let members = [start(Kind::Rtcd, "m1"), start(Kind::Rtcd, "m2")];
    // `endpoint hashkv` and `defrag` dial endpoints as given: use host:port
    // (see the :authority note in docs/architecture.md).
    let eps: Vec<&str> = members.iter().map(|m| m.client_url.trim_start_matches("http://")).collect();
    for ep in &eps {
        for (k, v) in [("a", "1"), ("b", "2"), ("a", "3")] {
            stdout(etcdctl(ep, &["put", k, v], None));
        }
    }
    let hash = |ep: &str| {
        let line = stdout(etcdctl(ep, &["endpoint", "hashkv"], None));
        line.rsplit(", ").next().unwrap().to_string()
    };
    assert_eq!(hash(eps[0]), hash(eps[1]), "same history, same hash");
    stdout(etcdctl(eps[1], &["put", "c", "4"], None));
    assert_ne!(hash(eps[0]), hash(eps[1]), "different history, different hash");

    let defrag = stdout(etcdctl(eps[0], &["defrag"], None));
    assert_eq!(defrag, format!("Finished defragmenting etcd member[{}]", eps[0]));
    assert_eq!(stdout(etcdctl(eps[0], &["get", "a", "--print-value-only"], None)), "3");
}

#[test]
fn periodic_auto_compaction_drops_old_history() {
    let m = start_with(
        Kind::Rtcd,
        "compactor",
        &["--auto-compaction-mode", "periodic", "--auto-compaction-retention", "1s"],
    );
    let url = m.client_url.as_str();
    stdout(etcdctl(url, &["put", "k", "old"], None));
    // Keep writing so there is a newer revision to compact to; revision 2 must
    // be compacted away within a few retention periods.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        stdout(etcdctl(url, &["put", "k", "new"], None));
        let old = etcdctl(url, &["get", "k", "--rev=2"], None);
        let stderr = String::from_utf8_lossy(&old.stderr);
        if stderr.contains("Error: etcdserver: mvcc: required revision has been compacted") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "revision 2 still readable: {}",
            String::from_utf8_lossy(&old.stdout)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(stdout(etcdctl(url, &["get", "k", "--print-value-only"], None)), "new");
}
