//! Serves the gRPC services on every client URL until shutdown.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    auth_server::AuthServer, cluster_server::ClusterServer, kv_server::KvServer, lease_server::LeaseServer,
    maintenance_server::MaintenanceServer, watch_server::WatchServer,
};
use rtcd_proto::v3electionpb::election_server::ElectionServer;
use rtcd_proto::v3lockpb::lock_server::LockServer;
use tokio::io::DuplexStream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::Routes;
use tonic::transport::Server;
use tonic::transport::server::Router;
use tonic_health::pb::health_server::{Health, HealthServer};
use tower_layer::{Identity, Stack};

use crate::grpc_body::WholeMessagesLayer;
use crate::learner::LearnerGateLayer;
use crate::metrics::grpc::GrpcMetricsLayer;
use crate::node::Node;
use crate::services::lease::LeaseService;
use crate::services::peer::PeerService;
use crate::services::{
    auth::AuthService, cluster::ClusterService, election::ElectionService, kv::KvService, lock::LockService,
    maintenance::MaintenanceService, watch::WatchService,
};
use crate::settings::{Listen, TlsFiles};
use crate::tls::Reloading;

/// See where it is set.
const CONNECTION_WINDOW: u32 = 16 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The error and its causes, joined: tonic's own text is only
    /// "transport error", the cause says what went wrong (address in use).
    #[error("serving {0}: {1}")]
    Transport(std::net::SocketAddr, String),
    #[error("serving in-process clients: {0}")]
    Local(String),
    #[error("TLS: {0}")]
    Tls(String),
    /// Replication stopped on a fatal error: serving on would answer reads
    /// from a state no longer kept up to date.
    #[error("raft stopped: {0}")]
    RaftStopped(String),
}

fn transport_error(addr: std::net::SocketAddr, error: tonic::transport::Error) -> ServeError {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(&error);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    ServeError::Transport(addr, text)
}

/// What every call on a client URL passes through, innermost last: whole
/// messages under the size limit, the learner gate, the gRPC counters.
type ClientLayers = Stack<GrpcMetricsLayer, Stack<LearnerGateLayer, Stack<WholeMessagesLayer, Identity>>>;

/// The client services (KV, Watch, Lease, Cluster, Maintenance, Lock,
/// Election, health) and etcd's plain HTTP endpoints, as each client URL
/// serves them.
fn client_router(node: &Arc<Node>, health: HealthServer<impl Health>) -> Router<ClientLayers> {
    let settings = node.settings();
    let max_recv = settings.max_message_bytes();
    let grpc = Routes::new(health)
        .add_service(
            KvServer::new(KvService::new(node.clone()))
                .max_decoding_message_size(max_recv)
                .max_encoding_message_size(usize::MAX),
        )
        .add_service(
            ClusterServer::new(ClusterService::new(node.clone())).max_decoding_message_size(max_recv),
        )
        .add_service(LeaseServer::new(LeaseService::new(node.clone())).max_decoding_message_size(max_recv))
        .add_service(
            WatchServer::new(WatchService::new(node.clone(), settings.watch_progress_interval))
                .max_decoding_message_size(max_recv)
                .max_encoding_message_size(usize::MAX),
        )
        .add_service(
            MaintenanceServer::new(MaintenanceService::new(node.clone()))
                .max_decoding_message_size(max_recv)
                .max_encoding_message_size(usize::MAX),
        )
        .add_service(AuthServer::new(AuthService::new(node.clone())).max_decoding_message_size(max_recv))
        .add_service(LockServer::new(LockService::new(node.clone())).max_decoding_message_size(max_recv))
        .add_service(
            ElectionServer::new(ElectionService::new(node.clone())).max_decoding_message_size(max_recv),
        );
    // etcd answers plain HTTP (/health, /metrics, /version) on the same port.
    // And etcd's JSON gateway (/v3/...).
    let http = crate::http::routes(node.clone()).merge(crate::gateway::routes(node.clone()));
    let routes = Routes::from(grpc.into_axum_router().merge(http).fallback(crate::http::not_found));
    Server::builder()
        .accept_http1(true)
        .max_concurrent_streams(settings.max_concurrent_streams)
        // HTTP/2 (h2) tears a connection down when more small DATA frames
        // sit unread than half this window allows for: at hyper's 1 MiB,
        // ~2,000 watch creates sent back to back. 16 MiB is the most
        // grpc-go (etcd) grows a connection's window to.
        .initial_connection_window_size(CONNECTION_WINDOW)
        .http2_keepalive_interval(Some(settings.grpc_keepalive_interval))
        .http2_keepalive_timeout(Some(settings.grpc_keepalive_timeout))
        .layer(WholeMessagesLayer { max_message_bytes: max_recv })
        .layer(LearnerGateLayer { node: node.clone() })
        .layer(GrpcMetricsLayer { counters: node.metrics().grpc.clone() })
        .add_routes(routes)
}

/// One side's TLS configuration, read (and for `--auto-tls` made) once at
/// startup so a bad file stops the member before it serves.
fn tls_source(files: Option<&TlsFiles>, advertised: &[String]) -> Result<Option<Arc<Reloading>>, ServeError> {
    let Some(files) = files else { return Ok(None) };
    let hosts: Vec<String> = advertised
        .iter()
        .filter_map(|url| url.split("://").nth(1))
        .filter_map(|rest| rest.rsplit_once(':').map(|(host, _)| host.trim_matches(['[', ']']).to_owned()))
        .collect();
    crate::tls::make_self_signed(files, &hosts).map_err(|e| ServeError::Tls(e.to_string()))?;
    Ok(Some(Arc::new(Reloading::new(files.clone()).map_err(|e| ServeError::Tls(e.to_string()))?)))
}

/// How often the leader is looked at for `etcd_server_leader_changes_seen_total`.
const LEADER_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Tells the metrics which leader this member sees, until it is dropped:
/// `etcd_server_has_leader`'s leader, which a leader without a quorum for a
/// lease no longer is.
async fn watch_leader(node: std::sync::Weak<Node>) {
    let mut tick = tokio::time::interval(LEADER_POLL);
    loop {
        tick.tick().await;
        let Some(node) = node.upgrade() else { return };
        node.metrics().leader_seen(node.raft().leader());
    }
}

/// Resolves once `stop` turns true.
async fn stopped(mut stop: tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Resolves once this member's attributes are published (see
/// `membership::spawn_publisher`), or once it is stopping.
async fn published_or_stopped(
    mut published: tokio::sync::watch::Receiver<bool>,
    stop: tokio::sync::watch::Receiver<bool>,
) {
    tokio::select! {
        _ = published.wait_for(|p| *p) => {}
        () = stopped(stop) => {}
    }
}

/// Client connections made within this process (an API server running in
/// its member's process): served as a client URL's are, without a socket.
pub type LocalConnections = ReceiverStream<std::io::Result<DuplexStream>>;

/// Runs until `shutdown` resolves, then stops accepting and drains. Serves
/// the peer and client URLs of the settings, and `local`'s connections.
pub async fn serve(
    node: Arc<Node>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    local: Option<LocalConnections>,
) -> Result<(), ServeError> {
    let settings = node.settings();
    let (health_reporter, health) = tonic_health::server::health_reporter();
    // etcd registers the empty service name as SERVING.
    health_reporter.set_service_status("", tonic_health::ServingStatus::Serving).await;

    crate::leases::spawn(node.clone(), settings.lease_checkpoint_interval);
    let published = crate::membership::spawn_publisher(node.clone());
    crate::compactor::spawn(node.clone(), settings.auto_compaction);
    tokio::spawn(watch_leader(Arc::downgrade(&node)));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });

    let mut servers = tokio::task::JoinSet::new();
    let client_tls = tls_source(settings.client_tls.as_ref(), &settings.advertise_client_urls)?;
    let peer_tls = tls_source(settings.peer_tls.as_ref(), &settings.advertise_peer_urls)?;
    let ping_min_time = settings.grpc_keepalive_min_time;
    // Peers reach this member's Raft on the peer URLs.
    for &Listen { addr, tls } in &settings.listen_peer {
        let router =
            Server::builder().add_service(node.raft_service()).add_service(PeerService::server(node.clone()));
        let stopped = stopped(stop_rx.clone());
        let peer_tls = peer_tls.clone();
        servers.spawn(async move {
            let failed = |e: std::io::Error| ServeError::Transport(addr, e.to_string());
            let served = match (tls, peer_tls) {
                (true, Some(tls)) => {
                    router
                        .serve_with_incoming_shutdown(
                            crate::listener::bind_tls(addr, tls, ping_min_time).map_err(failed)?,
                            stopped,
                        )
                        .await
                }
                _ => router.serve_with_shutdown(addr, stopped).await,
            };
            served.map_err(|e| transport_error(addr, e))
        });
        tracing::info!(%addr, tls, "serving peers");
    }
    // Client sockets are bound at once (a taken port fails the start) and
    // served once this member is published; connections wait meanwhile.
    for &Listen { addr, tls } in &settings.listen_client {
        let router = client_router(&node, health.clone());
        let stopped = stopped(stop_rx.clone());
        let ready = published_or_stopped(published.clone(), stop_rx.clone());
        let client_tls = client_tls.clone();
        servers.spawn(async move {
            let failed = |e: std::io::Error| ServeError::Transport(addr, e.to_string());
            let served = match (tls, client_tls) {
                (true, Some(tls)) => {
                    let incoming = crate::listener::bind_tls(addr, tls, ping_min_time).map_err(failed)?;
                    ready.await;
                    router.serve_with_incoming_shutdown(incoming, stopped).await
                }
                _ => {
                    let incoming = crate::listener::bind(addr, ping_min_time).map_err(failed)?;
                    ready.await;
                    router.serve_with_incoming_shutdown(incoming, stopped).await
                }
            };
            served.map_err(|e| transport_error(addr, e))
        });
        tracing::info!(%addr, tls, "serving client requests");
    }
    if let Some(local) = local {
        let router = client_router(&node, health.clone());
        let stopped = stopped(stop_rx.clone());
        let ready = published_or_stopped(published.clone(), stop_rx.clone());
        servers.spawn(async move {
            ready.await;
            router
                .serve_with_incoming_shutdown(local, stopped)
                .await
                .map_err(|e| ServeError::Local(e.to_string()))
        });
        tracing::info!("serving client requests in process");
    }
    let serving = async move {
        while let Some(done) = servers.join_next().await {
            if let Ok(Err(e)) = done {
                return Err(e);
            }
        }
        Ok(())
    };
    tokio::select! {
        served = serving => served,
        cause = node.raft().stopped() => Err(ServeError::RaftStopped(cause)),
    }
}
