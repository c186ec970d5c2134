//! go-grpc-prometheus's server counters, which etcd exports by default
//! (`--metrics=basic`): `grpc_server_started_total` when a call arrives and
//! `grpc_server_handled_total` with the status code when it ends, by
//! service, method and call type. etcd's alert on failed requests
//! (`etcdHighNumberOfFailedGRPCRequests`) reads the latter. With
//! `--metrics=extensive`, `grpc_server_handling_seconds` too: how long each
//! call took until it ended (`etcdGRPCRequestsSlow` reads its unary calls).
//! Messages each way per method (`grpc_server_msg_received_total`,
//! `grpc_server_msg_sent_total`) and etcd's byte totals over all of them
//! (`etcd_network_client_grpc_received_bytes_total`, `..._sent_bytes_total`,
//! which etcd's dashboard plots as client traffic in and out). Calls by the
//! API version etcd's clients send (`etcd_server_client_requests_total`).

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body::{Body as HttpBody, Frame, SizeHint};
use rtcd_metrics::Histogram;
use tonic::body::Body;

use super::messages::{Completed, MessageMeter};
use crate::grpc_body::is_grpc;

/// Every method the client port serves: `(grpc_type, service, method)`.
/// etcd registers its counters for each of them, zero until called, and
/// so does this.
const METHODS: &[(&str, &str, &str)] = &[
    ("unary", "etcdserverpb.KV", "Range"),
    ("unary", "etcdserverpb.KV", "Put"),
    ("unary", "etcdserverpb.KV", "DeleteRange"),
    ("unary", "etcdserverpb.KV", "Txn"),
    ("unary", "etcdserverpb.KV", "Compact"),
    ("bidi_stream", "etcdserverpb.Watch", "Watch"),
    ("unary", "etcdserverpb.Lease", "LeaseGrant"),
    ("unary", "etcdserverpb.Lease", "LeaseRevoke"),
    ("bidi_stream", "etcdserverpb.Lease", "LeaseKeepAlive"),
    ("unary", "etcdserverpb.Lease", "LeaseTimeToLive"),
    ("unary", "etcdserverpb.Lease", "LeaseLeases"),
    ("unary", "etcdserverpb.Cluster", "MemberAdd"),
    ("unary", "etcdserverpb.Cluster", "MemberRemove"),
    ("unary", "etcdserverpb.Cluster", "MemberUpdate"),
    ("unary", "etcdserverpb.Cluster", "MemberList"),
    ("unary", "etcdserverpb.Cluster", "MemberPromote"),
    ("unary", "etcdserverpb.Maintenance", "Alarm"),
    ("unary", "etcdserverpb.Maintenance", "Status"),
    ("unary", "etcdserverpb.Maintenance", "Defragment"),
    ("unary", "etcdserverpb.Maintenance", "Hash"),
    ("unary", "etcdserverpb.Maintenance", "HashKV"),
    ("server_stream", "etcdserverpb.Maintenance", "Snapshot"),
    ("unary", "etcdserverpb.Maintenance", "MoveLeader"),
    ("unary", "etcdserverpb.Maintenance", "Downgrade"),
    ("unary", "etcdserverpb.Auth", "AuthEnable"),
    ("unary", "etcdserverpb.Auth", "AuthDisable"),
    ("unary", "etcdserverpb.Auth", "AuthStatus"),
    ("unary", "etcdserverpb.Auth", "Authenticate"),
    ("unary", "etcdserverpb.Auth", "UserAdd"),
    ("unary", "etcdserverpb.Auth", "UserGet"),
    ("unary", "etcdserverpb.Auth", "UserList"),
    ("unary", "etcdserverpb.Auth", "UserDelete"),
    ("unary", "etcdserverpb.Auth", "UserChangePassword"),
    ("unary", "etcdserverpb.Auth", "UserGrantRole"),
    ("unary", "etcdserverpb.Auth", "UserRevokeRole"),
    ("unary", "etcdserverpb.Auth", "RoleAdd"),
    ("unary", "etcdserverpb.Auth", "RoleGet"),
    ("unary", "etcdserverpb.Auth", "RoleList"),
    ("unary", "etcdserverpb.Auth", "RoleDelete"),
    ("unary", "etcdserverpb.Auth", "RoleGrantPermission"),
    ("unary", "etcdserverpb.Auth", "RoleRevokePermission"),
    ("unary", "v3lockpb.Lock", "Lock"),
    ("unary", "v3lockpb.Lock", "Unlock"),
    ("unary", "v3electionpb.Election", "Campaign"),
    ("unary", "v3electionpb.Election", "Proclaim"),
    ("unary", "v3electionpb.Election", "Leader"),
    ("server_stream", "v3electionpb.Election", "Observe"),
    ("unary", "v3electionpb.Election", "Resign"),
    ("unary", "grpc.health.v1.Health", "Check"),
    ("server_stream", "grpc.health.v1.Health", "Watch"),
];

/// gRPC's status codes by number, named as Go's `codes.Code.String()`.
const CODES: [&str; 17] = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];
/// The metadata etcd's clients send their API version in.
const CLIENT_API_VERSION: &str = "client-api-version";
/// Distinct versions counted at most: a client picks the label's value, so
/// one sending a new value per call could grow the page without end.
const MAX_CLIENT_VERSIONS: usize = 16;
const CANCELED: usize = 1;
const UNKNOWN: usize = 2;

/// Calls started, and ended by code, per method: atomics, so counting
/// costs the write path no lock.
#[derive(Debug)]
pub struct GrpcCounters {
    started: Vec<AtomicU64>,
    handled: Vec<[AtomicU64; 17]>,
    /// Messages received and sent, per method.
    received: Vec<AtomicU64>,
    sent: Vec<AtomicU64>,
    /// Payload bytes received and sent, over all methods.
    received_bytes: AtomicU64,
    sent_bytes: AtomicU64,
    /// Calls by `(unary or stream, client API version)`.
    client_requests: RwLock<BTreeMap<(&'static str, String), AtomicU64>>,
    /// Handling times per method, with `--metrics=extensive` only.
    handling: Option<Vec<Histogram>>,
}

impl Default for GrpcCounters {
    fn default() -> Self {
        GrpcCounters::new(false)
    }
}

impl GrpcCounters {
    pub fn new(extensive: bool) -> Self {
        GrpcCounters {
            started: METHODS.iter().map(|_| AtomicU64::new(0)).collect(),
            handled: METHODS.iter().map(|_| std::array::from_fn(|_| AtomicU64::new(0))).collect(),
            received: METHODS.iter().map(|_| AtomicU64::new(0)).collect(),
            sent: METHODS.iter().map(|_| AtomicU64::new(0)).collect(),
            received_bytes: AtomicU64::new(0),
            sent_bytes: AtomicU64::new(0),
            client_requests: RwLock::default(),
            handling: extensive.then(|| METHODS.iter().map(|_| Histogram::default_buckets()).collect()),
        }
    }

    fn started(&self, method: usize) {
        self.started[method].fetch_add(1, Ordering::Relaxed);
    }

    fn handled(&self, method: usize, code: usize, since: Instant) {
        self.handled[method][code].fetch_add(1, Ordering::Relaxed);
        if let Some(handling) = &self.handling {
            handling[method].observe_duration(since.elapsed());
        }
    }

    /// A call from a client that said its API version.
    fn client_request(&self, method: usize, version: &str) {
        let kind = if METHODS[method].0 == "unary" { "unary" } else { "stream" };
        let known = self.client_requests.read().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = known.get(&(kind, version.to_string())) {
            n.fetch_add(1, Ordering::Relaxed);
            return;
        }
        drop(known);
        let mut known = self.client_requests.write().unwrap_or_else(|e| e.into_inner());
        if known.len() < MAX_CLIENT_VERSIONS || known.contains_key(&(kind, version.to_string())) {
            known.entry((kind, version.to_string())).or_default().fetch_add(1, Ordering::Relaxed);
        }
    }

    fn received(&self, method: usize, completed: Completed) {
        if completed.messages > 0 {
            self.received[method].fetch_add(completed.messages, Ordering::Relaxed);
            self.received_bytes.fetch_add(completed.payload_bytes, Ordering::Relaxed);
        }
    }

    fn sent(&self, method: usize, completed: Completed) {
        if completed.messages > 0 {
            self.sent[method].fetch_add(completed.messages, Ordering::Relaxed);
            self.sent_bytes.fetch_add(completed.payload_bytes, Ordering::Relaxed);
        }
    }

    /// Every family in Prometheus text format.
    pub fn render(&self, out: &mut String) {
        let labels = |(kind, service, method): &(&str, &str, &str)| {
            format!("grpc_method=\"{method}\",grpc_service=\"{service}\",grpc_type=\"{kind}\"")
        };
        let started = METHODS.iter().zip(&self.started);
        rtcd_metrics::text::family(
            out,
            "grpc_server_started_total",
            "counter",
            "Total number of RPCs started on the server.",
            started.map(|(method, n)| (labels(method), n.load(Ordering::Relaxed) as f64)),
        );
        let handled = METHODS.iter().zip(&self.handled).flat_map(|(method, codes)| {
            CODES.iter().zip(codes).map(move |(code, n)| {
                (format!("grpc_code=\"{code}\",{}", labels(method)), n.load(Ordering::Relaxed) as f64)
            })
        });
        rtcd_metrics::text::family(
            out,
            "grpc_server_handled_total",
            "counter",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            handled,
        );
        let per_method = |counts: &[AtomicU64]| {
            METHODS
                .iter()
                .zip(counts)
                .map(|(method, n)| (labels(method), n.load(Ordering::Relaxed) as f64))
                .collect::<Vec<_>>()
        };
        rtcd_metrics::text::family(
            out,
            "grpc_server_msg_received_total",
            "counter",
            "Total number of RPC stream messages received on the server.",
            per_method(&self.received),
        );
        rtcd_metrics::text::family(
            out,
            "grpc_server_msg_sent_total",
            "counter",
            "Total number of gRPC stream messages sent by the server.",
            per_method(&self.sent),
        );
        rtcd_metrics::text::single(
            out,
            "etcd_network_client_grpc_received_bytes_total",
            "counter",
            "The total number of bytes received from grpc clients.",
            self.received_bytes.load(Ordering::Relaxed) as f64,
        );
        rtcd_metrics::text::single(
            out,
            "etcd_network_client_grpc_sent_bytes_total",
            "counter",
            "The total number of bytes sent to grpc clients.",
            self.sent_bytes.load(Ordering::Relaxed) as f64,
        );
        let clients = self.client_requests.read().unwrap_or_else(|e| e.into_inner());
        let by_version = clients.iter().map(|((kind, version), n)| {
            let version = version.replace('\\', "\\\\").replace('"', "\\\"");
            (format!("client_api_version=\"{version}\",type=\"{kind}\""), n.load(Ordering::Relaxed) as f64)
        });
        rtcd_metrics::text::family(
            out,
            "etcd_server_client_requests_total",
            "counter",
            "The total number of client requests per client version.",
            by_version,
        );
        drop(clients);
        if let Some(handling) = &self.handling {
            let series: Vec<(String, &Histogram)> = METHODS.iter().map(labels).zip(handling).collect();
            rtcd_metrics::text::histogram(
                out,
                "grpc_server_handling_seconds",
                "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
                &series,
            );
        }
    }
}

/// The index of a call's method in `METHODS`, from its path.
fn method_of(path: &str) -> Option<usize> {
    static BY_PATH: OnceLock<HashMap<String, usize>> = OnceLock::new();
    let by_path = BY_PATH.get_or_init(|| {
        METHODS
            .iter()
            .enumerate()
            .map(|(i, (_, service, method))| (format!("/{service}/{method}"), i))
            .collect()
    });
    by_path.get(path).copied()
}

/// The index in `CODES` of a `grpc-status` value.
fn code_of(status: &[u8]) -> usize {
    std::str::from_utf8(status)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&c: &usize| c < CODES.len())
        .unwrap_or(UNKNOWN)
}

/// Counts the gRPC calls of the client port.
#[derive(Debug, Clone)]
pub struct GrpcMetricsLayer {
    pub counters: Arc<GrpcCounters>,
}

impl<S> tower_layer::Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        GrpcMetrics { inner, counters: self.counters.clone() }
    }
}

#[derive(Debug, Clone)]
pub struct GrpcMetrics<S> {
    inner: S,
    counters: Arc<GrpcCounters>,
}

impl<S> tower_service::Service<http::Request<Body>> for GrpcMetrics<S>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let method = is_grpc(&request).then(|| method_of(request.uri().path())).flatten();
        let Some(method) = method else { return Box::pin(self.inner.call(request)) };
        let counters = self.counters.clone();
        if let Some(version) = request.headers().get(CLIENT_API_VERSION).and_then(|v| v.to_str().ok()) {
            counters.client_request(method, version);
        }
        let request = request.map(|inner| {
            Body::new(Metered { inner, meter: MessageMeter::default(), counters: counters.clone(), method })
        });
        let call = self.inner.call(request);
        counters.started(method);
        let since = Instant::now();
        Box::pin(async move {
            let response = call.await?;
            // A trailers-only answer (an error) has its status in the headers.
            if let Some(code) = response.headers().get("grpc-status") {
                counters.handled(method, code_of(code.as_bytes()), since);
                return Ok(response);
            }
            let ending = Some(Ending { counters, method, since, meter: MessageMeter::default() });
            Ok(response.map(|body| Body::new(Counted { inner: body, ending })))
        })
    }
}

/// A request body that counts the messages it carries.
struct Metered {
    inner: Body,
    meter: MessageMeter,
    counters: Arc<GrpcCounters>,
    method: usize,
}

impl HttpBody for Metered {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            let completed = self.meter.feed(data);
            self.counters.received(self.method, completed);
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

/// A response body that counts the messages it carries, and its call as
/// handled when the trailers say how it ended, or as canceled when it is
/// dropped before they came.
struct Counted {
    inner: Body,
    ending: Option<Ending>,
}

/// What a call's messages and end are counted into.
struct Ending {
    counters: Arc<GrpcCounters>,
    method: usize,
    since: Instant,
    meter: MessageMeter,
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
            && let Some(end) = self.ending.as_mut()
        {
            let completed = end.meter.feed(data);
            end.counters.sent(end.method, completed);
        }
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(code) = frame.trailers_ref().and_then(|t| t.get("grpc-status"))
            && let Some(end) = self.ending.take()
        {
            end.counters.handled(end.method, code_of(code.as_bytes()), end.since);
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

impl Drop for Counted {
    fn drop(&mut self) {
        if let Some(end) = self.ending.take() {
            end.counters.handled(end.method, CANCELED, end.since);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_method_type_and_code_from_zero() {
        let counters = GrpcCounters::default();
        let put = method_of("/etcdserverpb.KV/Put").unwrap();
        let watch = method_of("/etcdserverpb.Watch/Watch").unwrap();
        assert_eq!(method_of("/etcdserverpb.KV/Nope"), None);
        let now = Instant::now();
        counters.started(put);
        counters.handled(put, code_of(b"0"), now);
        counters.started(put);
        counters.handled(put, code_of(b"14"), now);
        counters.started(watch);
        counters.handled(watch, code_of(b"99"), now);
        let mut out = String::new();
        counters.render(&mut out);
        let kv = "grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"";
        assert!(out.contains(&format!("grpc_server_started_total{{{kv}}} 2\n")), "{out}");
        assert!(out.contains(&format!("grpc_server_handled_total{{grpc_code=\"OK\",{kv}}} 1\n")));
        assert!(out.contains(&format!("grpc_server_handled_total{{grpc_code=\"Unavailable\",{kv}}} 1\n")));
        assert!(out.contains(&format!("grpc_server_handled_total{{grpc_code=\"DataLoss\",{kv}}} 0\n")));
        let watch = "grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"";
        assert!(out.contains(&format!("grpc_server_handled_total{{grpc_code=\"Unknown\",{watch}}} 1\n")));
        let unused = "grpc_method=\"Lock\",grpc_service=\"v3lockpb.Lock\",grpc_type=\"unary\"";
        assert!(out.contains(&format!("grpc_server_started_total{{{unused}}} 0\n")), "registered before use");
        assert!(out.contains("# TYPE grpc_server_handled_total counter\n"));
        assert!(!out.contains("grpc_server_handling_seconds"), "only with --metrics=extensive");
    }

    #[test]
    fn messages_are_counted_per_method_and_bytes_over_all() {
        let counters = GrpcCounters::default();
        let watch = method_of("/etcdserverpb.Watch/Watch").unwrap();
        let put = method_of("/etcdserverpb.KV/Put").unwrap();
        counters.received(watch, Completed { messages: 2, payload_bytes: 10 });
        counters.sent(watch, Completed { messages: 5, payload_bytes: 100 });
        counters.received(put, Completed { messages: 1, payload_bytes: 7 });
        let mut out = String::new();
        counters.render(&mut out);
        let watch = "grpc_method=\"Watch\",grpc_service=\"etcdserverpb.Watch\",grpc_type=\"bidi_stream\"";
        assert!(out.contains(&format!("grpc_server_msg_received_total{{{watch}}} 2\n")), "{out}");
        assert!(out.contains(&format!("grpc_server_msg_sent_total{{{watch}}} 5\n")), "{out}");
        assert!(out.contains("etcd_network_client_grpc_received_bytes_total 17\n"), "{out}");
        assert!(out.contains("etcd_network_client_grpc_sent_bytes_total 100\n"), "{out}");
    }

    #[test]
    fn client_versions_are_counted_by_call_type_up_to_a_bound() {
        let counters = GrpcCounters::default();
        let put = method_of("/etcdserverpb.KV/Put").unwrap();
        let watch = method_of("/etcdserverpb.Watch/Watch").unwrap();
        counters.client_request(put, "3.5");
        counters.client_request(put, "3.5");
        counters.client_request(watch, "3.5");
        for n in 0..100 {
            counters.client_request(put, &format!("v{n}\""));
        }
        let mut out = String::new();
        counters.render(&mut out);
        assert!(
            out.contains("etcd_server_client_requests_total{client_api_version=\"3.5\",type=\"unary\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("etcd_server_client_requests_total{client_api_version=\"3.5\",type=\"stream\"} 1\n"),
            "{out}"
        );
        assert!(out.contains("client_api_version=\"v0\\\"\""), "quotes escaped: {out}");
        let series = out.lines().filter(|l| l.starts_with("etcd_server_client_requests_total{")).count();
        assert_eq!(series, MAX_CLIENT_VERSIONS);
    }

    #[test]
    fn extensive_metrics_measure_how_long_calls_take() {
        let counters = GrpcCounters::new(true);
        let range = method_of("/etcdserverpb.KV/Range").unwrap();
        counters.started(range);
        counters.handled(range, 0, Instant::now() - std::time::Duration::from_millis(30));
        let mut out = String::new();
        counters.render(&mut out);
        let kv = "grpc_method=\"Range\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"";
        assert!(out.contains("# TYPE grpc_server_handling_seconds histogram\n"), "{out}");
        assert!(
            out.contains(&format!("grpc_server_handling_seconds_bucket{{{kv},le=\"0.025\"}} 0\n")),
            "{out}"
        );
        assert!(
            out.contains(&format!("grpc_server_handling_seconds_bucket{{{kv},le=\"0.05\"}} 1\n")),
            "{out}"
        );
        assert!(out.contains(&format!("grpc_server_handling_seconds_count{{{kv}}} 1\n")), "{out}");
    }
}
