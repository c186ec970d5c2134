//! kube's aggregation layer (kube-aggregator): a group version whose
//! APIService names a Service is served by an extension API server, and
//! this server passes its requests on, after authenticating, auditing,
//! flow-controlling and authorizing them as its own.
//!
//! * `target`: what an APIService says about where its group version is.
//! * `resolve`: the Service's address (cluster IP, or a ready endpoint
//!   with `--enable-aggregator-routing`).
//! * `transport`: TLS to extension servers with the proxy's certificate.
//! * `proxy`: one request passed on, the caller in front-proxy headers.
//! * `pool`: connections kept for the next request.
//! * `check`: kube's discovery check, which also learns what the server
//!   serves for this server's discovery and OpenAPI.

mod check;
mod pool;
mod proxy;
pub mod resolve;
pub mod target;
mod transport;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::response::Response;

pub use check::Learned;
pub use resolve::Routing;
pub use target::Target;
use transport::Transport;

use crate::cacher::{ListOptions, ReadAt};
use crate::metrics::AggregatorMetrics;
use crate::metrics::tracker;
use crate::registry::Resources;
use crate::registry::kinds::apiservice;
use crate::request::UserInfo;
use crate::tls_client::ClientCertificate;

/// The aggregator's state: how it reaches extension servers, and what
/// each last said it serves.
#[derive(Debug, Default)]
pub struct Aggregator {
    transport: Transport,
    idle: pool::Pool,
    routing: Routing,
    /// By APIService name.
    learned: Mutex<BTreeMap<String, Learned>>,
    /// The APIServices' availability (`/metrics`), kept by the
    /// availability controller.
    pub metrics: Arc<AggregatorMetrics>,
}

impl Aggregator {
    /// Presenting `identity` (`--proxy-client-cert-file`) to extension
    /// servers, reaching them by `routing`.
    pub fn new(identity: Option<ClientCertificate>, routing: Routing) -> Aggregator {
        Aggregator {
            transport: Transport::new(identity),
            idle: pool::Pool::default(),
            routing,
            learned: Mutex::default(),
            metrics: Arc::default(),
        }
    }

    /// Keeping the APIServices' availability in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<AggregatorMetrics>) -> Aggregator {
        self.metrics = metrics;
        self
    }

    /// The extension server `group`/`version` is handed to, if any.
    pub async fn target(resources: &Resources, group: &str, version: &str) -> Option<Target> {
        let services = resources.store(apiservice::GROUP, "apiservices").ok()?;
        let name = apiservice::name_for(group, version);
        let service = services.get(None, &name, &ReadAt::default()).await.ok()?;
        Target::of(&service)
    }

    /// Every group version handed to an extension server, with what it
    /// last said it serves.
    pub async fn targets(&self, resources: &Resources) -> Vec<(Target, Option<Learned>)> {
        let Ok(services) = resources.store(apiservice::GROUP, "apiservices") else { return Vec::new() };
        let Ok(listed) = services.list(&ListOptions::default()).await else { return Vec::new() };
        let learned = self.learned.lock().unwrap_or_else(|p| p.into_inner());
        listed
            .items
            .iter()
            .filter_map(Target::of)
            .map(|target| {
                let known = learned.get(&target.name).cloned();
                (target, known)
            })
            .collect()
    }

    /// Passes `request` on to `target`'s server for `user`: kube's answer
    /// (a 503 with its text) when the group version is not available or
    /// its server cannot be reached. `discovery` requests get kube's
    /// shorter deadline.
    pub async fn serve(
        &self,
        resources: &Resources,
        target: &Target,
        request: Request,
        user: &UserInfo,
        discovery: bool,
    ) -> Result<Response, String> {
        // kube's proxyError: the request terminated by the aggregator.
        let unavailable = || -> Result<Response, String> {
            tracker::aggregator_failed(503);
            Err("service unavailable".to_string())
        };
        if !target.available {
            return unavailable();
        }
        let address = match resolve::address(resources, self.routing, &target.service).await {
            Ok(address) => address,
            Err(e) => {
                tracing::warn!(apiservice = target.name, error = e, "cannot resolve its service");
                return unavailable();
            }
        };
        let key = format!("{address} {}", target.reached_as());
        let connection = match self.idle.take(&key).await {
            Some(kept) => kept,
            None => self.transport.connect(target, &address).await?,
        };
        proxy::forward((connection, &self.idle, key), &address, request, user, discovery).await
    }

    /// Forgets what servers no longer named by an APIService said.
    pub fn retain(&self, names: &std::collections::BTreeSet<String>) {
        self.learned.lock().unwrap_or_else(|p| p.into_inner()).retain(|name, _| names.contains(name));
    }
}
