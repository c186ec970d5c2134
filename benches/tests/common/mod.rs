//! What the rtcd-bench tests share: a single rtcd or etcd member on free
//! ports, stopped when dropped, and etcdctl against it.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Member(Child);

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A single member of `program` (rtcd or etcd: the same flags) on free
/// ports, once it answers `endpoint health`.
pub fn start(program: &Path, dir: &Path) -> (Member, String) {
    let (client, peer) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new(program)
        .args(["--name", "bench", "--data-dir"])
        .arg(dir)
        .args(["--listen-client-urls", &client_url, "--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("bench={peer_url}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{program:?} (scripts/install-deps.sh installs etcd): {e}"));
    let member = Member(child);
    let endpoint = format!("127.0.0.1:{client}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !etcdctl(&endpoint, &["endpoint", "health"]).status.success() {
        assert!(Instant::now() < deadline, "{program:?} never became healthy");
        std::thread::sleep(Duration::from_millis(200));
    }
    (member, endpoint)
}

/// `rtcd`, built beside this test's binaries.
pub fn rtcd() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rtcd-bench")).with_file_name("rtcd")
}

pub fn etcdctl(endpoint: &str, args: &[&str]) -> Output {
    Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", endpoint])
        .args(args)
        .output()
        .unwrap()
}

/// A single rtcd member, built beside the test binaries.
pub fn start_rtcd(dir: &Path) -> (Member, String) {
    start(&rtcd(), dir)
}

/// A single etcd member (Debian's 3.4, from scripts/install-deps.sh), for
/// the benchmarks that must measure it as well as rtcd.
pub fn start_etcd(dir: &Path) -> (Member, String) {
    start(Path::new("etcd"), dir)
}
