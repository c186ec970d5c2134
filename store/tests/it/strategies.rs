//! proptest generators for store requests over a small key space, so that
//! requests collide often.

use bytes::Bytes;
use proptest::prelude::*;
use proptest::sample::select;
use rtcd_proto::etcdserverpb::{
    AlarmRequest, CompactionRequest, Compare, DeleteRangeRequest, LeaseGrantRequest, LeaseRevokeRequest,
    PutRequest, RangeRequest, RequestOp, TxnRequest, compare::TargetUnion, request_op::Request,
};
use rtcd_store::WriteRequest;

const KEYS: &[&str] = &["a", "b", "c", "d", "e", "f"];
const ENDS: &[&str] = &["", "", "", "\0", "b", "c", "e", "g"];
/// Keys only nested txns write, so nested and outer writes never collide.
const NESTED_KEYS: &[&str] = &["n1", "n2"];
const VALUES: &[&str] = &["", "x", "y", "zz"];

fn bytes(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn key() -> impl Strategy<Value = Bytes> {
    select(KEYS).prop_map(bytes)
}

fn end() -> impl Strategy<Value = Bytes> {
    select(ENDS).prop_map(bytes)
}

fn put_on(keys: &'static [&'static str]) -> impl Strategy<Value = PutRequest> {
    (select(keys), select(VALUES), select(&[0i64, 0, 0, 1, 2, 3][..]), any::<bool>(), 0u8..8).prop_map(
        |(k, v, lease, prev_kv, flags)| {
            // Rarely ignore the value or the lease (then neither may be given).
            let ignore_value = flags == 0;
            let ignore_lease = flags == 1;
            PutRequest {
                key: bytes(k),
                value: if ignore_value { Bytes::new() } else { bytes(v) },
                lease: if ignore_lease { 0 } else { lease },
                prev_kv,
                ignore_value,
                ignore_lease,
            }
        },
    )
}

pub fn put() -> impl Strategy<Value = PutRequest> {
    put_on(KEYS)
}

pub fn delete() -> impl Strategy<Value = DeleteRangeRequest> {
    (key(), end(), any::<bool>()).prop_map(|(key, range_end, prev_kv)| DeleteRangeRequest {
        key,
        range_end,
        prev_kv,
    })
}

/// Every Range option, at revisions around the ones a case reaches.
pub fn range() -> impl Strategy<Value = RangeRequest> {
    let filters = (0i64..3, 0i64..4, -1i64..24, 0i64..20, 0i64..20, 0i64..20, 0i64..20);
    (key(), end(), filters, any::<bool>(), 0u8..6).prop_map(
        |(
            key,
            range_end,
            (limit, mode, revision, min_mod, max_mod, min_create, max_create),
            keys_only,
            f,
        )| {
            // Filters stay off most of the time so plain ranges are common too.
            let on = |v: i64| if f == 0 { v } else { 0 };
            RangeRequest {
                key,
                range_end,
                limit,
                revision: if mode == 0 { revision } else { 0 },
                sort_order: (mode + revision).rem_euclid(3) as i32,
                sort_target: (mode * 3 + limit).rem_euclid(5) as i32,
                serializable: false,
                keys_only,
                count_only: f == 1,
                min_mod_revision: on(min_mod),
                max_mod_revision: on(max_mod),
                min_create_revision: on(min_create),
                max_create_revision: on(max_create),
            }
        },
    )
}

fn compare() -> impl Strategy<Value = Compare> {
    (key(), select(&["", "", "\0", "d"][..]), 0i32..4, 0i32..5, 0i64..8, select(VALUES)).prop_map(
        |(key, end, result, target, n, v)| Compare {
            result,
            target,
            key,
            range_end: bytes(end),
            target_union: Some(match target {
                0 => TargetUnion::Version(n),
                1 => TargetUnion::CreateRevision(n),
                2 => TargetUnion::ModRevision(n),
                3 => TargetUnion::Value(bytes(v)),
                _ => TargetUnion::Lease(n % 4),
            }),
        },
    )
}

fn op(r: Request) -> RequestOp {
    RequestOp { request: Some(r) }
}

fn nested_ops() -> impl Strategy<Value = Vec<RequestOp>> {
    let nested_op = prop_oneof![
        range().prop_map(|r| op(Request::RequestRange(r))),
        put_on(NESTED_KEYS).prop_map(|p| op(Request::RequestPut(p))),
    ];
    prop::collection::vec(nested_op, 0..3)
}

fn nested_txn() -> impl Strategy<Value = TxnRequest> {
    (prop::collection::vec(compare(), 0..2), nested_ops(), nested_ops())
        .prop_map(|(compare, success, failure)| TxnRequest { compare, success, failure })
}

/// One branch of a top-level txn: up to one nested txn among plain ops.
fn branch() -> impl Strategy<Value = Vec<RequestOp>> {
    let outer_op = prop_oneof![
        3 => range().prop_map(|r| op(Request::RequestRange(r))),
        3 => put().prop_map(|p| op(Request::RequestPut(p))),
        2 => delete().prop_map(|d| op(Request::RequestDeleteRange(d))),
    ];
    (prop::collection::vec(outer_op, 0..4), prop::option::weighted(0.3, nested_txn())).prop_map(
        |(mut ops, nested)| {
            if let Some(t) = nested {
                ops.insert(ops.len() / 2, op(Request::RequestTxn(t)));
            }
            ops
        },
    )
}

pub fn txn() -> impl Strategy<Value = TxnRequest> {
    (prop::collection::vec(compare(), 0..3), branch(), branch())
        .prop_map(|(compare, success, failure)| TxnRequest { compare, success, failure })
}

pub fn write() -> impl Strategy<Value = WriteRequest> {
    prop_oneof![
        6 => put().prop_map(WriteRequest::Put),
        2 => delete().prop_map(WriteRequest::DeleteRange),
        5 => txn().prop_map(WriteRequest::Txn),
        1 => (0i64..22, any::<bool>())
            .prop_map(|(revision, physical)| WriteRequest::Compact(CompactionRequest { revision, physical })),
        1 => (1i64..4).prop_map(|id| WriteRequest::LeaseGrant(LeaseGrantRequest { ttl: 60, id })),
        1 => (1i64..4).prop_map(|id| WriteRequest::LeaseRevoke(LeaseRevokeRequest { id })),
        1 => (1i32..3, 0i32..3).prop_map(|(action, alarm)| WriteRequest::Alarm(AlarmRequest {
            action,
            member_id: 7,
            alarm,
        })),
    ]
}

/// Requests split into batches of one to three.
pub fn batches() -> impl Strategy<Value = Vec<Vec<WriteRequest>>> {
    prop::collection::vec(prop::collection::vec(write(), 1..4), 1..20)
}
