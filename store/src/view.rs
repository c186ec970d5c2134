//! Reads at a point in time: single keys, etcd's Range semantics and Txn
//! compares. Used by plain reads and, inside a write, to see the writes made
//! so far (kept in `pending` until the batch reaches disk).

use std::collections::HashMap;

use prost::Message;
use rtcd_proto::etcdserverpb::{
    Compare, RangeRequest, RangeResponse, ResponseHeader, compare, range_request,
};
use rtcd_proto::mvccpb::KeyValue;

use crate::engine::{Engine, Table};
use crate::error::StoreError;
use crate::key_index::{KeyIndex, KeyRange, KeyRev};
use crate::revision::Revision;

pub(crate) struct View<'a> {
    pub engine: &'a dyn Engine,
    pub index: &'a KeyIndex,
    /// Records written by the batch being applied, not yet on disk.
    pub pending: Option<&'a HashMap<Revision, KeyValue>>,
    /// The revision reads default to and report in their header.
    pub current: i64,
    /// Reads below this revision fail with `Compacted` (-1: never compacted).
    pub compacted: i64,
}

pub(crate) fn header(revision: i64) -> Option<ResponseHeader> {
    Some(ResponseHeader { revision, ..Default::default() })
}

impl View<'_> {
    /// The record written at `rev`.
    pub fn load(&self, rev: Revision) -> Result<KeyValue, StoreError> {
        if let Some(kv) = self.pending.and_then(|p| p.get(&rev)) {
            return Ok(kv.clone());
        }
        let raw = self
            .engine
            .get(Table::Kv, &rev.encode(false))?
            .ok_or_else(|| StoreError::Corrupt(format!("index names missing record {rev:?}")))?;
        KeyValue::decode(raw.as_slice()).map_err(|e| StoreError::Corrupt(format!("record {rev:?}: {e}")))
    }

    /// The value of `key` at revision `at`, if it existed then.
    pub fn get(&self, key: &[u8], at: i64) -> Result<Option<KeyValue>, StoreError> {
        self.index.get(key, at).map(|r| self.load(r.rev)).transpose()
    }

    /// The revision a read of `requested` (<= 0: the newest) is served at.
    pub fn read_revision(&self, requested: i64) -> Result<i64, StoreError> {
        if requested > self.current {
            return Err(StoreError::FutureRev);
        }
        let at = if requested <= 0 { self.current } else { requested };
        if at < self.compacted {
            return Err(StoreError::Compacted);
        }
        Ok(at)
    }

    /// etcd's Range: count everything in range, filter and sort before the
    /// limit when asked to, otherwise stop after `limit + 1` keys to learn
    /// `more`. The header carries the current revision even for reads of an
    /// older one, as etcd's does.
    pub fn range(&self, r: &RangeRequest) -> Result<RangeResponse, StoreError> {
        use range_request::{SortOrder, SortTarget};
        let at = self.read_revision(r.revision)?;
        let range = KeyRange::new(&r.key, &r.range_end);
        let order = SortOrder::try_from(r.sort_order).map_err(|_| StoreError::InvalidSortOption)?;
        let target = SortTarget::try_from(r.sort_target).map_err(|_| StoreError::InvalidSortOption)?;
        let filtered = order != SortOrder::None
            || r.min_mod_revision != 0
            || r.max_mod_revision != 0
            || r.min_create_revision != 0
            || r.max_create_revision != 0;
        let fetch = match r.limit {
            l if l > 0 && !filtered => Some(l as usize + 1),
            _ => None,
        };

        let mut count = 0i64;
        let mut hits: Vec<KeyRev> = Vec::new();
        for (_, change) in self.index.range(&range, at) {
            count += 1;
            if !r.count_only && fetch.is_none_or(|f| hits.len() < f) {
                hits.push(change);
            }
        }
        let mut kvs = hits.into_iter().map(|c| self.load(c.rev)).collect::<Result<Vec<_>, _>>()?;

        kvs.retain(|kv| {
            (r.max_mod_revision == 0 || kv.mod_revision <= r.max_mod_revision)
                && (r.min_mod_revision == 0 || kv.mod_revision >= r.min_mod_revision)
                && (r.max_create_revision == 0 || kv.create_revision <= r.max_create_revision)
                && (r.min_create_revision == 0 || kv.create_revision >= r.min_create_revision)
        });
        // A target other than KEY with no order sorts ascending (etcd's rule).
        let order = match (order, target) {
            (SortOrder::None, t) if t != SortTarget::Key => SortOrder::Ascend,
            (o, _) => o,
        };
        if order != SortOrder::None {
            sort_kvs(&mut kvs, target, order == SortOrder::Descend);
        }
        let mut more = false;
        if r.limit > 0 && kvs.len() > r.limit as usize {
            kvs.truncate(r.limit as usize);
            more = true;
        }
        if r.keys_only {
            kvs.iter_mut().for_each(|kv| kv.value = Default::default());
        }
        Ok(RangeResponse { header: header(self.current), kvs, more, count })
    }

    /// One Txn compare, as etcd evaluates it: every key in the range must
    /// satisfy it; a missing key compares as all-zero, except that a VALUE
    /// compare on a missing key is always false.
    pub fn compare(&self, c: &Compare) -> Result<bool, StoreError> {
        let range = KeyRange::new(&c.key, &c.range_end);
        let hits: Vec<KeyRev> = self.index.range(&range, self.current).map(|(_, r)| r).collect();
        if hits.is_empty() {
            let target = compare::CompareTarget::try_from(c.target);
            if target == Ok(compare::CompareTarget::Value) {
                return Ok(false);
            }
            return Ok(compare_kv(c, &KeyValue::default()));
        }
        for hit in hits {
            if !compare_kv(c, &self.load(hit.rev)?) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

fn sort_kvs(kvs: &mut [KeyValue], target: range_request::SortTarget, descend: bool) {
    use range_request::SortTarget;
    use std::cmp::Ordering;
    let by = |a: &KeyValue, b: &KeyValue| -> Ordering {
        match target {
            SortTarget::Key => a.key.cmp(&b.key),
            SortTarget::Version => a.version.cmp(&b.version),
            SortTarget::Create => a.create_revision.cmp(&b.create_revision),
            SortTarget::Mod => a.mod_revision.cmp(&b.mod_revision),
            SortTarget::Value => a.value.cmp(&b.value),
        }
    };
    // Stable, so ties stay in key order.
    if descend {
        kvs.sort_by(|a, b| by(b, a));
    } else {
        kvs.sort_by(by);
    }
}

/// etcd's compareKV: a target union of another kind than `target` compares
/// against zero (or the empty value); an unknown result passes.
fn compare_kv(c: &Compare, kv: &KeyValue) -> bool {
    use compare::{CompareResult, CompareTarget, TargetUnion};
    let int = |pick: fn(&TargetUnion) -> Option<i64>| c.target_union.as_ref().and_then(pick).unwrap_or(0);
    let ordering = match CompareTarget::try_from(c.target) {
        Ok(CompareTarget::Value) => {
            let want = match &c.target_union {
                Some(TargetUnion::Value(v)) => v.as_ref(),
                _ => &[],
            };
            kv.value.as_ref().cmp(want)
        }
        Ok(CompareTarget::Version) => {
            kv.version.cmp(&int(|t| if let TargetUnion::Version(v) = t { Some(*v) } else { None }))
        }
        Ok(CompareTarget::Create) => kv
            .create_revision
            .cmp(&int(|t| if let TargetUnion::CreateRevision(v) = t { Some(*v) } else { None })),
        Ok(CompareTarget::Mod) => {
            kv.mod_revision.cmp(&int(|t| if let TargetUnion::ModRevision(v) = t { Some(*v) } else { None }))
        }
        Ok(CompareTarget::Lease) => {
            kv.lease.cmp(&int(|t| if let TargetUnion::Lease(v) = t { Some(*v) } else { None }))
        }
        Err(_) => std::cmp::Ordering::Equal,
    };
    match CompareResult::try_from(c.result) {
        Ok(CompareResult::Equal) => ordering.is_eq(),
        Ok(CompareResult::NotEqual) => ordering.is_ne(),
        Ok(CompareResult::Greater) => ordering.is_gt(),
        Ok(CompareResult::Less) => ordering.is_lt(),
        Err(_) => true,
    }
}
