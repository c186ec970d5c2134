//! Starting the server: connect to etcd, serve the built-in kinds through
//! the admission chain, start the controllers and the compactor, and serve
//! HTTP(S) through the filters.
//!
//! * `conn`: accepting and serving connections within kube's limits.
//! * `etcd`: the channel to etcd's members, over TLS for `https://` ones.
//! * `tls`: the HTTPS configuration, with the client's certificate passed on.

pub mod conn;
pub mod etcd;
mod resource_stats;
mod shared_tcp;
pub mod tls;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use crate::admission;
use crate::aggregator::{Aggregator, Routing};
use crate::audit::Auditor;
use crate::authn::client_ca::ClientCa;
use crate::authn::request_header::RequestHeader;
use crate::authn::token_review::TokenReviewer;
use crate::authn::{Authenticator, ServiceAccountTokens, TokenFile};
use crate::authz::delegated::Delegated;
use crate::authz::rbac::escalation::EscalationCheck;
use crate::authz::rbac::{self, Rbac, RbacIndex};
use crate::authz::{AlwaysAllow, AlwaysDeny, Authorizer, Union};
use crate::delegation::MainServer;
use crate::endpoints::{self, App};
use crate::filters::{self, FilterState, Limits};
use crate::metrics::Metrics;
use crate::options::{AuthorizationMode, Options};
use crate::registry::Resources;
use crate::registry::kinds;
use crate::storage::{Compactor, Endpoints, Etcd3Store, Step, Storage};
use crate::tls_client::ClientCertificate;
use conn::ConnectionLimits;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Etcd(#[from] etcd::EtcdError),
    #[error("--bind-address {0} is not a loopback address: --plain-http is served on loopback only")]
    PlainHttpNotLoopback(std::net::IpAddr),
    #[error("cannot make the self-signed serving certificate: {0}")]
    SelfSigned(#[from] crate::pki::PkiError),
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("cannot use the client CA file {0}: {1}")]
    ClientCa(String, String),
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
    #[error(transparent)]
    TokenFile(#[from] crate::authn::token_file::TokenFileError),
    #[error(transparent)]
    ServiceAccountKey(#[from] crate::authn::service_account::KeyError),
    #[error("{0}")]
    Admission(String),
    #[error("cannot serve the built-in kinds: {0}")]
    Register(String),
    #[error("--cluster-signing-cert-file and --cluster-signing-key-file: {0}")]
    SigningCa(crate::pki::PkiError),
    #[error("the main API server's kubeconfig: {0}")]
    Delegation(String),
    #[error("--proxy-client-cert-file and --proxy-client-key-file: {0}")]
    ProxyClient(String),
    #[error("cannot listen on {addr}: {why}")]
    Bind { addr: SocketAddr, why: String },
    #[error(
        "--show-hidden-metrics-for-version must be omitted or have the value '{0}'; only the previous minor version is allowed"
    )]
    ShowHiddenMetrics(String),
}

/// Every watch holds a socket; the usual soft limit (1024) is too few.
pub fn raise_open_files_limit() {
    if let Err(e) = rlimit::increase_nofile_limit(u64::MAX) {
        tracing::warn!(error = %e, "could not raise the open files limit");
    }
}

/// Serves over the etcd members of `--etcd-servers`.
pub async fn run(options: Options) -> Result<(), StartError> {
    let channel = etcd::channel(&options.etcd)?;
    tracing::info!(etcd = ?options.etcd.etcd_servers, "storing in etcd");
    run_over(options, channel).await
}

/// Serves over the etcd API that `channel` reaches (`--etcd-servers` and
/// the etcd TLS flags are not read): how a member serves an API server of
/// its own in process.
pub async fn run_over(mut options: Options, etcd: impl Into<Endpoints>) -> Result<(), StartError> {
    let channel = etcd.into();
    let show_hidden_metrics = show_hidden_metrics(&options.show_hidden_metrics_for_version)?;
    look_up_delegated_trust(&mut options).await?;
    let serving = &options.serving;
    let tls = match (&serving.tls_cert_file, &serving.tls_private_key_file) {
        (Some(cert), Some(key)) => Some(tls::acceptor(cert, key, &client_ca_files(&options))?),
        _ if serving.plain_http && !serving.bind_address.is_loopback() => {
            return Err(StartError::PlainHttpNotLoopback(serving.bind_address));
        }
        _ if serving.plain_http => None,
        _ => {
            // Secure by default, as kube-apiserver: a certificate of our own.
            let names = crate::pki::serving_names(
                IpAddr::V4(options.service_cluster_ip_range.first()),
                &[serving.bind_address.to_string()],
            );
            let (cert, key) = crate::pki::self_signed_serving(&serving.cert_dir, &names)?;
            tracing::info!(cert = %cert.display(), "serving HTTPS with a self-signed certificate");
            Some(tls::acceptor(&cert, &key, &client_ca_files(&options))?)
        }
    };
    let storage: Arc<dyn Storage> = Arc::new(Etcd3Store::new(channel.clone()));
    let escalation = Arc::new(EscalationCheck::default());
    let admission = admission_setup(&options.admission, vec![escalation.clone()])?;
    let admission_metrics = admission.metrics();
    let admission_permissions = admission.lookups.permissions.clone();
    let resources = kinds::serve_with(
        storage,
        &options.etcd.etcd_prefix,
        options.service_ranges(),
        admission,
        options.cache(),
    )
    .map_err(|e| StartError::Register(e.to_string()))?;
    tokio::spawn(crate::controllers::bootstrap::run(resources.clone(), options.service_cluster_ip_range));
    tokio::spawn(crate::controllers::namespace::run(resources.clone()));
    tokio::spawn(crate::controllers::service_account::run(resources.clone()));
    tokio::spawn(crate::controllers::resource_quota::run(resources.clone()));
    tokio::spawn(crate::controllers::garbage_collector::run(resources.clone()));
    tokio::spawn(crate::controllers::storage_protection::run(resources.clone()));
    tokio::spawn(crate::controllers::customresourcedefinitions::run(resources.clone()));
    let metrics = Arc::new(Metrics::default());
    metrics.set_build_info(endpoints::build_info());
    let aggregator = Arc::new(aggregator(&options)?.with_metrics(metrics.aggregator.clone()));
    tokio::spawn(crate::controllers::apiservices::run(resources.clone(), aggregator.clone()));
    tokio::spawn(crate::controllers::authentication_trust::run(resources.clone(), trust(&options)?));
    let flow_control =
        options.limits.enable_priority_and_fairness.then(|| flow_control(&options, &resources));
    tokio::spawn(crate::controllers::flowcontrol::run(resources.clone(), flow_control.clone()));
    if let (Some(cert), Some(key)) = (&options.cluster_signing_cert_file, &options.cluster_signing_key_file) {
        let authority = crate::pki::Authority::load_files(cert, key).map_err(StartError::SigningCa)?;
        let signer = crate::controllers::csr_signing::Signer {
            authority: Arc::new(authority),
            duration: options.cluster_signing_duration,
        };
        tokio::spawn(crate::controllers::csr_signing::run(resources.clone(), signer));
    }
    tokio::spawn(read_database_size(channel.clone(), resources.storage_metrics().clone()));
    if !options.etcd.etcd_compaction_interval.is_zero() {
        tokio::spawn(compact_every(channel, options.etcd.etcd_compaction_interval));
    }
    for source in admission_metrics {
        metrics.add_source(source);
    }
    let served = resources.clone();
    metrics.add_source(Arc::new(move |out: &mut String| served.write_metrics(out, show_hidden_metrics)));
    let limits = Arc::new(Limits::new(
        options.limits.max_requests_inflight,
        options.limits.max_mutating_requests_inflight,
    ));
    let max_body = usize::try_from(options.limits.max_request_body_bytes).unwrap_or(usize::MAX);
    let authenticator = Arc::new(authenticator(&options, &resources, &metrics)?);
    let (authorizer, rbac_index) = match delegated_authorizer(&options)? {
        Some(delegated) => (delegated, None),
        None => authorizer(&options, &resources),
    };
    let authorizer = Arc::new(authorizer);
    admission_permissions.set(authorizer.clone());
    if let Some(index) = rbac_index {
        escalation.set_authority(authorizer.clone(), index);
    }
    let app = App::secured(resources, metrics.clone(), max_body, authenticator.clone(), authorizer.clone());
    app.aggregate_with(aggregator);
    if let Some(flow_control) = &flow_control {
        app.serve_flow_control_dumps(flow_control.clone());
        let source = flow_control.clone();
        metrics.add_source(Arc::new(move |out: &mut String| source.write_metrics(out)));
    }
    let auditor = Auditor::from_options(&options.audit)?;
    if let Some(auditor) = &auditor {
        let auditor = auditor.clone();
        metrics.add_source(Arc::new(move |out: &mut String| auditor.write_metrics(out)));
    }
    let request_timeout = options.limits.request_timeout;
    let state =
        FilterState { metrics, limits, authenticator, authorizer, auditor, request_timeout, flow_control };
    let router = filters::build(endpoints::router(app), state);
    let addr = SocketAddr::new(serving.bind_address, serving.secure_port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| StartError::Bind { addr, why: e.to_string() })?;
    tracing::info!(%addr, https = tls.is_some(), "serving");
    conn::serve(listener, tls, router, connection_limits(&options), shutdown_signal()).await;
    Ok(())
}

/// API Priority and Fairness over the server's seats (kube's: the two
/// in-flight limits together), its borrowing adjusted from now on.
fn flow_control(options: &Options, resources: &Resources) -> Arc<crate::flowcontrol::FlowControl> {
    let seats = options.limits.max_requests_inflight + options.limits.max_mutating_requests_inflight;
    let seats = u32::try_from(seats).unwrap_or(u32::MAX).max(1);
    let flow_control = Arc::new(crate::flowcontrol::FlowControl::new(seats, options.limits.request_timeout));
    flow_control.set_stats(Arc::new(resource_stats::ServedStats(resources.clone())));
    tokio::spawn(flow_control.clone().run_borrowing());
    flow_control
}

/// The stack of each of the server's threads. Evaluating a CEL expression
/// recurses once per level of its tree (at most 250, the compile-time
/// limit) and of the objects it reads (at most the decoder's depth), tens of
/// KiB a level in debug builds: far past tokio's default of 2 MiB. Only
/// what is touched is resident.
const THREAD_STACK_BYTES: usize = 32 << 20;

/// The runtime the server runs on (rtcd-apiserver's and rtcd-combined's).
pub fn tokio_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().thread_stack_size(THREAD_STACK_BYTES).build()
}

/// The admission chain the flags ask for (refused at startup with kube's
/// texts), then the server's own checks; the plugins are logged in order.
fn admission_setup(
    options: &crate::options::AdmissionOptions,
    checks: Vec<Arc<dyn admission::Plugin>>,
) -> Result<admission::Setup, StartError> {
    let enabled =
        admission::plugins::enabled(&options.enable_admission_plugins, &options.disable_admission_plugins)
            .map_err(StartError::Admission)?;
    let names =
        |support| -> Vec<&str> { enabled.iter().filter(|k| k.support == support).map(|k| k.name).collect() };
    tracing::info!(plugins = ?names(admission::plugins::Support::Built), "admission plugins");
    let missing = names(admission::plugins::Support::Missing);
    if !missing.is_empty() {
        tracing::warn!(plugins = ?missing, "default admission plugins not built into rtcd-apiserver yet; running without them");
    }
    let config = options.plugin_config().map_err(StartError::Admission)?;
    admission::Setup::new(&enabled, &config, checks).map_err(StartError::Admission)
}

/// `--show-hidden-metrics-for-version`: whether kube's hidden deprecated
/// metrics are shown (only the previous minor version may be named).
fn show_hidden_metrics(version: &str) -> Result<bool, StartError> {
    let (major, minor) = endpoints::KUBE_VERSION;
    let previous =
        minor.parse::<u32>().map(|m| format!("{major}.{}", m.saturating_sub(1))).unwrap_or_default();
    match version {
        "" => Ok(false),
        v if v == previous => Ok(true),
        _ => Err(StartError::ShowHiddenMetrics(previous)),
    }
}

/// The authenticators the flags configure.
fn authenticator(
    options: &Options,
    resources: &Resources,
    metrics: &Metrics,
) -> Result<Authenticator, StartError> {
    let authn = &options.authentication;
    let token_file = match &authn.token_auth_file {
        Some(path) => Some(TokenFile::read(path)?),
        None => None,
    };
    let service_accounts = if authn.service_accounts() {
        Some(ServiceAccountTokens::new(
            authn.service_account_signing_key_file.as_deref(),
            &authn.service_account_key_files,
            authn.service_account_issuers.clone(),
            authn.api_audiences.clone(),
            resources.clone(),
        )?)
    } else {
        None
    };
    let request_header = match &authn.requestheader_client_ca_file {
        Some(path) => Some(RequestHeader {
            ca: ClientCa::read(path).map_err(|why| StartError::ClientCa(path.display().to_string(), why))?,
            allowed_names: authn.requestheader_allowed_names.clone(),
            username_headers: authn.requestheader_username_headers.clone(),
            uid_headers: authn.requestheader_uid_headers.clone(),
            group_headers: authn.requestheader_group_headers.clone(),
            extra_prefixes: authn.requestheader_extra_headers_prefix.clone(),
        }),
        None => None,
    };
    // With front proxies' CA trusted too, a user's chain is checked against
    // the users' CA again.
    let client_ca = match (&options.serving.client_ca_file, &request_header) {
        (Some(path), Some(_)) => {
            Some(ClientCa::read(path).map_err(|why| StartError::ClientCa(path.display().to_string(), why))?)
        }
        _ => None,
    };
    let token_review = match &authn.authentication_kubeconfig {
        Some(path) => Some(TokenReviewer::new(main_server(path)?)),
        None => None,
    };
    Ok(Authenticator {
        client_certificates: options.serving.client_ca_file.is_some(),
        client_ca,
        request_header,
        token_file,
        service_accounts,
        token_review,
        anonymous: authn.anonymous_auth,
        metrics: Some(metrics.authn.clone()),
    })
}

/// The main server a delegating kubeconfig names.
fn main_server(path: &std::path::Path) -> Result<MainServer, StartError> {
    MainServer::from_kubeconfig(path).map_err(StartError::Delegation)
}

/// How many times, a second apart, an extension server asks the main one
/// for its trust before starting without it.
const TRUST_LOOKUPS: u32 = 10;

/// An extension server's client CAs and front-proxy settings, read from the
/// main server (unless `--authentication-skip-lookup`, or the flags say
/// them all).
async fn look_up_delegated_trust(options: &mut Options) -> Result<(), StartError> {
    let authn = &options.authentication;
    let Some(path) = authn.authentication_kubeconfig.clone() else { return Ok(()) };
    let complete = options.serving.client_ca_file.is_some() && authn.requestheader_client_ca_file.is_some();
    if authn.authentication_skip_lookup || complete {
        return Ok(());
    }
    let server = main_server(&path)?;
    let dir = options.serving.cert_dir.clone();
    for attempt in 1..=TRUST_LOOKUPS {
        match crate::delegation::trust::look_up(&server, options, &dir).await {
            Ok(()) => return Ok(()),
            Err(why) if attempt == TRUST_LOOKUPS => {
                tracing::warn!(%why, "cannot read the main server's extension-apiserver-authentication; \
                    client certificates and front proxies are not trusted");
            }
            Err(why) => tracing::info!(%why, "reading the main server's extension-apiserver-authentication"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(())
}

/// With `--authorization-kubeconfig`, the main server decides (after
/// `system:masters` and the always-allowed paths).
fn delegated_authorizer(options: &Options) -> Result<Option<Union>, StartError> {
    let authz = &options.authorization;
    let Some(path) = &authz.authorization_kubeconfig else { return Ok(None) };
    let delegated = Delegated::new(main_server(path)?, authz.authorization_always_allow_paths.clone());
    Ok(Some(Union::new(vec![Arc::new(delegated)])))
}

/// The aggregation layer the flags configure: the proxy's certificate read
/// now, so a bad one stops the start.
fn aggregator(options: &Options) -> Result<Aggregator, StartError> {
    let flags = &options.aggregator;
    let identity = match (&flags.proxy_client_cert_file, &flags.proxy_client_key_file) {
        (Some(cert), Some(key)) => {
            let read = |path: &std::path::Path| {
                std::fs::read(path).map_err(|e| StartError::ProxyClient(format!("{}: {e}", path.display())))
            };
            let identity = ClientCertificate { certificate: read(cert)?, key: read(key)? };
            crate::tls_client::config(crate::tls_client::Trust::Anyone, Some(&identity), &[])
                .map_err(StartError::ProxyClient)?;
            Some(identity)
        }
        _ => None,
    };
    let routing = match flags.enable_aggregator_routing {
        true => Routing::Endpoints,
        false => Routing::ClusterIp,
    };
    Ok(Aggregator::new(identity, routing))
}

/// What `kube-system/extension-apiserver-authentication` publishes.
fn trust(options: &Options) -> Result<crate::controllers::authentication_trust::Trust, StartError> {
    let read = |path: &std::path::Path| {
        std::fs::read_to_string(path)
            .map_err(|e| StartError::ClientCa(path.display().to_string(), e.to_string()))
    };
    let authn = &options.authentication;
    Ok(crate::controllers::authentication_trust::Trust {
        client_ca: options.serving.client_ca_file.as_deref().map(read).transpose()?,
        request_header_ca: authn.requestheader_client_ca_file.as_deref().map(read).transpose()?,
        allowed_names: authn.requestheader_allowed_names.clone(),
        username_headers: authn.requestheader_username_headers.clone(),
        uid_headers: authn.requestheader_uid_headers.clone(),
        group_headers: authn.requestheader_group_headers.clone(),
        extra_prefixes: authn.requestheader_extra_headers_prefix.clone(),
    })
}

/// The CAs the TLS listener trusts client certificates of: users' and front
/// proxies'.
fn client_ca_files(options: &Options) -> Vec<&std::path::Path> {
    let users = options.serving.client_ca_file.as_deref();
    users.into_iter().chain(options.authentication.requestheader_client_ca_file.as_deref()).collect()
}

/// The authorizers of `--authorization-mode`, in order, and RBAC's objects
/// when it is one (followed by watches; the bootstrap policy reconciled).
pub fn authorizer(options: &Options, resources: &Resources) -> (Union, Option<RbacIndex>) {
    let mut authorizers: Vec<Arc<dyn Authorizer>> = Vec::new();
    let mut rbac_index = None;
    for mode in &options.authorization.authorization_mode {
        authorizers.push(match mode {
            AuthorizationMode::AlwaysAllow => Arc::new(AlwaysAllow),
            AuthorizationMode::AlwaysDeny => Arc::new(AlwaysDeny),
            AuthorizationMode::Rbac => {
                let index = rbac_index.get_or_insert_with(|| {
                    let index = RbacIndex::follow(resources);
                    tokio::spawn(rbac::bootstrap::run(resources.clone(), index.clone()));
                    tokio::spawn(rbac::aggregation::run(resources.clone()));
                    index
                });
                Arc::new(Rbac::new(index.clone()))
            }
        });
    }
    (Union::new(authorizers), rbac_index)
}

/// What the flags allow each connection.
fn connection_limits(options: &Options) -> ConnectionLimits {
    ConnectionLimits {
        read_header_timeout: options.serving.read_header_timeout,
        idle_timeout: conn::IDLE_TIMEOUT,
        max_connections: u32::try_from(options.limits.max_connections).unwrap_or(u32::MAX),
        http2_max_streams: options.serving.http2_max_streams_per_connection,
    }
}

/// Every built-in kind, served over `storage` as the flags say.
pub fn serve_builtin_kinds(storage: Arc<dyn Storage>, options: &Options) -> Result<Resources, StartError> {
    let admission = admission_setup(&options.admission, Vec::new())?;
    kinds::serve_with(
        storage,
        &options.etcd.etcd_prefix,
        options.service_ranges(),
        admission,
        options.cache(),
    )
    .map_err(|e| StartError::Register(e.to_string()))
}

/// How often etcd's database size is read for `apiserver_storage_size_bytes`
/// (kube reads it when scraped; `/metrics` here never waits on etcd).
const DATABASE_SIZE_EVERY: Duration = Duration::from_secs(5);

/// Reads etcd's database size (a Status call, kube's one-second limit)
/// every few seconds, for as long as the server runs.
async fn read_database_size(channel: Endpoints, metrics: Arc<crate::metrics::StorageMetrics>) {
    use rtcd_proto::etcdserverpb::StatusRequest;
    use rtcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;
    let mut tick = tokio::time::interval(DATABASE_SIZE_EVERY);
    let mut client = MaintenanceClient::new(channel);
    loop {
        tick.tick().await;
        let status = client.status(StatusRequest {});
        let size = match tokio::time::timeout(Duration::from_secs(1), status).await {
            Ok(Ok(answer)) => Some(answer.get_ref().db_size),
            _ => None,
        };
        metrics.set_database_size(size);
    }
}

/// kube-apiserver's compaction loop: one step per interval.
async fn compact_every(channel: Endpoints, interval: Duration) {
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
