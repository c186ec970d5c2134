//! The store against its reference model: structure-aware (`arbitrary`)
//! batches of writes — puts, deletes, txns with a nested txn, compactions,
//! leases, alarms — applied to the store on its in-memory engine and to the
//! plain model of `store/tests/it/model.rs`. Every write outcome (response,
//! events, error, revision), Ranges at every revision and the replayed
//! history must agree, as in `store/tests/it/model_check.rs`, which does the
//! same with proptest.
//!
//! The requests stay inside the shapes the model implements (the proptest
//! generators' shapes, `store/tests/it/strategies.rs`): keys from a small
//! set so requests collide, nested txns writing keys of their own, valid
//! sort options and compare targets. Outside those the model is not a
//! reference (it skips checks the store makes before it; `grpc_requests`
//! covers those inputs for panics).

use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use rtcd_proto::etcdserverpb::{
    AlarmRequest, CompactionRequest, Compare, DeleteRangeRequest, LeaseGrantRequest, LeaseRevokeRequest,
    PutRequest, RangeRequest, RequestOp, TxnRequest, compare::TargetUnion, request_op::Request,
};
use rtcd_store::engine::MemEngine;
use rtcd_store::{Store, StoreOptions, WriteRequest};

// The model is shared with the store's tests, not copied. It is test code:
// it asserts its own assumptions with `expect`, and not all of it is used here.
#[allow(dead_code, clippy::expect_used, clippy::unwrap_used)]
// Formatting that file is its own crate's business (`cargo fmt -p rtcd-fuzz` must not touch it).
#[rustfmt::skip]
#[path = "../../store/tests/it/model.rs"]
mod model;

// And so is the comparison of the store with it.
#[allow(dead_code)]
#[rustfmt::skip]
#[path = "../../store/tests/it/agreement.rs"]
mod agreement;

use agreement::{compare_everything, compare_writes};
use model::Model;

const KEYS: &[&str] = &["a", "b", "c", "d", "e", "f"];
const ENDS: &[&str] = &["", "", "", "\0", "b", "c", "e", "g"];
const COMPARE_ENDS: &[&str] = &["", "", "\0", "d"];
/// Keys only nested txns write, so nested and outer writes never collide
/// (the model's duplicate-key rule covers only that shape).
const NESTED_KEYS: &[&str] = &["n1", "n2"];
const VALUES: &[&str] = &["", "x", "y", "zz"];
const LEASES: &[i64] = &[0, 0, 0, 1, 2, 3];

/// Bounds that keep one input fast: the final check reads every revision.
const MAX_BATCHES: usize = 16;
const MAX_BATCH_LEN: usize = 3;
const MAX_READS: usize = 5;

fn pick<T: Copy>(options: &[T], i: u8) -> T {
    options[i as usize % options.len()]
}

fn bytes(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

#[derive(Debug, Arbitrary)]
struct Put {
    key: u8,
    value: u8,
    lease: u8,
    prev_kv: bool,
    /// Rarely ignore the value or the lease (then neither may be given).
    flags: u8,
}

impl Put {
    fn request(&self, keys: &[&str]) -> PutRequest {
        let ignore_value = self.flags.is_multiple_of(8);
        let ignore_lease = self.flags % 8 == 1;
        PutRequest {
            key: bytes(pick(keys, self.key)),
            value: if ignore_value { Bytes::new() } else { bytes(pick(VALUES, self.value)) },
            lease: if ignore_lease { 0 } else { pick(LEASES, self.lease) },
            prev_kv: self.prev_kv,
            ignore_value,
            ignore_lease,
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Delete {
    key: u8,
    end: u8,
    prev_kv: bool,
}

impl Delete {
    fn request(&self) -> DeleteRangeRequest {
        DeleteRangeRequest {
            key: bytes(pick(KEYS, self.key)),
            range_end: bytes(pick(ENDS, self.end)),
            prev_kv: self.prev_kv,
        }
    }
}

/// Every Range option, at revisions around the ones an input reaches.
#[derive(Debug, Arbitrary)]
struct Range {
    key: u8,
    end: u8,
    limit: u8,
    /// Whether `revision` is used, and the sort options.
    mode: u8,
    revision: u8,
    filters: [u8; 4],
    keys_only: bool,
    /// Filters and count_only stay off most of the time.
    f: u8,
}

impl Range {
    fn request(&self) -> RangeRequest {
        let limit = i64::from(self.limit % 3);
        let mode = i64::from(self.mode % 4);
        let revision = i64::from(self.revision % 40) - 1;
        let on = |v: u8| if self.f.is_multiple_of(6) { i64::from(v % 40) } else { 0 };
        RangeRequest {
            key: bytes(pick(KEYS, self.key)),
            range_end: bytes(pick(ENDS, self.end)),
            limit,
            revision: if mode == 0 { revision } else { 0 },
            sort_order: (mode + revision).rem_euclid(3) as i32,
            sort_target: (mode * 3 + limit).rem_euclid(5) as i32,
            serializable: false,
            keys_only: self.keys_only,
            count_only: self.f % 6 == 1,
            min_mod_revision: on(self.filters[0]),
            max_mod_revision: on(self.filters[1]),
            min_create_revision: on(self.filters[2]),
            max_create_revision: on(self.filters[3]),
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Cmp {
    key: u8,
    end: u8,
    result: u8,
    target: u8,
    n: u8,
    value: u8,
}

impl Cmp {
    fn compare(&self) -> Compare {
        let target = i32::from(self.target % 5);
        let n = i64::from(self.n % 12);
        Compare {
            result: i32::from(self.result % 4),
            target,
            key: bytes(pick(KEYS, self.key)),
            range_end: bytes(pick(COMPARE_ENDS, self.end)),
            target_union: Some(match target {
                0 => TargetUnion::Version(n),
                1 => TargetUnion::CreateRevision(n),
                2 => TargetUnion::ModRevision(n),
                3 => TargetUnion::Value(bytes(pick(VALUES, self.value))),
                _ => TargetUnion::Lease(n % 4),
            }),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Op {
    Range(Range),
    Put(Put),
    Delete(Delete),
}

#[derive(Debug, Arbitrary)]
enum NestedOp {
    Range(Range),
    Put(Put),
}

#[derive(Debug, Arbitrary)]
struct NestedTxn {
    compare: Vec<Cmp>,
    success: Vec<NestedOp>,
    failure: Vec<NestedOp>,
}

fn nested_ops(ops: &[NestedOp]) -> Vec<RequestOp> {
    ops.iter()
        .take(3)
        .map(|op| match op {
            NestedOp::Range(r) => op_of(Request::RequestRange(r.request())),
            NestedOp::Put(p) => op_of(Request::RequestPut(p.request(NESTED_KEYS))),
        })
        .collect()
}

impl NestedTxn {
    fn request(&self) -> TxnRequest {
        TxnRequest {
            compare: self.compare.iter().take(2).map(Cmp::compare).collect(),
            success: nested_ops(&self.success),
            failure: nested_ops(&self.failure),
        }
    }
}

/// One branch of a top-level txn: up to one nested txn among plain ops.
#[derive(Debug, Arbitrary)]
struct Branch {
    ops: Vec<Op>,
    nested: Option<NestedTxn>,
}

impl Branch {
    fn ops(&self) -> Vec<RequestOp> {
        let mut ops: Vec<RequestOp> = self
            .ops
            .iter()
            .take(4)
            .map(|op| match op {
                Op::Range(r) => op_of(Request::RequestRange(r.request())),
                Op::Put(p) => op_of(Request::RequestPut(p.request(KEYS))),
                Op::Delete(d) => op_of(Request::RequestDeleteRange(d.request())),
            })
            .collect();
        if let Some(t) = &self.nested {
            ops.insert(ops.len() / 2, op_of(Request::RequestTxn(t.request())));
        }
        ops
    }
}

#[derive(Debug, Arbitrary)]
struct Txn {
    compare: Vec<Cmp>,
    success: Branch,
    failure: Branch,
}

fn op_of(r: Request) -> RequestOp {
    RequestOp { request: Some(r) }
}

#[derive(Debug, Arbitrary)]
enum Write {
    Put(Put),
    Delete(Delete),
    Txn(Box<Txn>),
    Compact { revision: u8, physical: bool },
    LeaseGrant { id: u8 },
    LeaseRevoke { id: u8 },
    Alarm { deactivate: bool, alarm: u8 },
}

impl Write {
    fn request(&self) -> WriteRequest {
        match self {
            Write::Put(p) => WriteRequest::Put(p.request(KEYS)),
            Write::Delete(d) => WriteRequest::DeleteRange(d.request()),
            Write::Txn(t) => WriteRequest::Txn(TxnRequest {
                compare: t.compare.iter().take(3).map(Cmp::compare).collect(),
                success: t.success.ops(),
                failure: t.failure.ops(),
            }),
            // A little below zero and a little past the revisions reached.
            Write::Compact { revision, physical } => WriteRequest::Compact(CompactionRequest {
                revision: i64::from(revision % 44) - 2,
                physical: *physical,
            }),
            Write::LeaseGrant { id } => {
                WriteRequest::LeaseGrant(LeaseGrantRequest { ttl: 60, id: i64::from(id % 3) + 1 })
            }
            Write::LeaseRevoke { id } => {
                WriteRequest::LeaseRevoke(LeaseRevokeRequest { id: i64::from(id % 3) + 1 })
            }
            Write::Alarm { deactivate, alarm } => WriteRequest::Alarm(AlarmRequest {
                action: if *deactivate { 2 } else { 1 },
                member_id: 7,
                alarm: i32::from(alarm % 3),
            }),
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Input {
    batches: Vec<Vec<Write>>,
    reads: Vec<Range>,
}

pub fn run(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let batches: Vec<Vec<WriteRequest>> = input
        .batches
        .iter()
        .filter(|b| !b.is_empty())
        .take(MAX_BATCHES)
        .map(|b| b.iter().take(MAX_BATCH_LEN).map(Write::request).collect())
        .collect();
    let mut reads: Vec<RangeRequest> = input.reads.iter().take(MAX_READS).map(Range::request).collect();
    // Always read everything, so a difference in any key shows.
    reads.push(RangeRequest { key: bytes("\0"), range_end: bytes("\0"), ..Default::default() });
    if batches.is_empty() {
        return;
    }
    let Ok(store) = Store::with_engine(Box::new(MemEngine::new()), StoreOptions::default()) else {
        panic!("an in-memory store opens")
    };
    let mut model = Model::new();
    compare_writes(&store, &mut model, &batches, &reads);
    compare_everything(&store, &model, &reads);
}
