//! kube's request-path families (`endpoints/metrics`): requests by verb,
//! dry run, group, version, resource, subresource, scope, component and
//! code, their latency (all of it, and the SLI's, without webhooks and
//! queueing), the size of read answers, live long-running requests, the
//! in-flight watermark and the requests refused in self-defense (their
//! labels: `labels`). A request is counted when answered, by the handler
//! that took it; a streamed answer (a watch, a read of unknown size) when
//! its body ends.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

use super::family::{Histogram, Kind, LabelMap, Meta, Stability};
use super::labels::{APISERVER, Incoming, Labels, OwnedLabels, filter_labels, route_labels, wants_size};
use super::tracker::{Noted, Route};
use crate::request::RequestInfo;

/// `apiserver_request_duration_seconds`' buckets (and etcd's requests').
pub const DURATION_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0,
    20.0, 30.0, 45.0, 60.0,
];
const SLI_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0,
    45.0, 60.0,
];
/// `ExponentialBuckets(1000, 10.0, 7)`.
const SIZE_BUCKETS: &[f64] = &[1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

const TOTAL: Meta = Meta::new(
    "apiserver_request_total",
    Kind::Counter,
    Stability::Stable,
    "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
);
const DURATION: Meta = Meta::new(
    "apiserver_request_duration_seconds",
    Kind::Histogram,
    Stability::Stable,
    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
);
const SLI: Meta = Meta::new(
    "apiserver_request_sli_duration_seconds",
    Kind::Histogram,
    Stability::Alpha,
    "Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.",
);
const SIZES: Meta = Meta::new(
    "apiserver_response_sizes",
    Kind::Histogram,
    Stability::Stable,
    "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
);
const LONG_RUNNING: Meta = Meta::new(
    "apiserver_longrunning_requests",
    Kind::Gauge,
    Stability::Stable,
    "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
);
const INFLIGHT: Meta = Meta::new(
    "apiserver_current_inflight_requests",
    Kind::Gauge,
    Stability::Stable,
    "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
);
const TERMINATIONS: Meta = Meta::new(
    "apiserver_request_terminations_total",
    Kind::Counter,
    Stability::Alpha,
    "Number of requests which apiserver terminated in self-defense.",
);

const FULL: [&str; 8] =
    ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"];
const WITH_CODE: [&str; 9] =
    ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"];
const NO_DRY_RUN: [&str; 7] = ["verb", "group", "version", "resource", "subresource", "scope", "component"];
const TERMINATION: [&str; 8] =
    ["verb", "group", "version", "resource", "subresource", "scope", "component", "code"];

/// Index of the read-only in-flight count (the other is mutating).
pub const READ_ONLY: usize = 0;

/// The request families' series.
#[derive(Debug, Default)]
pub struct RequestMetrics {
    total: LabelMap<AtomicU64, 9>,
    durations: LabelMap<Histogram, 8>,
    sli: LabelMap<Histogram, 7>,
    sizes: LabelMap<Histogram, 7>,
    long_running: LabelMap<AtomicI64, 7>,
    terminations: LabelMap<AtomicU64, 8>,
    inflight: Watermark,
}

impl RequestMetrics {
    pub(super) fn inflight(&self) -> &Watermark {
        &self.inflight
    }

    /// Counts the answered request as kube would have: by the handler that
    /// took it, or as refused. A long-running answer (a watch) and a read
    /// whose size is not known yet are counted when their body ends.
    pub fn answered(
        self: &Arc<Self>,
        incoming: &Incoming,
        noted: Noted,
        response: Response,
        started: Instant,
    ) -> Response {
        if noted.timed_out {
            self.terminate(incoming, APISERVER, 504);
        }
        if let Some(code) = noted.aggregator_failure {
            self.terminate(incoming, "aggregator", code);
        }
        if noted.dropped {
            // kube's RecordDroppedRequest: counted, never timed.
            let labels = filter_labels(incoming, APISERVER, "");
            self.total.with(labels.with_code("429"), AtomicU64::default, increment);
            self.terminate(incoming, APISERVER, 429);
            return response;
        }
        let Some(labels) = route_labels(incoming, noted.route) else { return response };
        let code = response.status().as_u16();
        let wants_size = wants_size(incoming, noted.route);
        let long_running = noted.route == Route::Resource
            && incoming.info.as_ref().is_some_and(RequestInfo::is_long_running)
            && response.status().is_success();
        let exact = http_body::Body::size_hint(response.body()).exact();
        if !long_running && (!wants_size || exact.is_some()) {
            let size = exact.filter(|_| wants_size);
            self.record(&labels, code, started.elapsed(), noted.excluded, size);
            return response;
        }
        let live = long_running.then(|| {
            let gauge = self.long_running.get(labels.without_dry_run(), AtomicI64::default);
            gauge.value.fetch_add(1, Ordering::Relaxed);
            gauge
        });
        let finish = Finish {
            metrics: self.clone(),
            labels: labels.to_owned(),
            code,
            started,
            excluded: noted.excluded,
            wants_size,
            live,
        };
        response.map(|body| Body::new(CountedBody { inner: body, bytes: 0, finish: Some(finish) }))
    }

    fn record(&self, labels: &Labels, code: u16, elapsed: Duration, excluded: Duration, size: Option<u64>) {
        let mut buffer = [0u8; 5];
        let code = code_text(code, &mut buffer);
        self.total.with(labels.with_code(code), AtomicU64::default, increment);
        let seconds = elapsed.as_secs_f64();
        self.durations.with(labels.full(), || Histogram::new(DURATION_BUCKETS), |h| h.observe(seconds));
        if labels.dry_run.is_empty() {
            let sli = seconds - excluded.as_secs_f64();
            self.sli.with(labels.without_dry_run(), || Histogram::new(SLI_BUCKETS), |h| h.observe(sli));
        }
        if let Some(size) = size {
            let size = size as f64;
            self.sizes.with(labels.without_dry_run(), || Histogram::new(SIZE_BUCKETS), |h| h.observe(size));
        }
    }

    /// kube's RecordRequestTermination.
    fn terminate(&self, incoming: &Incoming, component: &'static str, code: u16) {
        let path = match &incoming.info {
            Some(RequestInfo::NonResource { path, .. }) => path.as_str(),
            _ => "",
        };
        let labels = filter_labels(incoming, component, path);
        let mut buffer = [0u8; 5];
        let code = code_text(code, &mut buffer);
        self.terminations.with(labels.termination(code), AtomicU64::default, increment);
    }

    pub fn write(&self, out: &mut String) {
        let total = self.total.all();
        TOTAL.write(out, WITH_CODE, total.iter().map(|s| (s.labels(), load(&s.value))));
        let durations = self.durations.all();
        DURATION.write_histograms(out, FULL, durations.iter().map(|s| (s.labels(), &s.value)));
        let sli = self.sli.all();
        SLI.write_histograms(out, NO_DRY_RUN, sli.iter().map(|s| (s.labels(), &s.value)));
        let sizes = self.sizes.all();
        SIZES.write_histograms(out, NO_DRY_RUN, sizes.iter().map(|s| (s.labels(), &s.value)));
        let live = self.long_running.all();
        let live = live.iter().map(|s| (s.labels(), s.value.load(Ordering::Relaxed) as f64));
        LONG_RUNNING.write(out, NO_DRY_RUN, live);
        let [read_only, mutating] = self.inflight.last_second();
        INFLIGHT.write(
            out,
            ["request_kind"],
            [(["mutating"], mutating as f64), (["readOnly"], read_only as f64)],
        );
        let terminations = self.terminations.all();
        TERMINATIONS.write(out, TERMINATION, terminations.iter().map(|s| (s.labels(), load(&s.value))));
    }
}

fn increment(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

fn load(counter: &AtomicU64) -> f64 {
    counter.load(Ordering::Relaxed) as f64
}

/// A status code as text, without allocating.
fn code_text(code: u16, buffer: &mut [u8; 5]) -> &str {
    let mut n = code;
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || start == 0 {
            break;
        }
    }
    std::str::from_utf8(&buffer[start..]).unwrap_or("0")
}

/// The in-flight counts, read-only and mutating, and the highest of each
/// in the last whole second (kube's watermark, reset every second).
#[derive(Debug)]
pub(super) struct Watermark {
    base: Instant,
    /// The second (since `base`) the open window began.
    second: AtomicU64,
    pub(super) current: [AtomicI64; 2],
    high: [AtomicI64; 2],
    last_second: [AtomicI64; 2],
}

impl Default for Watermark {
    fn default() -> Self {
        Watermark {
            base: Instant::now(),
            second: AtomicU64::new(0),
            current: Default::default(),
            high: Default::default(),
            last_second: Default::default(),
        }
    }
}

impl Watermark {
    pub(super) fn start(&self, kind: usize) {
        self.roll();
        let now = self.current[kind].fetch_add(1, Ordering::Relaxed) + 1;
        self.high[kind].fetch_max(now, Ordering::Relaxed);
    }

    /// The highest counts of the last whole second.
    fn last_second(&self) -> [i64; 2] {
        self.roll();
        [0, 1].map(|kind| self.last_second[kind].load(Ordering::Relaxed))
    }

    /// Closes the open window when a second has passed.
    fn roll(&self) {
        self.roll_at(self.base.elapsed().as_secs());
    }

    /// Closes the open window if `now` (seconds since `base`) is past it:
    /// its highest counts are the last second's (only the current ones if
    /// no request came for longer than that).
    fn roll_at(&self, now: u64) {
        let open = self.second.load(Ordering::Relaxed);
        if now <= open
            || self.second.compare_exchange(open, now, Ordering::AcqRel, Ordering::Relaxed).is_err()
        {
            return;
        }
        for kind in [0, 1] {
            let current = self.current[kind].load(Ordering::Relaxed);
            let high = self.high[kind].swap(current, Ordering::Relaxed);
            let last = if now - open == 1 { high } else { current };
            self.last_second[kind].store(last, Ordering::Relaxed);
        }
    }
}

/// What is counted once a deferred answer's body ends.
#[derive(Debug)]
struct Finish {
    metrics: Arc<RequestMetrics>,
    labels: OwnedLabels,
    code: u16,
    started: Instant,
    excluded: Duration,
    wants_size: bool,
    /// The long-running gauge this answer holds up.
    live: Option<Arc<super::family::Series<AtomicI64, 7>>>,
}

/// An answer's body, counting its bytes; the request is recorded when it
/// is dropped (sent, or its client gone).
struct CountedBody {
    inner: Body,
    bytes: u64,
    finish: Option<Finish>,
}

impl http_body::Body for CountedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            this.bytes += data.len() as u64;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CountedBody {
    fn drop(&mut self) {
        let Some(finish) = self.finish.take() else { return };
        let labels = finish.labels.borrow();
        let size = finish.wants_size.then_some(self.bytes);
        finish.metrics.record(&labels, finish.code, finish.started.elapsed(), finish.excluded, size);
        if let Some(live) = &finish.live {
            live.value.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::labels::incoming;
    use axum::http::Method;

    #[test]
    fn refusals_are_labelled_as_kube_labels_them() {
        // A termination names a non-resource request by its path.
        let metrics = RequestMetrics::default();
        metrics.terminate(&incoming(Method::GET, "/version", "", None), APISERVER, 504);
        let list = incoming(Method::GET, "/apis/apps/v1/namespaces/x/deployments", "", None);
        metrics.terminate(&list, APISERVER, 429);
        let all: Vec<_> = metrics.terminations.all().iter().map(|s| s.labels().map(str::to_string)).collect();
        assert_eq!(all[0], ["GET", "", "", "", "/version", "", "apiserver", "504"]);
        assert_eq!(all[1], ["LIST", "apps", "v1", "deployments", "", "namespace", "apiserver", "429"]);
    }

    #[test]
    fn a_recorded_request_is_in_every_family_with_kubes_buckets() {
        let metrics = RequestMetrics::default();
        let incoming = incoming(Method::GET, "/api/v1/namespaces/default/configmaps/a", "", None);
        let labels = route_labels(&incoming, Route::Resource).unwrap();
        metrics.record(&labels, 200, Duration::from_millis(300), Duration::from_millis(100), Some(2500));
        let mut out = String::new();
        metrics.write(&mut out);
        let series = "verb=\"GET\",dry_run=\"\",group=\"\",version=\"v1\",resource=\"configmaps\",subresource=\"\",scope=\"resource\",component=\"apiserver\"";
        assert!(out.contains(&format!("apiserver_request_total{{{series},code=\"200\"}} 1\n")), "{out}");
        assert!(
            out.contains(&format!("apiserver_request_duration_seconds_bucket{{{series},le=\"0.2\"}} 0\n"))
        );
        assert!(
            out.contains(&format!("apiserver_request_duration_seconds_bucket{{{series},le=\"0.4\"}} 1\n"))
        );
        assert!(
            out.contains(&format!("apiserver_request_duration_seconds_bucket{{{series},le=\"60\"}} 1\n"))
        );
        let sli = series.replace("dry_run=\"\",", "");
        // The SLI leaves out what the webhooks and the queue took.
        assert!(
            out.contains(&format!("apiserver_request_sli_duration_seconds_bucket{{{sli},le=\"0.2\"}} 1\n"))
        );
        assert!(out.contains(&format!("apiserver_response_sizes_bucket{{{sli},le=\"1000\"}} 0\n")));
        assert!(out.contains(&format!("apiserver_response_sizes_bucket{{{sli},le=\"10000\"}} 1\n")));
        assert!(out.contains("# HELP apiserver_request_total [STABLE] Counter of apiserver requests"));
        assert!(out.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 0\n"));
        assert_eq!(code_text(404, &mut [0; 5]), "404");
        assert_eq!(code_text(0, &mut [0; 5]), "0");
    }

    #[test]
    fn the_watermark_is_the_last_seconds_highest() {
        let watermark = Watermark::default();
        watermark.start(READ_ONLY);
        watermark.start(READ_ONLY);
        watermark.current[READ_ONLY].fetch_sub(1, Ordering::Relaxed);
        watermark.start(1);
        watermark.current[1].fetch_sub(1, Ordering::Relaxed);
        // The window closing right after reports its highest counts.
        watermark.roll_at(1);
        let last = |w: &Watermark| [0, 1].map(|k| w.last_second[k].load(Ordering::Relaxed));
        assert_eq!(last(&watermark), [2, 1]);
        // Seconds later with nothing new: what is executing now.
        watermark.roll_at(5);
        assert_eq!(last(&watermark), [1, 0]);
    }
}
