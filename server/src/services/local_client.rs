//! The member as its own etcd client, for the services etcd builds from
//! client-side recipes (Lock and Election run etcd's `concurrency` package
//! over an in-process client). Every call goes through the same service code
//! a remote client reaches, so validation, linearizable reads, headers and
//! errors are the same (passed on as etcd's in-process client passes them:
//! `errors::through_local_client`); waiting for a key's deletion listens to
//! the watch hub instead of opening a watch stream.

use std::sync::Arc;

use bytes::Bytes;
use rtcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use rtcd_proto::etcdserverpb::range_request::{SortOrder, SortTarget};
use rtcd_proto::etcdserverpb::{
    Compare, DeleteRangeRequest, DeleteRangeResponse, LeaseGrantRequest, PutRequest, RangeRequest,
    RangeResponse, RequestOp, ResponseHeader, TxnRequest, TxnResponse, kv_server::Kv, lease_server::Lease,
    request_op, response_op,
};
use rtcd_proto::mvccpb::event::EventType;
use tonic::{Request, Status};

use super::kv::KvService;
use super::lease::LeaseService;
use crate::auth::Credentials;
use crate::errors::{EtcdError, through_local_client};
use crate::hub::{CursorEnd, EventCursor};
use crate::node::Node;

/// TTL of the lease a recipe grants when the caller gives none (etcd's
/// `concurrency.NewSession` default).
const SESSION_TTL_SECONDS: i64 = 60;

#[derive(Debug)]
pub struct LocalClient {
    node: Arc<Node>,
    kv: KvService,
    lease: LeaseService,
    /// The credentials of the client this one acts for, passed on with
    /// every call (etcd's recipes run with their caller's).
    credentials: Credentials,
}

impl LocalClient {
    pub fn new(node: Arc<Node>) -> Self {
        Self {
            kv: KvService::new(node.clone()),
            lease: LeaseService::new(node.clone()),
            node,
            credentials: Credentials::default(),
        }
    }

    /// A client making its calls with `request`'s credentials.
    pub fn acting_for<T>(&self, request: &Request<T>) -> Arc<LocalClient> {
        let mut client = LocalClient::new(self.node.clone());
        client.credentials = Credentials::of(request);
        Arc::new(client)
    }

    /// A request to a service, with the credentials this client acts with.
    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        self.credentials.attach(&mut request);
        request
    }

    pub async fn txn(&self, req: TxnRequest) -> Result<TxnResponse, Status> {
        let answer = self.kv.txn(self.request(req)).await;
        Ok(answer.map_err(through_local_client)?.into_inner())
    }

    /// A linearizable range.
    pub async fn range(&self, req: RangeRequest) -> Result<RangeResponse, Status> {
        let answer = self.kv.range(self.request(req)).await;
        Ok(answer.map_err(through_local_client)?.into_inner())
    }

    pub async fn delete(&self, key: Bytes) -> Result<DeleteRangeResponse, Status> {
        let req = DeleteRangeRequest { key, ..Default::default() };
        let answer = self.kv.delete_range(self.request(req)).await;
        Ok(answer.map_err(through_local_client)?.into_inner())
    }

    /// The lease a recipe's keys are attached to: `lease` itself, or with
    /// none (0) a new one of 60 s that nobody keeps alive, as etcd's
    /// services do (they orphan the session they open).
    pub async fn session_lease(&self, lease: i64) -> Result<i64, Status> {
        if lease != 0 {
            return Ok(lease);
        }
        let grant = LeaseGrantRequest { ttl: SESSION_TTL_SECONDS, id: 0 };
        let answer = self.lease.lease_grant(self.request(grant)).await;
        Ok(answer.map_err(through_local_client)?.into_inner().id)
    }

    /// The key under `prefix` created first (etcd's `WithFirstCreate`).
    pub async fn first_created(&self, prefix: &[u8]) -> Result<RangeResponse, Status> {
        self.range(first_created(prefix)).await
    }

    /// Waits until no key under `prefix` has a create revision at or below
    /// `max_create_revision`; answers the header of the read that found none
    /// (etcd's `waitDeletes`: wait for the newest such key to go, look again;
    /// also look again after revisions went by unseen).
    pub async fn wait_deletes(
        &self,
        prefix: &[u8],
        max_create_revision: i64,
    ) -> Result<ResponseHeader, Status> {
        loop {
            // Subscribed before reading: a delete the read does not show yet
            // is published afterwards, so it cannot be missed.
            let live = self.node.hub().subscribe();
            let newest =
                self.range(oldest_or_newest(prefix, SortOrder::Descend, max_create_revision)).await?;
            let Some(kv) = newest.kvs.first() else {
                return Ok(newest.header.unwrap_or_default());
            };
            let read_at = newest.header.as_ref().map_or(0, |h| h.revision);
            let mut events = EventCursor::after(live, read_at);
            loop {
                match events.next().await {
                    Ok(event) if is_delete_of(&event, &kv.key) => break,
                    Ok(_) => {}
                    Err(CursorEnd::Gap) => break,
                    Err(CursorEnd::Closed) => return Err(through_local_client(EtcdError::Stopped.into())),
                }
            }
        }
    }

    /// Deletes `key` if it still has the create revision `revision` (etcd's
    /// `Resign`: a key deleted and created again belongs to someone else).
    pub async fn withdraw(&self, key: &Bytes, revision: i64) -> Result<TxnResponse, Status> {
        let delete = DeleteRangeRequest { key: key.clone(), ..Default::default() };
        self.txn(TxnRequest {
            compare: vec![created_at(key, revision)],
            success: vec![op(request_op::Request::RequestDeleteRange(delete))],
            failure: vec![],
        })
        .await
    }

    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }
}

/// A recipe's key to withdraw if the call that made it ends early. Dropped
/// while armed (the client went away while the call waited), it deletes the
/// key in the background, so a waiter that left does not stay queued ahead
/// of the others; etcd's recipes delete it when their wait fails.
#[derive(Debug)]
pub struct Withdrawal {
    client: Arc<LocalClient>,
    key: Bytes,
    revision: i64,
    armed: bool,
}

impl Withdrawal {
    pub fn new(client: Arc<LocalClient>, key: Bytes, revision: i64) -> Self {
        Self { client, key, revision, armed: true }
    }

    /// The call completed: the key stays.
    pub fn disarm(mut self) {
        self.armed = false;
    }

    /// Withdraws the key before answering.
    pub async fn now(mut self) -> Result<TxnResponse, Status> {
        self.armed = false;
        self.client.withdraw(&self.key, self.revision).await
    }
}

impl Drop for Withdrawal {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // Dropped outside the runtime (it is shutting down): nothing to do,
        // the key goes with its lease.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let (client, key, revision) = (self.client.clone(), self.key.clone(), self.revision);
        runtime.spawn(async move {
            if let Err(status) = client.withdraw(&key, revision).await {
                tracing::warn!(key = ?key, %status, "withdrawing an abandoned lock or campaign key failed");
            }
        });
    }
}

fn op(request: request_op::Request) -> RequestOp {
    RequestOp { request: Some(request) }
}

pub fn put_op(key: &Bytes, value: Bytes, lease: i64) -> RequestOp {
    op(request_op::Request::RequestPut(PutRequest { key: key.clone(), value, lease, ..Default::default() }))
}

pub fn range_op(req: RangeRequest) -> RequestOp {
    op(request_op::Request::RequestRange(req))
}

/// The key alone, as a range request.
pub fn get(key: &Bytes) -> RangeRequest {
    RangeRequest { key: key.clone(), ..Default::default() }
}

/// The range response a txn gave as its `index`th answer.
pub fn range_answer(resp: &TxnResponse, index: usize) -> Result<&RangeResponse, Status> {
    match resp.responses.get(index).and_then(|r| r.response.as_ref()) {
        Some(response_op::Response::ResponseRange(range)) => Ok(range),
        _ => Err(Status::internal("rtcd: a recipe's txn answered without its range")),
    }
}

fn is_delete_of(event: &rtcd_proto::mvccpb::Event, key: &[u8]) -> bool {
    event.r#type == EventType::Delete as i32 && event.kv.as_ref().is_some_and(|kv| kv.key == key)
}

/// The key under `prefix` created first, as a range request.
pub fn first_created(prefix: &[u8]) -> RangeRequest {
    oldest_or_newest(prefix, SortOrder::Ascend, 0)
}

/// The one key under `prefix` created first (`Ascend`) or last (`Descend`),
/// among those created at or below `max_create_revision` (0: any).
fn oldest_or_newest(prefix: &[u8], order: SortOrder, max_create_revision: i64) -> RangeRequest {
    RangeRequest {
        key: Bytes::copy_from_slice(prefix),
        range_end: prefix_end(prefix),
        limit: 1,
        sort_order: order as i32,
        sort_target: SortTarget::Create as i32,
        max_create_revision,
        ..Default::default()
    }
}

/// The end of the range holding every key that starts with `prefix`
/// (etcd's `GetPrefixRangeEnd`: "\0" when every byte is 0xff).
pub fn prefix_end(prefix: &[u8]) -> Bytes {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end.into();
        }
    }
    Bytes::from_static(b"\0")
}

/// A compare that holds while `key` has the create revision `revision` (0:
/// while it does not exist).
pub fn created_at(key: &Bytes, revision: i64) -> Compare {
    Compare {
        result: CompareResult::Equal as i32,
        target: CompareTarget::Create as i32,
        key: key.clone(),
        target_union: Some(TargetUnion::CreateRevision(revision)),
        ..Default::default()
    }
}

/// The key a recipe keeps for `lease` under `prefix`: the lease ID in hex as
/// Go's `%x` writes it (a sign, then the magnitude).
pub fn lease_key(prefix: &[u8], lease: i64) -> Bytes {
    let sign = if lease < 0 { "-" } else { "" };
    let mut key = prefix.to_vec();
    key.extend_from_slice(format!("{sign}{:x}", lease.unsigned_abs()).as_bytes());
    key.into()
}
