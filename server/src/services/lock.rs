//! `v3lockpb.Lock`: etcd's mutex recipe run inside the member. A lock named
//! N is the key under `N/` created first; a caller queues by creating
//! `N/<lease in hex>` attached to its lease and holds the lock once every
//! key created before its own is gone (deleted by Unlock, or with its lease).
//! The response carries that key, which Unlock deletes.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::TxnRequest;
use rtcd_proto::v3lockpb::lock_server::Lock;
use rtcd_proto::v3lockpb::{LockRequest, LockResponse, UnlockRequest, UnlockResponse};
use tonic::{Request, Response, Status};

use super::local_client::{
    LocalClient, Withdrawal, created_at, first_created, get, lease_key, put_op, range_answer, range_op,
};
use crate::node::Node;

#[derive(Debug)]
pub struct LockService {
    client: Arc<LocalClient>,
}

impl LockService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { client: Arc::new(LocalClient::new(node)) }
    }
}

#[tonic::async_trait]
impl Lock for LockService {
    async fn lock(&self, request: Request<LockRequest>) -> Result<Response<LockResponse>, Status> {
        let client = self.client.acting_for(&request);
        let req = request.into_inner();
        let lease = client.session_lease(req.lease).await?;
        let prefix = [&req.name[..], b"/"].concat();
        let key = lease_key(&prefix, lease);
        // Queue (or find this lease already queued) and read the holder,
        // in one txn: an uncontended lock takes one write.
        let queued = client
            .txn(TxnRequest {
                compare: vec![created_at(&key, 0)],
                success: vec![put_op(&key, Default::default(), lease), range_op(first_created(&prefix))],
                failure: vec![range_op(get(&key)), range_op(first_created(&prefix))],
            })
            .await?;
        let mine = if queued.succeeded {
            queued.header.as_ref().map_or(0, |h| h.revision)
        } else {
            let existing = range_answer(&queued, 0)?.kvs.first();
            existing
                .map(|kv| kv.create_revision)
                .ok_or_else(|| Status::internal("rtcd: lock key vanished"))?
        };
        let holder = range_answer(&queued, 1)?.kvs.first().map(|kv| kv.create_revision);
        if holder.is_none_or(|created| created == mine) {
            return Ok(Response::new(LockResponse { header: queued.header, key }));
        }
        let queued_key = Withdrawal::new(client.clone(), key.clone(), mine);
        match client.wait_deletes(&prefix, mine - 1).await {
            Ok(header) => {
                queued_key.disarm();
                Ok(Response::new(LockResponse { header: Some(header), key }))
            }
            Err(status) => {
                // etcd unlocks before answering a failed wait.
                let _ = queued_key.now().await;
                Err(status)
            }
        }
    }

    async fn unlock(&self, request: Request<UnlockRequest>) -> Result<Response<UnlockResponse>, Status> {
        let client = self.client.acting_for(&request);
        let deleted = client.delete(request.into_inner().key).await?;
        Ok(Response::new(UnlockResponse { header: deleted.header }))
    }
}
