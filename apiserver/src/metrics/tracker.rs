//! What one request's layers tell its metrics, without passing anything
//! down the chain: the `observe` filter runs the rest of the chain inside a
//! task-local [`Tracker`], and the layers that know something note it
//! there (kube keeps the same in the request's context: its latency
//! trackers, its route's instrumentation):
//!
//! * the handler that serves it ([`routed`]): kube counts a request only
//!   once a route (or an instrumented non-resource handler) has taken it,
//!   so 401s, 403s, unknown paths and proxied requests are not counted;
//! * the time its webhooks and its priority-and-fairness queue took
//!   ([`webhook`], [`waited_in_queue`]), which the SLI latency leaves out;
//! * a refusal in self-defense ([`dropped`] with 429, [`timed_out`] with
//!   504, [`aggregator_failed`]);
//! * its execution, for the in-flight watermark ([`executing`]).
//!
//! Outside a tracked request (unit tests, background work) every note is
//! ignored.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::requests::{READ_ONLY, RequestMetrics};

tokio::task_local! {
    static CURRENT: Tracker;
}

/// Which instrumented handler took the request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Route {
    /// None did (an unknown path, a refusal before any handler, a request
    /// passed on to an extension server).
    #[default]
    Unrouted,
    /// A route of a served resource (labels from its RequestInfo).
    Resource,
    /// An instrumented non-resource handler: `/healthz` and the like
    /// (subresource `/healthz`, no component), aggregated discovery
    /// (subresource `apis`, component `apiserver`).
    NonResource { subresource: &'static str, component: &'static str },
}

/// The notes of the request being served.
struct Tracker {
    requests: Arc<RequestMetrics>,
    route: Cell<Route>,
    /// kube's MutatingWebhookTracker: the sum of the calls.
    mutating_webhooks: Cell<Duration>,
    /// kube's ValidatingWebhookTracker: the longest call (they run at once).
    validating_webhooks: Cell<Duration>,
    /// kube's APFQueueWaitTracker.
    queue_wait: Cell<Duration>,
    dropped: Cell<bool>,
    timed_out: Cell<bool>,
    aggregator_failure: Cell<Option<u16>>,
}

/// What the layers noted, once the request has been answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Noted {
    pub route: Route,
    /// What the SLI latency does not count: webhooks and queueing.
    pub excluded: Duration,
    /// Refused with 429 by priority and fairness or the in-flight limits.
    pub dropped: bool,
    /// Answered 504 by the timeout filter.
    pub timed_out: bool,
    /// The aggregator could not pass the request on (its answer's code).
    pub aggregator_failure: Option<u16>,
}

/// Runs `work` (the rest of the chain) with a fresh tracker; its output
/// and what was noted.
pub async fn scope<F: Future>(requests: Arc<RequestMetrics>, work: F) -> (F::Output, Noted) {
    let tracker = Tracker {
        requests,
        route: Cell::default(),
        mutating_webhooks: Cell::default(),
        validating_webhooks: Cell::default(),
        queue_wait: Cell::default(),
        dropped: Cell::default(),
        timed_out: Cell::default(),
        aggregator_failure: Cell::default(),
    };
    CURRENT
        .scope(tracker, async move {
            let output = work.await;
            let noted = CURRENT.with(|t| Noted {
                route: t.route.get(),
                excluded: t.mutating_webhooks.get() + t.validating_webhooks.get() + t.queue_wait.get(),
                dropped: t.dropped.get(),
                timed_out: t.timed_out.get(),
                aggregator_failure: t.aggregator_failure.get(),
            });
            (output, noted)
        })
        .await
}

fn note(f: impl FnOnce(&Tracker)) {
    let _ = CURRENT.try_with(f);
}

/// An instrumented handler has taken the request.
pub fn routed(route: Route) {
    note(|t| t.route.set(route));
}

/// One webhook call took `took`.
pub fn webhook(mutating: bool, took: Duration) {
    note(|t| match mutating {
        true => t.mutating_webhooks.set(t.mutating_webhooks.get() + took),
        false => t.validating_webhooks.set(t.validating_webhooks.get().max(took)),
    });
}

/// The request waited `took` for its seats.
pub fn waited_in_queue(took: Duration) {
    note(|t| t.queue_wait.set(t.queue_wait.get().max(took)));
}

/// The request was refused with 429 to protect the server.
pub fn dropped() {
    note(|t| t.dropped.set(true));
}

/// The request outlived its deadline and was answered 504.
pub fn timed_out() {
    note(|t| t.timed_out.set(true));
}

/// The aggregator answered `code` itself: it could not reach the server.
pub fn aggregator_failed(code: u16) {
    note(|t| t.aggregator_failure.set(Some(code)));
}

/// The request executes from now until the guard is dropped (kube's
/// in-flight watermark, read-only or mutating by its RequestInfo verb).
pub fn executing(mutating: bool) -> Option<Executing> {
    CURRENT
        .try_with(|t| {
            let kind = if mutating { 1 } else { READ_ONLY };
            t.requests.inflight().start(kind);
            Executing { requests: t.requests.clone(), kind }
        })
        .ok()
}

/// A request counted as executing.
#[derive(Debug)]
pub struct Executing {
    requests: Arc<RequestMetrics>,
    kind: usize,
}

impl Drop for Executing {
    fn drop(&mut self) {
        self.requests.inflight().current[self.kind].fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn layers_note_into_the_request_they_serve() {
        let requests = Arc::new(RequestMetrics::default());
        let ((), noted) = scope(requests.clone(), async {
            routed(Route::Resource);
            webhook(true, Duration::from_millis(10));
            webhook(true, Duration::from_millis(20));
            webhook(false, Duration::from_millis(40));
            webhook(false, Duration::from_millis(5));
            waited_in_queue(Duration::from_millis(100));
            let executing = executing(true);
            assert!(executing.is_some());
        })
        .await;
        assert_eq!(noted.route, Route::Resource);
        assert_eq!(noted.excluded, Duration::from_millis(10 + 20 + 40 + 100));
        assert!(!noted.dropped && !noted.timed_out);
        // Outside a request, nothing is noted and nothing fails.
        routed(Route::Resource);
        assert!(executing(false).is_none());
    }
}
