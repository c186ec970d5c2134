//! How many seats a request takes, and for how long (kube's work
//! estimators, `util/flowcontrol/request`): one seat for most requests; a
//! list (and a watch that starts with one) by the memory its objects take,
//! a seat per 100 kB; a write by the watchers its change is sent to, which
//! it keeps a seat for (one per 10 watchers) for 5 ms after it is done.

use std::collections::HashMap;
use std::time::Duration;

use axum::http::Uri;

use crate::request::{RequestInfo, ResourceRequest};

/// kube's `bytesPerSeat`.
const BYTES_PER_SEAT: u64 = 100_000;
/// What a list served from the watch cache is charged at most (kube streams
/// it from memory it already holds).
const CACHED_LIST_MAX_BYTES: u64 = 1_000_000;
/// The most seats a list or a write takes, whatever its level allows.
const MAX_LIST_SEATS: u32 = 100;
const MAX_MUTATING_SEATS: u32 = 10;
const WATCHES_PER_SEAT: usize = 10;
/// How long a write keeps its final seats per watcher's event.
const EVENT_ADDITIONAL_DURATION: Duration = Duration::from_millis(5);

/// A request's seats while it runs (`initial`), and those it keeps for
/// `additional_latency` after (`final_seats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkEstimate {
    pub initial_seats: u32,
    pub final_seats: u32,
    pub additional_latency: Duration,
}

impl WorkEstimate {
    pub const ONE_SEAT: WorkEstimate =
        WorkEstimate { initial_seats: 1, final_seats: 0, additional_latency: Duration::ZERO };

    /// The seats it holds at most, what it is admitted by.
    pub fn max_seats(&self) -> u32 {
        self.initial_seats.max(self.final_seats)
    }
}

/// What the server knows of a resource's objects and watchers.
pub trait ResourceStats: Send + Sync + std::fmt::Debug {
    /// `(objects, their bytes)` of `group`/`resource`; None when it is not
    /// served.
    fn objects(&self, group: &str, resource: &str) -> Option<(u64, u64)>;
    /// The watches open on `group`/`resource`.
    fn watchers(&self, group: &str, resource: &str) -> usize;
}

/// The estimate of a request; `max_seats` is its level's bound (kube's:
/// 15% of the level's nominal seats, at most a hand's share; 0 for none).
pub fn estimate(info: &RequestInfo, uri: &Uri, stats: &dyn ResourceStats, max_seats: u32) -> WorkEstimate {
    let RequestInfo::Resource(request) = info else { return WorkEstimate::ONE_SEAT };
    match request.verb {
        "list" | "watch" => list(request, &parameters(uri), stats, bound(max_seats, MAX_LIST_SEATS)),
        "create" | "update" | "patch" | "delete" => {
            mutating(request, stats, bound(max_seats, MAX_MUTATING_SEATS))
        }
        _ => WorkEstimate::ONE_SEAT,
    }
}

/// The level's bound (0: none) within the estimator's own.
fn bound(level: u32, estimator: u32) -> u32 {
    match level {
        0 => estimator,
        level => level.min(estimator),
    }
}

fn parameters(uri: &Uri) -> HashMap<String, String> {
    axum::extract::Query::<HashMap<String, String>>::try_from_uri(uri).map(|q| q.0).unwrap_or_default()
}

/// A list by the bytes it reads at once. A watch costs as much only when it
/// starts with the current state (no resourceVersion, or "0", or
/// `sendInitialEvents`); its seats are held until that state is sent.
fn list(
    request: &ResourceRequest,
    query: &HashMap<String, String>,
    stats: &dyn ResourceStats,
    max: u32,
) -> WorkEstimate {
    let given = |name: &str| query.get(name).map(String::as_str).filter(|v| !v.is_empty());
    let rv = given("resourceVersion");
    let watch = request.verb == "watch";
    if watch && given("sendInitialEvents") != Some("true") && !matches!(rv, None | Some("0")) {
        return WorkEstimate::ONE_SEAT;
    }
    // What the read delegator sends to storage: pages, continuations and
    // exact revisions; the rest is served from the watch cache.
    let limit = given("limit").and_then(|l| l.parse::<u64>().ok()).filter(|l| *l > 0);
    let from_storage = !watch
        && (given("continue").is_some()
            || (limit.is_some() && rv.is_none())
            || given("resourceVersionMatch") == Some("Exact"));
    let Some((count, bytes)) = stats.objects(&request.group, &request.resource) else {
        return WorkEstimate::ONE_SEAT;
    };
    let average = if count == 0 { 0 } else { bytes.div_ceil(count) };
    let limited = limit.map_or(count, |l| l.min(count));
    let filtered = given("labelSelector").is_some() || given("fieldSelector").is_some();
    let loaded = match () {
        () if request.name.is_some() => 1,
        () if !from_storage => limited,
        () if filtered => limited.max(count / 2),
        () => limited,
    };
    let mut memory = loaded.saturating_mul(average);
    if !from_storage {
        memory = memory.min(CACHED_LIST_MAX_BYTES);
    }
    let seats = u32::try_from(memory.div_ceil(BYTES_PER_SEAT)).unwrap_or(u32::MAX);
    WorkEstimate { initial_seats: seats.clamp(1, max), ..WorkEstimate::ONE_SEAT }
}

/// A write: one seat while it runs, then a seat per 10 watchers of its
/// resource for 5 ms each (spread over at most `max` seats), the time its
/// events take to send.
fn mutating(request: &ResourceRequest, stats: &dyn ResourceStats, max: u32) -> WorkEstimate {
    // A token request changes nothing anyone watches.
    if request.resource == "serviceaccounts" && request.subresource.as_deref() == Some("token") {
        return WorkEstimate::ONE_SEAT;
    }
    let watchers = stats.watchers(&request.group, &request.resource);
    if watchers < WATCHES_PER_SEAT {
        return WorkEstimate::ONE_SEAT;
    }
    let wanted = u32::try_from(watchers.div_ceil(WATCHES_PER_SEAT)).unwrap_or(u32::MAX);
    let work = EVENT_ADDITIONAL_DURATION * wanted;
    let final_seats = wanted.min(max);
    WorkEstimate { initial_seats: 1, final_seats, additional_latency: work / final_seats }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    #[derive(Debug)]
    struct Stored {
        objects: u64,
        bytes_each: u64,
        watchers: usize,
    }

    impl ResourceStats for Stored {
        fn objects(&self, _: &str, resource: &str) -> Option<(u64, u64)> {
            (resource == "pods").then_some((self.objects, self.objects * self.bytes_each))
        }
        fn watchers(&self, _: &str, _: &str) -> usize {
            self.watchers
        }
    }

    fn seats(stats: &Stored, method: Method, path: &str, watch: bool) -> WorkEstimate {
        let uri: Uri = path.parse().unwrap();
        estimate(&RequestInfo::parse(&method, uri.path(), watch), &uri, stats, 37)
    }

    #[test]
    fn lists_cost_by_the_bytes_they_read() {
        let stats = Stored { objects: 5_000, bytes_each: 2_000, watchers: 0 };
        // 10 MB in storage; from the cache at most 1 MB is charged.
        assert_eq!(seats(&stats, Method::GET, "/api/v1/pods", false).initial_seats, 10);
        // A page read from storage: 500 objects of 2 kB.
        assert_eq!(seats(&stats, Method::GET, "/api/v1/pods?limit=500", false).initial_seats, 10);
        assert_eq!(
            seats(&stats, Method::GET, "/api/v1/pods?limit=5000", false).initial_seats,
            37,
            "the level's bound"
        );
        // Filtered from storage: at least half of everything is read.
        let filtered = seats(&stats, Method::GET, "/api/v1/pods?limit=10&labelSelector=a%3Db", false);
        assert_eq!(filtered.initial_seats, 37);
        assert_eq!(seats(&stats, Method::GET, "/api/v1/namespaces/a/pods/p", false), WorkEstimate::ONE_SEAT);
        assert_eq!(
            seats(&stats, Method::GET, "/api/v1/secrets", false),
            WorkEstimate::ONE_SEAT,
            "unknown: one"
        );
        let empty = Stored { objects: 0, bytes_each: 0, watchers: 0 };
        assert_eq!(seats(&empty, Method::GET, "/api/v1/pods", false), WorkEstimate::ONE_SEAT);
    }

    #[test]
    fn a_watch_costs_a_list_only_when_it_starts_with_one() {
        let stats = Stored { objects: 5_000, bytes_each: 2_000, watchers: 0 };
        assert_eq!(seats(&stats, Method::GET, "/api/v1/pods?watch=1", true).initial_seats, 10);
        assert_eq!(
            seats(&stats, Method::GET, "/api/v1/pods?watch=1&resourceVersion=0", true).initial_seats,
            10
        );
        let resumed = seats(&stats, Method::GET, "/api/v1/pods?watch=1&resourceVersion=42", true);
        assert_eq!(resumed, WorkEstimate::ONE_SEAT);
        let streamed = seats(
            &stats,
            Method::GET,
            "/api/v1/pods?watch=1&resourceVersion=42&sendInitialEvents=true",
            true,
        );
        assert_eq!(streamed.initial_seats, 10);
    }

    #[test]
    fn writes_keep_seats_for_their_watchers() {
        let quiet = Stored { objects: 1, bytes_each: 1, watchers: 9 };
        assert_eq!(seats(&quiet, Method::POST, "/api/v1/namespaces/a/pods", false), WorkEstimate::ONE_SEAT);
        let watched = Stored { objects: 1, bytes_each: 1, watchers: 45 };
        let create = seats(&watched, Method::POST, "/api/v1/namespaces/a/pods", false);
        assert_eq!(
            create,
            WorkEstimate { initial_seats: 1, final_seats: 5, additional_latency: Duration::from_millis(5) }
        );
        // 500 watchers: 50 seats' worth of 5 ms spread over the 10 allowed.
        let crowded = Stored { objects: 1, bytes_each: 1, watchers: 500 };
        let delete = seats(&crowded, Method::DELETE, "/api/v1/namespaces/a/pods/p", false);
        assert_eq!(
            delete,
            WorkEstimate { initial_seats: 1, final_seats: 10, additional_latency: Duration::from_millis(25) }
        );
        let token = seats(&crowded, Method::POST, "/api/v1/namespaces/a/serviceaccounts/s/token", false);
        assert_eq!(token, WorkEstimate::ONE_SEAT);
        assert_eq!(
            seats(&crowded, Method::GET, "/api/v1/namespaces/a/pods/p", false),
            WorkEstimate::ONE_SEAT
        );
    }
}
