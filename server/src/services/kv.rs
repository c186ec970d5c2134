//! `etcdserverpb.KV`: Range is served from the store; writes are validated,
//! then go through the node's write path.

use std::sync::Arc;
use std::time::Instant;

use rtcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse,
    RangeRequest, RangeResponse, TxnRequest, TxnResponse, kv_server::Kv,
};
use rtcd_store::{WriteRequest, WriteResponse};
use tonic::{Request, Response, Status};

use crate::errors::EtcdError;
use crate::node::Node;

#[derive(Debug)]
pub struct KvService {
    node: Arc<Node>,
}

impl KvService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }
}

#[tonic::async_trait]
impl Kv for KvService {
    async fn range(&self, request: Request<RangeRequest>) -> Result<Response<RangeResponse>, Status> {
        let started = Instant::now();
        // A linearizable read first waits until this member has applied
        // everything committed when it arrived; a serializable one reads
        // whatever is applied here now.
        if !request.get_ref().serializable {
            // A learner serves only serializable ranges (`learner` refuses
            // every other call before it gets here).
            if self.node.raft().is_learner() {
                return Err(EtcdError::NotSupportedForLearner.into());
            }
            self.node.read_barrier().await?;
        }
        let caller = self.node.caller(&request)?;
        let req = request.get_ref();
        self.node.check_read(&caller, &req.key, &req.range_end)?;
        let mut resp = self.node.store().range(req).map_err(EtcdError::from)?;
        self.node.metrics().mvcc.ranged();
        self.node.store().apply_times().ranged(&req.key, started.elapsed());
        self.node.fill(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn put(&self, request: Request<PutRequest>) -> Result<Response<PutResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let req = request.into_inner();
        rtcd_store::check_put(&req).map_err(EtcdError::from)?;
        self.node
            .write(&caller, WriteRequest::Put(req), |r| {
                if let WriteResponse::Put(p) = r { Some(p) } else { None }
            })
            .await
            .map(Response::new)
    }

    async fn delete_range(
        &self,
        request: Request<DeleteRangeRequest>,
    ) -> Result<Response<DeleteRangeResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let req = request.into_inner();
        rtcd_store::check_delete(&req).map_err(EtcdError::from)?;
        self.node
            .write(&caller, WriteRequest::DeleteRange(req), |r| {
                if let WriteResponse::DeleteRange(d) = r { Some(d) } else { None }
            })
            .await
            .map(Response::new)
    }

    async fn txn(&self, request: Request<TxnRequest>) -> Result<Response<TxnResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let req = request.into_inner();
        rtcd_store::check_txn(&req, self.node.settings().max_txn_ops).map_err(EtcdError::from)?;
        self.node
            .write(&caller, WriteRequest::Txn(req), |r| {
                if let WriteResponse::Txn(t) = r { Some(t) } else { None }
            })
            .await
            .map(Response::new)
    }

    async fn compact(
        &self,
        request: Request<CompactionRequest>,
    ) -> Result<Response<CompactionResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let req = request.into_inner();
        self.node
            .write(&caller, WriteRequest::Compact(req), |r| {
                if let WriteResponse::Compact(c) = r { Some(c) } else { None }
            })
            .await
            .map(Response::new)
    }
}
