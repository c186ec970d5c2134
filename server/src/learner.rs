//! What a learner serves: as etcd, only Maintenance.Status and serializable
//! ranges. Every other gRPC call on a learner's client URL, streams
//! included, is answered "etcdserver: rpc not supported for learner" before
//! it reaches a service (the Range service refuses linearizable ranges
//! itself, since telling them apart needs the message). Plain HTTP
//! (`/health`, `/metrics`, `/version`) passes, as with etcd.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::{Either, Ready, ready};
use tonic::Status;
use tonic::body::Body;

use crate::errors::EtcdError;
use crate::grpc_body::is_grpc;
use crate::node::Node;

/// The calls a learner answers (Range only when serializable).
const SERVED_BY_LEARNERS: [&str; 2] = ["/etcdserverpb.Maintenance/Status", "/etcdserverpb.KV/Range"];

#[derive(Debug, Clone)]
pub struct LearnerGateLayer {
    pub node: Arc<Node>,
}

impl<S> tower_layer::Layer<S> for LearnerGateLayer {
    type Service = LearnerGate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        LearnerGate { inner, node: self.node.clone() }
    }
}

#[derive(Debug, Clone)]
pub struct LearnerGate<S> {
    inner: S,
    node: Arc<Node>,
}

impl<S> tower_service::Service<http::Request<Body>> for LearnerGate<S>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Either<Ready<Result<Self::Response, Self::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let refused = is_grpc(&request)
            && !SERVED_BY_LEARNERS.contains(&request.uri().path())
            && self.node.raft().is_learner();
        if refused {
            let status = Status::from(EtcdError::NotSupportedForLearner);
            return Either::Left(ready(Ok(status.into_http())));
        }
        Either::Right(self.inner.call(request))
    }
}
