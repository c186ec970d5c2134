//! Three members in one process, talking over real loopback gRPC: a leader
//! is elected, proposals made on any member are applied everywhere in the
//! same order (same revisions, same events, same hash), followers forward
//! to the leader and serve linearizable read barriers, and the cluster keeps
//! accepting writes after its leader stops.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rtcd_proto::etcdserverpb::PutRequest;
use rtcd_proto::mvccpb::Event;
use rtcd_raft::peer_service::PeerService;
use rtcd_raft::{Member, RaftConfig, RaftNode};
use rtcd_store::{Store, StoreOptions, WriteRequest};

struct Running {
    node: Arc<RaftNode>,
    store: Arc<Store>,
    events: Arc<Mutex<Vec<Event>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn start_cluster() -> Vec<Running> {
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let members: BTreeMap<u64, Member> = (1..=3u64)
        .map(|id| {
            let url = format!("http://127.0.0.1:{}", ports[id as usize - 1]);
            (id, Member { name: format!("m{id}"), peer_urls: vec![url], client_urls: vec![] })
        })
        .collect();
    let mut running = Vec::new();
    for id in 1..=3u64 {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions { sync: false, ..Default::default() };
        let store = Arc::new(Store::open(dir.path().join("store"), options).unwrap());
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let config = RaftConfig {
            id,
            dir: dir.path().join("raft"),
            members: members.clone(),
            heartbeat_ms: 50,
            election_timeout_ms: 300,
            snapshot_count: 10_000,
            request_timeout: Duration::from_secs(5),
        };
        let node = RaftNode::start(
            config,
            store.clone(),
            Arc::new(move |e: Vec<Event>| sink.lock().unwrap().extend(e)),
        )
        .await
        .unwrap();
        let node = Arc::new(node);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = PeerService::new(node.raft().clone(), dir.path().join("incoming")).into_server();
        let addr = format!("127.0.0.1:{}", ports[id as usize - 1]).parse().unwrap();
        tokio::spawn(tonic::transport::Server::builder().add_service(service).serve_with_shutdown(
            addr,
            async {
                let _ = stopped.await;
            },
        ));
        running.push(Running { node, store, events, stop: Some(stop), _dir: dir });
    }
    running
}

fn put(key: &str, value: &str) -> WriteRequest {
    WriteRequest::Put(PutRequest {
        key: Bytes::from(key.to_string()),
        value: Bytes::from(value.to_string()),
        ..Default::default()
    })
}

/// Proposes until it succeeds (an election may be under way).
async fn propose(node: &RaftNode, req: WriteRequest) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match node.propose(req.clone()).await {
            Ok(outcome) => return outcome.unwrap().revision,
            Err(e) => {
                assert!(Instant::now() < deadline, "no write accepted: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn converged(members: &[&Running]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let revs: Vec<i64> = members.iter().map(|m| m.store.revision().unwrap()).collect();
        if revs.windows(2).all(|w| w[0] == w[1]) {
            return;
        }
        assert!(Instant::now() < deadline, "members did not converge: {revs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_replicate_forward_and_survive_leader_loss() {
    let mut cluster = start_cluster().await;

    // Writes through every member, leader or not, get consecutive revisions.
    let mut revisions = Vec::new();
    for round in 0..3 {
        for m in &cluster {
            revisions
                .push(propose(&m.node, put(&format!("k{round}"), &format!("from m{}", m.node.id()))).await);
        }
    }
    let mut sorted = revisions.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (2..11).collect::<Vec<i64>>(), "each write took the next revision: {revisions:?}");

    let all: Vec<&Running> = cluster.iter().collect();
    converged(&all).await;
    let hashes: Vec<u32> = cluster.iter().map(|m| m.store.hash_kv(0).unwrap().hash).collect();
    assert!(hashes.windows(2).all(|w| w[0] == w[1]), "same history everywhere: {hashes:?}");
    let events: Vec<Vec<Event>> = cluster.iter().map(|m| m.events.lock().unwrap().clone()).collect();
    assert_eq!(events[0].len(), 9);
    assert!(events.windows(2).all(|w| w[0] == w[1]), "every member's watchers see the same events");

    // A follower's read barrier returns once it has applied what was committed.
    let leader = cluster[0].node.leader().expect("a leader");
    let follower = cluster.iter().find(|m| m.node.id() != leader).unwrap();
    let rev = propose(&cluster[0].node, put("fresh", "x")).await;
    follower.node.read_barrier().await.unwrap();
    assert!(follower.store.revision().unwrap() >= rev, "read barrier waited for the apply");

    // Stop the leader: the other two elect a new one and keep writing.
    let old = cluster.iter().position(|m| m.node.id() == leader).unwrap();
    let mut stopped = cluster.remove(old);
    stopped.node.shutdown().await;
    let _ = stopped.stop.take().unwrap().send(());
    let after = propose(&cluster[0].node, put("after", "failover")).await;
    assert!(after > rev);
    let new_leader = cluster[0].node.leader().expect("a new leader");
    assert_ne!(new_leader, leader);
    assert!(cluster[0].node.term() > 0);
    let rest: Vec<&Running> = cluster.iter().collect();
    converged(&rest).await;
}
