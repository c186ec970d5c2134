//! The KV workloads (`put`, `txn-put`, `range`) on rtcd's own generated
//! gRPC stubs, connected the way etcd's `tools/benchmark` connects: each of
//! `--conns` connections is one HTTP/2 connection to one endpoint, taken in
//! turn, and the clients share the connections round-robin.
//!
//! Why not the `etcd-client` crate here: its client balances every request
//! over all endpoints through a tower balancer and its own buffer task, and
//! a request clones the whole client (every service's stub). Nor tonic's
//! `Channel`: it too hands every request to a buffer task. On two cores the
//! load generator's CPU is taken from the server it measures, and with those
//! layers rtcd-bench read about 30% below etcd's own tool against the same
//! server. Here a request goes from the stub straight to hyper's HTTP/2
//! connection, as grpc-go's does to its transport, and the connection
//! writes the requests its clients have ready together, as grpc-go's does
//! (`rtcd_proto::coalesce`; one `writev` per request made the server read
//! about five times as many segments as etcd's tool makes it read).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::client::conn::http2::{self, SendRequest};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rtcd_proto::coalesce::Coalesce;
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use rtcd_proto::etcdserverpb::{PutRequest, RangeRequest, RequestOp, TxnRequest, request_op};

use crate::load::LoadError;

/// One stub per connection; clones share the connection.
pub type Kv = KvClient<Connection>;

/// One HTTP/2 connection as the service tonic's stubs call; a clone is a
/// handle on the same connection.
#[derive(Clone)]
pub struct Connection(SendRequest<tonic::body::Body>);

impl tower_service::Service<http::Request<tonic::body::Body>> for Connection {
    type Response = http::Response<hyper::body::Incoming>;
    type Error = hyper::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        Box::pin(self.0.send_request(request))
    }
}

/// `conns` connections, connection `i` to `endpoints[i % len]`.
pub async fn connect(endpoints: &[String], conns: usize) -> Result<Vec<Kv>, LoadError> {
    let mut out = Vec::with_capacity(conns.max(1));
    for i in 0..conns.max(1) {
        let endpoint = &endpoints[i % endpoints.len().max(1)];
        let failed = |e: String| LoadError::Dial(endpoint.clone(), e);
        let url = if endpoint.contains("://") { endpoint.clone() } else { format!("http://{endpoint}") };
        let origin: http::Uri = url.parse().map_err(|e: http::uri::InvalidUri| failed(e.to_string()))?;
        let authority = origin.authority().ok_or_else(|| failed("no host:port".into()))?.to_string();
        let tcp = tokio::time::timeout(Duration::from_secs(5), tokio::net::TcpStream::connect(&authority))
            .await
            .map_err(|_| failed("timed out".into()))?
            .map_err(|e| failed(e.to_string()))?;
        tcp.set_nodelay(true).map_err(|e| failed(e.to_string()))?;
        let (send, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(Coalesce::new(tcp)))
            .await
            .map_err(|e| failed(e.to_string()))?;
        // The connection's I/O runs on its own task until every handle is dropped.
        tokio::spawn(connection);
        out.push(KvClient::with_origin(Connection(send), origin).max_decoding_message_size(usize::MAX));
    }
    Ok(out)
}

/// A put of `value` to `key`.
pub async fn put(mut kv: Kv, key: Bytes, value: Bytes) -> Result<(), tonic::Status> {
    kv.put(PutRequest { key, value, ..Default::default() }).await.map(|_| ())
}

/// One transaction putting `value` to each of `keys`, unconditionally.
pub async fn txn_put(mut kv: Kv, keys: Vec<Bytes>, value: Bytes) -> Result<(), tonic::Status> {
    let success = keys
        .into_iter()
        .map(|key| RequestOp {
            request: Some(request_op::Request::RequestPut(PutRequest {
                key,
                value: value.clone(),
                ..Default::default()
            })),
        })
        .collect();
    kv.txn(TxnRequest { success, ..Default::default() }).await.map(|_| ())
}

/// A read of `key` (or `[key, range_end)`), linearizable unless `serializable`.
pub async fn range(
    mut kv: Kv,
    key: Bytes,
    range_end: Bytes,
    serializable: bool,
) -> Result<(), tonic::Status> {
    kv.range(RangeRequest { key, range_end, serializable, ..Default::default() }).await.map(|_| ())
}
