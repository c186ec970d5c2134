//! `etcdserverpb.Cluster` for a single member: it lists itself. Membership
//! changes need Raft and answer Unimplemented until it exists.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    Member, MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse, MemberPromoteRequest,
    MemberPromoteResponse, MemberRemoveRequest, MemberRemoveResponse, MemberUpdateRequest,
    MemberUpdateResponse, cluster_server::Cluster,
};
use tonic::{Request, Response, Status};

use crate::errors::EtcdError;
use crate::node::Node;

#[derive(Debug)]
pub struct ClusterService {
    node: Arc<Node>,
}

impl ClusterService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }

    fn this_member(&self) -> Member {
        let c = &self.node.config;
        Member {
            id: self.node.identity.member_id,
            name: c.name.clone(),
            peer_ur_ls: c.advertise_peer_urls(),
            client_ur_ls: c.advertise_client_urls(),
            is_learner: false,
        }
    }
}

fn membership_changes() -> Status {
    EtcdError::Unsupported("changing membership (needs Raft replication)").into()
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(&self, _: Request<MemberAddRequest>) -> Result<Response<MemberAddResponse>, Status> {
        Err(membership_changes())
    }

    async fn member_remove(
        &self,
        _: Request<MemberRemoveRequest>,
    ) -> Result<Response<MemberRemoveResponse>, Status> {
        Err(membership_changes())
    }

    async fn member_update(
        &self,
        _: Request<MemberUpdateRequest>,
    ) -> Result<Response<MemberUpdateResponse>, Status> {
        Err(membership_changes())
    }

    async fn member_list(
        &self,
        _: Request<MemberListRequest>,
    ) -> Result<Response<MemberListResponse>, Status> {
        Ok(Response::new(MemberListResponse {
            header: self.node.header(),
            members: vec![self.this_member()],
        }))
    }

    async fn member_promote(
        &self,
        _: Request<MemberPromoteRequest>,
    ) -> Result<Response<MemberPromoteResponse>, Status> {
        Err(membership_changes())
    }
}
