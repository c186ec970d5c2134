//! The etcd3 store: each storage call as the etcd requests kube-apiserver
//! makes for it (`storage/etcd3/store.go`, etcd's `client/v3/kubernetes`).
//!
//! * Create: `Txn{MOD(key) == 0 → Put}`; a failed compare is AlreadyExists.
//! * GuaranteedUpdate: read, run the update function, then
//!   `Txn{MOD(key) == rev → Put} else {Range key}`, retried from the fresh
//!   object the else branch returns; no write when nothing changed.
//! * Delete: `Txn{MOD(key) == rev → DeleteRange} else {Range key}`, retried
//!   the same way, preconditions checked on every try.
//! * List: `Range[prefix + start, prefix end)` with a limit, every page at
//!   the first page's revision.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::endpoints::{Endpoints, Retried, Retry, classified};
use super::interface::{Storage, StorageWatch, Swap};
use super::leases::LeaseReuse;
use super::{ContinueToken, ListPage, Object, Preconditions, StorageError};
use async_trait::async_trait;
use bytes::Bytes;
use rtcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use rtcd_proto::etcdserverpb::lease_client::LeaseClient;
use rtcd_proto::etcdserverpb::request_op::Request;
use rtcd_proto::etcdserverpb::response_op::Response;
use rtcd_proto::etcdserverpb::{
    Compare, DeleteRangeRequest, LeaseGrantRequest, PutRequest, RangeRequest, RangeResponse, RequestOp,
    TxnRequest, TxnResponse,
};

/// etcd's answer to a read below the compacted revision.
const COMPACTED: &str = "etcdserver: mvcc: required revision has been compacted";
/// etcd's answer to a read above its current revision.
const FUTURE: &str = "etcdserver: mvcc: required revision is a future revision";
/// Lists of many large objects come back in one gRPC message per page.
pub(super) const MAX_MESSAGE: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Etcd3Store {
    etcd: Endpoints,
    kv: KvClient<Endpoints>,
    leases: LeaseClient<Endpoints>,
    reuse: Arc<LeaseReuse>,
}

/// What a conditional write found: done at a revision, or the key's current
/// object (None: absent) because the compare failed.
enum Outcome {
    Done(i64),
    Changed(Option<Object>),
}

impl Etcd3Store {
    /// The store over `etcd`: every member of `--etcd-servers`, or one
    /// channel.
    pub fn new(etcd: impl Into<Endpoints>) -> Self {
        let etcd = etcd.into();
        Self {
            kv: KvClient::new(etcd.clone()).max_decoding_message_size(MAX_MESSAGE),
            leases: LeaseClient::new(etcd.clone()),
            etcd,
            reuse: Arc::new(LeaseReuse::default()),
        }
    }

    /// Writes `value` under `key` if no object is there; its revision.
    pub async fn create(&self, key: &str, value: Bytes) -> Result<i64, StorageError> {
        self.create_leased(key, value, 0).await
    }

    /// As [`Self::create`], for an object that etcd removes after
    /// `ttl_seconds` (Events): it is written under a lease of that TTL,
    /// shared with the other objects created within a short window.
    pub async fn create_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        ttl_seconds: i64,
    ) -> Result<i64, StorageError> {
        let lease = self.lease_for(Duration::from_secs(ttl_seconds.max(1).unsigned_abs())).await?;
        self.create_leased(key, value, lease).await
    }

    /// A lease that outlives `ttl`: a reused one, or a new one.
    async fn lease_for(&self, ttl: Duration) -> Result<i64, StorageError> {
        let now = Instant::now();
        if let Some(id) = self.reuse.reusable(ttl, now) {
            return Ok(id);
        }
        let granted = LeaseReuse::grant_ttl(ttl);
        let grant = LeaseGrantRequest { ttl: i64::try_from(granted.as_secs()).unwrap_or(i64::MAX), id: 0 };
        // A repeated grant leaves an extra lease that expires unused.
        let grant = classified(grant, Retry::Always);
        let lease = self.leases.clone().lease_grant(grant).await.map_err(etcd_error)?.into_inner();
        if !lease.error.is_empty() {
            return Err(StorageError::Etcd(lease.error));
        }
        self.reuse.granted(lease.id, granted, now);
        Ok(lease.id)
    }

    async fn create_leased(&self, key: &str, value: Bytes, lease: i64) -> Result<i64, StorageError> {
        let put = Request::RequestPut(PutRequest { key: key_bytes(key), value, lease, ..Default::default() });
        match self.txn_if(key, 0, put).await? {
            Outcome::Done(rev) => Ok(rev),
            Outcome::Changed(_) => Err(StorageError::AlreadyExists { key: key.to_string() }),
        }
    }

    /// The object under `key`, if any (a linearizable read).
    pub async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        let req = RangeRequest { key: key_bytes(key), ..Default::default() };
        let resp = self.kv.clone().range(req).await.map_err(etcd_error)?.into_inner();
        Ok(first_object(&resp))
    }

    /// etcd's current revision, read from the range of `prefix` (what a
    /// consistent read from the watch cache must have caught up to).
    pub async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError> {
        let req = RangeRequest {
            key: key_bytes(prefix),
            range_end: prefix_end(prefix.as_bytes()).into(),
            count_only: true,
            ..Default::default()
        };
        let resp = self.kv.clone().range(req).await.map_err(etcd_error)?.into_inner();
        Ok(resp.header.as_ref().map_or(0, |h| h.revision))
    }

    /// Replaces the object under `key` with what `try_update` makes of it
    /// (None: there is none, allowed only with `ignore_not_found`), retrying
    /// on a concurrent write. The stored object when `try_update` returns it
    /// unchanged: nothing is written then.
    pub async fn guaranteed_update<F>(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        mut try_update: F,
    ) -> Result<Object, StorageError>
    where
        F: FnMut(Option<&Object>) -> Result<Bytes, StorageError>,
    {
        let mut current = self.get(key).await?;
        loop {
            match &current {
                None if !ignore_not_found => return Err(StorageError::NotFound { key: key.to_string() }),
                None => {}
                Some(object) => preconditions.check(key, object)?,
            }
            let value = try_update(current.as_ref())?;
            if let Some(object) = current.as_ref().filter(|o| o.value == value) {
                return Ok(object.clone());
            }
            let expected = current.as_ref().map_or(0, |o| o.resource_version);
            match self.put_if(key, value.clone(), expected).await? {
                Outcome::Done(resource_version) => return Ok(Object { value, resource_version }),
                Outcome::Changed(fresh) => current = fresh,
            }
        }
    }

    /// Deletes the object under `key` if `preconditions` hold for it,
    /// retrying on a concurrent write; the object deleted.
    pub async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        let mut current = self.get(key).await?;
        loop {
            let Some(object) = current else { return Err(StorageError::NotFound { key: key.to_string() }) };
            preconditions.check(key, &object)?;
            let delete =
                Request::RequestDeleteRange(DeleteRangeRequest { key: key_bytes(key), ..Default::default() });
            match self.txn_if(key, object.resource_version, delete).await? {
                Outcome::Done(_) => return Ok(object),
                Outcome::Changed(fresh) => current = fresh,
            }
        }
    }

    /// One page of the objects under `prefix` (which ends in `/`): the first
    /// page at `resource_version` (0: the latest), later ones from `token`,
    /// pinned to the first page's revision. `limit` 0 reads everything.
    pub async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        let (start, revision) = ContinueToken::resume(prefix, token, resource_version)?;
        let req = RangeRequest {
            key: key_bytes(&start),
            range_end: prefix_end(prefix.as_bytes()).into(),
            limit,
            revision,
            ..Default::default()
        };
        let resp = self.kv.clone().range(req).await.map_err(etcd_error)?.into_inner();
        let read_at = if revision > 0 { revision } else { resp.header.as_ref().map_or(0, |h| h.revision) };
        let items: Vec<(Bytes, Object)> = resp
            .kvs
            .iter()
            .map(|kv| (kv.key.clone(), Object { value: kv.value.clone(), resource_version: kv.mod_revision }))
            .collect();
        let (continue_token, remaining_item_count) = match items.last() {
            Some((last, _)) if resp.more => {
                // The next page starts just after the last key returned.
                let mut next = last[prefix.len()..].to_vec();
                next.push(0);
                let next = String::from_utf8_lossy(&next).into_owned();
                (Some(ContinueToken::new(read_at, next).encode()), Some(resp.count - items.len() as i64))
            }
            _ => (None, None),
        };
        Ok(ListPage { items, resource_version: read_at, continue_token, remaining_item_count })
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Outcome, StorageError> {
        let put = Request::RequestPut(PutRequest { key: key_bytes(key), value, ..Default::default() });
        self.txn_if(key, expected, put).await
    }

    /// `Txn{MOD(key) == expected → then} else {Range key}`. Sent to another
    /// member after a failure: a compare on a revision (`expected` > 0)
    /// matches once at most; a create's (`MOD == 0`) matches again after a
    /// delete, so it is not repeated while its first member may still apply
    /// it (see `endpoints::Retry`). A repeat whose first attempt was applied
    /// finds the compare failed and its own write in place: done.
    async fn txn_if(&self, key: &str, expected: i64, then: Request) -> Result<Outcome, StorageError> {
        let written = match &then {
            Request::RequestPut(put) => Some(put.value.clone()),
            _ => None,
        };
        let txn = TxnRequest {
            compare: vec![Compare {
                result: CompareResult::Equal.into(),
                target: CompareTarget::Mod.into(),
                key: key_bytes(key),
                target_union: Some(TargetUnion::ModRevision(expected)),
                ..Default::default()
            }],
            success: vec![RequestOp { request: Some(then) }],
            failure: vec![RequestOp {
                request: Some(Request::RequestRange(RangeRequest {
                    key: key_bytes(key),
                    ..Default::default()
                })),
            }],
        };
        let class = if expected > 0 { Retry::Always } else { Retry::UnlessSilent };
        let resp = self.kv.clone().txn(classified(txn, class)).await.map_err(etcd_error)?;
        let retried = resp.extensions().get::<Retried>().is_some();
        let resp = resp.into_inner();
        if resp.succeeded {
            return Ok(Outcome::Done(resp.header.as_ref().map_or(0, |h| h.revision)));
        }
        let current = failure_range(&resp).and_then(first_object);
        Ok(match (retried, current, written) {
            (true, Some(current), Some(written)) if current.value == written => {
                Outcome::Done(current.resource_version)
            }
            (true, None, None) => Outcome::Done(resp.header.as_ref().map_or(0, |h| h.revision)),
            (_, current, _) => Outcome::Changed(current),
        })
    }
}

#[async_trait]
impl Storage for Etcd3Store {
    async fn create(&self, key: &str, value: Bytes, ttl_seconds: Option<i64>) -> Result<i64, StorageError> {
        match ttl_seconds {
            Some(ttl) => Etcd3Store::create_with_ttl(self, key, value, ttl).await,
            None => Etcd3Store::create(self, key, value).await,
        }
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        Etcd3Store::get(self, key).await
    }

    async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError> {
        Etcd3Store::current_revision(self, prefix).await
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        Ok(match Etcd3Store::put_if(self, key, value, expected).await? {
            Outcome::Done(revision) => Swap::Done(revision),
            Outcome::Changed(current) => Swap::Changed(current),
        })
    }

    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        Etcd3Store::delete(self, key, preconditions).await
    }

    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        Etcd3Store::list(self, prefix, limit, resource_version, token).await
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        let watch = super::etcd3_watch::Etcd3Watch::start(self.etcd.clone(), prefix, start).await?;
        Ok(Box::new(watch))
    }
}

fn key_bytes(key: &str) -> Bytes {
    Bytes::copy_from_slice(key.as_bytes())
}

fn first_object(resp: &RangeResponse) -> Option<Object> {
    resp.kvs.first().map(|kv| Object { value: kv.value.clone(), resource_version: kv.mod_revision })
}

fn failure_range(resp: &TxnResponse) -> Option<&RangeResponse> {
    resp.responses.iter().find_map(|op| match &op.response {
        Some(Response::ResponseRange(range)) => Some(range),
        _ => None,
    })
}

/// The end of the range of keys starting with `prefix` (etcd's
/// `GetPrefixRangeEnd`): the prefix with its last byte below 0xff bumped.
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

pub(super) fn etcd_error(status: tonic::Status) -> StorageError {
    if status.message() == COMPACTED {
        return StorageError::Expired;
    }
    if status.message() == FUTURE {
        return StorageError::FutureRevision;
    }
    // What kube's isTooLargeError looks for.
    if status.code() == tonic::Code::InvalidArgument && status.message() == "etcdserver: request is too large"
    {
        return StorageError::TooLarge(status.message().to_string());
    }
    StorageError::Etcd(status.message().to_string())
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends_like_etcds() {
        assert_eq!(prefix_end(b"/registry/pods/"), b"/registry/pods0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b"\xff"), vec![0]);
    }
}
