//! etcd request messages off the wire: the first byte picks the message
//! type, the rest is its protobuf encoding. Each decoded request goes through
//! the checks the server makes before proposing it, and write requests (and
//! ranges) through a small in-memory store, so a request nobody could send
//! with a real client still cannot panic the server.
//!
//! Properties: nothing panics; a decoded message re-encodes to bytes that
//! decode to the same message; the server's own txn decoder
//! (`rtcd_proto::codec::decode_txn`, which allows deeper nesting than prost)
//! agrees with prost wherever prost decodes.

use bytes::Bytes;
use prost::Message;
use rtcd_proto::codec::decode_txn;
use rtcd_proto::etcdserverpb::{
    AlarmRequest, AuthenticateRequest, CompactionRequest, DeleteRangeRequest, HashKvRequest,
    LeaseGrantRequest, LeaseKeepAliveRequest, LeaseRevokeRequest, LeaseTimeToLiveRequest, MemberAddRequest,
    PutRequest, RangeRequest, RequestOp, TxnRequest, WatchRequest, request_op,
};
use rtcd_store::engine::MemEngine;
use rtcd_store::{
    AppliedMark, Store, StoreOptions, WriteRequest, check_delete, check_put, check_range, check_txn,
};

/// etcd's default `--max-txn-ops`, which the server passes to `check_txn`.
const MAX_TXN_OPS: usize = 128;

pub fn run(data: &[u8]) {
    let Some((&which, body)) = data.split_first() else { return };
    match which % 13 {
        0 => {
            if let Some(r) = decoded::<RangeRequest>(body) {
                let _ = check_range(&r);
                with_store(|store| {
                    let _ = store.range(&r);
                });
            }
        }
        1 => {
            if let Some(r) = decoded::<PutRequest>(body) {
                let _ = check_put(&r);
                apply(WriteRequest::Put(r));
            }
        }
        2 => {
            if let Some(r) = decoded::<DeleteRangeRequest>(body) {
                let _ = check_delete(&r);
                apply(WriteRequest::DeleteRange(r));
            }
        }
        3 => txn(body),
        4 => {
            if let Some(r) = decoded::<CompactionRequest>(body) {
                apply(WriteRequest::Compact(r));
            }
        }
        5 => {
            decoded::<WatchRequest>(body);
        }
        6 => {
            if let Some(r) = decoded::<LeaseGrantRequest>(body) {
                apply(WriteRequest::LeaseGrant(r));
            }
        }
        7 => {
            if let Some(r) = decoded::<LeaseRevokeRequest>(body) {
                apply(WriteRequest::LeaseRevoke(r));
            }
        }
        8 => {
            if let Some(r) = decoded::<AlarmRequest>(body) {
                apply(WriteRequest::Alarm(r));
            }
        }
        9 => {
            decoded::<LeaseKeepAliveRequest>(body);
        }
        10 => {
            decoded::<LeaseTimeToLiveRequest>(body);
        }
        11 => {
            decoded::<AuthenticateRequest>(body);
            decoded::<HashKvRequest>(body);
        }
        _ => {
            decoded::<MemberAddRequest>(body);
        }
    }
}

/// `T` decoded from `body` by prost (what tonic does for every request but
/// Txn), checked to round-trip.
fn decoded<T: Message + Default + PartialEq + std::fmt::Debug>(body: &[u8]) -> Option<T> {
    let message = T::decode(body).ok()?;
    let again = T::decode(message.encode_to_vec().as_slice());
    assert_eq!(again.as_ref().ok(), Some(&message), "re-encoded message decodes differently");
    Some(message)
}

/// Txns arrive through the server's own decoder; prost must agree with it.
fn txn(body: &[u8]) {
    let ours = decode_txn(Bytes::copy_from_slice(body));
    match (TxnRequest::decode(body), &ours) {
        (Ok(theirs), Ok(ours)) => assert_eq!(&theirs, ours, "decode_txn differs from prost"),
        (Ok(theirs), Err(e)) => panic!("prost decodes {theirs:?}, decode_txn refuses: {e:?}"),
        // decode_txn exists to go deeper than prost's recursion limit (about
        // 50 txn levels); shallower, it must refuse whatever prost refuses.
        (Err(e), Ok(ours)) => {
            assert!(depth(ours) >= 40, "decode_txn accepts what prost refuses ({e}): {ours:?}")
        }
        (Err(_), Err(_)) => {}
    }
    let Ok(t) = ours else { return };
    if check_txn(&t, MAX_TXN_OPS).is_ok() {
        // The server proposes only txns that pass the check.
        apply(WriteRequest::Txn(t));
    }
}

/// Txn nesting levels, 1 for a flat txn. Iterative: the input decides the depth.
fn depth(t: &TxnRequest) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(t, 1)];
    while let Some((t, level)) = stack.pop() {
        deepest = deepest.max(level);
        for op in t.success.iter().chain(&t.failure) {
            if let Some(request_op::Request::RequestTxn(inner)) = &op.request {
                stack.push((inner, level + 1));
            }
        }
    }
    deepest
}

/// A store holding a few keys, a lease and some history, so requests find
/// something to read, overwrite, delete and compact.
fn with_store(f: impl FnOnce(&Store)) {
    let Ok(store) = Store::with_engine(Box::new(MemEngine::new()), StoreOptions::default()) else {
        panic!("an in-memory store opens")
    };
    let put = |k: &str, v: &str, lease| {
        WriteRequest::Put(PutRequest {
            key: Bytes::copy_from_slice(k.as_bytes()),
            value: Bytes::copy_from_slice(v.as_bytes()),
            lease,
            ..Default::default()
        })
    };
    let setup = [
        WriteRequest::LeaseGrant(LeaseGrantRequest { ttl: 60, id: 1 }),
        put("a", "1", 0),
        put("b", "2", 1),
        put("c", "3", 0),
        put("a", "4", 0),
        WriteRequest::DeleteRange(DeleteRangeRequest { key: Bytes::from_static(b"c"), ..Default::default() }),
        WriteRequest::Txn(TxnRequest {
            compare: vec![],
            success: vec![RequestOp {
                request: Some(request_op::Request::RequestPut(PutRequest {
                    key: Bytes::from_static(b"d"),
                    ..Default::default()
                })),
            }],
            failure: vec![],
        }),
    ];
    let mark = AppliedMark { index: 1, context: Vec::new() };
    match store.apply(&setup, mark) {
        Ok(outcomes) => assert!(outcomes.iter().all(Result::is_ok), "setup applies: {outcomes:?}"),
        Err(e) => panic!("setup reaches the engine: {e}"),
    }
    f(&store);
}

/// Applies one request the way the state machine does (after Raft); any
/// outcome is fine as long as nothing panics and the store stays usable.
fn apply(request: WriteRequest) {
    with_store(|store| {
        let mark = AppliedMark { index: 2, context: Vec::new() };
        // A request error is an answer; an engine error cannot happen in memory.
        if let Err(e) = store.apply(std::slice::from_ref(&request), mark) {
            panic!("in-memory batch failed: {e} for {request:?}");
        }
        let all = RangeRequest {
            key: Bytes::from_static(b"\0"),
            range_end: Bytes::from_static(b"\0"),
            ..Default::default()
        };
        if let Err(e) = store.range(&all) {
            panic!("store unreadable after {request:?}: {e}");
        }
    });
}
