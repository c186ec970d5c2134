//! What a hostile-input probe found, each through the real binary with a raw
//! HTTP/2 client (to send what no gRPC library would), compared with real
//! etcd where etcd's answer is the reference: deep txns, declared-but-unsent
//! messages, oversized messages, watch-create floods, garbage on a watch
//! stream, progress requests while a watcher waits for the future.

use std::time::Duration;

use bytes::{Buf, Bytes};
use prost::Message;
use rtcd_proto::etcdserverpb::{
    PutRequest, RangeRequest, RangeResponse, RequestOp, TxnRequest, WatchCreateRequest, WatchProgressRequest,
    WatchRequest, WatchResponse, request_op::Request as Op, watch_request::RequestUnion,
};
use tokio::net::TcpStream;

use crate::harness::{Kind, start};

/// One HTTP/2 connection speaking gRPC by hand.
struct Raw {
    send: h2::client::SendRequest<Bytes>,
    authority: String,
}

/// How a call ended: grpc-status, grpc-message and the response messages.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ended {
    code: i32,
    message: String,
    messages: Vec<Bytes>,
}

fn frame(message: &[u8]) -> Bytes {
    let mut framed = vec![0];
    framed.extend((message.len() as u32).to_be_bytes());
    framed.extend(message);
    framed.into()
}

/// Splits a response body into its gRPC messages.
fn messages(mut body: Bytes) -> Vec<Bytes> {
    let mut out = Vec::new();
    while body.remaining() >= 5 {
        body.advance(1);
        let len = body.get_u32() as usize;
        out.push(body.split_to(len.min(body.len())));
    }
    out
}

fn header_text(headers: &http::HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

impl Raw {
    async fn connect(url: &str) -> Raw {
        let authority = url.trim_start_matches("http://").to_owned();
        let tcp = TcpStream::connect(&authority).await.unwrap();
        let (send, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                eprintln!("connection ended: {e:?}");
            }
        });
        Raw { send, authority }
    }

    /// Opens a call; the caller sends its body.
    async fn open(&mut self, path: &str) -> (h2::client::ResponseFuture, h2::SendStream<Bytes>) {
        let request = http::Request::post(format!("http://{}{path}", self.authority))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .unwrap();
        let mut send = self.send.clone().ready().await.unwrap();
        send.send_request(request, false).unwrap()
    }

    /// A unary call with `body` (already framed), to its end.
    async fn call(&mut self, path: &str, body: Bytes) -> Ended {
        let (response, mut stream) = self.open(path).await;
        stream.send_data(body, true).unwrap();
        ended(response).await
    }
}

/// Reads a response to its trailers (or a trailers-only answer).
async fn ended(response: h2::client::ResponseFuture) -> Ended {
    let response = response.await.unwrap();
    let (parts, mut body) = response.into_parts();
    if let Some(code) = header_text(&parts.headers, "grpc-status") {
        let message = header_text(&parts.headers, "grpc-message").unwrap_or_default();
        return Ended { code: code.parse().unwrap(), message: decode_message(&message), messages: vec![] };
    }
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.unwrap().unwrap_or_default();
    Ended {
        code: header_text(&trailers, "grpc-status").map_or(-1, |c| c.parse().unwrap()),
        message: decode_message(&header_text(&trailers, "grpc-message").unwrap_or_default()),
        messages: messages(data.into()),
    }
}

/// grpc-message is percent-encoded.
fn decode_message(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&raw[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn put_op(key: &str) -> RequestOp {
    RequestOp {
        request: Some(Op::RequestPut(PutRequest {
            key: key.to_owned().into(),
            value: "v".into(),
            ..Default::default()
        })),
    }
}

/// `depth` txns, each the only op of its parent, the innermost putting `key`.
fn chain(depth: usize, key: &str) -> TxnRequest {
    let mut txn = TxnRequest { success: vec![put_op(key)], ..Default::default() };
    for _ in 1..depth {
        txn = TxnRequest {
            success: vec![RequestOp { request: Some(Op::RequestTxn(txn)) }],
            ..Default::default()
        };
    }
    txn
}

async fn key_exists(raw: &mut Raw, key: &str) -> bool {
    let range = RangeRequest { key: key.to_owned().into(), count_only: true, ..Default::default() };
    let ended = raw.call("/etcdserverpb.KV/Range", frame(&range.encode_to_vec())).await;
    assert_eq!(ended.code, 0, "{ended:?}");
    RangeResponse::decode(ended.messages[0].clone()).unwrap().count == 1
}

/// Per depth: the call's code and message, and whether the key was written.
async fn deep_txn_outcomes(url: &str) -> Vec<(usize, i32, String, bool)> {
    let mut raw = Raw::connect(url).await;
    let mut outcomes = Vec::new();
    for depth in [49, 50, 51, 100, 127, 128, 129, 200, 300] {
        let key = format!("deep/{depth}");
        let body = frame(&chain(depth, &key).encode_to_vec());
        let ended = tokio::time::timeout(Duration::from_secs(20), raw.call("/etcdserverpb.KV/Txn", body))
            .await
            .unwrap_or_else(|_| panic!("a txn {depth} deep is answered"));
        outcomes.push((depth, ended.code, ended.message, key_exists(&mut raw, &key).await));
    }
    outcomes
}

/// The probe's first finding: a txn 50 deep was committed and then skipped
/// on apply (the client timed out, the key was never written); 51–127 deep
/// failed to decode. etcd applies up to 128 levels and refuses deeper ones
/// for its op budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txns_nested_as_deep_as_etcd_allows_apply_as_on_etcd() {
    let etcd = start(Kind::Etcd, "deep-etcd");
    let rtcd = start(Kind::Rtcd, "deep-rtcd");
    let expected = deep_txn_outcomes(&etcd.client_url).await;
    let got = deep_txn_outcomes(&rtcd.client_url).await;
    assert_eq!(got, expected);
    // The reference itself, so the comparison means what it says.
    assert!(expected.iter().filter(|o| o.0 <= 128).all(|o| o.1 == 0 && o.3), "{expected:?}");
    assert!(
        expected
            .iter()
            .filter(|o| o.0 > 128)
            .all(|o| o.1 == 3 && o.2 == "etcdserver: too many operations in txn request" && !o.3),
        "{expected:?}"
    );
}

fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The probe's third finding: 400 streams each declaring a 2 MiB message and
/// sending nothing more (2.4 KB in all) added ~800 MB to the server. Now a
/// message costs only what was sent; a declaration over the limit is refused
/// as etcd refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_but_unsent_messages_cost_nothing() {
    let rtcd = start(Kind::Rtcd, "declared");
    let mut raw = Raw::connect(&rtcd.client_url).await;
    let range = frame(&RangeRequest { key: "k".into(), ..Default::default() }.encode_to_vec());
    // Settle: the first calls allocate the server's buffers and pools.
    for _ in 0..3 {
        assert_eq!(raw.call("/etcdserverpb.KV/Range", range.clone()).await.code, 0);
    }
    let before = rss_bytes(rtcd.pid());
    let mut open = Vec::new();
    for _ in 0..400 {
        let (response, mut stream) = raw.open("/etcdserverpb.KV/Put").await;
        let mut prefix = vec![0];
        prefix.extend(2_000_000u32.to_be_bytes());
        stream.send_data(prefix.into(), false).unwrap();
        open.push((response, stream));
    }
    // Let the server read every prefix.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let grown = rss_bytes(rtcd.pid()).saturating_sub(before);
    assert!(grown < 64 << 20, "400 declared messages grew the server by {} MiB", grown >> 20);
    // The server still answers on the same connection.
    assert_eq!(raw.call("/etcdserverpb.KV/Range", range).await.code, 0);
}

/// Declaring more than `--max-request-bytes` plus gRPC's allowance is
/// refused from the prefix alone, with etcd's (grpc-go's) code and text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_messages_are_refused_as_etcd_refuses_them() {
    let etcd = start(Kind::Etcd, "oversized-etcd");
    let rtcd = start(Kind::Rtcd, "oversized-rtcd");
    let mut answers = Vec::new();
    for member in [&etcd, &rtcd] {
        let mut raw = Raw::connect(&member.client_url).await;
        let mut prefix = vec![0];
        prefix.extend(3_000_000u32.to_be_bytes());
        let (response, mut stream) = raw.open("/etcdserverpb.KV/Put").await;
        stream.send_data(prefix.into(), false).unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(10), ended(response)).await.unwrap();
        answers.push((ended.code, ended.message));
    }
    assert_eq!(answers[1], answers[0]);
    assert_eq!(answers[0].0, 8, "RESOURCE_EXHAUSTED: {answers:?}");
}

fn create(key: &str, start_revision: i64) -> Bytes {
    let create = WatchCreateRequest { key: key.to_owned().into(), start_revision, ..Default::default() };
    frame(&WatchRequest { request_union: Some(RequestUnion::CreateRequest(create)) }.encode_to_vec())
}

/// Reads watch responses until `done` says enough, or `within` passes.
async fn read_watch(
    body: &mut h2::RecvStream,
    pending: &mut Vec<u8>,
    within: Duration,
    mut done: impl FnMut(&WatchResponse) -> bool,
) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        while pending.len() >= 5 {
            let len = u32::from_be_bytes([pending[1], pending[2], pending[3], pending[4]]) as usize;
            if pending.len() < 5 + len {
                break;
            }
            let response = WatchResponse::decode(&pending[5..5 + len]).unwrap();
            pending.drain(..5 + len);
            if done(&response) {
                return true;
            }
        }
        match tokio::time::timeout_at(deadline, body.data()).await {
            Ok(Some(Ok(chunk))) => {
                let _ = body.flow_control().release_capacity(chunk.len());
                pending.extend_from_slice(&chunk);
            }
            other => {
                eprintln!("read_watch ended: {other:?}");
                return false;
            }
        }
    }
}

/// Creates `count` watchers on one stream, each request in its own DATA
/// frame sent back to back; returns how many `created` responses arrived.
async fn flood_creates(url: &str, count: usize) -> usize {
    let mut raw = Raw::connect(url).await;
    let (response, mut stream) = raw.open("/etcdserverpb.Watch/Watch").await;
    let sender = tokio::spawn(async move {
        for _ in 0..count {
            stream.reserve_capacity(32);
            if stream.send_data(create("flood", 0), false).is_err() {
                break;
            }
            // Let the connection task write: a real client's sends interleave.
            tokio::task::yield_now().await;
        }
        stream
    });
    let mut body = response.await.unwrap().into_body();
    let mut created = 0;
    let mut pending = Vec::new();
    read_watch(&mut body, &mut pending, Duration::from_secs(120), |r| {
        created += usize::from(r.created && !r.canceled);
        created == count
    })
    .await;
    let _ = sender.await;
    created
}

/// The probe's fourth finding: ~7,500 creates back to back on one stream
/// made HTTP/2's flood protection tear the connection down; etcd creates
/// them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_watch_creates_on_one_stream_creates_them_all() {
    let rtcd = start(Kind::Rtcd, "flood");
    assert_eq!(flood_creates(&rtcd.client_url, 20_000).await, 20_000);
}

/// A stream whose request bytes do not decode ends with an error, as on
/// etcd, not with status OK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_a_watch_stream_ends_it_with_an_error() {
    let etcd = start(Kind::Etcd, "garbage-etcd");
    let rtcd = start(Kind::Rtcd, "garbage-rtcd");
    let mut codes = Vec::new();
    for member in [&etcd, &rtcd] {
        let mut raw = Raw::connect(&member.client_url).await;
        let (response, mut stream) = raw.open("/etcdserverpb.Watch/Watch").await;
        stream.send_data(create("g", 0), false).unwrap();
        stream.send_data(frame(&[0xff, 0xff, 0xff]), true).unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(10), ended(response)).await.unwrap();
        codes.push(ended.code);
    }
    assert_ne!(codes[0], 0, "etcd ends the stream with an error");
    assert_eq!(codes[1], codes[0]);
}

/// A progress request is answered while a watcher waits for a revision
/// that does not exist yet (it has nothing to catch up on), as etcd does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_answered_while_a_watcher_waits_for_the_future() {
    let rtcd = start(Kind::Rtcd, "future-progress");
    let mut raw = Raw::connect(&rtcd.client_url).await;
    let (response, mut stream) = raw.open("/etcdserverpb.Watch/Watch").await;
    stream.send_data(create("f", 1_000), false).unwrap();
    let progress =
        WatchRequest { request_union: Some(RequestUnion::ProgressRequest(WatchProgressRequest {})) };
    let mut body = response.await.unwrap().into_body();
    let mut pending = Vec::new();
    assert!(read_watch(&mut body, &mut pending, Duration::from_secs(10), |r| r.created).await);
    stream.send_data(frame(&progress.encode_to_vec()), false).unwrap();
    let answered =
        read_watch(&mut body, &mut pending, Duration::from_secs(10), |r| r.watch_id == -1 && !r.created)
            .await;
    assert!(answered, "a progress response while the only watcher waits for revision 1000");
}

/// The probe's third finding, continued: connections that never sent a
/// byte stayed open. A connection that has not sent HTTP/2's preface within
/// 10 s is closed, freeing its socket and buffers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_never_send_a_preface_are_closed() {
    use tokio::io::AsyncReadExt;
    let rtcd = start(Kind::Rtcd, "silent");
    let authority = rtcd.client_url.trim_start_matches("http://").to_owned();
    let mut silent = TcpStream::connect(&authority).await.unwrap();
    let mut slow = TcpStream::connect(&authority).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut slow, b"PRI * HTTP/2.0").await.unwrap();
    for connection in [&mut silent, &mut slow] {
        let mut byte = [0u8; 1];
        let closed = tokio::time::timeout(Duration::from_secs(30), connection.read(&mut byte)).await;
        assert!(matches!(closed, Ok(Ok(0)) | Ok(Err(_))), "closed by the server: {closed:?}");
    }
    // A client that speaks promptly is served as ever.
    let mut raw = Raw::connect(&rtcd.client_url).await;
    let range = frame(&RangeRequest { key: "k".into(), ..Default::default() }.encode_to_vec());
    assert_eq!(raw.call("/etcdserverpb.KV/Range", range).await.code, 0);
}

/// Issue 44's CONTINUATION flood: HEADERS without END_HEADERS, then 16 KiB CONTINUATION frames
/// without end. The client port held every one of them (2.3 GB) for its `:authority` mend; now
/// the block is handed to h2 past a bound, h2 ends the connection, and the server barely grows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_flood_ends_its_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rtcd = start(Kind::Rtcd, "continuations");
    let authority = rtcd.client_url.trim_start_matches("http://").to_owned();
    let before = rss_bytes(rtcd.pid());
    let header = |length: usize, kind: u8, flags: u8| {
        let mut bytes = (length as u32).to_be_bytes()[1..].to_vec();
        bytes.extend([kind, flags, 0, 0, 0, 1]);
        bytes
    };
    let mut flood = TcpStream::connect(&authority).await.unwrap();
    let mut opening = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    opening.extend([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    opening.extend(header(9, 1, 0));
    opening.extend(b"\x00\x03abc\x03def");
    flood.write_all(&opening).await.unwrap();
    let mut continuation = header(16_384, 9, 0);
    continuation.extend(std::iter::repeat_n(0x7f, 16_384));
    let mut sent = 0;
    for _ in 0..5_000 {
        if flood.write_all(&continuation).await.is_err() {
            break;
        }
        sent += 1;
    }
    assert!(sent < 5_000, "the server took 80 MB of one header block");
    // What the server said before closing ends with its GOAWAY.
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), flood.read_to_end(&mut answer)).await;
    assert!(answer.windows(2).any(|w| w == [7, 0]), "no GOAWAY among {answer:?}");
    let grown = rss_bytes(rtcd.pid()).saturating_sub(before);
    assert!(grown < 50 << 20, "the flood grew the server by {} MiB", grown >> 20);
    // Others are served as ever.
    let mut raw = Raw::connect(&rtcd.client_url).await;
    let range = frame(&RangeRequest { key: "k".into(), ..Default::default() }.encode_to_vec());
    assert_eq!(raw.call("/etcdserverpb.KV/Range", range).await.code, 0);
}

/// Sends `count` PINGs on one fresh connection to `url` (as fast as the server reads them);
/// how many it took, and the error code and debug data of the GOAWAY it answered with.
async fn ping_flood(url: &str, count: usize) -> (usize, Option<(u32, Vec<u8>)>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = url.trim_start_matches("http://").to_owned();
    let stream = TcpStream::connect(&authority).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let mut opening = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    opening.extend([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    writer.write_all(&opening).await.unwrap();
    let answer = tokio::spawn(async move {
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(30), reader.read_to_end(&mut answer)).await;
        answer
    });
    let ping = [0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
    let mut sent = 0;
    for batch in 0..count / 1000 {
        let many: Vec<u8> = ping.iter().copied().cycle().take(ping.len() * 1000).collect();
        if writer.write_all(&many).await.is_err() {
            break;
        }
        sent = (batch + 1) * 1000;
    }
    drop(writer);
    let answer = answer.await.unwrap();
    // The answer's frames, in order; the GOAWAY among them.
    let mut rest = &answer[..];
    let mut goaway = None;
    while rest.len() >= 9 {
        let length = usize::from(rest[0]) << 16 | usize::from(rest[1]) << 8 | usize::from(rest[2]);
        let Some(payload) = rest.get(9..9 + length) else { break };
        if rest[3] == 7 && payload.len() >= 8 {
            let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
            goaway = Some((code, payload[8..].to_vec()));
        }
        rest = &rest[9 + length..];
    }
    (sent, goaway)
}

/// Issue 44's PING flood: 200,000 PINGs were each answered. As etcd (grpc-go) does, a client
/// pinging faster than the keepalive minimum without data flowing gets GOAWAY
/// (ENHANCE_YOUR_CALM, `too_many_pings`) and its connection ends; others are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_ends_its_connection_as_on_etcd() {
    for kind in [Kind::Etcd, Kind::Rtcd] {
        let member = start(kind, "pings");
        let (sent, goaway) = ping_flood(&member.client_url, 200_000).await;
        assert!(sent < 200_000, "{kind:?} took all 200,000 pings");
        assert_eq!(goaway, Some((0xb, b"too_many_pings".to_vec())), "{kind:?}");
        let mut raw = Raw::connect(&member.client_url).await;
        let range = frame(&RangeRequest { key: "k".into(), ..Default::default() }.encode_to_vec());
        assert_eq!(raw.call("/etcdserverpb.KV/Range", range).await.code, 0, "{kind:?}");
    }
}
