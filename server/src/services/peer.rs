//! `rtcdraftpb.Peer` on the peer URL: what followers hand to the leader on
//! behalf of their clients, and the membership a joining member asks for.
//! Leader-only requests reaching a member that no longer leads are refused
//! with "not leader" (the sender retries at the new leader). Every refusal
//! carries its kind (`peer_errors`), which the sender decides by.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    LeaseKeepAliveRequest, LeaseKeepAliveResponse, LeaseTimeToLiveRequest, LeaseTimeToLiveResponse, Member,
    MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse, MemberPromoteRequest,
    MemberPromoteResponse, MemberRemoveRequest, MemberRemoveResponse, MemberUpdateRequest,
    MemberUpdateResponse,
};
use rtcd_proto::rtcdraftpb::peer_server::{Peer, PeerServer};
use tonic::{Request, Response, Status};

use crate::errors::EtcdError;
use crate::node::Node;
use crate::peer_errors::refusal;

#[derive(Debug)]
pub struct PeerService {
    node: Arc<Node>,
}

impl PeerService {
    pub fn server(node: Arc<Node>) -> PeerServer<Self> {
        PeerServer::new(Self { node })
    }

    fn leading(&self) -> Result<&Node, Status> {
        if self.node.is_leader() { Ok(&self.node) } else { Err(refusal(EtcdError::NotLeader)) }
    }
}

#[tonic::async_trait]
impl Peer for PeerService {
    async fn lease_keep_alive(
        &self,
        request: Request<LeaseKeepAliveRequest>,
    ) -> Result<Response<LeaseKeepAliveResponse>, Status> {
        let node = self.leading()?;
        let id = request.into_inner().id;
        let ttl = node.renew_lease(id).await.map_err(refusal)?;
        Ok(Response::new(LeaseKeepAliveResponse { header: node.header(), id, ttl }))
    }

    async fn lease_time_to_live(
        &self,
        request: Request<LeaseTimeToLiveRequest>,
    ) -> Result<Response<LeaseTimeToLiveResponse>, Status> {
        let node = self.leading()?;
        Ok(Response::new(node.lease_time_to_live(&request.into_inner()).await.map_err(refusal)?))
    }

    async fn member_add(
        &self,
        request: Request<MemberAddRequest>,
    ) -> Result<Response<MemberAddResponse>, Status> {
        Ok(Response::new(self.leading()?.member_add(&request.into_inner()).await.map_err(refusal)?))
    }

    async fn member_remove(
        &self,
        request: Request<MemberRemoveRequest>,
    ) -> Result<Response<MemberRemoveResponse>, Status> {
        Ok(Response::new(self.leading()?.member_remove(request.into_inner().id).await.map_err(refusal)?))
    }

    async fn member_update(
        &self,
        request: Request<MemberUpdateRequest>,
    ) -> Result<Response<MemberUpdateResponse>, Status> {
        Ok(Response::new(self.leading()?.member_update(&request.into_inner()).await.map_err(refusal)?))
    }

    async fn member_promote(
        &self,
        request: Request<MemberPromoteRequest>,
    ) -> Result<Response<MemberPromoteResponse>, Status> {
        Ok(Response::new(self.leading()?.member_promote(request.into_inner().id).await.map_err(refusal)?))
    }

    async fn publish(&self, request: Request<Member>) -> Result<Response<MemberListResponse>, Status> {
        Ok(Response::new(self.leading()?.publish(&request.into_inner()).await.map_err(refusal)?))
    }

    async fn members(&self, _: Request<MemberListRequest>) -> Result<Response<MemberListResponse>, Status> {
        let node = &self.node;
        Ok(Response::new(MemberListResponse { header: node.header(), members: node.member_list() }))
    }
}
