//! Checks that need no data: the ones etcd makes before a request is
//! proposed. A request failing them is rejected with nothing changed.

use rtcd_proto::etcdserverpb::{
    DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest, range_request, request_op::Request,
};

use crate::error::StoreError;
use crate::key_index::KeyRange;

pub fn check_range(r: &RangeRequest) -> Result<(), StoreError> {
    if r.key.is_empty() {
        return Err(StoreError::EmptyKey);
    }
    let order_ok = range_request::SortOrder::try_from(r.sort_order).is_ok();
    let target_ok = range_request::SortTarget::try_from(r.sort_target).is_ok();
    if !order_ok || !target_ok {
        return Err(StoreError::InvalidSortOption);
    }
    Ok(())
}

pub fn check_put(r: &PutRequest) -> Result<(), StoreError> {
    if r.key.is_empty() {
        return Err(StoreError::EmptyKey);
    }
    if r.ignore_value && !r.value.is_empty() {
        return Err(StoreError::ValueProvided);
    }
    if r.ignore_lease && r.lease != 0 {
        return Err(StoreError::LeaseProvided);
    }
    Ok(())
}

pub fn check_delete(r: &DeleteRangeRequest) -> Result<(), StoreError> {
    if r.key.is_empty() {
        return Err(StoreError::EmptyKey);
    }
    Ok(())
}

/// The whole check etcd makes of a Txn: op counts and keys, then no key
/// written twice on any path.
pub fn check_txn(r: &TxnRequest, max_txn_ops: usize) -> Result<(), StoreError> {
    check_txn_ops(r, max_txn_ops as i64)?;
    write_sets(&r.success)?;
    write_sets(&r.failure)?;
    Ok(())
}

/// Each of compare, success and failure may hold at most `budget` entries; a
/// nested txn gets what its parent left over, as etcd counts it.
fn check_txn_ops(r: &TxnRequest, budget: i64) -> Result<(), StoreError> {
    let used = r.compare.len().max(r.success.len()).max(r.failure.len()) as i64;
    if used > budget {
        return Err(StoreError::TooManyOps);
    }
    if r.compare.iter().any(|c| c.key.is_empty()) {
        return Err(StoreError::EmptyKey);
    }
    for op in r.success.iter().chain(&r.failure) {
        check_op(op, budget - used)?;
    }
    Ok(())
}

fn check_op(op: &RequestOp, budget: i64) -> Result<(), StoreError> {
    match &op.request {
        Some(Request::RequestRange(r)) => check_range(r),
        Some(Request::RequestPut(r)) => check_put(r),
        Some(Request::RequestDeleteRange(r)) => check_delete(r),
        Some(Request::RequestTxn(r)) => check_txn_ops(r, budget),
        // etcd answers an empty op this way.
        None => Err(StoreError::KeyNotFound),
    }
}

/// Keys put and ranges deleted by one list of ops (one branch of a txn).
#[derive(Default)]
struct WriteSet {
    puts: Vec<bytes::Bytes>,
    deletes: Vec<KeyRange>,
}

impl WriteSet {
    fn deletes_hit(&self, key: &[u8]) -> bool {
        self.deletes.iter().any(|d| d.contains(key))
    }

    fn has_put(&self, key: &[u8]) -> bool {
        self.puts.iter().any(|p| p.as_ref() == key)
    }
}

/// Rejects a branch that writes one key twice: two puts, or a put inside a
/// deleted range. Deleted ranges may overlap. The two branches of a nested
/// txn exclude each other, so they may put the same key. The order of the
/// checks follows etcd's, including which overlaps it lets through.
fn write_sets(ops: &[RequestOp]) -> Result<WriteSet, StoreError> {
    let mut set = WriteSet::default();
    for op in ops {
        if let Some(Request::RequestDeleteRange(d)) = &op.request {
            set.deletes.push(delete_interval(d));
        }
    }
    for op in ops {
        let Some(Request::RequestTxn(t)) = &op.request else { continue };
        let then = write_sets(&t.success)?;
        let otherwise = write_sets(&t.failure)?;
        for k in &then.puts {
            if set.has_put(k) || set.deletes_hit(k) {
                return Err(StoreError::DuplicateKey);
            }
            set.puts.push(k.clone());
        }
        for k in &otherwise.puts {
            if (set.has_put(k) && !then.has_put(k)) || set.deletes_hit(k) {
                return Err(StoreError::DuplicateKey);
            }
            set.puts.push(k.clone());
        }
        set.deletes.extend(then.deletes);
        set.deletes.extend(otherwise.deletes);
    }
    for op in ops {
        let Some(Request::RequestPut(p)) = &op.request else { continue };
        if set.has_put(&p.key) || set.deletes_hit(&p.key) {
            return Err(StoreError::DuplicateKey);
        }
        set.puts.push(p.key.clone());
    }
    Ok(set)
}

/// The interval etcd checks a delete against: the literal `[key, range_end)`,
/// so a `"\0"` end (meaning "to the end of the keyspace") covers nothing here.
fn delete_interval(d: &DeleteRangeRequest) -> KeyRange {
    use crate::key_index::RangeEnd;
    let end = if d.range_end.is_empty() { RangeEnd::Single } else { RangeEnd::Before(d.range_end.clone()) };
    KeyRange { start: d.key.clone(), end }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn put(k: &str) -> RequestOp {
        RequestOp {
            request: Some(Request::RequestPut(PutRequest {
                key: Bytes::copy_from_slice(k.as_bytes()),
                ..Default::default()
            })),
        }
    }

    fn del(k: &str, end: &str) -> RequestOp {
        RequestOp {
            request: Some(Request::RequestDeleteRange(DeleteRangeRequest {
                key: Bytes::copy_from_slice(k.as_bytes()),
                range_end: Bytes::copy_from_slice(end.as_bytes()),
                ..Default::default()
            })),
        }
    }

    fn txn(success: Vec<RequestOp>, failure: Vec<RequestOp>) -> TxnRequest {
        TxnRequest { compare: vec![], success, failure }
    }

    fn nested(t: TxnRequest) -> RequestOp {
        RequestOp { request: Some(Request::RequestTxn(t)) }
    }

    #[test]
    fn duplicate_puts_and_puts_inside_deletes_are_rejected() {
        let dup = |t: TxnRequest| check_txn(&t, 128) == Err(StoreError::DuplicateKey);
        assert!(dup(txn(vec![put("a"), put("a")], vec![])));
        assert!(dup(txn(vec![del("a", "c"), put("b")], vec![])));
        assert!(dup(txn(vec![put("a"), nested(txn(vec![put("a")], vec![]))], vec![])));
        // Branches of one nested txn exclude each other.
        assert!(!dup(txn(vec![nested(txn(vec![put("a")], vec![put("a")]))], vec![])));
        // Overlapping deletes and separate branches are fine.
        assert!(!dup(txn(vec![del("a", "c"), del("b", "d")], vec![put("b")])));
        assert!(!dup(txn(vec![del("a", "\0"), put("b")], vec![])));
    }

    #[test]
    fn op_counts_follow_etcd_budget() {
        let many = |n| (0..n).map(|i| put(&format!("k{i}"))).collect::<Vec<_>>();
        assert_eq!(check_txn(&txn(many(3), vec![]), 3), Ok(()));
        assert_eq!(check_txn(&txn(many(4), vec![]), 3), Err(StoreError::TooManyOps));
        let inner = nested(txn(many(2), vec![]));
        // Outer uses 2 of 3; the nested txn may use only the remaining 1.
        assert_eq!(check_txn(&txn(vec![put("x"), inner], vec![]), 3), Err(StoreError::TooManyOps));
        assert_eq!(
            check_txn(&txn(vec![RequestOp { request: None }], vec![]), 3),
            Err(StoreError::KeyNotFound)
        );
    }
}
