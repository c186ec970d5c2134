//! Serving connections, HTTP or HTTPS, within kube-apiserver's limits on
//! what a client may hold without sending anything: a connection has
//! `--read-header-timeout` (kube's `ReadHeaderTimeout`, 32s) for its TLS
//! handshake, for its first request and for the headers of every request
//! after it; a connection without a request in flight is closed after
//! kube's `IdleTimeout` (90s); and at most `--max-connections` are open at
//! once (an rtcd limit: kube has none), more being closed as soon as they
//! are accepted. HTTP/2 settings are kube's (`secure_serving.go`).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio_rustls::TlsAcceptor;

use super::shared_tcp::SharedTcp;
use crate::request::{ClientCertificates, ClientPresence};

/// kube's `IdleTimeout` for HTTP/1.1 keep-alive and HTTP/2 connections.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// kube's HTTP/2 stream limit when `--http2-max-streams-per-connection` is 0.
const DEFAULT_HTTP2_STREAMS: u32 = 100;

/// kube's HTTP/2 per-stream upload buffer and largest frame: 256 KiB, "big
/// enough for most API POST requests in a single frame".
const HTTP2_STREAM_WINDOW: u32 = 256 * 1024;

/// The largest HTTP/2 window (2^31 - 1).
const HTTP2_MAX_WINDOW: u32 = i32::MAX as u32;

/// How long a connection told to close may finish what it is doing.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// What bounds connections (see the module's documentation).
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    pub read_header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: u32,
    /// 0: kube's default.
    pub http2_max_streams: u32,
}

/// What every connection's task shares.
struct Shared {
    builder: auto::Builder<TokioExecutor>,
    router: Router,
    tls: Option<TlsAcceptor>,
    limits: ConnectionLimits,
}

/// Accepts connections until `shutdown` completes, then asks the open ones
/// to close and waits for them (a bounded time: watches do not end).
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let max = limits.max_connections.clamp(1, u32::try_from(Semaphore::MAX_PERMITS).unwrap_or(u32::MAX));
    let permits = Arc::new(Semaphore::new(max as usize));
    let shared = Arc::new(Shared { builder: builder(&limits), router, tls, limits });
    let (stop, stopped) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, most likely: wait for some
                    // to close rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tracing::debug!(%peer, max, "too many connections: closing the new one");
            continue;
        };
        let (shared, stopped) = (shared.clone(), stopped.clone());
        tokio::spawn(async move {
            serve_tcp(tcp, peer, &shared, stopped).await;
            drop(permit);
        });
    }
    let _ = stop.send(true);
    let _ = tokio::time::timeout(CLOSE_GRACE * 2, permits.acquire_many(max)).await;
}

/// HTTP/1.1 and HTTP/2 (by ALPN over TLS, by preface over plain TCP), set
/// up as kube sets up its server.
fn builder(limits: &ConnectionLimits) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper only enforces the header timeout with a timer.
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.read_header_timeout);
    let streams = match limits.http2_max_streams {
        0 => DEFAULT_HTTP2_STREAMS,
        n => n,
    };
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(streams)
        .max_frame_size(HTTP2_STREAM_WINDOW)
        .initial_stream_window_size(HTTP2_STREAM_WINDOW)
        .initial_connection_window_size(HTTP2_STREAM_WINDOW.saturating_mul(streams).min(HTTP2_MAX_WINDOW));
    builder
}

/// One accepted connection: its TLS handshake, if any, then its requests.
async fn serve_tcp(tcp: TcpStream, peer: SocketAddr, shared: &Shared, stopped: watch::Receiver<bool>) {
    let _ = tcp.set_nodelay(true);
    let (tcp, presence) = SharedTcp::new(tcp);
    let client = Client { peer, chain: None, presence };
    let Some(acceptor) = &shared.tls else {
        return drive(TokioIo::new(tcp), client, shared, stopped).await;
    };
    // Go bounds the handshake by the header timeout too.
    let tls = match tokio::time::timeout(shared.limits.read_header_timeout, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let client = Client { chain: super::tls::client_chain(&tls), ..client };
    drive(TokioIo::new(tls), client, shared, stopped).await;
}

/// What a connection knows of its client, given to each of its requests.
#[derive(Clone)]
struct Client {
    /// The client's address, for the audit log's sourceIPs.
    peer: SocketAddr,
    /// The client's verified certificates, for authentication.
    chain: Option<ClientCertificates>,
    /// Whether the client is still there.
    presence: ClientPresence,
}

/// Serves the connection's requests until it ends, stays idle too long, or
/// the server stops.
async fn drive<I>(io: I, client: Client, shared: &Shared, mut stopped: watch::Receiver<bool>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let peer = client.peer;
    let service = Tracked {
        inner: TowerToHyperService::new(shared.router.clone()),
        activity: activity.clone(),
        client,
    };
    let conn = shared.builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let limits = &shared.limits;
    // Checked a few times per limit, so a connection goes soon after it.
    let period = (limits.read_header_timeout.min(limits.idle_timeout) / 4).max(Duration::from_millis(10));
    let mut check = tokio::time::interval(period);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            _ = check.tick() => {
                // Before its first request a connection gets the header
                // timeout (a slow TLS client, an HTTP/2 preface that never
                // ends); after, the idle timeout.
                let limit = if activity.served_any() { limits.idle_timeout } else { limits.read_header_timeout };
                if activity.idle_for() >= limit {
                    tracing::debug!(%peer, ?limit, "closing an idle connection");
                    break;
                }
            }
            _ = stopped.changed() => break,
        }
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(CLOSE_GRACE, conn).await;
}

/// When a connection last did something: requests in flight, requests
/// served, and when the last one ended.
struct Activity {
    opened: Instant,
    in_flight: AtomicUsize,
    served: AtomicU64,
    /// Milliseconds from `opened` to the end of the last request.
    idle_since: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            served: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
        }
    }

    fn served_any(&self) -> bool {
        self.served.load(Ordering::Relaxed) > 0
    }

    fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        let since = Duration::from_millis(self.idle_since.load(Ordering::Acquire));
        self.opened.elapsed().saturating_sub(since)
    }
}

/// One request in flight until its response body is done with.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: &Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        activity.served.fetch_add(1, Ordering::Relaxed);
        InFlight(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let millis = u64::try_from(self.0.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.idle_since.store(millis, Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The router, noting each request's life in the connection's activity.
struct Tracked {
    inner: TowerToHyperService<Router>,
    activity: Arc<Activity>,
    client: Client,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<TrackedBody>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn call(&self, mut request: hyper::Request<Incoming>) -> Self::Future {
        let in_flight = InFlight::start(&self.activity);
        // What the connection knows goes with each of its requests.
        request.extensions_mut().insert(axum::extract::ConnectInfo(self.client.peer));
        if let Some(chain) = &self.client.chain {
            request.extensions_mut().insert(chain.clone());
        }
        request.extensions_mut().insert(self.client.presence.clone());
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| TrackedBody { body, _in_flight: in_flight }))
        })
    }
}

/// A response body that keeps its request in flight (a watch lasts as long
/// as its body).
struct TrackedBody {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
