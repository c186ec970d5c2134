//! `etcdserverpb.KV`: Range is served from the store; writes go through the
//! node's write path.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    CompactionRequest, CompactionResponse, DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse,
    RangeRequest, RangeResponse, TxnRequest, TxnResponse, kv_server::Kv,
};
use rtcd_store::{WriteRequest, WriteResponse};
use tonic::{Request, Response, Status};

use crate::errors::EtcdError;
use crate::node::{Node, request_len};

#[derive(Debug)]
pub struct KvService {
    node: Arc<Node>,
}

impl KvService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }

    async fn write(&self, req: WriteRequest, len: usize) -> Result<WriteResponse, Status> {
        Ok(self.node.propose(req, len).await?.response)
    }
}

/// The write path answered with another kind of response than it was asked
/// for: a bug, reported rather than panicking.
fn mismatch() -> Status {
    Status::internal("rtcd: write path returned a mismatched response")
}

#[tonic::async_trait]
impl Kv for KvService {
    async fn range(&self, request: Request<RangeRequest>) -> Result<Response<RangeResponse>, Status> {
        // A single member has applied everything it committed, so a
        // linearizable read is a local read.
        let mut resp = self.node.store.range(request.get_ref()).map_err(EtcdError::from)?;
        self.node.fill(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn put(&self, request: Request<PutRequest>) -> Result<Response<PutResponse>, Status> {
        let req = request.into_inner();
        rtcd_store::check_put(&req).map_err(EtcdError::from)?;
        let len = request_len(&req);
        let WriteResponse::Put(mut resp) = self.write(WriteRequest::Put(req), len).await? else {
            return Err(mismatch());
        };
        self.node.fill(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn delete_range(
        &self,
        request: Request<DeleteRangeRequest>,
    ) -> Result<Response<DeleteRangeResponse>, Status> {
        let req = request.into_inner();
        rtcd_store::check_delete(&req).map_err(EtcdError::from)?;
        let len = request_len(&req);
        let WriteResponse::DeleteRange(mut resp) = self.write(WriteRequest::DeleteRange(req), len).await?
        else {
            return Err(mismatch());
        };
        self.node.fill(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn txn(&self, request: Request<TxnRequest>) -> Result<Response<TxnResponse>, Status> {
        let req = request.into_inner();
        rtcd_store::check_txn(&req, self.node.config.max_txn_ops).map_err(EtcdError::from)?;
        let len = request_len(&req);
        let WriteResponse::Txn(mut resp) = self.write(WriteRequest::Txn(req), len).await? else {
            return Err(mismatch());
        };
        self.node.fill(&mut resp.header);
        Ok(Response::new(resp))
    }

    async fn compact(
        &self,
        request: Request<CompactionRequest>,
    ) -> Result<Response<CompactionResponse>, Status> {
        let req = request.into_inner();
        let len = request_len(&req);
        let WriteResponse::Compact(mut resp) = self.write(WriteRequest::Compact(req), len).await? else {
            return Err(mismatch());
        };
        self.node.fill(&mut resp.header);
        Ok(Response::new(resp))
    }
}
