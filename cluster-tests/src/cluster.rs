//! The cluster under test: real `rtcd` (or etcd) processes on loopback,
//! with every peer link running through the fault-injecting proxy. Members
//! can be killed (SIGKILL), restarted on their data, paused (SIGSTOP) and
//! resumed.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions};

use crate::proxy::Network;

/// What to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// The `rtcd` binary at this path.
    Rtcd(PathBuf),
    /// Debian's `etcd` on the PATH: the control.
    Etcd,
}

impl Target {
    pub fn name(&self) -> &'static str {
        match self {
            Target::Rtcd(_) => "rtcd",
            Target::Etcd => "etcd",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("the cluster did not become healthy: {0}")]
    Unhealthy(String),
    #[error("setting up auth or TLS: {0}")]
    Auth(String),
}

/// What the run turns on besides the defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Security {
    /// Auth on; every client authenticates as root.
    pub auth: bool,
    /// Peer links over TLS with peer certificates required (the fault
    /// proxies pass the TLS bytes through).
    pub peer_tls: bool,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ClusterError {
    let what = what.into();
    move |e| ClusterError::Io(what, e)
}

#[derive(Debug)]
pub struct Member {
    pub name: String,
    pub client_url: String,
    /// The peer URL others use: a proxy address.
    pub peer_url: String,
    listen_peer: SocketAddr,
    data_dir: PathBuf,
    log: PathBuf,
    /// rtcd only: this member's per-link proxy addresses.
    dial_overrides: String,
    child: Option<Child>,
    pub paused: bool,
    /// Removed from the membership (its data wiped): not restarted by
    /// `heal` until it is added back.
    pub removed: bool,
    /// Added back after a removal: starts with `--initial-cluster-state
    /// existing`.
    rejoined: bool,
}

impl Member {
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }
}

#[derive(Debug)]
pub struct Cluster {
    pub target: Target,
    pub members: Vec<Member>,
    pub net: Arc<Network>,
    initial_cluster: String,
    /// Flags every member starts with (peer TLS).
    flags: Vec<String>,
}

fn free_addr() -> Result<SocketAddr, ClusterError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("picking a free port"))?;
    listener.local_addr().map_err(io("picking a free port"))
}

impl Cluster {
    /// Starts `size` members m1..mN with data under `dir` and waits until
    /// every member answers a linearizable read.
    pub async fn start(
        target: Target,
        size: usize,
        dir: &Path,
        net: Arc<Network>,
        security: Security,
    ) -> Result<Self, ClusterError> {
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        let (peer_scheme, mut flags) = match security.peer_tls {
            true => ("https", peer_certificates(&dir.join("pki"))?),
            false => ("http", Vec::new()),
        };
        if security.auth {
            // Clients authenticate again after every failure: bcrypt's
            // cheapest cost keeps that from being the load (both servers
            // take the flag).
            flags.extend(["--bcrypt-cost".to_string(), "4".to_string()]);
        }
        let mut members = Vec::new();
        for i in 0..size {
            let client = free_addr()?;
            let listen_peer = free_addr()?;
            let via = net.listen_target(i, listen_peer).await.map_err(io("starting a proxy"))?;
            let name = format!("m{}", i + 1);
            members.push(Member {
                client_url: format!("http://{client}"),
                peer_url: format!("{peer_scheme}://{via}"),
                listen_peer,
                data_dir: dir.join(&name),
                log: dir.join(format!("{name}.log")),
                dial_overrides: String::new(),
                child: None,
                paused: false,
                removed: false,
                rejoined: false,
                name,
            });
        }
        if matches!(target, Target::Rtcd(_)) {
            for i in 0..size {
                let mut overrides = Vec::new();
                for j in (0..size).filter(|&j| j != i) {
                    let link = net
                        .listen_link(i, j, members[j].listen_peer)
                        .await
                        .map_err(io("starting a proxy"))?;
                    overrides.push(format!("{}=http://{link}", members[j].peer_url));
                }
                members[i].dial_overrides = overrides.join(",");
            }
        }
        let initial_cluster =
            members.iter().map(|m| format!("{}={}", m.name, m.peer_url)).collect::<Vec<_>>().join(",");
        let mut cluster = Cluster { target, members, net, initial_cluster, flags };
        for i in 0..size {
            cluster.spawn(i)?;
        }
        // Generous: on a loaded 2-core machine three members' start-up and
        // first election have taken over a minute.
        cluster.wait_healthy(Duration::from_secs(150)).await?;
        if security.auth {
            enable_auth(&cluster.members[0].client_url).await?;
        }
        cluster.learn_ids().await;
        Ok(cluster)
    }

    fn spawn(&mut self, i: usize) -> Result<(), ClusterError> {
        let m = &self.members[i];
        let program = match &self.target {
            Target::Rtcd(path) => path.as_os_str().to_owned(),
            Target::Etcd => "etcd".into(),
        };
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&m.log)
            .map_err(io("opening a log"))?;
        let err = log.try_clone().map_err(io("opening a log"))?;
        let mut cmd = Command::new(program);
        cmd.args(["--name", &m.name, "--data-dir"])
            .arg(&m.data_dir)
            .args(["--listen-client-urls", &m.client_url, "--advertise-client-urls", &m.client_url])
            .args([
                "--listen-peer-urls",
                &format!("{}://{}", m.peer_url.split("://").next().unwrap_or("http"), m.listen_peer),
            ])
            .args(["--initial-advertise-peer-urls", &m.peer_url])
            .args(["--initial-cluster", &self.initial_cluster, "--initial-cluster-token", "jepsen"])
            .args(&self.flags)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        if m.rejoined {
            cmd.args(["--initial-cluster-state", "existing"]);
        }
        if !m.dial_overrides.is_empty() {
            cmd.env("RTCD_PEER_DIAL_OVERRIDES", &m.dial_overrides);
        }
        let child = cmd.spawn().map_err(io(format!("starting {}", self.target.name())))?;
        self.members[i].child = Some(child);
        self.members[i].paused = false;
        Ok(())
    }

    pub fn client_urls(&self) -> Vec<String> {
        self.members.iter().map(|m| m.client_url.clone()).collect()
    }

    /// SIGKILL; the data stays for `restart`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.members[i].paused = false;
    }

    pub fn restart(&mut self, i: usize) -> Result<(), ClusterError> {
        if self.members[i].child.is_none() && !self.members[i].removed {
            self.spawn(i)?;
        }
        Ok(())
    }

    /// SIGSTOP: the process holds its sockets but does nothing.
    pub fn pause(&mut self, i: usize) {
        if self.signal(i, "-STOP") {
            self.members[i].paused = true;
        }
    }

    pub fn resume(&mut self, i: usize) {
        if self.members[i].paused && self.signal(i, "-CONT") {
            self.members[i].paused = false;
        }
    }

    fn signal(&self, i: usize, signal: &str) -> bool {
        let Some(child) = &self.members[i].child else { return false };
        Command::new("kill").args([signal, &child.id().to_string()]).status().is_ok_and(|s| s.success())
    }

    /// Every member running and unpaused, every link healed.
    pub fn heal(&mut self) -> Result<(), ClusterError> {
        self.net.heal();
        for i in 0..self.members.len() {
            self.resume(i);
            self.restart(i)?;
        }
        Ok(())
    }

    pub fn stop(&mut self) {
        for i in 0..self.members.len() {
            self.resume(i);
            self.kill(i);
        }
    }

    /// Removes member `i` from the membership through another member, then
    /// stops it and wipes its data, as an operator replacing a machine
    /// would. Returns false (and changes nothing) when the cluster refused
    /// or could not be asked for `within`.
    pub async fn remove_member(&mut self, i: usize, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while !self.try_remove(i).await {
            if Instant::now() >= deadline {
                return false;
            }
            // Refused (strict reconfiguration wants every voter connected
            // for a while, e.g. after a restart) or no leader: try again.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        self.kill(i);
        let _ = std::fs::remove_dir_all(&self.members[i].data_dir);
        self.members[i].removed = true;
        true
    }

    /// One removal request for member `i`; true once it is out.
    async fn try_remove(&self, i: usize) -> bool {
        let peer_url = &self.members[i].peer_url;
        let Some(mut client) = self.client_to_other(i).await else { return false };
        let Ok(list) = client.member_list().await else { return false };
        let Some(id) = list.members().iter().find(|m| m.peer_urls().contains(peer_url)).map(|m| m.id())
        else {
            return false;
        };
        if client.member_remove(id).await.is_ok() {
            return true;
        }
        // The answer may have been lost: believe the membership.
        client.member_list().await.is_ok_and(|list| list.members().iter().all(|m| m.id() != id))
    }

    /// Adds removed member `i` back under a new ID and starts it on an empty
    /// data directory with `--initial-cluster-state existing`; retries for
    /// up to `within` (the cluster may be electing).
    pub async fn add_member(&mut self, i: usize, within: Duration) -> Result<(), ClusterError> {
        let deadline = Instant::now() + within;
        let peer_url = self.members[i].peer_url.clone();
        loop {
            if let Some(mut client) = self.client_to_other(i).await {
                match client.member_add([peer_url.as_str()], None).await {
                    Ok(resp) => {
                        if let Some(member) = resp.member() {
                            self.net.learn_etcd_id(member.id(), i);
                        }
                        break;
                    }
                    // An earlier try whose answer was lost went through.
                    Err(e) if e.to_string().contains("Peer URLs already exists") => break,
                    Err(_) => {}
                }
            }
            if Instant::now() > deadline {
                return Err(ClusterError::Unhealthy(format!(
                    "{} could not be added back",
                    self.members[i].name
                )));
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        self.members[i].removed = false;
        self.members[i].rejoined = true;
        self.spawn(i)
    }

    /// A client to some running member other than `i`.
    async fn client_to_other(&self, i: usize) -> Option<Client> {
        for (_, m) in self.members.iter().enumerate().filter(|(j, m)| *j != i && m.is_running() && !m.paused)
        {
            if let Ok(client) = connect(&m.client_url).await {
                return Some(client);
            }
        }
        None
    }

    /// The member that leads, as the members report it.
    pub async fn leader(&self) -> Option<usize> {
        let mut ids = HashMap::new();
        let mut leader = None;
        for (i, m) in self.members.iter().enumerate().filter(|(_, m)| m.is_running() && !m.paused) {
            let Some(status) = status(&m.client_url).await else { continue };
            ids.insert(status.0, i);
            leader = leader.or(Some(status.1).filter(|&l| l != 0));
        }
        leader.and_then(|l| ids.get(&l).copied())
    }

    async fn wait_healthy(&self, within: Duration) -> Result<(), ClusterError> {
        let deadline = Instant::now() + within;
        for m in &self.members {
            loop {
                if let Ok(mut client) = connect(&m.client_url).await
                    && client.get("jepsen-health", None).await.is_ok()
                {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(ClusterError::Unhealthy(format!("{} never answered a read", m.name)));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Ok(())
    }

    /// etcd attributes peer connections by member ID: learn them.
    async fn learn_ids(&self) {
        let Some(first) = self.members.first() else { return };
        let Ok(mut client) = connect(&first.client_url).await else { return };
        let Ok(list) = client.member_list().await else { return };
        for member in list.members() {
            if let Some(i) = self.members.iter().position(|m| member.peer_urls().contains(&m.peer_url)) {
                self.net.learn_etcd_id(member.id(), i);
            }
        }
        // Connections made while the IDs were unknown cannot be cut: make
        // every member reconnect, now attributed.
        self.net.drop_connections();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The user every client of the run authenticates as (`--auth`).
static CREDENTIALS: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();

/// The password of the run's root user.
const ROOT_PASSWORD: &str = "jepsen";

/// Whether clients authenticate (auth was turned on for the run).
pub fn authenticating() -> bool {
    CREDENTIALS.get().is_some()
}

/// A client for one endpoint, with short timeouts: a request that hangs
/// during a fault is reported as indeterminate rather than waited for.
pub async fn connect(endpoint: &str) -> Result<Client, etcd_client::Error> {
    let mut options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_secs(1))
        .with_timeout(Duration::from_secs(3));
    if let Some((user, password)) = CREDENTIALS.get() {
        options = options.with_user(user.clone(), password.clone());
    }
    Client::connect([endpoint], Some(options)).await
}

/// Turns auth on (a root user with the root role) and makes every later
/// client of the run authenticate as root.
async fn enable_auth(endpoint: &str) -> Result<(), ClusterError> {
    let failed = |e: etcd_client::Error| ClusterError::Auth(e.to_string());
    let client = connect(endpoint).await.map_err(failed)?;
    let mut auth = client.auth_client();
    auth.user_add("root", ROOT_PASSWORD, None).await.map_err(failed)?;
    auth.role_add("root").await.map_err(failed)?;
    auth.user_grant_role("root", "root").await.map_err(failed)?;
    auth.auth_enable().await.map_err(failed)?;
    let _ = CREDENTIALS.set(("root".into(), ROOT_PASSWORD.into()));
    Ok(())
}

/// A CA and one certificate (for 127.0.0.1, server and client use) that
/// every member uses on its peer links (`--peer-tls`), made with openssl in
/// `dir`; returns the members' peer TLS flags.
fn peer_certificates(dir: &Path) -> Result<Vec<String>, ClusterError> {
    std::fs::create_dir_all(dir).map_err(io("creating the peer PKI directory"))?;
    let openssl = |args: &[&str]| -> Result<(), ClusterError> {
        let out =
            Command::new("openssl").current_dir(dir).args(args).output().map_err(io("running openssl"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(ClusterError::Auth(format!("openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr))))
        }
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "30",
        "-subj",
        "/CN=jepsen-ca",
    ])?;
    openssl(&[
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "peer.key", "-out", "peer.csr", "-subj",
        "/CN=peer",
    ])?;
    std::fs::write(
        dir.join("peer.ext"),
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n",
    )
    .map_err(io("writing peer.ext"))?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        "peer.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "peer.pem",
        "-days",
        "30",
        "-extfile",
        "peer.ext",
    ])?;
    let path = |file: &str| dir.join(file).display().to_string();
    Ok(vec![
        "--peer-cert-file".into(),
        path("peer.pem"),
        "--peer-key-file".into(),
        path("peer.key"),
        "--peer-trusted-ca-file".into(),
        path("ca.pem"),
        "--peer-client-cert-auth".into(),
    ])
}

/// (member ID, leader ID) as one member reports them.
async fn status(endpoint: &str) -> Option<(u64, u64)> {
    let mut client = connect(endpoint).await.ok()?;
    let status = tokio::time::timeout(Duration::from_secs(1), client.status()).await.ok()?.ok()?;
    Some((status.header()?.member_id(), status.leader()))
}
