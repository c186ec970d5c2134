//! `etcdserverpb.Cluster`: the members of the replicated configuration and
//! changes to it. Changes run at the leader (`membership`); a follower hands
//! them over through the leader's peer service.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse, MemberPromoteRequest,
    MemberPromoteResponse, MemberRemoveRequest, MemberRemoveResponse, MemberUpdateRequest,
    MemberUpdateResponse, ResponseHeader, cluster_server::Cluster,
};
use tonic::{Request, Response, Status};

use crate::node::Node;

#[derive(Debug)]
pub struct ClusterService {
    node: Arc<Node>,
}

impl ClusterService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }

    /// Like etcd, the answering member's header, whoever made the change.
    fn own_header(&self) -> Option<ResponseHeader> {
        self.node.header()
    }
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(
        &self,
        request: Request<MemberAddRequest>,
    ) -> Result<Response<MemberAddResponse>, Status> {
        let req = request.into_inner();
        let node = &self.node;
        let mut resp = node
            .at_leader(|route| {
                let req = req.clone();
                async move {
                    match route {
                        None => node.member_add(&req).await.map_err(Status::from),
                        Some(mut leader) => Ok(leader.member_add(req).await?.into_inner()),
                    }
                }
            })
            .await?;
        resp.header = self.own_header();
        Ok(Response::new(resp))
    }

    async fn member_remove(
        &self,
        request: Request<MemberRemoveRequest>,
    ) -> Result<Response<MemberRemoveResponse>, Status> {
        let req = request.into_inner();
        let node = &self.node;
        let mut resp = node
            .at_leader(|route| async move {
                match route {
                    None => node.member_remove(req.id).await.map_err(Status::from),
                    Some(mut leader) => Ok(leader.member_remove(req).await?.into_inner()),
                }
            })
            .await?;
        resp.header = self.own_header();
        Ok(Response::new(resp))
    }

    async fn member_update(
        &self,
        request: Request<MemberUpdateRequest>,
    ) -> Result<Response<MemberUpdateResponse>, Status> {
        let req = request.into_inner();
        let node = &self.node;
        let mut resp = node
            .at_leader(|route| {
                let req = req.clone();
                async move {
                    match route {
                        None => node.member_update(&req).await.map_err(Status::from),
                        Some(mut leader) => Ok(leader.member_update(req).await?.into_inner()),
                    }
                }
            })
            .await?;
        resp.header = self.own_header();
        Ok(Response::new(resp))
    }

    async fn member_list(
        &self,
        _: Request<MemberListRequest>,
    ) -> Result<Response<MemberListResponse>, Status> {
        Ok(Response::new(MemberListResponse { header: self.own_header(), members: self.node.member_list() }))
    }

    async fn member_promote(
        &self,
        request: Request<MemberPromoteRequest>,
    ) -> Result<Response<MemberPromoteResponse>, Status> {
        let req = request.into_inner();
        let node = &self.node;
        let mut resp = node
            .at_leader(|route| async move {
                match route {
                    None => node.member_promote(req.id).await.map_err(Status::from),
                    Some(mut leader) => Ok(leader.member_promote(req).await?.into_inner()),
                }
            })
            .await?;
        resp.header = self.own_header();
        Ok(Response::new(resp))
    }
}
