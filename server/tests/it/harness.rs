//! Starting real members (rtcd or etcd) on free loopback ports and running
//! etcdctl against them.

use std::collections::BTreeSet;
use std::io::Write;
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Ports handed out so far in this test process.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A free loopback port never handed out before in this process: a killed
/// member's ports stay its own until it restarts, even while tests running
/// in parallel pick ports. (Otherwise a test that kills its whole cluster
/// may find, on restart, a port taken by another test, and check that
/// test's cluster: the likely cause of one "lost every acknowledged write"
/// failure under the full suite that did not reproduce alone.)
pub fn free_port() -> u16 {
    loop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner()).insert(port) {
            return port;
        }
    }
}

/// Tests share the machine's two cores; a latency check (`check perf`)
/// needs them to itself. Every member holds a share of the machine while it
/// lives; an exclusive test waits until no member of another test runs and
/// keeps new ones from starting (see `machine_to_itself`). Shares are never
/// refused while the exclusive test only waits: a test starting its second
/// member must not queue behind it (a writer-preferring RwLock deadlocks
/// exactly there).
struct Machine {
    /// (members alive, held exclusively)
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

static MACHINE: Machine = Machine { state: Mutex::new((0, false)), changed: Condvar::new() };

thread_local! {
    /// Set while a test holds the machine exclusively: its own members do
    /// not take a share.
    static EXCLUSIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Machine {
    fn lock(&self) -> MutexGuard<'_, (usize, bool)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait_until(&self, ready: impl Fn(&(usize, bool)) -> bool) -> MutexGuard<'_, (usize, bool)> {
        let mut state = self.lock();
        while !ready(&state) {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state
    }
}

/// A member's share of the machine, given back when the member is dropped.
pub struct MachineShare(());

impl Drop for MachineShare {
    fn drop(&mut self) {
        MACHINE.lock().0 -= 1;
        MACHINE.changed.notify_all();
    }
}

fn share_machine() -> Option<MachineShare> {
    if EXCLUSIVE.get() {
        return None;
    }
    MACHINE.wait_until(|&(_, exclusive)| !exclusive).0 += 1;
    Some(MachineShare(()))
}

/// Waits until no other test runs members, and keeps others from starting
/// any until the returned guard is dropped.
pub fn machine_to_itself() -> MachineGuard {
    MACHINE.wait_until(|&(members, exclusive)| members == 0 && !exclusive).1 = true;
    EXCLUSIVE.set(true);
    MachineGuard(())
}

pub struct MachineGuard(());

impl Drop for MachineGuard {
    fn drop(&mut self) {
        EXCLUSIVE.set(false);
        MACHINE.lock().1 = false;
        MACHINE.changed.notify_all();
    }
}

/// A running member, killed when dropped.
pub struct Member {
    child: Child,
    /// Released after the process is killed (fields drop after `drop`).
    _machine: Option<MachineShare>,
    kind: Kind,
    pub name: String,
    extra: Vec<String>,
    /// Environment variables the process starts with (fault hooks).
    env: Vec<(String, String)>,
    initial_cluster: String,
    data_dir: std::path::PathBuf,
    pub dir: tempfile::TempDir,
    pub client_url: String,
    pub peer_url: String,
}

impl Member {
    fn urls(&self) -> (String, String) {
        (self.client_url.clone(), self.peer_url.clone())
    }

    /// Where the member keeps its data.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// The member's process ID (to read its memory use, say).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, leaving the data for a later `restart`.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts again on the same data and ports, without waiting for health.
    pub fn restart(&mut self) {
        self.child = spawn(
            self.kind,
            &self.name,
            &self.data_dir,
            &self.urls(),
            &self.initial_cluster,
            &self.extra,
            &self.env,
        );
    }

    /// Waits up to `timeout` for the process to end by itself.
    pub fn exits_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Environment variables for the next (re)start (fault hooks); empty
    /// for none.
    pub fn set_env(&mut self, env: &[(&str, &str)]) {
        self.env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    }

    /// SIGKILL, then start again on the same data and ports.
    pub fn kill_and_restart(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.restart();
        wait_healthy(self);
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Rtcd,
    Etcd,
}

pub fn start(kind: Kind, name: &str) -> Member {
    start_with(kind, name, &[])
}

/// Starts a member with extra command-line flags.
pub fn start_with(kind: Kind, name: &str, extra: &[&str]) -> Member {
    let (dir, data_dir) = fresh_dirs();
    launch(kind, name, extra, dir, data_dir)
}

/// Starts a member on an existing data directory (a restored snapshot, say).
pub fn start_in(kind: Kind, name: &str, data_dir: &std::path::Path) -> Member {
    launch(kind, name, &[], tempfile::tempdir().unwrap(), data_dir.to_path_buf())
}

fn launch(
    kind: Kind,
    name: &str,
    extra: &[&str],
    dir: tempfile::TempDir,
    data_dir: std::path::PathBuf,
) -> Member {
    let urls = fresh_urls();
    let initial_cluster = format!("{name}={}", urls.1);
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let member = spawn_member(kind, name, (dir, data_dir), urls, &initial_cluster, extra, Vec::new());
    wait_healthy(&member);
    member
}

/// Spawns a member process with its data in `data_dir` (inside `dir`,
/// removed with the member) and returns it without waiting.
fn spawn_member(
    kind: Kind,
    name: &str,
    (dir, data_dir): (tempfile::TempDir, std::path::PathBuf),
    (client_url, peer_url): (String, String),
    initial_cluster: &str,
    extra: Vec<String>,
    env: Vec<(String, String)>,
) -> Member {
    let urls = (client_url.clone(), peer_url.clone());
    let child = spawn(kind, name, &data_dir, &urls, initial_cluster, &extra, &env);
    let (name, initial_cluster) = (name.to_string(), initial_cluster.to_string());
    Member {
        child,
        _machine: share_machine(),
        kind,
        name,
        extra,
        env,
        initial_cluster,
        data_dir,
        dir,
        client_url,
        peer_url,
    }
}

fn fresh_dirs() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    (dir, data_dir)
}

/// A member's client and peer URLs on free loopback ports, for `join`.
pub fn fresh_urls() -> (String, String) {
    fresh_urls_with("http", "http")
}

/// `fresh_urls` with these schemes (`https` for TLS).
pub fn fresh_urls_with(client: &str, peer: &str) -> (String, String) {
    (format!("{client}://127.0.0.1:{}", free_port()), format!("{peer}://127.0.0.1:{}", free_port()))
}

/// Starts a member that joins a running cluster (`--initial-cluster-state
/// existing`, after `member add`), without waiting for it.
pub fn join(kind: Kind, name: &str, initial_cluster: &str, urls: (String, String)) -> Member {
    let extra = vec!["--initial-cluster-state".to_string(), "existing".to_string()];
    spawn_member(kind, name, fresh_dirs(), urls, initial_cluster, extra, Vec::new())
}

/// Starts `size` members m1, m2, ... of one cluster and waits until each
/// answers a linearizable read (so a leader exists).
pub fn start_cluster(kind: Kind, size: usize) -> Vec<Member> {
    start_cluster_with(kind, size, &[])
}

/// `start_cluster` with extra flags for every member.
pub fn start_cluster_with(kind: Kind, size: usize, extra: &[&str]) -> Vec<Member> {
    let urls: Vec<(String, String)> = (0..size).map(|_| fresh_urls()).collect();
    let members = spawn_cluster(kind, urls, extra);
    for m in &members {
        wait_healthy(m);
    }
    members
}

/// Starts members m1, m2, ... of one cluster on these URLs, without waiting
/// (a TLS cluster's health is checked with certificates).
pub fn spawn_cluster(kind: Kind, urls: Vec<(String, String)>, extra: &[&str]) -> Vec<Member> {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let initial_cluster = urls
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{}={peer}", i + 1))
        .collect::<Vec<_>>()
        .join(",");
    let members: Vec<Member> = urls
        .into_iter()
        .enumerate()
        .map(|(i, urls)| {
            let name = format!("m{}", i + 1);
            spawn_member(kind, &name, fresh_dirs(), urls, &initial_cluster, extra.clone(), Vec::new())
        })
        .collect();
    members
}

fn spawn(
    kind: Kind,
    name: &str,
    data_dir: &std::path::Path,
    (client_url, peer_url): &(String, String),
    initial_cluster: &str,
    extra: &[String],
    env: &[(String, String)],
) -> Child {
    let program = match kind {
        Kind::Rtcd => env!("CARGO_BIN_EXE_rtcd"),
        Kind::Etcd => "etcd",
    };
    Command::new(program)
        .args(["--name", name, "--data-dir"])
        .arg(data_dir)
        .args(["--listen-client-urls", client_url, "--advertise-client-urls", client_url])
        .args(["--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url])
        .args(["--initial-cluster", initial_cluster])
        .args(extra)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {program}: {e}"))
}

pub fn wait_healthy(member: &Member) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if etcdctl(&member.client_url, &["endpoint", "health"], None).status.success() {
            return;
        }
        assert!(Instant::now() < deadline, "{} did not become healthy", member.client_url);
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `etcdctl --endpoints <endpoint>` (v3 API), for callers that need the
/// process itself (long-running commands, their own pipes).
pub fn etcdctl_command(endpoint: &str) -> Command {
    let mut cmd = Command::new("etcdctl");
    cmd.env("ETCDCTL_API", "3").args(["--endpoints", endpoint]);
    cmd
}

/// Runs `etcdctl --endpoints <endpoint> <args>` with optional stdin.
pub fn etcdctl(endpoint: &str, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = etcdctl_command(endpoint)
        .args(["--command-timeout", "5s"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("etcdctl from Debian's etcd-client (scripts/install-deps.sh installs it)");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}
