//! go-grpc-prometheus's server counters, which etcd exports by default
//! (`--metrics=basic`): `grpc_server_started_total` when a call arrives and
//! `grpc_server_handled_total` with the status code when it ends, by
//! service, method and call type. etcd's alert on failed requests
//! (`etcdHighNumberOfFailedGRPCRequests`) reads the latter.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::body::Body;

use crate::grpc_body::is_grpc;

/// `(grpc_type, grpc_service, grpc_method)`.
type Method = (&'static str, String, String);

/// Calls started, and ended by code, per method.
#[derive(Debug, Default)]
pub struct GrpcCounters {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    started: BTreeMap<Method, u64>,
    handled: BTreeMap<(Method, &'static str), u64>,
}

impl GrpcCounters {
    fn started(&self, method: &Method) {
        *self.lock().started.entry(method.clone()).or_default() += 1;
    }

    fn handled(&self, method: Method, code: &'static str) {
        *self.lock().handled.entry((method, code)).or_default() += 1;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Both families in Prometheus text format.
    pub fn render(&self, out: &mut String) {
        let counts = self.lock();
        let labels = |(kind, service, method): &Method| {
            format!("grpc_method=\"{method}\",grpc_service=\"{service}\",grpc_type=\"{kind}\"")
        };
        rtcd_metrics::text::family(
            out,
            "grpc_server_started_total",
            "counter",
            "Total number of RPCs started on the server.",
            counts.started.iter().map(|(method, n)| (labels(method), *n as f64)),
        );
        rtcd_metrics::text::family(
            out,
            "grpc_server_handled_total",
            "counter",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            counts
                .handled
                .iter()
                .map(|((method, code), n)| (format!("grpc_code=\"{code}\",{}", labels(method)), *n as f64)),
        );
    }
}

/// The call type of an etcd method, as go-grpc-prometheus names it.
fn call_type(service: &str, method: &str) -> &'static str {
    match (service, method) {
        ("etcdserverpb.Watch", "Watch") | ("etcdserverpb.Lease", "LeaseKeepAlive") => "bidi_stream",
        ("etcdserverpb.Maintenance", "Snapshot") | ("v3electionpb.Election", "Observe") => "server_stream",
        ("grpc.health.v1.Health", "Watch") => "server_stream",
        _ => "unary",
    }
}

/// gRPC's name of a status code, as Go's `codes.Code.String()` gives it.
fn code_name(code: &[u8]) -> &'static str {
    match code {
        b"0" => "OK",
        b"1" => "Canceled",
        b"2" => "Unknown",
        b"3" => "InvalidArgument",
        b"4" => "DeadlineExceeded",
        b"5" => "NotFound",
        b"6" => "AlreadyExists",
        b"7" => "PermissionDenied",
        b"8" => "ResourceExhausted",
        b"9" => "FailedPrecondition",
        b"10" => "Aborted",
        b"11" => "OutOfRange",
        b"12" => "Unimplemented",
        b"13" => "Internal",
        b"14" => "Unavailable",
        b"15" => "DataLoss",
        b"16" => "Unauthenticated",
        _ => "Unknown",
    }
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
        let call = self.inner.call(request);
        let Some(method) = method else { return Box::pin(call) };
        let counters = self.counters.clone();
        counters.started(&method);
        Box::pin(async move {
            let response = call.await?;
            // A trailers-only answer (an error) has its status in the headers.
            if let Some(code) = response.headers().get("grpc-status") {
                counters.handled(method, code_name(code.as_bytes()));
                return Ok(response);
            }
            Ok(response.map(|body| Body::new(Counted { inner: body, ending: Some((counters, method)) })))
        })
    }
}

/// `/service/method` split.
fn method_of(path: &str) -> Option<Method> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    Some((call_type(service, method), service.to_string(), method.to_string()))
}

/// A response body that counts its call as handled when the trailers say
/// how it ended, or as canceled when it is dropped before they came.
struct Counted {
    inner: Body,
    ending: Option<(Arc<GrpcCounters>, Method)>,
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
            && let Some(code) = frame.trailers_ref().and_then(|t| t.get("grpc-status"))
            && let Some((counters, method)) = self.ending.take()
        {
            counters.handled(method, code_name(code.as_bytes()));
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
        if let Some((counters, method)) = self.ending.take() {
            counters.handled(method, "Canceled");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_method_type_and_code() {
        let counters = GrpcCounters::default();
        let put = method_of("/etcdserverpb.KV/Put").unwrap();
        let watch = method_of("/etcdserverpb.Watch/Watch").unwrap();
        counters.started(&put);
        counters.handled(put.clone(), code_name(b"0"));
        counters.started(&put);
        counters.handled(put, code_name(b"14"));
        counters.started(&watch);
        let mut out = String::new();
        counters.render(&mut out);
        let kv = "grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"";
        assert!(out.contains(&format!("grpc_server_started_total{{{kv}}} 2\n")), "{out}");
        assert!(out.contains(&format!("grpc_server_handled_total{{grpc_code=\"OK\",{kv}}} 1\n")), "{out}");
        assert!(out.contains(&format!("grpc_server_handled_total{{grpc_code=\"Unavailable\",{kv}}} 1\n")));
        assert!(out.contains("grpc_type=\"bidi_stream\"} 1\n"), "{out}");
        assert!(out.contains("# TYPE grpc_server_handled_total counter\n"));
    }
}
