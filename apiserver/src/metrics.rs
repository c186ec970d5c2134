//! `/metrics` in Prometheus text format, with kube-apiserver's metric
//! names: requests by verb, resource and code, and their latency.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::audit::Auditor;
use crate::request::RequestInfo;

/// `(verb, group, resource, subresource)`.
type Labels = (String, String, String, String);

#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Counters>,
    /// The auditor's counters, when there is one.
    auditor: OnceLock<Arc<Auditor>>,
    /// Other parts' metrics (admission), written after these.
    sources: Mutex<Vec<Source>>,
}

/// Not derived: the sources are closures.
impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("auditor", &self.auditor.get().is_some()).finish_non_exhaustive()
    }
}

/// A part of the server that keeps its own metrics: what appends them, in
/// Prometheus text format, to `/metrics`.
pub type Source = Arc<dyn Fn(&mut String) + Send + Sync>;

#[derive(Debug, Default)]
struct Counters {
    /// Requests by labels and code.
    total: BTreeMap<(Labels, u16), u64>,
    /// Latency sum (seconds) and count by labels; watches excluded.
    latency: BTreeMap<Labels, (f64, u64)>,
}

impl Metrics {
    pub fn observe(&self, info: &RequestInfo, code: u16, elapsed: Duration) {
        let labels = match info {
            RequestInfo::Resource(r) => (
                r.verb.to_uppercase(),
                r.group.clone(),
                r.resource.clone(),
                r.subresource.clone().unwrap_or_default(),
            ),
            RequestInfo::NonResource { verb, .. } => {
                (verb.to_uppercase(), String::new(), String::new(), String::new())
            }
        };
        let mut counters = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *counters.total.entry((labels.clone(), code)).or_default() += 1;
        if !info.is_long_running() {
            let entry = counters.latency.entry(labels).or_default();
            entry.0 += elapsed.as_secs_f64();
            entry.1 += 1;
        }
    }

    pub fn set_auditor(&self, auditor: Arc<Auditor>) {
        let _ = self.auditor.set(auditor);
    }

    pub fn add_source(&self, source: Source) {
        self.sources.lock().unwrap_or_else(|p| p.into_inner()).push(source);
    }

    pub fn render(&self) -> String {
        let counters = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        out.push_str("# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, group, resource and HTTP response code.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        for ((labels, code), count) in &counters.total {
            let _ =
                writeln!(out, "apiserver_request_total{{{},code=\"{code}\"}} {count}", render_labels(labels));
        }
        out.push_str("# HELP apiserver_request_duration_seconds Response latency of apiserver requests (sum and count; watches excluded).\n");
        out.push_str("# TYPE apiserver_request_duration_seconds summary\n");
        for (labels, (sum, count)) in &counters.latency {
            let labels = render_labels(labels);
            let _ = writeln!(out, "apiserver_request_duration_seconds_sum{{{labels}}} {sum}");
            let _ = writeln!(out, "apiserver_request_duration_seconds_count{{{labels}}} {count}");
        }
        if let Some(auditor) = self.auditor.get() {
            auditor.write_metrics(&mut out);
        }
        for source in self.sources.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            source(&mut out);
        }
        out
    }
}

fn render_labels((verb, group, resource, subresource): &Labels) -> String {
    format!("verb=\"{verb}\",group=\"{group}\",resource=\"{resource}\",subresource=\"{subresource}\"")
}
