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

/// A plain HTTP/1.1 GET; returns the status line and the body.
fn http_get(url: &str, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://");
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    write!(conn, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.lines().next().unwrap_or("").to_string(), body.to_string())
}

#[test]
fn http_endpoints_share_the_client_port_with_grpc() {
    let m = start(Kind::Rtcd, "http");
    let (status, body) = http_get(&m.client_url, "/health");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains(r#""health":"true""#), "{body}");
    let (_, body) = http_get(&m.client_url, "/version");
    assert!(body.contains(r#""etcdserver":"3.5.17""#), "{body}");
    stdout(etcdctl(&m.client_url, &["put", "k", "v"], None));
    let (_, body) = http_get(&m.client_url, "/metrics");
    assert!(body.contains("\netcd_server_has_leader 1\n"), "{body}");
    assert!(body.contains("\netcd_debugging_mvcc_current_revision 2\n"), "{body}");
    assert!(body.contains("process_resident_memory_bytes"), "{body}");
    // gRPC on the same port keeps working.
    assert_eq!(stdout(etcdctl(&m.client_url, &["get", "k", "--print-value-only"], None)), "v");
}
