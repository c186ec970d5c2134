//! The generated protocol talks to a real etcd: every service's messages are
//! encoded and decoded by etcd itself (Debian's `etcd-server`, started on
//! loopback by this test), which checks package, method names and field
//! numbers end to end, and records the exact errors etcd returns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{
    Compare, DeleteRangeRequest, LeaseGrantRequest, LeaseKeepAliveRequest, LeaseTimeToLiveRequest,
    MemberListRequest, PutRequest, RangeRequest, RequestOp, StatusRequest, TxnRequest, WatchCreateRequest,
    WatchProgressRequest, WatchRequest, cluster_client::ClusterClient, compare, kv_client::KvClient,
    lease_client::LeaseClient, maintenance_client::MaintenanceClient, request_op, response_op,
    watch_client::WatchClient, watch_request,
};
use rtcd_proto::mvccpb::event::EventType;
use rtcd_proto::v3lockpb::{LockRequest, UnlockRequest, lock_client::LockClient};
use tokio_stream::StreamExt;
use tonic::transport::Channel;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Etcd {
    child: Child,
    _dir: tempfile::TempDir,
    endpoint: String,
}

impl Drop for Etcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_etcd() -> Etcd {
    let dir = tempfile::tempdir().unwrap();
    let (client, peer) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new("etcd")
        .args(["--name", "wire", "--data-dir"])
        .arg(dir.path())
        .args(["--listen-client-urls", &client_url, "--advertise-client-urls", &client_url])
        .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
        .args(["--initial-cluster", &format!("wire={peer_url}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("etcd from Debian's etcd-server (scripts/install-deps.sh installs it)");
    Etcd { child, _dir: dir, endpoint: client_url }
}

async fn connect(endpoint: &str) -> Channel {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(ch) = Channel::from_shared(endpoint.to_string()).unwrap().connect().await
            && MaintenanceClient::new(ch.clone()).status(StatusRequest {}).await.is_ok()
        {
            return ch;
        }
        assert!(Instant::now() < deadline, "etcd did not come up at {endpoint}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

#[tokio::test]
async fn generated_clients_speak_etcds_wire_protocol() {
    let etcd = start_etcd();
    let ch = connect(&etcd.endpoint).await;
    let mut kv = KvClient::new(ch.clone());

    // KV: put, overwrite with prev_kv, ranged read with sort and limit.
    let first = kv.put(PutRequest { key: b("a"), value: b("1"), ..Default::default() }).await.unwrap();
    let rev = first.into_inner().header.unwrap().revision;
    let second = kv
        .put(PutRequest { key: b("a"), value: b("2"), prev_kv: true, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(second.prev_kv.unwrap().value, b("1"));
    kv.put(PutRequest { key: b("ab"), value: b("3"), ..Default::default() }).await.unwrap();
    let range = kv
        .range(RangeRequest {
            key: b("a"),
            range_end: b("b"),
            limit: 1,
            sort_order: 2,  // DESCEND
            sort_target: 0, // KEY
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((range.count, range.more, range.kvs.len()), (2, true, 1));
    let ab = &range.kvs[0];
    assert_eq!((ab.key.as_ref(), ab.version, ab.create_revision), (&b"ab"[..], 1, rev + 2));

    // Txn: compare on mod_revision, nested response types.
    let txn = kv
        .txn(TxnRequest {
            compare: vec![Compare {
                result: compare::CompareResult::Equal as i32,
                target: compare::CompareTarget::Mod as i32,
                key: b("a"),
                target_union: Some(compare::TargetUnion::ModRevision(rev + 1)),
                ..Default::default()
            }],
            success: vec![RequestOp {
                request: Some(request_op::Request::RequestRange(RangeRequest {
                    key: b("a"),
                    ..Default::default()
                })),
            }],
            failure: vec![],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(txn.succeeded);
    match &txn.responses[0].response {
        Some(response_op::Response::ResponseRange(r)) => assert_eq!(r.kvs[0].value, b("2")),
        other => panic!("expected a range response, got {other:?}"),
    }

    // The errors rtcd must reproduce, as etcd sends them.
    let future =
        kv.range(RangeRequest { key: b("a"), revision: 1000, ..Default::default() }).await.unwrap_err();
    assert_eq!(future.code(), tonic::Code::OutOfRange);
    assert_eq!(future.message(), "etcdserver: mvcc: required revision is a future revision");
    let empty = kv.put(PutRequest::default()).await.unwrap_err();
    assert_eq!(
        (empty.code(), empty.message()),
        (tonic::Code::InvalidArgument, "etcdserver: key is not provided")
    );

    // Watch: created, then an event with prev_kv, then a progress response.
    // The server sends response headers with its first message, so the
    // create request must be queued before the call is awaited.
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let create = WatchCreateRequest { key: b("a"), prev_kv: true, ..Default::default() };
    tx.send(WatchRequest { request_union: Some(watch_request::RequestUnion::CreateRequest(create)) })
        .await
        .unwrap();
    let mut watch = WatchClient::new(ch.clone())
        .watch(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let created = watch.next().await.unwrap().unwrap();
    assert!(created.created);
    kv.put(PutRequest { key: b("a"), value: b("4"), ..Default::default() }).await.unwrap();
    let event = watch.next().await.unwrap().unwrap();
    assert_eq!(event.watch_id, created.watch_id);
    assert_eq!(event.events[0].r#type, EventType::Put as i32);
    assert_eq!(event.events[0].prev_kv.as_ref().unwrap().value, b("2"));
    let progress = WatchProgressRequest {};
    tx.send(WatchRequest { request_union: Some(watch_request::RequestUnion::ProgressRequest(progress)) })
        .await
        .unwrap();
    let progress = watch.next().await.unwrap().unwrap();
    assert_eq!(progress.watch_id, -1, "progress responses carry watch_id -1");
    assert!(progress.events.is_empty());

    // Lease: grant, keep alive, time to live with keys.
    let mut lease = LeaseClient::new(ch.clone());
    let granted = lease.lease_grant(LeaseGrantRequest { ttl: 60, id: 0 }).await.unwrap().into_inner();
    assert!(granted.id != 0 && granted.ttl == 60);
    kv.put(PutRequest { key: b("leased"), lease: granted.id, ..Default::default() }).await.unwrap();
    let ttl = lease
        .lease_time_to_live(LeaseTimeToLiveRequest { id: granted.id, keys: true })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((ttl.granted_ttl, ttl.keys), (60, vec![b("leased")]));
    let unknown = lease.lease_time_to_live(LeaseTimeToLiveRequest { id: 12345, keys: false }).await.unwrap();
    assert_eq!(unknown.into_inner().ttl, -1, "unknown lease: TTL -1, not an error");
    let mut keepalive = lease
        .lease_keep_alive(tokio_stream::iter(vec![LeaseKeepAliveRequest { id: granted.id }]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(keepalive.next().await.unwrap().unwrap().id, granted.id);

    // Lock service (v3lockpb).
    let mut lock = LockClient::new(ch.clone());
    let held = lock.lock(LockRequest { name: b("l"), lease: granted.id }).await.unwrap().into_inner();
    assert!(held.key.starts_with(b"l/"));
    lock.unlock(UnlockRequest { key: held.key }).await.unwrap();

    // Delete with prev_kvs.
    let deleted = kv
        .delete_range(DeleteRangeRequest { key: b("a"), range_end: b("b"), prev_kv: true })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((deleted.deleted, deleted.prev_kvs.len()), (2, 2));

    // Maintenance and Cluster.
    let status = MaintenanceClient::new(ch.clone()).status(StatusRequest {}).await.unwrap().into_inner();
    assert!(status.version.starts_with("3."), "version {}", status.version);
    assert_eq!(status.leader, status.header.unwrap().member_id);
    let members =
        ClusterClient::new(ch).member_list(MemberListRequest { linearizable: false }).await.unwrap();
    let members = members.into_inner().members;
    assert_eq!((members.len(), members[0].name.as_str()), (1, "wire"));
}
