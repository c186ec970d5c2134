//! Random operation sequences against real etcd and rtcd: puts, deletes,
//! txns with compares, ranges with every option, compactions, and watches
//! replaying history from past (and compacted) revisions. Every response
//! must be equal once cluster/member IDs and the raft term are removed;
//! errors must carry the same gRPC code and message.
//!
//! Seeds are fixed so a failure reproduces; `RTCD_DIFF_SEEDS` and
//! `RTCD_DIFF_OPS` widen the search.

use std::time::Duration;

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{
    CompactionRequest, Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, ResponseHeader,
    TxnRequest, WatchCreateRequest, WatchRequest, WatchResponse, compare, kv_client::KvClient,
    request_op::Request as Op, watch_client::WatchClient, watch_request::RequestUnion,
};
use tonic::transport::Channel;

use crate::harness::{Kind, start};

/// xorshift64*: small, deterministic, good enough to pick operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn key(&mut self) -> &'static str {
        KEYS[self.below(KEYS.len() as u64) as usize]
    }
}

const KEYS: [&str; 8] = ["a", "b", "c", "foo", "foo/1", "foo/2", "fop", "z"];

/// What the generator knows of the store, to aim revisions near the edges.
struct Shape {
    revision: i64,
    compacted: i64,
}

#[derive(Debug, Clone)]
enum Operation {
    Put(PutRequest),
    Delete(DeleteRangeRequest),
    Txn(TxnRequest),
    Range(RangeRequest),
    Compact(CompactionRequest),
    Watch(WatchCreateRequest),
}

fn b(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

/// A key range: a key, a prefix, from-key, or [key, other).
fn key_range(rng: &mut Rng) -> (Bytes, Bytes) {
    let key = rng.key();
    match rng.below(5) {
        0 | 1 => (b(key), Bytes::new()),
        2 => {
            let mut end = key.as_bytes().to_vec();
            if let Some(last) = end.last_mut() {
                *last += 1;
            }
            (b(key), Bytes::from(end))
        }
        3 => (b(key), Bytes::from_static(b"\0")),
        _ => (b(key), b(rng.key())),
    }
}

fn revision_near(rng: &mut Rng, shape: &Shape) -> i64 {
    match rng.below(6) {
        0 => 0,
        1 => shape.compacted.max(1),
        2 => shape.compacted.max(1) - 1,
        3 => shape.revision + 1,
        _ => 1 + rng.below(shape.revision.max(1) as u64) as i64,
    }
}

fn put(rng: &mut Rng) -> PutRequest {
    PutRequest {
        key: b(rng.key()),
        value: Bytes::from(format!("v{}", rng.below(1000))),
        prev_kv: rng.chance(40),
        ignore_value: rng.chance(5),
        ..Default::default()
    }
}

fn delete(rng: &mut Rng) -> DeleteRangeRequest {
    let (key, range_end) = key_range(rng);
    DeleteRangeRequest { key, range_end, prev_kv: rng.chance(40) }
}

fn range(rng: &mut Rng, shape: &Shape) -> RangeRequest {
    let (key, range_end) = key_range(rng);
    let rev = |rng: &mut Rng| if rng.chance(70) { 0 } else { revision_near(rng, shape) };
    RangeRequest {
        key,
        range_end,
        limit: if rng.chance(40) { rng.below(4) as i64 } else { 0 },
        revision: rev(rng),
        sort_order: rng.below(3) as i32,
        sort_target: rng.below(5) as i32,
        serializable: rng.chance(30),
        keys_only: rng.chance(20),
        count_only: rng.chance(10),
        min_mod_revision: if rng.chance(15) { rev(rng) } else { 0 },
        max_mod_revision: if rng.chance(15) { rev(rng) } else { 0 },
        min_create_revision: if rng.chance(15) { rev(rng) } else { 0 },
        max_create_revision: if rng.chance(15) { rev(rng) } else { 0 },
    }
}

fn compare(rng: &mut Rng, shape: &Shape) -> Compare {
    let (key, range_end) = if rng.chance(80) { (b(rng.key()), Bytes::new()) } else { key_range(rng) };
    let target = rng.below(5) as i32;
    let small = rng.below(4) as i64;
    let union = match target {
        0 => compare::TargetUnion::Version(small),
        1 => compare::TargetUnion::CreateRevision(revision_near(rng, shape)),
        2 => compare::TargetUnion::ModRevision(revision_near(rng, shape)),
        3 => compare::TargetUnion::Value(Bytes::from(format!("v{}", rng.below(1000)))),
        _ => compare::TargetUnion::Lease(0),
    };
    Compare { result: rng.below(4) as i32, target, key, range_end, target_union: Some(union) }
}

fn request_op(rng: &mut Rng, shape: &Shape, depth: u32) -> RequestOp {
    let request = match rng.below(if depth == 0 { 4 } else { 3 }) {
        0 => Op::RequestPut(put(rng)),
        1 => Op::RequestDeleteRange(delete(rng)),
        2 => Op::RequestRange(range(rng, shape)),
        _ => Op::RequestTxn(txn(rng, shape, depth + 1)),
    };
    RequestOp { request: Some(request) }
}

fn txn(rng: &mut Rng, shape: &Shape, depth: u32) -> TxnRequest {
    let n = |rng: &mut Rng| rng.below(3) as usize;
    let compare = (0..n(rng)).map(|_| self::compare(rng, shape)).collect();
    let success = (0..n(rng)).map(|_| request_op(rng, shape, depth)).collect();
    let failure = (0..n(rng)).map(|_| request_op(rng, shape, depth)).collect();
    TxnRequest { compare, success, failure }
}

fn operation(rng: &mut Rng, shape: &Shape) -> Operation {
    match rng.below(100) {
        0..30 => Operation::Put(put(rng)),
        30..42 => Operation::Delete(delete(rng)),
        42..62 => Operation::Txn(txn(rng, shape, 0)),
        62..88 => Operation::Range(range(rng, shape)),
        // Physical only: etcd answers a non-physical compaction before its
        // background job has removed a delete made exactly at the compaction
        // revision, so a watch from there may or may not replay it. rtcd
        // removes it at once, as a physical compaction ends up doing.
        88..93 => Operation::Compact(CompactionRequest {
            revision: shape.revision - rng.below(6) as i64 + 1,
            physical: true,
        }),
        _ => {
            let (key, range_end) = key_range(rng);
            Operation::Watch(WatchCreateRequest {
                key,
                range_end,
                start_revision: revision_near(rng, shape).max(1),
                prev_kv: rng.chance(50),
                filters: if rng.chance(20) { vec![rng.below(2) as i32] } else { vec![] },
                ..Default::default()
            })
        }
    }
}

fn clean(header: &mut Option<ResponseHeader>) {
    if let Some(h) = header.as_mut() {
        h.cluster_id = 0;
        h.member_id = 0;
        h.raft_term = 0;
    }
}

fn outcome<T: std::fmt::Debug>(
    result: Result<tonic::Response<T>, tonic::Status>,
    clean: fn(&mut T),
) -> String {
    match result {
        Ok(resp) => {
            let mut resp = resp.into_inner();
            clean(&mut resp);
            format!("{resp:?}")
        }
        Err(status) => format!("error {:?}: {}", status.code(), status.message()),
    }
}

/// Replays history for one watch up to `through` and returns what it saw:
/// the events in order, or how it was canceled. A watch that has seen
/// everything goes quiet; `quiet` is how long silence must last, and at
/// least `expect` lines are waited for first (what the reference produced),
/// so a loaded machine does not cut a replay short.
async fn watch_history(
    channel: Channel,
    req: WatchCreateRequest,
    through: i64,
    quiet: Duration,
    expect: usize,
) -> String {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tx.send(WatchRequest { request_union: Some(RequestUnion::CreateRequest(req)) }).unwrap();
    let mut stream = WatchClient::new(channel)
        .watch(tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let mut seen = Vec::new();
    loop {
        let wait = if seen.len() < expect { Duration::from_secs(10) } else { quiet };
        let Ok(Ok(Some(resp))) = tokio::time::timeout(wait, stream.message()).await else { break };
        if record(&mut seen, resp, through) {
            break;
        }
    }
    drop(tx);
    seen.join("\n")
}

/// Adds a watch response to the transcript; true when the watch is done
/// (canceled, or it reached `through`).
fn record(seen: &mut Vec<String>, mut resp: WatchResponse, through: i64) -> bool {
    clean(&mut resp.header);
    if resp.created || resp.canceled {
        seen.push(format!(
            "created={} canceled={} compact={} reason={:?} rev={}",
            resp.created,
            resp.canceled,
            resp.compact_revision,
            resp.cancel_reason,
            resp.header.map_or(0, |h| h.revision)
        ));
        return resp.canceled;
    }
    let mut done = false;
    for e in resp.events {
        done |= e.kv.as_ref().is_some_and(|kv| kv.mod_revision >= through);
        seen.push(format!("{e:?}"));
    }
    done
}

struct Target {
    channel: Channel,
    kv: KvClient<Channel>,
}

/// Runs `op`; a watch waits for at least `expect` transcript lines and then
/// for `quiet` of silence.
async fn run(target: &mut Target, op: &Operation, quiet: Duration, expect: usize) -> String {
    let kv = &mut target.kv;
    match op.clone() {
        Operation::Put(r) => outcome(kv.put(r).await, |r| clean(&mut r.header)),
        Operation::Delete(r) => outcome(kv.delete_range(r).await, |r| clean(&mut r.header)),
        Operation::Txn(r) => outcome(kv.txn(r).await, |r| clean(&mut r.header)),
        Operation::Range(r) => outcome(kv.range(r).await, |r| clean(&mut r.header)),
        Operation::Compact(r) => outcome(kv.compact(r).await, |r| clean(&mut r.header)),
        Operation::Watch(r) => {
            let now = kv.range(RangeRequest { key: b("a"), ..Default::default() }).await.unwrap();
            let through = now.into_inner().header.unwrap().revision;
            watch_history(target.channel.clone(), r, through, quiet, expect).await
        }
    }
}

async fn connect(url: &str) -> Target {
    let channel = Channel::from_shared(url.to_string()).unwrap().connect().await.unwrap();
    Target { kv: KvClient::new(channel.clone()), channel }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_operations_answer_like_etcd() {
    let seeds = env_or("RTCD_DIFF_SEEDS", 3);
    let ops = env_or("RTCD_DIFF_OPS", 250);
    for seed in 1..=seeds {
        let etcd = start(Kind::Etcd, "diff");
        let rtcd = start(Kind::Rtcd, "diff");
        let mut theirs = connect(&etcd.client_url).await;
        let mut ours = connect(&rtcd.client_url).await;
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        let mut shape = Shape { revision: 1, compacted: 0 };
        let mut history = Vec::new();
        for step in 0..ops {
            let op = operation(&mut rng, &shape);
            // etcd replays from a 100 ms loop: give it longer to go quiet.
            let want = run(&mut theirs, &op, Duration::from_millis(600), 0).await;
            let got = run(&mut ours, &op, Duration::from_millis(300), want.lines().count()).await;
            history.push(format!("{op:?}"));
            assert_eq!(
                got,
                want,
                "seed {seed} step {step}\nlast operations:\n{}",
                history[history.len().saturating_sub(5)..].join("\n")
            );
            // Track the store's shape from etcd's answers.
            let header = theirs.kv.range(RangeRequest { key: b("a"), ..Default::default() }).await.unwrap();
            shape.revision = header.into_inner().header.unwrap().revision;
            if let Operation::Compact(c) = &op
                && !want.starts_with("error")
            {
                shape.compacted = c.revision;
            }
        }
        // The whole key space ends up the same.
        let all = RangeRequest { key: b("\0"), range_end: b("\0"), ..Default::default() };
        let a = outcome(theirs.kv.range(all.clone()).await, |r| clean(&mut r.header));
        let b = outcome(ours.kv.range(all).await, |r| clean(&mut r.header));
        assert_eq!(b, a, "seed {seed}: final state");
    }
}
