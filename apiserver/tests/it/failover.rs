//! rtcd-apiserver over a three-member cluster rides out the loss of any
//! one member, as kube-apiserver over etcd does: under steady API load
//! (creates, reads, updates with a resourceVersion, lists, deletes, and
//! watches), each member in turn is SIGKILLed and restarted, then one is
//! stopped (SIGSTOP) and resumed. No request may fail, no watch may miss or
//! repeat a change, and what the clients were told is what is stored. Run
//! on rtcd and on real etcd, the same.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;

use crate::common::{Backend, free_port, open_watch, request};

const NAMESPACE_PATH: &str = "/api/v1/namespaces/default/configmaps";
const WORKERS: usize = 4;
const WATCHES: usize = 3;

/// One member of a three-member cluster: its command, to start it again on
/// the same data after a SIGKILL.
struct ClusterMember {
    program: PathBuf,
    args: Vec<String>,
    client_url: String,
    child: Option<Child>,
    _dir: tempfile::TempDir,
}

impl ClusterMember {
    fn start(&mut self) {
        let child = Command::new(&self.program)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{:?}: {e}", self.program));
        self.child = Some(child);
    }

    fn sigkill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().unwrap().id().to_string();
        assert!(Command::new("kill").args([signal, &pid]).status().unwrap().success());
    }

    /// Waits until the member answers a read of its own.
    async fn wait_serving(&self) {
        let store = rtcd_apiserver::storage::Etcd3Store::new(
            tonic::transport::Endpoint::from_shared(self.client_url.clone()).unwrap().connect_lazy(),
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while store.get("/health").await.is_err() {
            assert!(Instant::now() < deadline, "{} never served again", self.client_url);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for ClusterMember {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            // A stopped member must be resumed to die on SIGKILL's reaping.
            let _ = Command::new("kill").args(["-CONT", &child.id().to_string()]).status();
        }
        self.sigkill();
    }
}

async fn start_cluster(backend: Backend) -> Vec<ClusterMember> {
    let program = match backend {
        Backend::Rtcd => crate::common::bin_dir().join("rtcd"),
        Backend::Etcd => PathBuf::from("etcd"),
    };
    let urls: Vec<(String, String)> = (0..3)
        .map(|_| (format!("http://127.0.0.1:{}", free_port()), format!("http://127.0.0.1:{}", free_port())))
        .collect();
    let initial = urls.iter().enumerate().map(|(i, (_, peer))| format!("m{i}={peer}")).collect::<Vec<_>>();
    let mut members = Vec::new();
    for (i, (client, peer)) in urls.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            "--name",
            &format!("m{i}"),
            "--data-dir",
            &dir.path().display().to_string(),
            "--listen-client-urls",
            client,
            "--advertise-client-urls",
            client,
            "--listen-peer-urls",
            peer,
            "--initial-advertise-peer-urls",
            peer,
            "--initial-cluster",
            &initial.join(","),
            "--initial-cluster-state",
            "new",
        ]
        .map(String::from)
        .to_vec();
        let mut member = ClusterMember {
            program: program.clone(),
            args,
            client_url: client.clone(),
            child: None,
            _dir: dir,
        };
        member.start();
        members.push(member);
    }
    for member in &members {
        member.wait_serving().await;
    }
    members
}

/// rtcd-apiserver over every member; killed when dropped.
struct ApiServer {
    child: Child,
    addr: String,
    dir: tempfile::TempDir,
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_apiserver(members: &[ClusterMember]) -> ApiServer {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let servers = members.iter().map(|m| m.client_url.as_str()).collect::<Vec<_>>().join(",");
    let log = std::fs::File::create(dir.path().join("apiserver.log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
        .args([format!("--etcd-servers={servers}"), format!("--secure-port={port}"), "--plain-http".into()])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let server = ApiServer { child, addr: format!("127.0.0.1:{port}"), dir };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if tokio::net::TcpStream::connect(&server.addr).await.is_ok() {
            let (code, _) = request(&server.addr, "GET", "/readyz", "", "").await;
            let (namespace, _) = request(&server.addr, "GET", "/api/v1/namespaces/default", "", "").await;
            if code == 200 && namespace == 200 {
                return server;
            }
        }
        assert!(Instant::now() < deadline, "apiserver never became ready");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What the workers were told.
#[derive(Default)]
struct Told {
    /// Every answer's code, and how many.
    codes: BTreeMap<u16, usize>,
    /// The first few answers that were not what the request should get.
    wrong: Vec<String>,
    /// Per object: the resourceVersions of its create, update and delete.
    history: BTreeMap<String, Vec<(&'static str, u64)>>,
}

impl Told {
    /// Records an answer; whether it was the one expected.
    fn answer(&mut self, what: &str, code: u16, want: u16, body: &Value) -> bool {
        *self.codes.entry(code).or_default() += 1;
        if code != want && self.wrong.len() < 20 {
            self.wrong.push(format!("{what}: {code} {}", body["message"]));
        }
        code == want
    }
}

fn resource_version(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"].as_str().and_then(|rv| rv.parse().ok()).unwrap_or(0)
}

/// One client's loop until `stop`: create, read, update, list, and delete
/// every other object.
async fn work(addr: String, worker: usize, told: Arc<Mutex<Told>>, stop: watch::Receiver<bool>) {
    let mut i = 0;
    while !*stop.borrow() {
        let name = format!("w{worker}-{i}");
        i += 1;
        let path = format!("{NAMESPACE_PATH}/{name}");
        let object =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": "0"}});
        let (code, created) =
            request(&addr, "POST", NAMESPACE_PATH, "application/json", &object.to_string()).await;
        if !told.lock().unwrap().answer(&format!("create {name}"), code, 201, &created) {
            continue;
        }
        record(&told, &name, "ADDED", &created);
        let (code, read) = request(&addr, "GET", &path, "", "").await;
        told.lock().unwrap().answer(&format!("get {name}"), code, 200, &read);
        let mut changed = created.clone();
        changed["data"]["v"] = json!("1");
        let (code, updated) = request(&addr, "PUT", &path, "application/json", &changed.to_string()).await;
        if told.lock().unwrap().answer(&format!("update {name}"), code, 200, &updated) {
            record(&told, &name, "MODIFIED", &updated);
        }
        let (code, list) = request(&addr, "GET", &format!("{NAMESPACE_PATH}?limit=20"), "", "").await;
        told.lock().unwrap().answer("list", code, 200, &list);
        if i % 2 == 0 {
            let (code, deleted) = request(&addr, "DELETE", &path, "", "").await;
            if told.lock().unwrap().answer(&format!("delete {name}"), code, 200, &deleted) {
                // The deletion's own revision is in the watch event only.
                record(&told, &name, "DELETED", &json!({}));
            }
        }
    }
}

fn record(told: &Mutex<Told>, name: &str, what: &'static str, object: &Value) {
    told.lock().unwrap().history.entry(name.to_string()).or_default().push((what, resource_version(object)));
}

/// A watch of the namespace's ConfigMaps from `from`: its events (type,
/// name, resourceVersion) until `stop`, then until quiet.
async fn follow(addr: String, from: u64, stop: watch::Receiver<bool>) -> Vec<(String, String, u64)> {
    let path = format!("{NAMESPACE_PATH}?watch=true&resourceVersion={from}");
    let mut reader = open_watch(&addr, &path).await;
    let mut events = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        let patience = if *stop.borrow() { Duration::from_secs(5) } else { Duration::from_secs(60) };
        match tokio::time::timeout(patience, reader.read_line(&mut line)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return events,
        }
        let event: Value = serde_json::from_str(&line).unwrap();
        let object = &event["object"];
        let kind = event["type"].as_str().unwrap_or_default().to_string();
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_string();
        events.push((kind, name, resource_version(object)));
    }
}

/// Runs the load through the faults on `backend`; asserts what the
/// clients saw.
async fn rides_out_member_faults(backend: Backend) {
    let mut members = start_cluster(backend).await;
    let api = start_apiserver(&members).await;
    let (_, list) = request(&api.addr, "GET", NAMESPACE_PATH, "", "").await;
    let from = resource_version(&list);
    let told = Arc::new(Mutex::new(Told::default()));
    let (stop_tx, stop) = watch::channel(false);
    let watches: Vec<_> =
        (0..WATCHES).map(|_| tokio::spawn(follow(api.addr.clone(), from, stop.clone()))).collect();
    let workers: Vec<_> =
        (0..WORKERS).map(|w| tokio::spawn(work(api.addr.clone(), w, told.clone(), stop.clone()))).collect();

    tokio::time::sleep(Duration::from_secs(2)).await;
    for member in members.iter_mut() {
        member.sigkill();
        tokio::time::sleep(Duration::from_secs(3)).await;
        member.start();
        member.wait_serving().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    members[0].signal("-STOP");
    tokio::time::sleep(Duration::from_secs(5)).await;
    members[0].signal("-CONT");
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop_tx.send_replace(true);
    for worker in workers {
        worker.await.unwrap();
    }
    let told = Arc::try_unwrap(told).ok().unwrap().into_inner().unwrap();
    let log = std::fs::read_to_string(api.dir.path().join("apiserver.log")).unwrap_or_default();
    let tail: String = log.lines().rev().take(30).collect::<Vec<_>>().join("\n");
    assert!(
        told.wrong.is_empty(),
        "{backend:?}: answers {:?}; wrong: {:#?}\nlog tail:\n{tail}",
        told.codes,
        told.wrong
    );
    let answered: usize = told.codes.values().sum();
    assert!(told.history.len() > 20, "{backend:?}: too little load to judge: {:?}", told.codes);

    // Every watch saw every change once, in resourceVersion order.
    for watch in watches {
        let events = watch.await.unwrap();
        let mut last = from;
        for (kind, name, rv) in &events {
            assert!(*rv > last, "{backend:?}: {kind} {name} at {rv} after {last}");
            last = *rv;
        }
        let mut seen: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
        for (kind, name, rv) in &events {
            seen.entry(name).or_default().push((kind, *rv));
        }
        for (name, history) in &told.history {
            let got = seen.get(name.as_str()).cloned().unwrap_or_default();
            let kinds: Vec<&str> = got.iter().map(|(kind, _)| *kind).collect();
            let want: Vec<&str> = history.iter().map(|(kind, _)| *kind).collect();
            assert_eq!(kinds, want, "{backend:?}: the watch's events for {name}");
            for ((_, told_rv), (_, seen_rv)) in history.iter().zip(&got) {
                assert!(
                    *told_rv == 0 || told_rv == seen_rv,
                    "{backend:?}: {name}: told {told_rv}, watched {seen_rv}"
                );
            }
        }
    }

    // What is stored is what the clients were told.
    let (code, list) = request(&api.addr, "GET", NAMESPACE_PATH, "", "").await;
    assert_eq!(code, 200);
    let stored: BTreeMap<String, String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["metadata"]["name"].as_str().unwrap().to_string(), item["data"]["v"].to_string()))
        .collect();
    let expected: BTreeMap<String, String> = told
        .history
        .iter()
        .filter(|(_, history)| history.last().is_some_and(|(kind, _)| *kind != "DELETED"))
        .map(|(name, history)| (name.clone(), if history.len() > 1 { "\"1\"" } else { "\"0\"" }.to_string()))
        .collect();
    assert_eq!(stored, expected, "{backend:?}: stored objects");
    eprintln!("{backend:?}: {answered} answers through the faults: {:?}", told.codes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rtcd_apiserver_rides_out_rtcd_member_faults() {
    rides_out_member_faults(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rtcd_apiserver_rides_out_etcd_member_faults() {
    rides_out_member_faults(Backend::Etcd).await;
}
