//! etcd's JSON gateway on the client port: `POST /v3/<service>/<call>` with
//! a JSON request body answers the call's response as JSON (grpc-gateway's
//! mapping, `json`); streams (watch, lease keep-alive, election observe,
//! snapshot) answer a line per message. Calls go to the same service code
//! gRPC clients reach, with the `Authorization` header as the auth token
//! (etcd reads it as grpc-gateway forwards it). `/v3beta/` is the same
//! (etcd 3.4 redirects it).

mod framer;
mod json;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use rtcd_proto::etcdserverpb::{
    auth_server::Auth, cluster_server::Cluster, kv_server::Kv, lease_server::Lease,
    maintenance_server::Maintenance,
};
use rtcd_proto::v3electionpb::election_server::Election;
use rtcd_proto::v3lockpb::lock_server::Lock;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use crate::auth::Credentials;
use crate::listener::TlsInfo;
use crate::node::Node;
use crate::services::{
    auth::AuthService, cluster::ClusterService, election::ElectionService, kv::KvService,
    lease::LeaseService, lock::LockService, maintenance::MaintenanceService,
};
use crate::watch::stream::WatchStream;

/// A gRPC request with what the HTTP request says of its sender.
fn grpc_request<T>(headers: &HeaderMap, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    credentials(headers).attach(&mut request);
    request
}

/// The token of the `Authorization` header (etcd takes it whole, no
/// "Bearer"). A gateway request is never named by a TLS certificate, as
/// etcd's gateway dials etcd with its own.
fn credentials(headers: &HeaderMap) -> Credentials {
    let token =
        headers.get(axum::http::header::AUTHORIZATION).map(|v| v.to_str().unwrap_or("\u{fffd}").to_owned());
    Credentials::with_token(token)
}

/// The gRPC request of an HTTP one, or why the body is not the call's JSON.
fn decode<Req: DeserializeOwned + Default>(
    headers: &HeaderMap,
    body: &[u8],
) -> Result<tonic::Request<Req>, Status> {
    json::decode::<Req>(body).map(|message| grpc_request(headers, message))
}

/// A unary call: decode, call, answer.
async fn unary<Req, Resp, Fut>(
    headers: HeaderMap,
    body: Bytes,
    call: impl FnOnce(tonic::Request<Req>) -> Fut,
) -> Response
where
    Req: DeserializeOwned + Default,
    Resp: Serialize,
    Fut: Future<Output = Result<tonic::Response<Resp>, Status>>,
{
    match decode(&headers, &body) {
        Ok(request) => json::answer(call(request).await.map(tonic::Response::into_inner)),
        Err(refused) => json::error(&refused),
    }
}

/// A call answered with a stream of messages.
async fn server_stream<Req, Resp, S, Fut>(
    headers: HeaderMap,
    body: Bytes,
    call: impl FnOnce(tonic::Request<Req>) -> Fut,
) -> Response
where
    Req: DeserializeOwned + Default,
    Resp: Serialize + Send + 'static,
    S: tokio_stream::Stream<Item = Result<Resp, Status>> + Send + 'static,
    Fut: Future<Output = Result<tonic::Response<S>, Status>>,
{
    let request = match decode(&headers, &body) {
        Ok(request) => request,
        Err(refused) => return json::error(&refused),
    };
    match call(request).await {
        Ok(answers) => json::stream(answers.into_inner()),
        Err(status) => json::error(&status),
    }
}

/// Routes `$path` (and its `/v3beta/` twin) to `$service.$method`, unary.
macro_rules! unary {
    ($router:ident, $service:ident, $method:ident, $($path:literal),+) => {
        $(
            for prefix in ["/v3/", "/v3beta/"] {
                let service = $service.clone();
                $router = $router.route(
                    &format!("{prefix}{}", $path),
                    post(move |headers: HeaderMap, body: Bytes| async move {
                        unary(headers, body, |r| async move { service.$method(r).await }).await
                    }),
                );
            }
        )+
    };
}

macro_rules! server_stream {
    ($router:ident, $service:ident, $method:ident, $path:literal) => {
        for prefix in ["/v3/", "/v3beta/"] {
            let service = $service.clone();
            $router = $router.route(
                &format!("{prefix}{}", $path),
                post(move |headers: HeaderMap, body: Bytes| async move {
                    server_stream(headers, body, |r| async move { service.$method(r).await }).await
                }),
            );
        }
    };
}

/// Every call etcd 3.4's gateway serves, at its paths.
pub fn routes(node: Arc<Node>) -> Router {
    let kv = Arc::new(KvService::new(node.clone()));
    let lease = Arc::new(LeaseService::new(node.clone()));
    let cluster = Arc::new(ClusterService::new(node.clone()));
    let maintenance = Arc::new(MaintenanceService::new(node.clone()));
    let auth = Arc::new(AuthService::new(node.clone()));
    let lock = Arc::new(LockService::new(node.clone()));
    let election = Arc::new(ElectionService::new(node.clone()));
    let mut router = Router::new();
    unary!(router, kv, range, "kv/range");
    unary!(router, kv, put, "kv/put");
    unary!(router, kv, delete_range, "kv/deleterange");
    unary!(router, kv, txn, "kv/txn");
    unary!(router, kv, compact, "kv/compaction");
    unary!(router, lease, lease_grant, "lease/grant");
    unary!(router, lease, lease_revoke, "lease/revoke", "kv/lease/revoke");
    unary!(router, lease, lease_time_to_live, "lease/timetolive", "kv/lease/timetolive");
    unary!(router, lease, lease_leases, "lease/leases", "kv/lease/leases");
    unary!(router, cluster, member_add, "cluster/member/add");
    unary!(router, cluster, member_remove, "cluster/member/remove");
    unary!(router, cluster, member_update, "cluster/member/update");
    unary!(router, cluster, member_list, "cluster/member/list");
    unary!(router, cluster, member_promote, "cluster/member/promote");
    unary!(router, maintenance, alarm, "maintenance/alarm");
    unary!(router, maintenance, status, "maintenance/status");
    unary!(router, maintenance, defragment, "maintenance/defragment");
    // Hash and HashKV share a path; grpc-gateway serves the later one.
    unary!(router, maintenance, hash_kv, "maintenance/hash");
    unary!(router, maintenance, move_leader, "maintenance/transfer-leadership");
    server_stream!(router, maintenance, snapshot, "maintenance/snapshot");
    unary!(router, auth, auth_enable, "auth/enable");
    unary!(router, auth, auth_disable, "auth/disable");
    unary!(router, auth, auth_status, "auth/status");
    unary!(router, auth, authenticate, "auth/authenticate");
    unary!(router, auth, user_add, "auth/user/add");
    unary!(router, auth, user_get, "auth/user/get");
    unary!(router, auth, user_list, "auth/user/list");
    unary!(router, auth, user_delete, "auth/user/delete");
    unary!(router, auth, user_change_password, "auth/user/changepw");
    unary!(router, auth, user_grant_role, "auth/user/grant");
    unary!(router, auth, user_revoke_role, "auth/user/revoke");
    unary!(router, auth, role_add, "auth/role/add");
    unary!(router, auth, role_get, "auth/role/get");
    unary!(router, auth, role_list, "auth/role/list");
    unary!(router, auth, role_delete, "auth/role/delete");
    unary!(router, auth, role_grant_permission, "auth/role/grant");
    unary!(router, auth, role_revoke_permission, "auth/role/revoke");
    unary!(router, lock, lock, "lock/lock");
    unary!(router, lock, unlock, "lock/unlock");
    unary!(router, election, campaign, "election/campaign");
    unary!(router, election, proclaim, "election/proclaim");
    unary!(router, election, leader, "election/leader");
    unary!(router, election, resign, "election/resign");
    server_stream!(router, election, observe, "election/observe");
    let limit = node.settings().max_message_bytes();
    for prefix in ["/v3/", "/v3beta/"] {
        let (for_watch, for_keep_alive) = (node.clone(), node.clone());
        router = router
            .route(&format!("{prefix}watch"), post(move |h: HeaderMap, b: Body| watch(for_watch, h, b)))
            .route(
                &format!("{prefix}lease/keepalive"),
                post(move |_: HeaderMap, b: Body| async move {
                    let incoming = json::requests(b, limit);
                    json::stream(crate::services::lease::keep_alive_answers(for_keep_alive, incoming))
                }),
            );
    }
    let gate = node.clone();
    router.layer(DefaultBodyLimit::max(limit)).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let refused = certificate_names_a_user(&gate, &request);
            async move {
                match refused {
                    true => {
                        drain(request.into_body(), limit).await;
                        common_name_refused()
                    }
                    false => next.run(request).await,
                }
            }
        },
    ))
}

/// etcd's rule: with `--client-cert-auth` and auth on, a gateway request
/// over a certificate that carries a common name is refused, since the
/// gateway could not pass the name on and the client would be served as
/// someone else than it expects.
fn certificate_names_a_user(node: &Node, request: &axum::extract::Request) -> bool {
    let client_cert_auth = node.settings().client_tls.as_ref().is_some_and(|t| t.client_cert_auth);
    let named = request
        .extensions()
        .get::<TlsInfo>()
        .is_some_and(|i| i.common_name.as_ref().is_some_and(|cn| !cn.is_empty()));
    client_cert_auth && named && node.store().auth_enabled()
}

/// Reads and drops a refused request's body (up to `limit` bytes), as Go's
/// server does before closing. hyper closes an HTTP/1 connection whose
/// request body was left unread; closed with bytes still unread in the
/// socket, the kernel resets it, and a client whose body arrived a moment
/// late loses the answer it was sent.
async fn drain(body: Body, limit: usize) {
    let _ = axum::body::to_bytes(body, limit).await;
}

/// etcd's answer (Go's `http.Error`: plain text, a newline, 400).
fn common_name_refused() -> Response {
    let text =
        "CommonName of client sending a request against gateway will be ignored and not used as expected\n";
    Response::builder()
        .status(axum::http::StatusCode::BAD_REQUEST)
        .header(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("x-content-type-options", "nosniff")
        .body(Body::from(text))
        .unwrap_or_default()
}

/// `/v3/watch`: the body's requests (creates, cancels, progress requests)
/// go to a watch stream as a gRPC stream's would; its answers stream back.
async fn watch(node: Arc<Node>, headers: HeaderMap, body: Body) -> Response {
    let (out, answers) = tokio::sync::mpsc::channel(64);
    let stream = match WatchStream::new(node.clone(), out, credentials(&headers)) {
        Ok(stream) => stream,
        Err(e) => return json::error(&Status::from(e)),
    };
    let incoming = json::requests(body, node.settings().max_message_bytes());
    tokio::spawn(stream.run(incoming, node.settings().watch_progress_interval, false));
    json::stream(ReceiverStream::new(answers).map(|answer| answer))
}
