//! `etcdserverpb.Cluster`: the members of the replicated configuration.
//! Membership changes answer Unimplemented until they are mapped onto
//! openraft's.

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

    /// The members in the replicated configuration. Client URLs are known
    /// for this member only until members publish theirs.
    fn members(&self) -> Vec<Member> {
        self.node
            .raft
            .members()
            .into_iter()
            .map(|(id, m, is_learner)| Member {
                id,
                name: m.name,
                peer_ur_ls: m.peer_urls,
                client_ur_ls: if id == self.node.identity.member_id {
                    self.node.config.advertise_client_urls()
                } else {
                    m.client_urls
                },
                is_learner,
            })
            .collect()
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
        Ok(Response::new(MemberListResponse { header: self.node.header(), members: self.members() }))
    }

    async fn member_promote(
        &self,
        _: Request<MemberPromoteRequest>,
    ) -> Result<Response<MemberPromoteResponse>, Status> {
        Err(membership_changes())
    }
}
