//! The write path: one batch of requests becomes one engine write.
//!
//! Every request that changes keys takes the next main revision; each change
//! inside it the next sub revision. A request that fails changes nothing and
//! takes no revision. Changes go to the key index and the `pending` overlay
//! at once, so later requests of the same batch read them, and to disk when
//! the whole batch commits together with the caller's applied mark.

use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;
use rtcd_proto::etcdserverpb::{AlarmMember, AlarmType, alarm_request::AlarmAction};
use rtcd_proto::etcdserverpb::{
    AlarmRequest, AlarmResponse, CompactionRequest, CompactionResponse, DeleteRangeRequest,
    DeleteRangeResponse, LeaseCheckpointRequest, LeaseCheckpointResponse, LeaseGrantRequest,
    LeaseGrantResponse, LeaseRevokeRequest, LeaseRevokeResponse, PutRequest, PutResponse, RequestOp,
    ResponseOp, TxnRequest, TxnResponse, request_op, response_op,
};
use rtcd_proto::mvccpb::{Event, KeyValue, event::EventType};

use crate::auth::{Access, AuthRequest, AuthResponse, Caller};
use crate::engine::{Engine, Table, WriteBatch};
use crate::error::StoreError;
use crate::key_index::KeyRange;
use crate::lease::{LeaseInfo, MAX_LEASE_TTL};
use crate::revision::Revision;
use crate::state::{State, meta};
use crate::validate;
use crate::view::{View, header};

/// A request that goes through the write path (in a cluster: through Raft).
#[derive(Debug, Clone, PartialEq)]
pub enum WriteRequest {
    Put(PutRequest),
    DeleteRange(DeleteRangeRequest),
    Txn(TxnRequest),
    Compact(CompactionRequest),
    LeaseGrant(LeaseGrantRequest),
    LeaseRevoke(LeaseRevokeRequest),
    LeaseCheckpoint(LeaseCheckpointRequest),
    /// Raise or clear an alarm (a GET is a read and never comes here).
    Alarm(AlarmRequest),
    /// A change to users, roles, permissions or the auth switch, or a token.
    Auth(AuthRequest),
}

#[derive(Debug, Clone, PartialEq)]
pub enum WriteResponse {
    Put(PutResponse),
    DeleteRange(DeleteRangeResponse),
    Txn(TxnResponse),
    Compact(CompactionResponse),
    LeaseGrant(LeaseGrantResponse),
    LeaseRevoke(LeaseRevokeResponse),
    LeaseCheckpoint(LeaseCheckpointResponse),
    Alarm(AlarmResponse),
    Auth(AuthResponse),
}

/// The outcome of one successful write request.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub response: WriteResponse,
    /// The store revision after the request.
    pub revision: i64,
    /// What watchers see, in order, each with `prev_kv` filled when the key
    /// existed before.
    pub events: Vec<Event>,
}

/// One batch being applied.
pub(crate) struct Batch<'s> {
    pub engine: &'s dyn Engine,
    pub state: &'s mut State,
    pub max_txn_ops: usize,
    pub writes: WriteBatch,
    pub pending: HashMap<Revision, KeyValue>,
    /// Records (`kv` keys) compactions of this batch made unreachable, to
    /// delete once the batch is written (see `compaction`).
    pub unreachable: Vec<Vec<u8>>,
    /// Set when a physical compaction was asked for.
    pub reclaim: bool,
}

/// The changes of one request: all share `main`.
struct Changes {
    main: i64,
    next_sub: i64,
    events: Vec<Event>,
}

impl Changes {
    fn next_rev(&mut self) -> Revision {
        let rev = Revision::new(self.main, self.next_sub);
        self.next_sub += 1;
        rev
    }

    fn any(&self) -> bool {
        self.next_sub > 0
    }
}

/// Which branch each txn on the executed path takes, decided up front from
/// the state before the txn (etcd evaluates nested compares that way too).
struct TxnPath {
    succeeded: bool,
    nested: Vec<TxnPath>,
}

impl<'s> Batch<'s> {
    pub fn apply(&mut self, req: &WriteRequest, caller: &Caller) -> Result<Applied, StoreError> {
        self.authorize(req, caller)?;
        let mut changes = Changes { main: self.state.rev + 1, next_sub: 0, events: Vec::new() };
        // With NOSPACE raised, only requests that free or keep space run
        // (etcd's capped applier).
        if self.state.alarms.no_space() && adds_data(req) {
            return Err(StoreError::NoSpace);
        }
        let response = match req {
            WriteRequest::Put(p) => WriteResponse::Put(self.top_put(&mut changes, p)?),
            WriteRequest::DeleteRange(d) => {
                validate::check_delete(d)?;
                WriteResponse::DeleteRange(self.delete_range(&mut changes, d)?)
            }
            WriteRequest::Txn(t) => WriteResponse::Txn(self.top_txn(&mut changes, t)?),
            WriteRequest::Compact(c) => WriteResponse::Compact(self.compact(c)?),
            WriteRequest::LeaseGrant(g) => WriteResponse::LeaseGrant(self.lease_grant(g)?),
            WriteRequest::LeaseRevoke(r) => WriteResponse::LeaseRevoke(self.lease_revoke(&mut changes, r)?),
            WriteRequest::LeaseCheckpoint(c) => WriteResponse::LeaseCheckpoint(self.lease_checkpoint(c)),
            WriteRequest::Alarm(a) => WriteResponse::Alarm(self.alarm(a)),
            WriteRequest::Auth(a) => WriteResponse::Auth(
                std::sync::Arc::make_mut(&mut self.state.auth).apply(a, &mut self.writes)?,
            ),
        };
        if changes.any() {
            self.state.rev = changes.main;
            self.writes.put(Table::Meta, meta::REVISION, changes.main.to_be_bytes());
        }
        Ok(Applied { response, revision: self.state.rev, events: changes.events })
    }

    /// etcd's auth applier: whether `caller` may make this request, checked
    /// against the auth store as it is when the request applies.
    fn authorize(&self, req: &WriteRequest, caller: &Caller) -> Result<(), StoreError> {
        let auth = &self.state.auth;
        if matches!(caller, Caller::Member) || !auth.enabled() {
            return Ok(());
        }
        match req {
            WriteRequest::Put(p) => {
                auth.check(caller, &p.key, &[], Access::Write)?;
                self.check_lease_keys(caller, p.lease)?;
                if p.prev_kv {
                    auth.check(caller, &p.key, &[], Access::Read)?;
                }
            }
            WriteRequest::DeleteRange(d) => {
                auth.check(caller, &d.key, &d.range_end, Access::Write)?;
                if d.prev_kv {
                    auth.check(caller, &d.key, &d.range_end, Access::Read)?;
                }
            }
            WriteRequest::Txn(t) => auth.check_txn(caller, t)?,
            WriteRequest::LeaseRevoke(r) => self.check_lease_keys(caller, r.id)?,
            // Authenticate is open to all: the password was the check.
            WriteRequest::Auth(AuthRequest::Authenticate { .. }) => {}
            WriteRequest::Auth(_) => auth.check_admin(caller)?,
            // etcd 3.4 lets any user compact, grant leases and raise alarms.
            WriteRequest::Compact(_)
            | WriteRequest::LeaseGrant(_)
            | WriteRequest::LeaseCheckpoint(_)
            | WriteRequest::Alarm(_) => {}
        }
        Ok(())
    }

    /// Writing through a lease (a put attaching to it, a revoke deleting its
    /// keys) needs write permission on every key it holds.
    fn check_lease_keys(&self, caller: &Caller, lease: i64) -> Result<(), StoreError> {
        if let Some(info) = self.state.leases.get(lease) {
            for key in &info.keys {
                self.state.auth.check(caller, key, &[], Access::Write)?;
            }
        }
        Ok(())
    }

    /// Reads as of now, including this request's own changes so far.
    fn view(&self, changes: &Changes) -> View<'_> {
        View {
            engine: self.engine,
            index: &self.state.index,
            pending: Some(&self.pending),
            current: self.revision_now(changes),
            compacted: self.state.compacted,
        }
    }

    /// The revision a response reports: the new one once anything changed.
    fn revision_now(&self, changes: &Changes) -> i64 {
        if changes.any() { changes.main } else { self.state.rev }
    }

    fn top_put(&mut self, c: &mut Changes, p: &PutRequest) -> Result<PutResponse, StoreError> {
        validate::check_put(p)?;
        if p.lease != 0 && !self.state.leases.contains(p.lease) {
            return Err(StoreError::LeaseNotFound);
        }
        self.check_put_target(c, p)?;
        self.put(c, p)
    }

    /// `ignore_value` / `ignore_lease` need an existing key.
    fn check_put_target(&self, c: &Changes, p: &PutRequest) -> Result<(), StoreError> {
        let now = self.revision_now(c);
        if (p.ignore_value || p.ignore_lease) && self.state.index.get(&p.key, now).is_none() {
            return Err(StoreError::KeyNotFound);
        }
        Ok(())
    }

    fn put(&mut self, c: &mut Changes, p: &PutRequest) -> Result<PutResponse, StoreError> {
        let prev = self.view(c).get(&p.key, self.revision_now(c))?;
        let prev_value = prev.as_ref().map(|kv| kv.value.clone()).unwrap_or_default();
        let prev_lease = prev.as_ref().map_or(0, |kv| kv.lease);
        let value = if p.ignore_value { prev_value } else { p.value.clone() };
        let lease = if p.ignore_lease { prev_lease } else { p.lease };

        let rev = c.next_rev();
        let change = self.state.index.put(p.key.clone(), rev);
        let kv = KeyValue {
            key: p.key.clone(),
            create_revision: change.create,
            mod_revision: rev.main,
            version: change.version,
            value,
            lease,
        };
        self.writes.put(Table::Kv, rev.encode(false), kv.encode_to_vec());
        self.pending.insert(rev, kv.clone());
        self.state.leases.reattach(&p.key, prev_lease, lease);
        let event_prev = self.event_prev(c, prev.as_ref())?;
        c.events.push(Event { r#type: EventType::Put as i32, kv: Some(kv), prev_kv: event_prev });
        Ok(PutResponse { header: header(rev.main), prev_kv: prev.filter(|_| p.prev_kv) })
    }

    fn delete_range(
        &mut self,
        c: &mut Changes,
        d: &DeleteRangeRequest,
    ) -> Result<DeleteRangeResponse, StoreError> {
        let range = KeyRange::new(&d.key, &d.range_end);
        let now = self.revision_now(c);
        let victims: Vec<Revision> =
            self.state.index.range(&range, now).map(|(_, change)| change.rev).collect();
        let mut prev_kvs = Vec::with_capacity(victims.len());
        for rev in &victims {
            let prev = self.view(c).load(*rev)?;
            self.delete_key(c, prev.clone())?;
            prev_kvs.push(prev);
        }
        Ok(DeleteRangeResponse {
            header: header(self.revision_now(c)),
            deleted: victims.len() as i64,
            prev_kvs: if d.prev_kv { prev_kvs } else { Vec::new() },
        })
    }

    /// Deletes one live key whose current record is `prev`.
    fn delete_key(&mut self, c: &mut Changes, prev: KeyValue) -> Result<(), StoreError> {
        let event_prev = self.event_prev(c, Some(&prev))?;
        let rev = c.next_rev();
        self.state.index.delete(&prev.key, rev);
        let tombstone = KeyValue { key: prev.key.clone(), mod_revision: rev.main, ..Default::default() };
        self.writes.put(Table::Kv, rev.encode(true), tombstone.encode_to_vec());
        self.state.leases.reattach(&prev.key, prev.lease, 0);
        c.events.push(Event { r#type: EventType::Delete as i32, kv: Some(tombstone), prev_kv: event_prev });
        Ok(())
    }

    /// The `prev_kv` a watcher sees: the key as it was before this request
    /// (etcd reads it at the previous revision), which differs from `prev`
    /// only when an earlier op of the same txn already wrote the key.
    fn event_prev(&self, c: &Changes, prev: Option<&KeyValue>) -> Result<Option<KeyValue>, StoreError> {
        match prev {
            Some(kv) if kv.mod_revision == c.main => self.view(c).get(&kv.key, self.state.rev),
            other => Ok(other.cloned()),
        }
    }

    fn top_txn(&mut self, c: &mut Changes, t: &TxnRequest) -> Result<TxnResponse, StoreError> {
        validate::check_txn(t, self.max_txn_ops)?;
        let path = self.txn_path(c, t)?;
        self.check_txn_path(c, t, &path)?;
        let mut resp = self.txn(c, t, &path)?;
        resp.header = header(self.revision_now(c));
        Ok(resp)
    }

    fn txn_path(&self, c: &Changes, t: &TxnRequest) -> Result<TxnPath, StoreError> {
        let view = self.view(c);
        let mut succeeded = true;
        for cmp in &t.compare {
            if !view.compare(cmp)? {
                succeeded = false;
                break;
            }
        }
        let mut nested = Vec::new();
        for op in branch(t, succeeded) {
            if let Some(request_op::Request::RequestTxn(inner)) = &op.request {
                nested.push(self.txn_path(c, inner)?);
            }
        }
        Ok(TxnPath { succeeded, nested })
    }

    /// Before anything runs: puts on the path need their key (for the
    /// `ignore_*` flags) and lease, reads their revision in the window.
    fn check_txn_path(&self, c: &Changes, t: &TxnRequest, path: &TxnPath) -> Result<(), StoreError> {
        let mut nested = path.nested.iter();
        let view = self.view(c);
        for op in branch(t, path.succeeded) {
            match &op.request {
                Some(request_op::Request::RequestPut(p)) => {
                    self.check_put_target(c, p)?;
                    if p.lease != 0 && !self.state.leases.contains(p.lease) {
                        return Err(StoreError::LeaseNotFound);
                    }
                }
                Some(request_op::Request::RequestRange(r)) if r.revision != 0 => {
                    if r.revision > view.current {
                        return Err(StoreError::FutureRev);
                    }
                    if r.revision < view.compacted {
                        return Err(StoreError::Compacted);
                    }
                }
                Some(request_op::Request::RequestTxn(inner)) => {
                    if let Some(p) = nested.next() {
                        self.check_txn_path(c, inner, p)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn txn(&mut self, c: &mut Changes, t: &TxnRequest, path: &TxnPath) -> Result<TxnResponse, StoreError> {
        let mut nested = path.nested.iter();
        let mut responses = Vec::new();
        for op in branch(t, path.succeeded) {
            let response = match &op.request {
                Some(request_op::Request::RequestRange(r)) => {
                    response_op::Response::ResponseRange(self.view(c).range(r)?)
                }
                Some(request_op::Request::RequestPut(p)) => {
                    response_op::Response::ResponsePut(self.put(c, p)?)
                }
                Some(request_op::Request::RequestDeleteRange(d)) => {
                    response_op::Response::ResponseDeleteRange(self.delete_range(c, d)?)
                }
                Some(request_op::Request::RequestTxn(inner)) => {
                    let p = nested.next().ok_or_else(|| StoreError::Corrupt("txn path".into()))?;
                    response_op::Response::ResponseTxn(self.txn(c, inner, p)?)
                }
                None => continue,
            };
            responses.push(ResponseOp { response: Some(response) });
        }
        // etcd leaves a nested txn's header empty (revision 0); only the
        // outermost one carries the revision.
        Ok(TxnResponse { header: header(0), succeeded: path.succeeded, responses })
    }

    fn compact(&mut self, r: &CompactionRequest) -> Result<CompactionResponse, StoreError> {
        if r.revision <= self.state.compacted {
            return Err(StoreError::Compacted);
        }
        if r.revision > self.state.rev {
            return Err(StoreError::FutureRev);
        }
        self.unreachable.extend(self.state.index.compact(r.revision));
        self.state.compacted = r.revision;
        self.writes.put(Table::Meta, meta::COMPACTED, r.revision.to_be_bytes());
        self.reclaim |= r.physical;
        Ok(CompactionResponse { header: header(self.state.rev) })
    }

    fn lease_grant(&mut self, g: &LeaseGrantRequest) -> Result<LeaseGrantResponse, StoreError> {
        // The ID is chosen before the request is replicated; 0 cannot reach here
        // legitimately.
        if g.id == 0 {
            return Err(StoreError::LeaseNotFound);
        }
        if g.ttl > MAX_LEASE_TTL {
            return Err(StoreError::LeaseTtlTooLarge);
        }
        if self.state.leases.contains(g.id) {
            return Err(StoreError::LeaseExists);
        }
        let lease = LeaseInfo { id: g.id, ttl: g.ttl, ..Default::default() };
        self.writes.put(Table::Lease, LeaseInfo::table_key(g.id), lease.encode());
        self.state.leases.insert(lease);
        Ok(LeaseGrantResponse { header: header(self.state.rev), id: g.id, ttl: g.ttl, error: String::new() })
    }

    /// Deletes the lease and, in one revision, every key attached to it, in
    /// key order.
    fn lease_revoke(
        &mut self,
        c: &mut Changes,
        r: &LeaseRevokeRequest,
    ) -> Result<LeaseRevokeResponse, StoreError> {
        let lease = self.state.leases.get(r.id).ok_or(StoreError::LeaseNotFound)?;
        let keys: Vec<Bytes> = lease.keys.iter().cloned().collect();
        let now = self.revision_now(c);
        for key in keys {
            if let Some(prev) = self.view(c).get(&key, now)? {
                self.delete_key(c, prev)?;
            }
        }
        self.state.leases.remove(r.id);
        self.writes.delete(Table::Lease, LeaseInfo::table_key(r.id));
        Ok(LeaseRevokeResponse { header: header(self.revision_now(c)) })
    }

    /// Activates or deactivates one alarm; the response lists it if it is
    /// (or was) active, as etcd's does.
    fn alarm(&mut self, r: &AlarmRequest) -> AlarmResponse {
        let (member, alarm) = (r.member_id, r.alarm);
        let listed = match AlarmAction::try_from(r.action) {
            Ok(AlarmAction::Activate) if alarm != AlarmType::None as i32 => {
                if self.state.alarms.activate(member, alarm) {
                    self.writes.put(Table::Meta, crate::alarm::key(member, alarm), Vec::new());
                }
                true
            }
            Ok(AlarmAction::Deactivate) => {
                let was_active = self.state.alarms.deactivate(member, alarm);
                if was_active {
                    self.writes.delete(Table::Meta, crate::alarm::key(member, alarm));
                }
                was_active
            }
            _ => false,
        };
        let alarms = if listed { vec![AlarmMember { member_id: member, alarm }] } else { vec![] };
        AlarmResponse { header: None, alarms }
    }

    fn lease_checkpoint(&mut self, r: &LeaseCheckpointRequest) -> LeaseCheckpointResponse {
        for cp in &r.checkpoints {
            if let Some(lease) = self.state.leases.get_mut(cp.id) {
                lease.remaining_ttl = cp.remaining_ttl;
                let encoded = lease.encode();
                self.writes.put(Table::Lease, LeaseInfo::table_key(cp.id), encoded);
            }
        }
        LeaseCheckpointResponse { header: header(self.state.rev) }
    }
}

fn branch(t: &TxnRequest, succeeded: bool) -> &[RequestOp] {
    if succeeded { &t.success } else { &t.failure }
}

/// Whether a request would grow the store: puts, leases, and txns with a put
/// in either top-level branch (what etcd's quota counts).
fn adds_data(req: &WriteRequest) -> bool {
    let is_put = |op: &RequestOp| matches!(op.request, Some(request_op::Request::RequestPut(_)));
    match req {
        WriteRequest::Put(_) | WriteRequest::LeaseGrant(_) => true,
        WriteRequest::Txn(t) => t.success.iter().chain(&t.failure).any(is_put),
        _ => false,
    }
}
