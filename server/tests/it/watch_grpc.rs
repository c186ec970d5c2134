//! The Watch service at the protocol level: the same scripted stream against
//! real etcd and against rtcd must produce the same responses (IDs and term
//! removed); plus what etcd 3.4 cannot be compared on (3.5 semantics for
//! progress requests, slow consumers, periodic progress).

use std::time::Duration;

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{
    CompactionRequest, DeleteRangeRequest, PutRequest, RequestOp, TxnRequest, WatchCancelRequest,
    WatchCreateRequest, WatchProgressRequest, WatchRequest, WatchResponse, kv_client::KvClient,
    request_op::Request as Op, watch_client::WatchClient, watch_create_request::FilterType,
    watch_request::RequestUnion,
};
use tokio::sync::mpsc;
use tonic::Streaming;
use tonic::transport::Channel;

use crate::harness::{Kind, start, start_with};

/// A test client's watch stream.
struct Stream {
    requests: mpsc::UnboundedSender<WatchRequest>,
    responses: Streaming<WatchResponse>,
}

impl Stream {
    /// Opens a stream with its first watch. (grpc-go sends the response
    /// headers only with the first response, so the call cannot complete
    /// before a request is queued.)
    async fn open(channel: Channel, first: WatchCreateRequest) -> Stream {
        let (requests, rx) = mpsc::unbounded_channel();
        let first = WatchRequest { request_union: Some(RequestUnion::CreateRequest(first)) };
        requests.send(first).unwrap();
        let responses = WatchClient::new(channel)
            .watch(tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        Stream { requests, responses }
    }

    fn send(&self, req: RequestUnion) {
        self.requests.send(WatchRequest { request_union: Some(req) }).unwrap();
    }

    fn create(&self, req: WatchCreateRequest) {
        self.send(RequestUnion::CreateRequest(req));
    }

    async fn next(&mut self) -> WatchResponse {
        tokio::time::timeout(Duration::from_secs(10), self.responses.message())
            .await
            .expect("a watch response within 10 s")
            .unwrap()
            .expect("the stream stays open")
    }

    /// The next `n` responses, normalized and sorted (etcd answers several
    /// watchers of one revision in map order).
    async fn expect(&mut self, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(normalize(self.next().await));
        }
        out.sort();
        out
    }

    async fn expect_silence(&mut self, wait: Duration) {
        if let Ok(resp) = tokio::time::timeout(wait, self.responses.message()).await {
            panic!("unexpected response: {resp:?}");
        }
    }
}

/// Drops what differs between any two servers: cluster/member IDs and term.
fn normalize(mut resp: WatchResponse) -> String {
    if let Some(h) = resp.header.as_mut() {
        h.cluster_id = 0;
        h.member_id = 0;
        h.raft_term = 0;
    }
    format!("{resp:?}")
}

async fn connect(url: &str) -> Channel {
    Channel::from_shared(url.to_string()).unwrap().connect().await.unwrap()
}

fn b(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

fn put(key: &str, value: &str) -> PutRequest {
    PutRequest { key: b(key), value: b(value), ..Default::default() }
}

fn watch(key: &str, start_revision: i64) -> WatchCreateRequest {
    WatchCreateRequest { key: b(key), start_revision, ..Default::default() }
}

/// Creates, history replay, client IDs, filters, prev_kv, multi-watcher
/// revisions, cancel, progress, compaction and refusals on one stream.
async fn script(url: String) -> Vec<Vec<String>> {
    let channel = connect(&url).await;
    let mut kv = KvClient::new(channel.clone());
    let mut transcript = Vec::new();

    kv.put(put("a", "1")).await.unwrap();
    kv.put(put("b", "1")).await.unwrap();
    kv.delete_range(DeleteRangeRequest { key: b("a"), ..Default::default() }).await.unwrap();

    // History from revision 1, with prev_kv: created, then both events.
    let mut s = Stream::open(channel, WatchCreateRequest { prev_kv: true, ..watch("a", 1) }).await;
    transcript.push(s.expect(2).await);
    // A client-chosen ID on a range, deletes only; then the same ID again.
    let range = WatchCreateRequest {
        range_end: b("c"),
        watch_id: 5,
        filters: vec![FilterType::Noput as i32],
        ..watch("b", 0)
    };
    s.create(range.clone());
    transcript.push(s.expect(1).await);
    s.create(range);
    transcript.push(s.expect(1).await);
    // Auto-assigned IDs continue after 0.
    s.create(watch("c", 0));
    transcript.push(s.expect(1).await);

    kv.put(put("b", "2")).await.unwrap();
    kv.delete_range(DeleteRangeRequest { key: b("b"), ..Default::default() }).await.unwrap();
    kv.put(put("c", "1")).await.unwrap();
    transcript.push(s.expect(2).await);
    // One revision seen by two watchers.
    let both = TxnRequest {
        success: vec![
            RequestOp { request: Some(Op::RequestPut(put("a", "x"))) },
            RequestOp { request: Some(Op::RequestPut(put("c", "y"))) },
        ],
        ..Default::default()
    };
    kv.txn(both).await.unwrap();
    transcript.push(s.expect(2).await);

    s.send(RequestUnion::CancelRequest(WatchCancelRequest { watch_id: 5 }));
    s.send(RequestUnion::CancelRequest(WatchCancelRequest { watch_id: 99 }));
    transcript.push(s.expect(1).await);
    kv.put(put("b", "3")).await.unwrap();
    // Every watcher is synced: one progress response for the stream.
    s.send(RequestUnion::ProgressRequest(WatchProgressRequest {}));
    transcript.push(s.expect(1).await);

    kv.compact(CompactionRequest { revision: 6, physical: true }).await.unwrap();
    s.create(watch("a", 3));
    transcript.push(s.expect(2).await);
    s.create(WatchCreateRequest { range_end: b("a"), ..watch("z", 0) });
    transcript.push(s.expect(1).await);
    s.create(watch("a", 6));
    transcript.push(s.expect(2).await);
    s.expect_silence(Duration::from_millis(300)).await;
    transcript
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_stream_matches_etcd() {
    let etcd = start(Kind::Etcd, "etcd");
    let rtcd = start(Kind::Rtcd, "rtcd");
    let want = script(etcd.client_url.clone()).await;
    let got = script(rtcd.client_url.clone()).await;
    for (step, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(g, w, "step {step}");
    }
    assert_eq!(got.len(), want.len());
}

/// Twelve 200 KiB values replayed from history in one response: over the
/// default limit (1.5 MiB + 512 KiB), so a fragmenting watcher gets it in
/// pieces, all flagged but the last.
async fn fragmented_history(url: String) -> Vec<WatchResponse> {
    let channel = connect(&url).await;
    let mut kv = KvClient::new(channel.clone());
    let value = "v".repeat(200 * 1024);
    for i in 0..12 {
        kv.put(put(&format!("big{i:02}"), &value)).await.unwrap();
    }
    let mut s =
        Stream::open(channel, WatchCreateRequest { range_end: b("bih"), fragment: true, ..watch("big", 1) })
            .await;
    let created = s.next().await;
    assert!(created.created);
    let mut parts = vec![];
    loop {
        let part = s.next().await;
        let more = part.fragment;
        parts.push(part);
        if !more {
            return parts;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_responses_fragment_like_etcd() {
    let etcd = start(Kind::Etcd, "etcd");
    let rtcd = start(Kind::Rtcd, "rtcd");
    let want = fragmented_history(etcd.client_url.clone()).await;
    let got = fragmented_history(rtcd.client_url.clone()).await;
    assert!(got.len() > 1, "expected fragments, got one response");
    let shape =
        |parts: &[WatchResponse]| parts.iter().map(|p| (p.events.len(), p.fragment)).collect::<Vec<_>>();
    assert_eq!(shape(&got), shape(&want));
    let events = |parts: Vec<WatchResponse>| parts.into_iter().flat_map(|p| p.events).collect::<Vec<_>>();
    assert_eq!(events(got), events(want));
}

/// A client that stops reading while thousands of revisions go by, then
/// reads: every event arrives once, in revision order, none missing — the
/// stream fell behind the hub and caught up from history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_consumer_catches_up_without_gaps() {
    let rtcd = start(Kind::Rtcd, "rtcd");
    let channel = connect(&rtcd.client_url).await;
    let mut s =
        Stream::open(channel.clone(), WatchCreateRequest { range_end: b("l"), ..watch("k", 0) }).await;
    let created = s.next().await;
    let first = created.header.unwrap().revision + 1;

    const WRITERS: usize = 4;
    const PUTS: usize = 1000;
    let value = "x".repeat(1024);
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let mut kv = KvClient::new(channel.clone());
        let value = value.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..PUTS {
                kv.put(put(&format!("k{w}-{i}"), &value)).await.unwrap();
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let total = (WRITERS * PUTS) as i64;
    let mut expected = first;
    while expected < first + total {
        let resp = s.next().await;
        assert!(!resp.canceled, "{resp:?}");
        for e in resp.events {
            assert_eq!(e.kv.unwrap().mod_revision, expected, "events in order, none missing or repeated");
            expected += 1;
        }
    }
    s.expect_silence(Duration::from_millis(300)).await;
}

/// A progress request while a watcher is still replaying history is
/// answered only after the replay, with a revision covering it (etcd 3.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_waits_for_replay_and_periodic_progress_reports_idle_watchers() {
    let rtcd = start_with(Kind::Rtcd, "rtcd", &["--experimental-watch-progress-notify-interval", "200ms"]);
    let channel = connect(&rtcd.client_url).await;
    let mut kv = KvClient::new(channel.clone());
    for i in 0..3000 {
        kv.put(put("p", &i.to_string())).await.unwrap();
    }
    let mut s = Stream::open(channel, watch("p", 1)).await;
    s.send(RequestUnion::ProgressRequest(WatchProgressRequest {}));
    let current = s.next().await.header.unwrap().revision;
    let mut last_event = 0;
    loop {
        let resp = s.next().await;
        if resp.watch_id == -1 {
            assert!(resp.events.is_empty());
            assert_eq!(resp.header.unwrap().revision, current);
            assert_eq!(last_event, current, "progress came after every replayed event");
            break;
        }
        last_event = resp.events.last().unwrap().kv.as_ref().unwrap().mod_revision;
    }

    // Periodic reports go to idle watchers that asked for them.
    s.create(WatchCreateRequest { progress_notify: true, ..watch("q", 0) });
    let id = s.next().await.watch_id;
    let report = s.next().await;
    assert_eq!((report.watch_id, report.events.len(), report.created), (id, 0, false));
    assert_eq!(report.header.unwrap().revision, current);
}

/// A negative start revision is refused in-stream, as etcd 3.5 does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_start_revision_is_refused() {
    let rtcd = start(Kind::Rtcd, "rtcd");
    let mut s = Stream::open(connect(&rtcd.client_url).await, watch("a", -1)).await;
    let resp = s.next().await;
    assert_eq!((resp.watch_id, resp.created, resp.canceled), (-1, true, true));
    assert_eq!(resp.cancel_reason, "etcdserver: mvcc: required revision has been compacted");
    // The stream stays usable.
    s.create(watch("a", 0));
    assert_eq!(s.next().await.watch_id, 0);
}
