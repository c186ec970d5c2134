//! `etcdserverpb.Cluster`: the members of the replicated configuration and
//! changes to it. Changes run at the leader (`membership`); a follower hands
//! them over through the leader's peer service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rtcd_proto::etcdserverpb::{
    MemberAddRequest, MemberAddResponse, MemberListRequest, MemberListResponse, MemberPromoteRequest,
    MemberPromoteResponse, MemberRemoveRequest, MemberRemoveResponse, MemberUpdateRequest,
    MemberUpdateResponse, cluster_server::Cluster,
};
use rtcd_proto::rtcdraftpb::peer_client::PeerClient;
use std::future::Future;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

use crate::errors::{EtcdError, answers};
use crate::header::WithHeader;
use crate::node::Node;
use crate::peer_errors;

#[derive(Debug)]
pub struct ClusterService {
    node: Arc<Node>,
}

impl ClusterService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }

    /// Runs a membership change at the leader: `local` when this member
    /// leads, else `remote` on the leader's peer service. Like etcd, the
    /// answer carries this member's header, whoever made the change.
    async fn at_leader<Req, Resp, L, LF, R, RF>(
        &self,
        req: Req,
        local: L,
        remote: R,
    ) -> Result<Response<Resp>, Status>
    where
        Req: Clone,
        Resp: WithHeader,
        L: Fn(Arc<Node>, Req) -> LF,
        LF: Future<Output = Result<Resp, EtcdError>>,
        R: Fn(PeerClient<Channel>, Req) -> RF,
        RF: Future<Output = Result<Response<Resp>, Status>>,
    {
        let mut resp = self
            .node
            .at_leader(|route| {
                let req = req.clone();
                let node = self.node.clone();
                let (local, remote) = (&local, &remote);
                async move {
                    match route {
                        None => local(node, req).await.map_err(Status::from),
                        Some(leader) => Ok(remote(leader, req).await?.into_inner()),
                    }
                }
            })
            .await?;
        *resp.header_mut() = self.node.header();
        Ok(Response::new(resp))
    }
}

#[tonic::async_trait]
impl Cluster for ClusterService {
    async fn member_add(
        &self,
        request: Request<MemberAddRequest>,
    ) -> Result<Response<MemberAddResponse>, Status> {
        // Membership changes are root's (etcd checks on the member asked).
        self.node.check_admin(&request)?;
        self.at_leader(
            request.into_inner(),
            |node, req| async move { node.member_add(&req).await },
            |mut leader, req| async move { leader.member_add(req).await },
        )
        .await
    }

    async fn member_remove(
        &self,
        request: Request<MemberRemoveRequest>,
    ) -> Result<Response<MemberRemoveResponse>, Status> {
        // Membership changes are root's (etcd checks on the member asked).
        self.node.check_admin(&request)?;
        // A leader removing itself may stop before its answer is sent: the
        // try is lost, the next goes to the new leader, which no longer
        // knows the member. That member was removed as asked (etcd, whose
        // members answer from their own apply, says so).
        let lost = AtomicBool::new(false);
        let id = request.get_ref().id;
        let answer = self
            .at_leader(
                request.into_inner(),
                |node, req| async move { node.member_remove(req.id).await },
                |mut leader, req| {
                    let lost = &lost;
                    async move {
                        let answer = leader.member_remove(req).await;
                        if answer.as_ref().is_err_and(|status| peer_errors::refusal_of(status).is_none()) {
                            lost.store(true, Ordering::Relaxed);
                        }
                        answer
                    }
                },
            )
            .await;
        match answer {
            Err(status) if lost.load(Ordering::Relaxed) && answers(&status, EtcdError::MemberNotFound) => {
                tracing::info!(member = %format!("{id:x}"), "removed by a try whose answer was lost");
                let members = self.node.member_list().into_iter().filter(|m| m.id != id).collect();
                Ok(Response::new(MemberRemoveResponse { header: self.node.header(), members }))
            }
            other => other,
        }
    }

    async fn member_update(
        &self,
        request: Request<MemberUpdateRequest>,
    ) -> Result<Response<MemberUpdateResponse>, Status> {
        // Membership changes are root's (etcd checks on the member asked).
        self.node.check_admin(&request)?;
        self.at_leader(
            request.into_inner(),
            |node, req| async move { node.member_update(&req).await },
            |mut leader, req| async move { leader.member_update(req).await },
        )
        .await
    }

    async fn member_list(
        &self,
        _: Request<MemberListRequest>,
    ) -> Result<Response<MemberListResponse>, Status> {
        Ok(Response::new(MemberListResponse { header: self.node.header(), members: self.node.member_list() }))
    }

    async fn member_promote(
        &self,
        request: Request<MemberPromoteRequest>,
    ) -> Result<Response<MemberPromoteResponse>, Status> {
        // Membership changes are root's (etcd checks on the member asked).
        self.node.check_admin(&request)?;
        self.at_leader(
            request.into_inner(),
            |node, req| async move { node.member_promote(req.id).await },
            |mut leader, req| async move { leader.member_promote(req).await },
        )
        .await
    }
}
