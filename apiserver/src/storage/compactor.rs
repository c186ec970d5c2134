//! The compaction loop kube-apiserver runs against etcd, so that history does
//! not grow without bound.
//!
//! Every interval, each apiserver tries to claim the round with
//! `Txn{VERSION(compact_rev_key) == version seen → Put(compact_rev_key, rev)}
//! else {Range compact_rev_key}`, where `rev` is the revision it saw at the
//! end of the previous interval. Whoever wins compacts to `rev`; the others
//! learn the key's version from the else branch and try next time. Several
//! apiservers sharing one etcd thus compact once per interval between them,
//! and never away history younger than one interval.

use super::{Endpoints, StorageError};
use bytes::Bytes;
use rtcd_proto::etcdserverpb::compare::{CompareResult, CompareTarget, TargetUnion};
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use rtcd_proto::etcdserverpb::request_op::Request;
use rtcd_proto::etcdserverpb::response_op::Response;
use rtcd_proto::etcdserverpb::{CompactionRequest, Compare, PutRequest, RangeRequest, RequestOp, TxnRequest};

/// The key every apiserver coordinates on (kube-apiserver's name for it).
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

#[derive(Debug, Clone)]
pub struct Compactor {
    kv: KvClient<Endpoints>,
    /// The version of `compact_rev_key` this apiserver last saw.
    version: i64,
    /// The store revision at the previous step: what the next step compacts to.
    revision: i64,
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Compacted to this revision.
    Compacted(i64),
    /// Claimed the round but had no revision from a previous step yet.
    Started,
    /// Another apiserver claimed this round.
    Lost,
}

impl Compactor {
    pub fn new(etcd: impl Into<Endpoints>) -> Self {
        Self { kv: KvClient::new(etcd.into()), version: 0, revision: 0 }
    }

    /// One interval's work; call it every `--etcd-compaction-interval`.
    pub async fn step(&mut self) -> Result<Step, StorageError> {
        let key = Bytes::from_static(COMPACT_REV_KEY.as_bytes());
        let claim = TxnRequest {
            compare: vec![Compare {
                result: CompareResult::Equal.into(),
                target: CompareTarget::Version.into(),
                key: key.clone(),
                target_union: Some(TargetUnion::Version(self.version)),
                ..Default::default()
            }],
            success: vec![RequestOp {
                request: Some(Request::RequestPut(PutRequest {
                    key: key.clone(),
                    value: Bytes::from(self.revision.to_string()),
                    ..Default::default()
                })),
            }],
            failure: vec![RequestOp {
                request: Some(Request::RequestRange(RangeRequest { key, ..Default::default() })),
            }],
        };
        let resp =
            self.kv.txn(claim).await.map_err(|e| StorageError::Etcd(e.message().to_string()))?.into_inner();
        let compact_to =
            std::mem::replace(&mut self.revision, resp.header.as_ref().map_or(0, |h| h.revision));
        if !resp.succeeded {
            self.version = resp
                .responses
                .iter()
                .find_map(|op| match &op.response {
                    Some(Response::ResponseRange(range)) => range.kvs.first().map(|kv| kv.version),
                    _ => None,
                })
                .unwrap_or(0);
            return Ok(Step::Lost);
        }
        self.version += 1;
        if compact_to == 0 {
            return Ok(Step::Started);
        }
        let compact = CompactionRequest { revision: compact_to, physical: false };
        self.kv.compact(compact).await.map_err(|e| StorageError::Etcd(e.message().to_string()))?;
        Ok(Step::Compacted(compact_to))
    }
}
