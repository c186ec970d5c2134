//! Three members in one process, talking over real loopback gRPC: a leader
//! is elected, proposals made on any member are applied everywhere in the
//! same order (same revisions, same events, same hash), followers forward
//! to the leader and serve linearizable read barriers, and the cluster keeps
//! accepting writes after its leader stops.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use openraft::async_runtime::watch::WatchReceiver;
use rtcd_proto::etcdserverpb::PutRequest;
use rtcd_proto::mvccpb::Event;
use rtcd_raft::{Member, RaftConfig, RaftNode};
use rtcd_store::{Store, StoreOptions, WriteRequest};

struct Running {
    node: Arc<RaftNode>,
    store: Arc<Store>,
    events: Arc<Mutex<Vec<Event>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Running {
    /// Stops Raft and the peer server and lets go of the store and log.
    async fn stop(mut self) {
        self.node.shutdown().await;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Snapshot every 20 entries, keeping 5 behind it: a member that misses
/// more than that catches up by snapshot.
fn config(id: u64, dir: &Path, members: &BTreeMap<u64, Member>) -> RaftConfig {
    RaftConfig {
        id,
        dir: dir.join("raft"),
        members: members.clone(),
        heartbeat_ms: 50,
        election_timeout_ms: 300,
        snapshot_count: 20,
        logs_to_keep: 5,
        request_timeout: Duration::from_secs(5),
        dial_overrides: Default::default(),
        dialer: Default::default(),
    }
}

async fn start_member(id: u64, dir: &Path, members: &BTreeMap<u64, Member>) -> Running {
    let options = StoreOptions { sync: false, ..Default::default() };
    // A just-stopped member may still be releasing its RocksDB lock.
    let deadline = Instant::now() + Duration::from_secs(10);
    let store = loop {
        match Store::open(dir.join("store"), options.clone()) {
            Ok(store) => break Arc::new(store),
            Err(e) => assert!(Instant::now() < deadline, "reopening the store: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let on_events: rtcd_raft::ApplySink = Arc::new(move |entries: &mut [rtcd_raft::AppliedEntry]| {
        let mut events = sink.lock().unwrap();
        for applied in entries.iter_mut().filter_map(|e| e.outcome.as_mut().ok()) {
            events.append(&mut applied.events);
        }
    });
    let node = loop {
        match RaftNode::start(config(id, dir, members), store.clone(), on_events.clone()).await {
            Ok(node) => break Arc::new(node),
            Err(e) => assert!(Instant::now() < deadline, "starting raft: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let service = node.peer_service(dir.join("incoming"));
    let url = &members[&id].peer_urls[0];
    let addr = url.trim_start_matches("http://").parse().unwrap();
    tokio::spawn(tonic::transport::Server::builder().add_service(service).serve_with_shutdown(addr, async {
        let _ = stopped.await;
    }));
    Running { node, store, events, stop: Some(stop) }
}

async fn start_cluster(dirs: &[tempfile::TempDir]) -> (BTreeMap<u64, Member>, Vec<Running>) {
    let members: BTreeMap<u64, Member> = (1..=3u64)
        .map(|id| {
            let url = format!("http://127.0.0.1:{}", free_port());
            (id, Member { name: format!("m{id}"), peer_urls: vec![url], client_urls: vec![] })
        })
        .collect();
    let mut running = Vec::new();
    for id in 1..=3u64 {
        running.push(start_member(id, dirs[id as usize - 1].path(), &members).await);
    }
    (members, running)
}

/// A started cluster after its first write: by then it has a leader.
struct Writing {
    members: BTreeMap<u64, Member>,
    cluster: Vec<Running>,
    /// The first write's revision.
    first: i64,
    leader: u64,
}

impl Writing {
    async fn start(dirs: &[tempfile::TempDir]) -> Self {
        let (members, cluster) = start_cluster(dirs).await;
        let first = propose(&cluster[0].node, put("warm", "up")).await;
        let leader = cluster[0].node.leader().expect("a leader");
        Writing { members, cluster, first, leader }
    }

    fn member(&self, is_leader: bool) -> &Running {
        self.cluster.iter().find(|m| (m.node.id() == self.leader) == is_leader).unwrap()
    }
}

fn dirs() -> Vec<tempfile::TempDir> {
    (0..3).map(|_| tempfile::tempdir().unwrap()).collect()
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
    let dirs = dirs();
    let (_, mut cluster) = start_cluster(&dirs).await;

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
    // Events reach the sink just after the store shows the revision.
    let deadline = Instant::now() + Duration::from_secs(10);
    let events = loop {
        let events: Vec<Vec<Event>> = cluster.iter().map(|m| m.events.lock().unwrap().clone()).collect();
        if events.windows(2).all(|w| w[0] == w[1]) || Instant::now() > deadline {
            break events;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(events[0].len(), 9);
    assert!(events.windows(2).all(|w| w[0] == w[1]), "every member's watchers see the same events");

    // A follower's read barrier returns once it has applied what was committed.
    let leader = cluster[0].node.leader().expect("a leader");
    let follower = cluster.iter().find(|m| m.node.id() != leader).unwrap();
    let rev = propose(&cluster[0].node, put("fresh", "x")).await;
    follower.node.read_barrier().await.unwrap();
    assert!(follower.store.revision().unwrap() >= rev, "read barrier waited for the apply");
    // Concurrent reads share quorum rounds, and each still waits for the
    // writes acknowledged before it.
    let rounds_before = follower.node.read_rounds();
    let rev = propose(&cluster[0].node, put("batched", "x")).await;
    let reads: Vec<_> = (0..200)
        .map(|_| {
            let (node, store) = (follower.node.clone(), follower.store.clone());
            tokio::spawn(async move {
                node.read_barrier().await.unwrap();
                store.revision().unwrap()
            })
        })
        .collect();
    for read in reads {
        assert!(read.await.unwrap() >= rev, "a read barrier returned before the apply");
    }
    let rounds = follower.node.read_rounds() - rounds_before;
    assert!((1..50).contains(&rounds), "200 concurrent reads took {rounds} quorum rounds");

    // Stop the leader: the other two elect a new one and keep writing.
    let old = cluster.iter().position(|m| m.node.id() == leader).unwrap();
    cluster.remove(old).stop().await;
    let after = propose(&cluster[0].node, put("after", "failover")).await;
    assert!(after > rev);
    let new_leader = cluster[0].node.leader().expect("a new leader");
    assert_ne!(new_leader, leader);
    assert!(cluster[0].node.term() > 0);
    let rest: Vec<&Running> = cluster.iter().collect();
    converged(&rest).await;
}

/// A member that was down while the log moved past its position catches up
/// by installing a snapshot, and ends with the same history as the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_far_behind_catches_up_by_snapshot() {
    let dirs = dirs();
    let (members, mut cluster) = start_cluster(&dirs).await;
    propose(&cluster[0].node, put("before", "1")).await;
    let all: Vec<&Running> = cluster.iter().collect();
    converged(&all).await;

    // Stop a follower, then move the log well past two snapshots.
    let leader = cluster[0].node.leader().expect("a leader");
    let down = cluster.iter().position(|m| m.node.id() != leader).unwrap();
    let down_id = cluster[down].node.id();
    cluster.remove(down).stop().await;
    for i in 0..60 {
        propose(&cluster[0].node, put(&format!("while-down-{i:02}"), "x")).await;
    }
    // Wait until the leader has dropped log entries the stopped member needs.
    let leader_node = cluster.iter().find(|m| m.node.id() == leader).unwrap().node.clone();
    let purged = leader_node
        .raft()
        .wait(Some(Duration::from_secs(20)))
        .metrics(|m| m.purged.is_some_and(|p| p.index > 10), "leader purged its log")
        .await;
    assert!(purged.is_ok(), "the leader never purged: {purged:?}");

    let back = start_member(down_id, dirs[down_id as usize - 1].path(), &members).await;
    cluster.push(back);
    let all: Vec<&Running> = cluster.iter().collect();
    converged(&all).await;
    let hashes: Vec<u32> = cluster.iter().map(|m| m.store.hash_kv(0).unwrap().hash).collect();
    assert!(hashes.windows(2).all(|w| w[0] == w[1]), "same history after the snapshot: {hashes:?}");
    let snapshot = cluster.last().unwrap().node.raft().metrics().borrow_watched().snapshot;
    assert!(snapshot.is_some(), "the returning member has a snapshot");
    let received = dirs[down_id as usize - 1].path().join("incoming").join("incoming.snap");
    assert!(received.exists(), "it was sent one over the peer transport");
    // And it keeps following: a new write reaches it.
    let rev = propose(&cluster[0].node, put("after", "1")).await;
    let all: Vec<&Running> = cluster.iter().collect();
    converged(&all).await;
    assert_eq!(cluster.last().unwrap().store.revision().unwrap(), rev);
}

/// Many writes at once through a follower: each is applied once, with its
/// own revision, and they reach the leader in far fewer forwarded groups
/// than writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_through_a_follower_are_forwarded_in_groups() {
    let dirs = dirs();
    let writing = Writing::start(&dirs).await;
    let (cluster, first) = (&writing.cluster, writing.first);
    let follower = writing.member(false);

    let groups_before = follower.node.proposal_groups();
    let writes: Vec<_> = (0..500)
        .map(|i| {
            let node = follower.node.clone();
            tokio::spawn(async move { node.propose(put(&format!("c{i}"), "v")).await })
        })
        .collect();
    let mut revisions = Vec::new();
    for write in writes {
        revisions.push(write.await.unwrap().expect("replicated").expect("applied").revision);
    }
    revisions.sort_unstable();
    assert_eq!(
        revisions,
        (first + 1..first + 501).collect::<Vec<i64>>(),
        "one revision per write, none lost"
    );
    let groups = follower.node.proposal_groups() - groups_before;
    assert!((1..250).contains(&groups), "500 concurrent writes took {groups} forwarded groups");

    let all: Vec<&Running> = cluster.iter().collect();
    converged(&all).await;
    let hashes: Vec<u32> = cluster.iter().map(|m| m.store.hash_kv(0).unwrap().hash).collect();
    assert!(hashes.windows(2).all(|w| w[0] == w[1]), "same history everywhere: {hashes:?}");
}

/// The leader checks what followers forward: a proposal it cannot decode is
/// refused on its own (once committed, no member could apply it and every
/// member would stop), and the rest of its group is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_refuses_an_undecodable_forwarded_proposal_and_writes_the_rest() {
    use rtcd_proto::rtcdraftpb::RaftMessage;
    use rtcd_proto::rtcdraftpb::raft_client::RaftClient;

    let dirs = dirs();
    let writing = Writing::start(&dirs).await;
    let (cluster, before) = (&writing.cluster, writing.first);
    let leader_member = writing.member(true);

    let valid = |id: u64, key: &str| {
        serde_bytes::ByteBuf::from(rtcd_raft::codec::encode(id, put(key, "v"), &rtcd_store::Caller::Member))
    };
    let group = vec![
        valid(u64::MAX - 1, "a"),
        serde_bytes::ByteBuf::from(vec![0xff, 0xff]),
        valid(u64::MAX - 2, "b"),
    ];
    let message =
        RaftMessage { kind: "forward_batch".into(), payload: postcard::to_stdvec(&group).unwrap().into() };
    let mut client =
        RaftClient::connect(writing.members[&writing.leader].peer_urls[0].clone()).await.unwrap();
    let reply = client.call(message).await.expect("the leader answers").into_inner();
    let outcomes: Result<Vec<Result<u64, rtcd_raft::ReplicationError>>, String> =
        postcard::from_bytes(&reply.payload).unwrap();
    let outcomes = outcomes.expect("a group answer");
    assert_eq!(outcomes.len(), 3, "{outcomes:?}");
    assert!(outcomes[0].is_ok() && outcomes[2].is_ok(), "{outcomes:?}");
    let refused = outcomes[1].as_ref().expect_err("garbage refused");
    assert!(matches!(refused, rtcd_raft::ReplicationError::Undecodable(_)), "typed on the wire: {refused:?}");
    assert!(refused.to_string().starts_with("undecodable proposal: "), "{refused}");

    // Both valid writes were applied; the cluster still takes writes.
    let after = propose(&leader_member.node, put("after", "x")).await;
    assert_eq!(after, before + 3, "two forwarded writes, then this one");
    let all: Vec<&Running> = cluster.iter().collect();
    converged(&all).await;
}

/// A follower that is gone is redialed a few times a second (openraft's
/// backoff between replication attempts, plus heartbeats), not in a tight
/// loop: that loop once made a leader open ~10,000 connections a second, and
/// one of them took the dead member's own port before it could restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_follower_is_redialed_with_backoff() {
    let dirs = dirs();
    let mut writing = Writing::start(&dirs).await;
    let gone = writing.cluster.iter().position(|m| m.node.id() != writing.leader).unwrap();
    let gone = writing.cluster.remove(gone);
    let url = writing.members[&gone.node.id()].peer_urls[0].clone();
    gone.stop().await;

    // Something on the gone member's port that takes connections and drops
    // them, counting: each is one dial by the leader.
    let addr = url.trim_start_matches("http://").to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    let listener = loop {
        match tokio::net::TcpListener::bind(&addr).await {
            Ok(listener) => break listener,
            Err(e) => assert!(Instant::now() < deadline, "rebinding {addr}: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let dials = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = dials.clone();
    let counter = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            drop(socket);
        }
    });
    // Writes go on meanwhile (two of three members are a quorum), so the
    // leader has entries to send the gone member.
    let leader = writing.member(true).node.clone();
    let window = Instant::now() + Duration::from_secs(2);
    let mut writes = 0;
    while Instant::now() < window {
        propose(&leader, put(&format!("w{writes}"), "v")).await;
        writes += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    counter.abort();
    let dials = dials.load(std::sync::atomic::Ordering::Relaxed);
    assert!(writes > 10, "the remaining quorum kept writing ({writes} writes)");
    // Heartbeats every 50 ms and replication every 200 ms would be ~50.
    assert!((1..150).contains(&dials), "{dials} dials in 2 s");
}
