//! Watches: the events sent to watch clients (kube's `handlers/watch.go`:
//! per event written, by the group, version and resource watched, and its
//! size on the wire), and the watch caches' families (kube's
//! `storage/cacher/metrics`) that rtcd-apiserver's cache has something
//! for: events received from etcd and dispatched to watchers, the initial
//! events of new watches, watchers closed for falling behind, (re)loads and
//! how long they took, waits for the cache to catch up, its resource
//! version and the capacity of its window of recent events.
//!
//! Left out, as rtcd's cache has nothing they measure: the capacity
//! resizes (the window's bound is fixed), consistency checks against etcd,
//! sharded watches, per-stage dispatch latency and the LIST counters kube
//! deprecated in 1.37.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::family::{Histogram, Kind, LabelMap, Meta, Series, Stability};
use super::storage::ResourceState;

const WATCH_EVENTS: Meta = Meta::new(
    "apiserver_watch_events_total",
    Kind::Counter,
    Stability::Beta,
    "Number of events sent in watch clients",
);
const WATCH_EVENT_SIZES: Meta = Meta::new(
    "apiserver_watch_events_sizes",
    Kind::Histogram,
    Stability::Beta,
    "Watch event size distribution in bytes",
);
/// `ExponentialBuckets(1024, 2.0, 8)`.
const EVENT_SIZE_BUCKETS: &[f64] = &[1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0];

const RECEIVED: Meta = Meta::new(
    "apiserver_watch_cache_events_received_total",
    Kind::Counter,
    Stability::Alpha,
    "Counter of events received in watch cache broken by resource type.",
);
const DISPATCHED: Meta = Meta::new(
    "apiserver_watch_cache_events_dispatched_total",
    Kind::Counter,
    Stability::Alpha,
    "Counter of events dispatched in watch cache broken by resource type.",
);
const INIT_EVENTS: Meta = Meta::new(
    "apiserver_init_events_total",
    Kind::Counter,
    Stability::Alpha,
    "Counter of init events processed in watch cache broken by resource type.",
);
const TERMINATED: Meta = Meta::new(
    "apiserver_terminated_watchers_total",
    Kind::Counter,
    Stability::Alpha,
    "Counter of watchers closed due to unresponsiveness broken by resource type.",
);
const INITIALIZATIONS: Meta = Meta::new(
    "apiserver_watch_cache_initializations_total",
    Kind::Counter,
    Stability::Alpha,
    "Counter of watch cache initializations broken by resource type.",
);
const INITIALIZATION_DURATION: Meta = Meta::new(
    "apiserver_watch_cache_initialization_duration_seconds",
    Kind::Histogram,
    Stability::Alpha,
    "Histogram of watch cache initialization duration in seconds, broken by resource type.",
);
const INITIALIZATION_BUCKETS: &[f64] = &[0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 180.0, 600.0];
const READ_WAIT: Meta = Meta::new(
    "apiserver_watch_cache_read_wait_seconds",
    Kind::Histogram,
    Stability::Alpha,
    "Histogram of time spent waiting for a watch cache to become fresh.",
);
const READ_WAIT_BUCKETS: &[f64] = &[0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0];
const RESOURCE_VERSION: Meta = Meta::new(
    "apiserver_watch_cache_resource_version",
    Kind::Gauge,
    Stability::Alpha,
    "Current resource version of watch cache broken by resource type. This is truncated to the 15 least significant digits.",
);
/// kube declares it with a subsystem and no namespace: no `apiserver_`.
const CAPACITY: Meta = Meta::new(
    "watch_cache_capacity",
    Kind::Gauge,
    Stability::Alpha,
    "Total capacity of watch cache broken by resource type.",
);

/// Events sent to the watch clients of one group, version and resource.
#[derive(Debug)]
pub struct WatchEvents {
    count: AtomicU64,
    sizes: Histogram,
}

impl WatchEvents {
    /// One event written to a client, `bytes` long as framed.
    pub fn sent(&self, bytes: usize) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sizes.observe(bytes as f64);
    }
}

/// The watch clients' events, by group, version and resource.
#[derive(Debug, Default)]
pub struct WatchEventMetrics {
    by_resource: LabelMap<WatchEvents, 3>,
}

impl WatchEventMetrics {
    /// The counters of a watch on `group`/`version`/`resource` (looked up
    /// once per watch).
    pub fn of(&self, group: &str, version: &str, resource: &str) -> Arc<Series<WatchEvents, 3>> {
        let make = || WatchEvents { count: AtomicU64::new(0), sizes: Histogram::new(EVENT_SIZE_BUCKETS) };
        self.by_resource.get([group, version, resource], make)
    }

    pub fn write(&self, out: &mut String) {
        let all = self.by_resource.all();
        let names = ["group", "version", "resource"];
        let counts = all.iter().map(|s| (s.labels(), s.value.count.load(Ordering::Relaxed) as f64));
        WATCH_EVENTS.write(out, names, counts);
        WATCH_EVENT_SIZES.write_histograms(out, names, all.iter().map(|s| (s.labels(), &s.value.sizes)));
    }
}

/// What one resource's watch caches counted.
#[derive(Debug)]
pub struct CacheCounters {
    received: AtomicU64,
    dispatched: AtomicU64,
    init_events: AtomicU64,
    terminated: AtomicU64,
    initializations: AtomicU64,
    initialization: Histogram,
    read_wait: Histogram,
}

impl Default for CacheCounters {
    fn default() -> Self {
        CacheCounters {
            received: AtomicU64::new(0),
            dispatched: AtomicU64::new(0),
            init_events: AtomicU64::new(0),
            terminated: AtomicU64::new(0),
            initializations: AtomicU64::new(0),
            initialization: Histogram::new(INITIALIZATION_BUCKETS),
            read_wait: Histogram::new(READ_WAIT_BUCKETS),
        }
    }
}

impl CacheCounters {
    /// Events from etcd applied to the cache (and handed to its watchers).
    pub fn events(&self, count: usize) {
        self.received.fetch_add(count as u64, Ordering::Relaxed);
        self.dispatched.fetch_add(count as u64, Ordering::Relaxed);
    }

    /// A progress notification from etcd: dispatched (kube counts
    /// storage bookmarks there), not received.
    pub fn progress(&self) {
        self.dispatched.fetch_add(1, Ordering::Relaxed);
    }

    /// A new watcher was sent `count` events of the state or the window.
    pub fn init_events(&self, count: usize) {
        self.init_events.fetch_add(count as u64, Ordering::Relaxed);
    }

    /// Watchers closed because they fell behind.
    pub fn terminated(&self, count: usize) {
        self.terminated.fetch_add(count as u64, Ordering::Relaxed);
    }

    /// The cache (re)loaded from a list that took `took`.
    pub fn initialized(&self, took: Duration) {
        self.initializations.fetch_add(1, Ordering::Relaxed);
        self.initialization.observe(took.as_secs_f64());
    }

    /// A read waited `took` for the cache to catch up.
    pub fn waited(&self, took: Duration) {
        self.read_wait.observe(took.as_secs_f64());
    }
}

/// The watch cache families: counters per resource, gauges from the
/// served resources' caches as they are now.
pub(super) fn write_caches(
    out: &mut String,
    caches: &[Arc<Series<CacheCounters, 2>>],
    served: &[ResourceState],
) {
    let names = ["group", "resource"];
    let counter = |meta: &Meta, out: &mut String, pick: fn(&CacheCounters) -> &AtomicU64| {
        meta.write(
            out,
            names,
            caches.iter().map(|s| (s.labels(), pick(&s.value).load(Ordering::Relaxed) as f64)),
        );
    };
    counter(&RECEIVED, out, |c| &c.received);
    counter(&DISPATCHED, out, |c| &c.dispatched);
    counter(&INIT_EVENTS, out, |c| &c.init_events);
    counter(&TERMINATED, out, |c| &c.terminated);
    counter(&INITIALIZATIONS, out, |c| &c.initializations);
    // Vectors in kube: a resource's series appears with its first observation.
    let histograms = |pick: fn(&CacheCounters) -> &Histogram| {
        caches.iter().map(move |s| (s.labels(), pick(&s.value))).filter(|(_, h)| h.count() > 0)
    };
    INITIALIZATION_DURATION.write_histograms(out, names, histograms(|c| &c.initialization));
    READ_WAIT.write_histograms(out, names, histograms(|c| &c.read_wait));
    let gauge = |value: fn(&ResourceState) -> f64| {
        served.iter().map(move |s| ([s.group.as_str(), s.resource.as_str()], value(s)))
    };
    RESOURCE_VERSION.write(out, names, gauge(|s| (s.resource_version.max(0) % 1_000_000_000_000_000) as f64));
    CAPACITY.write(out, names, gauge(|s| s.capacity as f64));
}
