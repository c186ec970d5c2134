//! `/metrics` in Prometheus text format, with kube-apiserver's families:
//! their names, types, labels, buckets and help texts (with kube's
//! stability annotations), counted where kube counts them. One module per
//! area:
//!
//! * `family`: the building blocks (histogram, labelled series, the text
//!   format);
//! * `requests`: requests, their latency and size, long-running and
//!   in-flight requests, terminations;
//! * `labels`: the labels of those, derived as kube derives them;
//! * `tracker`: what the layers of one request note for it (its route,
//!   webhook and queue time, refusals);
//! * `storage`: etcd calls, watch events and object counts per resource;
//! * `watch`: events sent to watch clients, the watch caches' counters;
//! * `authn`: authentication attempts, client certificate lifetimes;
//! * `aggregator`: APIService availability;
//! * `build_info`: what the server is (`kubernetes_build_info`); the
//!   process's `/proc` figures come from `rtcd_metrics::process`.
//!
//! This module depends on no other of the server's but `request`: the
//! parts that count hold their counters, and what is read from the server
//! when scraped (object counts, the audit, admission and priority and
//! fairness families) comes in as a [`Source`].

pub mod aggregator;
pub mod authn;
pub mod build_info;
mod family;
pub mod labels;
pub mod requests;
pub mod storage;
pub mod tracker;
pub mod watch;

use std::sync::{Arc, Mutex, OnceLock};

pub use aggregator::AggregatorMetrics;
pub use authn::AuthnMetrics;
pub use build_info::BuildInfo;
pub use family::Series;
pub use requests::RequestMetrics;
pub use storage::StorageMetrics;
pub use watch::WatchEventMetrics;

/// A part of the server that keeps its own metrics: what appends them, in
/// Prometheus text format, to `/metrics`.
pub type Source = Arc<dyn Fn(&mut String) + Send + Sync>;

/// The server's metrics.
#[derive(Default)]
pub struct Metrics {
    pub requests: Arc<RequestMetrics>,
    pub authn: Arc<AuthnMetrics>,
    pub watch_events: WatchEventMetrics,
    pub aggregator: Arc<AggregatorMetrics>,
    build_info: OnceLock<BuildInfo>,
    /// Other parts' metrics, written after these.
    sources: Mutex<Vec<Source>>,
}

/// Not derived: the sources are closures.
impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("build_info", &self.build_info.get()).finish_non_exhaustive()
    }
}

impl Metrics {
    /// What `kubernetes_build_info` says (the version `/version` serves).
    pub fn set_build_info(&self, info: BuildInfo) {
        let _ = self.build_info.set(info);
    }

    pub fn add_source(&self, source: Source) {
        self.sources.lock().unwrap_or_else(|p| p.into_inner()).push(source);
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        self.requests.write(&mut out);
        self.watch_events.write(&mut out);
        self.authn.write(&mut out);
        self.aggregator.write(&mut out);
        if let Some(info) = self.build_info.get() {
            info.write(&mut out);
        }
        rtcd_metrics::process::render(&mut out);
        let sources = self.sources.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for source in sources {
            source(&mut out);
        }
        out
    }
}
