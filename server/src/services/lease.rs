//! `etcdserverpb.Lease`: grant and revoke go through the write path (revoke
//! deletes the attached keys in one revision); keep-alives renew the local
//! timer; expiry is a revoke proposed by the member itself.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

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

/// How often expired leases are looked for.
const EXPIRY_CHECK: Duration = Duration::from_millis(500);

#[derive(Debug)]
pub struct LeaseService {
    node: Arc<Node>,
}

impl LeaseService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }
}

/// Revokes expired leases until the process ends.
pub fn spawn_expiry(node: Arc<Node>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EXPIRY_CHECK);
        loop {
            tick.tick().await;
            // Only the leader expires leases; the revokes replicate.
            if !node.is_leader() {
                continue;
            }
            for id in node.lessor.expired() {
                // Success or not, the write path settles the lease's timer.
                let revoke = WriteRequest::LeaseRevoke(LeaseRevokeRequest { id });
                if let Err(e) = node.propose(revoke).await
                    && e != EtcdError::Store(StoreError::LeaseNotFound)
                {
                    tracing::warn!(lease = id, error = %e, "revoking an expired lease failed");
                }
            }
        }
    });
}

#[tonic::async_trait]
impl Lease for LeaseService {
    async fn lease_grant(
        &self,
        request: Request<LeaseGrantRequest>,
    ) -> Result<Response<LeaseGrantResponse>, Status> {
        let mut req = request.into_inner();
        if req.ttl > MAX_LEASE_TTL {
            return Err(EtcdError::from(StoreError::LeaseTtlTooLarge).into());
        }
        req.ttl = req.ttl.max(self.node.min_lease_ttl());
        if req.id == 0 {
            req.id = self.node.new_lease_id();
        }
        let pick = |r| if let WriteResponse::LeaseGrant(g) = r { Some(g) } else { None };
        self.node.write(WriteRequest::LeaseGrant(req), pick).await.map(Response::new)
    }

    async fn lease_revoke(
        &self,
        request: Request<LeaseRevokeRequest>,
    ) -> Result<Response<LeaseRevokeResponse>, Status> {
        let pick = |r| if let WriteResponse::LeaseRevoke(v) = r { Some(v) } else { None };
        self.node.write(WriteRequest::LeaseRevoke(request.into_inner()), pick).await.map(Response::new)
    }

    type LeaseKeepAliveStream = Pin<Box<dyn Stream<Item = Result<LeaseKeepAliveResponse, Status>> + Send>>;

    async fn lease_keep_alive(
        &self,
        request: Request<Streaming<LeaseKeepAliveRequest>>,
    ) -> Result<Response<Self::LeaseKeepAliveStream>, Status> {
        let node = self.node.clone();
        let responses = request.into_inner().map(move |req| {
            let id = req?.id;
            // An unknown or expired lease is answered with TTL 0, not an error.
            let ttl = node.lessor.renew(id).unwrap_or(0);
            Ok(LeaseKeepAliveResponse { header: node.header(), id, ttl })
        });
        Ok(Response::new(Box::pin(responses)))
    }

    async fn lease_time_to_live(
        &self,
        request: Request<LeaseTimeToLiveRequest>,
    ) -> Result<Response<LeaseTimeToLiveResponse>, Status> {
        let req = request.into_inner();
        let lease = self.node.store.lease(req.id).map_err(EtcdError::from)?;
        let remaining = self.node.lessor.remaining(req.id);
        let resp = match (lease, remaining) {
            (Some(lease), Some(ttl)) => LeaseTimeToLiveResponse {
                header: self.node.header(),
                id: req.id,
                ttl,
                granted_ttl: lease.ttl,
                keys: if req.keys { lease.keys.into_iter().collect() } else { Vec::new() },
            },
            // Unknown (or being revoked): TTL -1, not an error.
            _ => LeaseTimeToLiveResponse {
                header: self.node.header(),
                id: req.id,
                ttl: -1,
                ..Default::default()
            },
        };
        Ok(Response::new(resp))
    }

    async fn lease_leases(
        &self,
        _: Request<LeaseLeasesRequest>,
    ) -> Result<Response<LeaseLeasesResponse>, Status> {
        let leases = self.node.store.leases().map_err(EtcdError::from)?;
        Ok(Response::new(LeaseLeasesResponse {
            header: self.node.header(),
            leases: leases.into_iter().map(|l| LeaseStatus { id: l.id }).collect(),
        }))
    }
}
