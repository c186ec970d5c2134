//! A deliberately plain reference model of etcd's MVCC semantics: the whole
//! key space is copied at every revision, so a read at revision `r` is a
//! lookup in `states[r]`. Slow and obviously right; the store must agree
//! with it on every response.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{
    AlarmMember, AlarmResponse, AlarmType, CompactionResponse, Compare, DeleteRangeRequest,
    DeleteRangeResponse, LeaseGrantResponse, LeaseRevokeResponse, PutRequest, PutResponse, RangeRequest,
    RangeResponse, RequestOp, ResponseHeader, ResponseOp, TxnRequest, TxnResponse,
    alarm_request::AlarmAction, compare, range_request, request_op, response_op,
};
use rtcd_proto::mvccpb::{Event, KeyValue, event::EventType};
use rtcd_store::{StoreError, WriteRequest, WriteResponse};

type State = BTreeMap<Bytes, KeyValue>;

#[derive(Debug, Clone)]
pub struct Model {
    /// `states[r]` is the key space at revision `r`; `states[0]` is unused.
    states: Vec<State>,
    /// Every event with its revision, as the write produced it (prev_kv = the
    /// value just before that change).
    pub events: Vec<(i64, Event)>,
    pub compacted: i64,
    leases: BTreeSet<i64>,
    /// Active alarms as (member, type).
    alarms: BTreeSet<(u64, i32)>,
}

fn hdr(revision: i64) -> Option<ResponseHeader> {
    Some(ResponseHeader { revision, ..Default::default() })
}

fn in_range(k: &[u8], key: &[u8], end: &[u8]) -> bool {
    match end {
        [] => k == key,
        [0] => k >= key,
        _ => k >= key && k < end,
    }
}

/// etcd's literal interval check for duplicate detection: `[key, end)`, a
/// point when `end` is empty.
fn in_delete_interval(k: &[u8], d: &DeleteRangeRequest) -> bool {
    if d.range_end.is_empty() { k == d.key.as_ref() } else { k >= d.key.as_ref() && k < d.range_end.as_ref() }
}

/// A txn being executed: the working key space and its changes.
struct Work {
    state: State,
    /// The key space before this request: watchers' `prev_kv` comes from it
    /// (etcd reads the previous revision), not from the txn's own writes.
    before: State,
    rev: i64,
    changed: bool,
    events: Vec<Event>,
}

impl Work {
    fn now(&self) -> i64 {
        if self.changed { self.rev + 1 } else { self.rev }
    }
}

impl Model {
    pub fn new() -> Self {
        Model {
            states: vec![State::new(), State::new()],
            events: vec![],
            compacted: -1,
            leases: BTreeSet::new(),
            alarms: BTreeSet::new(),
        }
    }

    pub fn lease_ids(&self) -> Vec<i64> {
        self.leases.iter().copied().collect()
    }

    pub fn rev(&self) -> i64 {
        self.states.len() as i64 - 1
    }

    fn current(&self) -> &State {
        &self.states[self.states.len() - 1]
    }

    pub fn range(&self, r: &RangeRequest) -> Result<RangeResponse, StoreError> {
        if r.key.is_empty() {
            return Err(StoreError::EmptyKey);
        }
        let at = self.read_rev(r.revision, self.rev())?;
        Ok(range_on(&self.states[at as usize], r, self.rev()))
    }

    fn read_rev(&self, requested: i64, current: i64) -> Result<i64, StoreError> {
        if requested > current {
            return Err(StoreError::FutureRev);
        }
        let at = if requested <= 0 { current } else { requested };
        if at < self.compacted {
            return Err(StoreError::Compacted);
        }
        Ok(at)
    }

    fn live_at_compaction(&self, e: &Event) -> bool {
        let Some(kv) = e.kv.as_ref() else { return false };
        e.r#type == EventType::Put as i32
            && self.states[self.compacted as usize].get(&kv.key).is_some_and(|now| now == kv)
    }

    /// History from `from`: every event at a revision >= from, with prev_kv
    /// = the key at the revision before (if not compacted), except for
    /// creations, which never carry one (etcd does not look it up).
    pub fn history(&self, from: i64) -> Result<Vec<Event>, StoreError> {
        let from = from.max(1);
        if from < self.compacted {
            return Err(StoreError::Compacted);
        }
        Ok(self
            .events
            .iter()
            .filter(|(rev, _)| *rev >= from)
            // At the compaction point only what is still live survives.
            .filter(|(rev, e)| *rev > self.compacted || self.live_at_compaction(e))
            .map(|(rev, e)| {
                let before = rev - 1;
                let creates = e.r#type == EventType::Put as i32
                    && e.kv.as_ref().is_some_and(|kv| kv.create_revision == kv.mod_revision);
                let prev_kv = if before >= self.compacted && !creates {
                    e.kv.as_ref().and_then(|kv| self.states[before as usize].get(&kv.key).cloned())
                } else {
                    None
                };
                Event { prev_kv, ..e.clone() }
            })
            .collect())
    }

    pub fn apply(&mut self, req: &WriteRequest) -> Result<(WriteResponse, Vec<Event>), StoreError> {
        let mut work = Work {
            state: self.current().clone(),
            before: self.current().clone(),
            rev: self.rev(),
            changed: false,
            events: vec![],
        };
        // NOSPACE caps puts, txns with a top-level put, and lease grants.
        let no_space = self.alarms.iter().any(|(_, a)| *a == AlarmType::Nospace as i32);
        let is_put = |op: &RequestOp| matches!(op.request, Some(request_op::Request::RequestPut(_)));
        let grows = match req {
            WriteRequest::Put(_) | WriteRequest::LeaseGrant(_) => true,
            WriteRequest::Txn(t) => t.success.iter().chain(&t.failure).any(is_put),
            _ => false,
        };
        if no_space && grows {
            return Err(StoreError::NoSpace);
        }
        let response = match req {
            WriteRequest::Alarm(a) => {
                let key = (a.member_id, a.alarm);
                let listed = match AlarmAction::try_from(a.action) {
                    Ok(AlarmAction::Activate) if a.alarm != AlarmType::None as i32 => {
                        self.alarms.insert(key);
                        true
                    }
                    Ok(AlarmAction::Deactivate) => self.alarms.remove(&key),
                    _ => false,
                };
                let alarms = if listed {
                    vec![AlarmMember { member_id: a.member_id, alarm: a.alarm }]
                } else {
                    vec![]
                };
                WriteResponse::Alarm(AlarmResponse { header: None, alarms })
            }
            WriteRequest::Put(p) => {
                if p.key.is_empty() {
                    return Err(StoreError::EmptyKey);
                }
                if p.lease != 0 && !self.leases.contains(&p.lease) {
                    return Err(StoreError::LeaseNotFound);
                }
                if (p.ignore_value || p.ignore_lease) && !work.state.contains_key(&p.key) {
                    return Err(StoreError::KeyNotFound);
                }
                WriteResponse::Put(put(&mut work, p))
            }
            WriteRequest::DeleteRange(d) => WriteResponse::DeleteRange(delete(&mut work, d)),
            WriteRequest::Txn(t) => WriteResponse::Txn(self.txn(&mut work, t)?),
            WriteRequest::Compact(c) => {
                if c.revision <= self.compacted {
                    return Err(StoreError::Compacted);
                }
                if c.revision > self.rev() {
                    return Err(StoreError::FutureRev);
                }
                self.compacted = c.revision;
                WriteResponse::Compact(CompactionResponse { header: hdr(self.rev()) })
            }
            WriteRequest::LeaseGrant(g) => {
                if !self.leases.insert(g.id) {
                    return Err(StoreError::LeaseExists);
                }
                WriteResponse::LeaseGrant(LeaseGrantResponse {
                    header: hdr(self.rev()),
                    id: g.id,
                    ttl: g.ttl,
                    error: String::new(),
                })
            }
            WriteRequest::LeaseRevoke(r) => {
                if !self.leases.remove(&r.id) {
                    return Err(StoreError::LeaseNotFound);
                }
                let attached: Vec<Bytes> =
                    work.state.values().filter(|kv| kv.lease == r.id).map(|kv| kv.key.clone()).collect();
                for key in attached {
                    delete_one(&mut work, &key);
                }
                WriteResponse::LeaseRevoke(LeaseRevokeResponse { header: hdr(work.now()) })
            }
            WriteRequest::LeaseCheckpoint(_) | WriteRequest::Auth(_) => unreachable!("not generated"),
        };
        if work.changed {
            let rev = work.rev + 1;
            self.events.extend(work.events.iter().map(|e| (rev, e.clone())));
            self.states.push(work.state);
        }
        Ok((response, work.events))
    }

    fn txn(&self, work: &mut Work, t: &TxnRequest) -> Result<TxnResponse, StoreError> {
        check_duplicates(&t.success)?;
        check_duplicates(&t.failure)?;
        let path = self.path(t);
        self.check_path(t, &path)?;
        Ok(self.exec(work, t, &path))
    }

    /// Which branch every txn on the taken path takes, all decided on the
    /// state before the txn.
    fn path(&self, t: &TxnRequest) -> Vec<bool> {
        let ok = t.compare.iter().all(|c| compare_on(self.current(), c));
        let mut out = vec![ok];
        for op in if ok { &t.success } else { &t.failure } {
            if let Some(request_op::Request::RequestTxn(inner)) = &op.request {
                out.extend(self.path(inner));
            }
        }
        out
    }

    fn check_path(&self, t: &TxnRequest, path: &[bool]) -> Result<(), StoreError> {
        let mut path = path.iter();
        self.check_ops(t, &mut path)
    }

    fn check_ops<'a>(
        &self,
        t: &TxnRequest,
        path: &mut impl Iterator<Item = &'a bool>,
    ) -> Result<(), StoreError> {
        let ok = *path.next().unwrap_or(&true);
        for op in if ok { &t.success } else { &t.failure } {
            match &op.request {
                Some(request_op::Request::RequestPut(p)) => {
                    if (p.ignore_value || p.ignore_lease) && !self.current().contains_key(&p.key) {
                        return Err(StoreError::KeyNotFound);
                    }
                    if p.lease != 0 && !self.leases.contains(&p.lease) {
                        return Err(StoreError::LeaseNotFound);
                    }
                }
                Some(request_op::Request::RequestRange(r)) if r.revision != 0 => {
                    if r.revision > self.rev() {
                        return Err(StoreError::FutureRev);
                    }
                    if r.revision < self.compacted {
                        return Err(StoreError::Compacted);
                    }
                }
                Some(request_op::Request::RequestTxn(inner)) => self.check_ops(inner, path)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn exec(&self, work: &mut Work, t: &TxnRequest, path: &[bool]) -> TxnResponse {
        let mut path = path.iter();
        let mut resp = self.exec_ops(work, t, &mut path);
        // Only the outermost txn response carries the revision (etcd).
        resp.header = hdr(work.now());
        resp
    }

    fn exec_ops<'a>(
        &self,
        work: &mut Work,
        t: &TxnRequest,
        path: &mut impl Iterator<Item = &'a bool>,
    ) -> TxnResponse {
        let ok = *path.next().unwrap_or(&true);
        let mut responses = vec![];
        for op in if ok { &t.success } else { &t.failure } {
            let resp = match &op.request {
                Some(request_op::Request::RequestRange(r)) => {
                    let state = if r.revision <= 0 { &work.state } else { &self.states[r.revision as usize] };
                    response_op::Response::ResponseRange(range_on(state, r, work.now()))
                }
                Some(request_op::Request::RequestPut(p)) => response_op::Response::ResponsePut(put(work, p)),
                Some(request_op::Request::RequestDeleteRange(d)) => {
                    response_op::Response::ResponseDeleteRange(delete(work, d))
                }
                Some(request_op::Request::RequestTxn(inner)) => {
                    response_op::Response::ResponseTxn(self.exec_ops(work, inner, path))
                }
                None => continue,
            };
            responses.push(ResponseOp { response: Some(resp) });
        }
        TxnResponse { header: hdr(0), succeeded: ok, responses }
    }
}

fn put(work: &mut Work, p: &PutRequest) -> PutResponse {
    let prev = work.state.get(&p.key).cloned();
    let rev = work.rev + 1;
    let kv = KeyValue {
        key: p.key.clone(),
        create_revision: prev.as_ref().map_or(rev, |kv| kv.create_revision),
        mod_revision: rev,
        version: prev.as_ref().map_or(1, |kv| kv.version + 1),
        value: if p.ignore_value {
            prev.as_ref().map(|kv| kv.value.clone()).unwrap_or_default()
        } else {
            p.value.clone()
        },
        lease: if p.ignore_lease { prev.as_ref().map_or(0, |kv| kv.lease) } else { p.lease },
    };
    work.state.insert(p.key.clone(), kv.clone());
    work.changed = true;
    let creates = kv.create_revision == kv.mod_revision;
    let event_prev = if creates { None } else { work.before.get(&p.key).cloned() };
    work.events.push(Event { r#type: EventType::Put as i32, kv: Some(kv), prev_kv: event_prev });
    PutResponse { header: hdr(rev), prev_kv: if p.prev_kv { prev } else { None } }
}

fn delete(work: &mut Work, d: &DeleteRangeRequest) -> DeleteRangeResponse {
    let victims: Vec<Bytes> =
        work.state.keys().filter(|k| in_range(k, &d.key, &d.range_end)).cloned().collect();
    let mut prev_kvs = vec![];
    for key in &victims {
        prev_kvs.push(delete_one(work, key));
    }
    DeleteRangeResponse {
        header: hdr(work.now()),
        deleted: victims.len() as i64,
        prev_kvs: if d.prev_kv { prev_kvs } else { vec![] },
    }
}

fn delete_one(work: &mut Work, key: &Bytes) -> KeyValue {
    let prev = work.state.remove(key).expect("victim exists");
    work.changed = true;
    let tombstone = KeyValue { key: key.clone(), mod_revision: work.rev + 1, ..Default::default() };
    work.events.push(Event {
        r#type: EventType::Delete as i32,
        kv: Some(tombstone),
        prev_kv: work.before.get(key).cloned(),
    });
    prev
}

/// Range over one state, straight from etcd's documented rules.
pub fn range_on(state: &State, r: &RangeRequest, header_rev: i64) -> RangeResponse {
    use range_request::{SortOrder, SortTarget};
    let all: Vec<KeyValue> =
        state.values().filter(|kv| in_range(&kv.key, &r.key, &r.range_end)).cloned().collect();
    let count = all.len() as i64;
    let filtered = r.sort_order != 0
        || r.min_mod_revision != 0
        || r.max_mod_revision != 0
        || r.min_create_revision != 0
        || r.max_create_revision != 0;
    let mut kvs: Vec<KeyValue> = if r.count_only {
        vec![]
    } else if r.limit > 0 && !filtered {
        all.into_iter().take(r.limit as usize + 1).collect()
    } else {
        all
    };
    kvs.retain(|kv| {
        !(r.max_mod_revision != 0 && kv.mod_revision > r.max_mod_revision
            || r.min_mod_revision != 0 && kv.mod_revision < r.min_mod_revision
            || r.max_create_revision != 0 && kv.create_revision > r.max_create_revision
            || r.min_create_revision != 0 && kv.create_revision < r.min_create_revision)
    });
    let target = SortTarget::try_from(r.sort_target).expect("valid target");
    let mut order = SortOrder::try_from(r.sort_order).expect("valid order");
    if order == SortOrder::None && target != SortTarget::Key {
        order = SortOrder::Ascend;
    }
    if order != SortOrder::None {
        let key = |kv: &KeyValue| -> (i64, Bytes) {
            match target {
                SortTarget::Key => (0, kv.key.clone()),
                SortTarget::Version => (kv.version, Bytes::new()),
                SortTarget::Create => (kv.create_revision, Bytes::new()),
                SortTarget::Mod => (kv.mod_revision, Bytes::new()),
                SortTarget::Value => (0, kv.value.clone()),
            }
        };
        // Stable either way: ties keep key order.
        if order == SortOrder::Descend {
            kvs.sort_by_key(|kv| std::cmp::Reverse(key(kv)));
        } else {
            kvs.sort_by_key(key);
        }
    }
    let more = r.limit > 0 && kvs.len() > r.limit as usize;
    if more {
        kvs.truncate(r.limit as usize);
    }
    if r.keys_only {
        for kv in &mut kvs {
            kv.value = Bytes::new();
        }
    }
    RangeResponse { header: hdr(header_rev), kvs, more, count }
}

fn compare_on(state: &State, c: &Compare) -> bool {
    use compare::{CompareResult, CompareTarget, TargetUnion};
    let hits: Vec<&KeyValue> = state.values().filter(|kv| in_range(&kv.key, &c.key, &c.range_end)).collect();
    let target = CompareTarget::try_from(c.target).expect("valid target");
    let zero = KeyValue::default();
    let hits = if hits.is_empty() {
        if target == CompareTarget::Value {
            return false;
        }
        vec![&zero]
    } else {
        hits
    };
    hits.into_iter().all(|kv| {
        let ord = match (target, &c.target_union) {
            (CompareTarget::Value, Some(TargetUnion::Value(v))) => kv.value.cmp(v),
            (CompareTarget::Value, _) => kv.value.as_ref().cmp(&b""[..]),
            (CompareTarget::Version, Some(TargetUnion::Version(v))) => kv.version.cmp(v),
            (CompareTarget::Create, Some(TargetUnion::CreateRevision(v))) => kv.create_revision.cmp(v),
            (CompareTarget::Mod, Some(TargetUnion::ModRevision(v))) => kv.mod_revision.cmp(v),
            (CompareTarget::Lease, Some(TargetUnion::Lease(v))) => kv.lease.cmp(v),
            (CompareTarget::Version, _) => kv.version.cmp(&0),
            (CompareTarget::Create, _) => kv.create_revision.cmp(&0),
            (CompareTarget::Mod, _) => kv.mod_revision.cmp(&0),
            (CompareTarget::Lease, _) => kv.lease.cmp(&0),
        };
        match CompareResult::try_from(c.result).expect("valid result") {
            CompareResult::Equal => ord.is_eq(),
            CompareResult::NotEqual => ord.is_ne(),
            CompareResult::Greater => ord.is_gt(),
            CompareResult::Less => ord.is_lt(),
        }
    })
}

/// The duplicate-key rule for the shapes the generator makes: nested txns
/// only put keys of their own, so one level's puts and deletes decide.
fn check_duplicates(ops: &[RequestOp]) -> Result<(), StoreError> {
    let mut puts: Vec<&Bytes> = vec![];
    let dels: Vec<&DeleteRangeRequest> = ops
        .iter()
        .filter_map(|op| match &op.request {
            Some(request_op::Request::RequestDeleteRange(d)) => Some(d),
            _ => None,
        })
        .collect();
    for op in ops {
        match &op.request {
            Some(request_op::Request::RequestPut(p)) => {
                if puts.contains(&&p.key) || dels.iter().any(|d| in_delete_interval(&p.key, d)) {
                    return Err(StoreError::DuplicateKey);
                }
                puts.push(&p.key);
            }
            Some(request_op::Request::RequestTxn(t)) => {
                check_duplicates(&t.success)?;
                check_duplicates(&t.failure)?;
            }
            _ => {}
        }
    }
    Ok(())
}
