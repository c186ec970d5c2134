//! Starting the server: connect to etcd, bring up the registry and its
//! caches, create the built-in namespaces, run the compactor, serve HTTP.

use std::net::SocketAddr;
use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

use crate::cache::CacheConfig;
use crate::config::Config;
use crate::http::{self, App};
use crate::registry::Registry;
use crate::storage::{Compactor, Step};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("invalid --etcd-servers URL {url:?}: {why}")]
    EtcdUrl { url: String, why: String },
    #[error(
        "--bind-address {0} is not a loopback address: plain HTTP is served on loopback only (give --tls-cert-file and --tls-private-key-file to serve HTTPS)"
    )]
    PlainHttpNotLoopback(std::net::IpAddr),
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    #[error("cannot listen on {addr}: {why}")]
    Bind { addr: SocketAddr, why: String },
    #[error("serving failed: {0}")]
    Serve(String),
}

/// One channel balanced over every etcd member given.
pub fn etcd_channel(servers: &[String]) -> Result<Channel, StartError> {
    let mut endpoints = Vec::with_capacity(servers.len());
    for url in servers {
        let endpoint = Endpoint::from_shared(url.clone())
            .map_err(|e| StartError::EtcdUrl { url: url.clone(), why: e.to_string() })?
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_while_idle(true);
        endpoints.push(endpoint);
    }
    Ok(Channel::balance_list(endpoints.into_iter()))
}

pub async fn run(config: Config) -> Result<(), StartError> {
    let tls = match (&config.tls_cert_file, &config.tls_private_key_file) {
        (Some(cert), Some(key)) => Some(crate::tls::acceptor(cert, key)?),
        _ if !config.bind_address.is_loopback() => {
            return Err(StartError::PlainHttpNotLoopback(config.bind_address));
        }
        _ => None,
    };
    let channel = etcd_channel(&config.etcd_servers)?;
    let registry = Registry::new(
        channel.clone(),
        &config.etcd_prefix,
        CacheConfig::default(),
        config.service_cluster_ip_range,
    );
    tokio::spawn(start_up(registry.clone()));
    if !config.etcd_compaction_interval.is_zero() {
        tokio::spawn(compact_every(channel, config.etcd_compaction_interval));
    }
    let app = App::new(registry, config.max_requests_inflight, config.max_mutating_requests_inflight);
    let addr = SocketAddr::new(config.bind_address, config.secure_port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::Bind { addr, why: e.to_string() })?;
    tracing::info!(%addr, https = tls.is_some(), etcd = ?config.etcd_servers, "serving");
    let router = http::router(app);
    match tls {
        Some(acceptor) => {
            crate::tls::serve(listener, acceptor, router, shutdown_signal()).await;
            Ok(())
        }
        None => axum::serve(listener, router)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(|e| StartError::Serve(e.to_string())),
    }
}

/// Creates the built-in namespaces and resumes unfinished namespace
/// deletions, retrying while etcd is unreachable.
async fn start_up(registry: Registry) {
    loop {
        match registry.bootstrap().await {
            Ok(()) => break,
            Err(e) => {
                tracing::warn!(error = %e, "creating the built-in namespaces; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    if let Err(e) = crate::namespaces::resume_terminating(&registry).await {
        tracing::warn!(error = %e, "could not resume namespace deletions");
    }
}

/// kube-apiserver's compaction loop: one step per interval.
async fn compact_every(channel: Channel, interval: Duration) {
    let mut compactor = Compactor::new(channel);
    let mut tick = tokio::time::interval(interval);
    tick.tick().await;
    loop {
        tick.tick().await;
        match compactor.step().await {
            Ok(Step::Compacted(rev)) => tracing::info!(revision = rev, "compacted etcd"),
            Ok(step) => tracing::debug!(?step, "compaction round"),
            Err(e) => tracing::warn!(error = %e, "compaction failed"),
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
