//! The etcd members of `--etcd-servers` as one gRPC service, the way etcd's
//! client balances them for kube-apiserver: requests go round the members
//! that are up, a member is marked down when a request on it fails or it
//! stops answering health checks (`health`), and a failed request goes to
//! the next member at once when its class allows it (`retry`); a unary
//! answer counts only once it is read whole, so a member killed while
//! answering fails the attempt rather than the caller's decode. With one
//! member down, every request still finds a healthy one; with quorum lost,
//! requests go on being tried with a short backoff until the request's
//! deadline, and service comes back by itself.
//!
//! tonic's own balancer is not used: it keeps sending to a member whose
//! connection fails (its lazy connection reports ready), so one dead member
//! failed every other request.

mod health;
mod retry;
mod silence;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody};
use tonic::body::Body;
use tonic::codegen::BoxFuture;
use tonic::transport::Channel;
use tower::ServiceExt;

pub use retry::{Retried, Retry};

use health::Health;
use retry::Failure;
use silence::EndsWhenSilent;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long requests outside an API request (the watch cache's lists, the
/// compactor) go on trying when no member serves.
const BACKGROUND_PATIENCE: Duration = Duration::from_secs(10);
/// The pause after every member failed a request, growing each round.
const ROUND_BACKOFF: Duration = Duration::from_millis(25);
const MAX_ROUND_BACKOFF: Duration = Duration::from_millis(500);

/// Every member; cheap to clone.
#[derive(Debug, Clone)]
pub struct Endpoints {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    members: Vec<Member>,
    /// Where the next request starts looking (round robin).
    next: AtomicUsize,
}

#[derive(Debug)]
struct Member {
    url: String,
    channel: Channel,
    health: Health,
}

impl Member {
    /// Records a health verdict, logging when it changes what was known.
    fn record(&self, verdict: Result<(), String>) {
        let changed = self.health.set(verdict.is_ok());
        match verdict {
            Ok(()) if changed => tracing::info!(endpoint = %self.url, "etcd member healthy again"),
            Err(why) if changed => tracing::warn!(endpoint = %self.url, %why, "etcd member unhealthy"),
            _ => {}
        }
    }
}

/// What one attempt on one member came to.
enum Attempt {
    Answered(axum::http::Response<Body>),
    Failed(Failure, BoxError),
}

impl Endpoints {
    /// The members `(url, channel)`; with more than one, health checks run
    /// (on the current tokio runtime) for as long as a clone is alive.
    pub fn new(members: Vec<(String, Channel)>) -> Self {
        let members = members
            .into_iter()
            .map(|(url, channel)| Member { url, channel, health: Health::new() })
            .collect();
        let shared = Arc::new(Shared { members, next: AtomicUsize::new(0) });
        if shared.members.len() > 1 {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(health::check_forever(Arc::downgrade(&shared)));
                }
                Err(_) => tracing::warn!("etcd members are not health-checked: no runtime"),
            }
        }
        Endpoints { shared }
    }
}

impl From<Channel> for Endpoints {
    /// One member behind `channel` (an in-process member, a test's).
    fn from(channel: Channel) -> Self {
        Endpoints::new(vec![("etcd".to_string(), channel)])
    }
}

impl Shared {
    /// Sends `request`, to other members as its class allows, until it is
    /// answered or no member is left to try before the deadline.
    async fn send(&self, request: axum::http::Request<Body>) -> Result<axum::http::Response<Body>, BoxError> {
        let path = request.uri().path();
        let class = request.extensions().get::<Retry>().copied().unwrap_or_else(|| Retry::of_method(path));
        if class == Retry::Stream {
            return self.open_stream(request).await;
        }
        // Unary requests are small and already encoded: kept, to send again.
        let (parts, body) = request.into_parts();
        let body = body.collect().await?.to_bytes();
        let deadline =
            crate::request::deadline::current().unwrap_or_else(|| Instant::now() + BACKGROUND_PATIENCE);
        let mut attempts = 0;
        let mut backoff = ROUND_BACKOFF;
        loop {
            for index in self.order() {
                let request =
                    axum::http::Request::from_parts(parts.clone(), Body::new(Full::new(body.clone())));
                attempts += 1;
                match self.attempt(index, request, class).await {
                    Attempt::Answered(mut response) => {
                        if attempts > 1 {
                            response.extensions_mut().insert(Retried);
                        }
                        return Ok(response);
                    }
                    Attempt::Failed(failure, error) => {
                        let member = &self.members[index];
                        member.record(Err(error.to_string()));
                        if !class.allows(failure) || Instant::now() + backoff >= deadline {
                            return Err(error);
                        }
                        tracing::debug!(endpoint = %member.url, ?failure, %error, "sending to another etcd member");
                    }
                }
            }
            // Every member failed it: wait a little for one to come back.
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_ROUND_BACKOFF);
        }
    }

    /// The members to try, in order: those up, starting at the next in
    /// turn, then those down (they may be back before a check says so).
    fn order(&self) -> Vec<usize> {
        let count = self.members.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let (up, down): (Vec<usize>, Vec<usize>) =
            (0..count).map(|i| (start + i) % count).partition(|&i| self.members[i].health.is_up());
        up.into_iter().chain(down).collect()
    }

    /// One try on one member: abandoned if the member is marked down while
    /// it waits, when the class allows sending it elsewhere then.
    async fn attempt(&self, index: usize, request: axum::http::Request<Body>, class: Retry) -> Attempt {
        let member = &self.members[index];
        let watch_silence = class.leaves_silent_members() && member.health.is_up() && self.members.len() > 1;
        let silent = member.health.went_down();
        let exchange = exchange(member, request);
        if !watch_silence {
            return exchange.await;
        }
        tokio::select! {
            attempt = exchange => attempt,
            () = silent => {
                let why = format!("etcd member {} stopped answering", member.url);
                Attempt::Failed(Failure::Silent, Box::new(tonic::Status::unavailable(why)))
            }
        }
    }

    /// Opens a stream on the first member that takes it; with others to go
    /// to, its answer ends when that member is marked down.
    async fn open_stream(
        &self,
        request: axum::http::Request<Body>,
    ) -> Result<axum::http::Response<Body>, BoxError> {
        let Some(&index) = self.order().first() else { return Err("no etcd member is configured".into()) };
        let member = &self.members[index];
        let silent = member.health.went_down();
        match member.channel.clone().oneshot(request).await {
            Ok(response) if self.members.len() > 1 => {
                Ok(response.map(|body| Body::new(EndsWhenSilent::new(body, silent, &member.url))))
            }
            Ok(response) => Ok(response),
            Err(error) => {
                let error: BoxError = error.into();
                member.record(Err(error.to_string()));
                Err(error)
            }
        }
    }
}

/// Sends a unary `request` to `member` and reads its whole answer: only
/// once the answer is read, trailers and all, is it known to have arrived
/// whole (a member killed mid-answer fails the read) and how it ended.
async fn exchange(member: &Member, request: axum::http::Request<Body>) -> Attempt {
    let response = match member.channel.clone().oneshot(request).await {
        Ok(response) => response,
        Err(error) => {
            let error: BoxError = error.into();
            return Attempt::Failed(Failure::of_transport(error.as_ref()), error);
        }
    };
    if let Some(refused) = refusal(response.headers()) {
        return refused;
    }
    let (parts, body) = response.into_parts();
    let answer = match body.collect().await {
        Ok(answer) => answer,
        Err(lost) => return Attempt::Failed(Failure::ConnectionLost, Box::new(lost)),
    };
    let trailers = answer.trailers().cloned();
    if let Some(refused) = trailers.as_ref().and_then(refusal) {
        return refused;
    }
    member.record(Ok(()));
    let mut frames = vec![Ok::<_, std::convert::Infallible>(Frame::data(answer.to_bytes()))];
    frames.extend(trailers.map(|trailers| Ok(Frame::trailers(trailers))));
    let body = Body::new(StreamBody::new(futures_util::stream::iter(frames)));
    Attempt::Answered(axum::http::Response::from_parts(parts, body))
}

/// The failed attempt a status in `headers` (or trailers) shows, if it is
/// one another member may not give.
fn refusal(headers: &axum::http::HeaderMap) -> Option<Attempt> {
    let failure = Failure::of_answer(headers)?;
    let status = tonic::Status::from_header_map(headers)
        .unwrap_or_else(|| tonic::Status::unavailable("etcd member unavailable"));
    Some(Attempt::Failed(failure, Box::new(status)))
}

impl tower::Service<axum::http::Request<Body>> for Endpoints {
    type Response = axum::http::Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Each member's channel buffers; readiness is awaited per attempt.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::http::Request<Body>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { shared.send(request).await })
    }
}

/// `request` marked with its retry class.
pub fn classified<T>(message: T, class: Retry) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.extensions_mut().insert(class);
    request
}
