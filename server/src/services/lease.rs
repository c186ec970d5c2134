//! `etcdserverpb.Lease`: grant and revoke go through the write path (revoke
//! deletes the attached keys in one revision); keep-alives and TTL queries
//! are answered by the leader, whose lessor holds the timers (`leases`).

use std::pin::Pin;
use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    LeaseGrantRequest, LeaseGrantResponse, LeaseKeepAliveRequest, LeaseKeepAliveResponse, LeaseLeasesRequest,
    LeaseLeasesResponse, LeaseRevokeRequest, LeaseRevokeResponse, LeaseStatus, LeaseTimeToLiveRequest,
    LeaseTimeToLiveResponse, lease_server::Lease,
};
use rtcd_store::{MAX_LEASE_TTL, StoreError, WriteRequest, WriteResponse};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

use crate::errors::EtcdError;
use crate::node::Node;

#[derive(Debug)]
pub struct LeaseService {
    node: Arc<Node>,
}

impl LeaseService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }
}

#[tonic::async_trait]
impl Lease for LeaseService {
    async fn lease_grant(
        &self,
        request: Request<LeaseGrantRequest>,
    ) -> Result<Response<LeaseGrantResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let mut req = request.into_inner();
        if req.ttl > MAX_LEASE_TTL {
            return Err(EtcdError::from(StoreError::LeaseTtlTooLarge).into());
        }
        req.ttl = req.ttl.max(self.node.min_lease_ttl());
        if req.id == 0 {
            req.id = self.node.new_lease_id();
        }
        let pick = |r| if let WriteResponse::LeaseGrant(g) = r { Some(g) } else { None };
        self.node.write(&caller, WriteRequest::LeaseGrant(req), pick).await.map(Response::new)
    }

    async fn lease_revoke(
        &self,
        request: Request<LeaseRevokeRequest>,
    ) -> Result<Response<LeaseRevokeResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let pick = |r| if let WriteResponse::LeaseRevoke(v) = r { Some(v) } else { None };
        self.node
            .write(&caller, WriteRequest::LeaseRevoke(request.into_inner()), pick)
            .await
            .map(Response::new)
    }

    type LeaseKeepAliveStream = Pin<Box<dyn Stream<Item = Result<LeaseKeepAliveResponse, Status>> + Send>>;

    async fn lease_keep_alive(
        &self,
        request: Request<Streaming<LeaseKeepAliveRequest>>,
    ) -> Result<Response<Self::LeaseKeepAliveStream>, Status> {
        self.node.check_leader(crate::require_leader::requested(&request))?;
        Ok(Response::new(Box::pin(keep_alive_answers(self.node.clone(), request.into_inner()))))
    }

    async fn lease_time_to_live(
        &self,
        request: Request<LeaseTimeToLiveRequest>,
    ) -> Result<Response<LeaseTimeToLiveResponse>, Status> {
        let req = request.into_inner();
        let node = &self.node;
        let mut resp = node
            .at_leader(|route| async move {
                match route {
                    None => node.lease_time_to_live(&req).await.map_err(Status::from),
                    Some(mut leader) => Ok(leader.lease_time_to_live(req).await?.into_inner()),
                }
            })
            .await?;
        // Like etcd, the header is this member's even when the leader answered.
        resp.header = node.header();
        Ok(Response::new(resp))
    }

    async fn lease_leases(
        &self,
        _: Request<LeaseLeasesRequest>,
    ) -> Result<Response<LeaseLeasesResponse>, Status> {
        let leases = self.node.store().leases().map_err(EtcdError::from)?;
        Ok(Response::new(LeaseLeasesResponse {
            header: self.node.header(),
            leases: leases.into_iter().map(|l| LeaseStatus { id: l.id }).collect(),
        }))
    }
}

/// Each keep-alive renewed by the leader, answered in order: for a gRPC
/// stream and for the JSON gateway's.
pub fn keep_alive_answers<S>(
    node: Arc<Node>,
    incoming: S,
) -> impl Stream<Item = Result<LeaseKeepAliveResponse, Status>> + Send
where
    S: Stream<Item = Result<LeaseKeepAliveRequest, Status>> + Send + 'static,
{
    incoming.then(move |req| {
        let node = node.clone();
        async move {
            let req = req?;
            let ttl = node
                .at_leader(|route| {
                    let node = node.clone();
                    async move {
                        match route {
                            None => node.renew_lease(req.id).await.map_err(Status::from),
                            Some(mut leader) => Ok(leader.lease_keep_alive(req).await?.into_inner().ttl),
                        }
                    }
                })
                .await?;
            Ok(LeaseKeepAliveResponse { header: node.header(), id: req.id, ttl })
        }
    })
}
