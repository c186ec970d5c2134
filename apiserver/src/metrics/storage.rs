//! The storage layer's families, per resource (group and resource as kube
//! labels them since 1.34): kube's etcd3 store metrics (the latency, count
//! and failures of each storage call by kube's operation names, the watch
//! events and progress notifications received) and the object counts.
//!
//! kube counts objects by asking etcd for each resource prefix's key count
//! every minute (`--etcd-count-metric-poll-period`). rtcd-apiserver's watch
//! cache holds every object of each served resource, so the count is read
//! from the cache when scraped: current, and no etcd range per resource.
//! Until a cache has loaded (or while its watch is down) the count is
//! kube's -1, "a fetching error".

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use super::family::{Histogram, Kind, LabelMap, Meta, Series, Stability};
use super::requests::DURATION_BUCKETS;
use super::watch::CacheCounters;

const ETCD_DURATION: Meta = Meta::new(
    "etcd_request_duration_seconds",
    Kind::Histogram,
    Stability::Alpha,
    "Etcd request latency in seconds for each operation and object type.",
);
const ETCD_REQUESTS: Meta = Meta::new(
    "etcd_requests_total",
    Kind::Counter,
    Stability::Alpha,
    "Etcd request counts for each operation and object type.",
);
const ETCD_ERRORS: Meta = Meta::new(
    "etcd_request_errors_total",
    Kind::Counter,
    Stability::Alpha,
    "Etcd failed request counts for each operation and object type.",
);
const EVENTS_RECEIVED: Meta = Meta::new(
    "apiserver_storage_events_received_total",
    Kind::Counter,
    Stability::Beta,
    "Number of etcd events received split by kind.",
);
const BOOKMARKS: Meta = Meta::new(
    "etcd_bookmark_total",
    Kind::Counter,
    Stability::Alpha,
    "Number of etcd bookmarks (progress notify events) split by kind.",
);
/// Hidden since 1.36 (ALPHA, deprecated in 1.36.0); shown with
/// `--show-hidden-metrics-for-version`.
const BOOKMARK_COUNTS: Meta = Meta::new(
    "etcd_bookmark_counts",
    Kind::Gauge,
    Stability::Alpha,
    "Number of etcd bookmarks (progress notify events) split by kind.",
)
.deprecated_since("1.36.0");
const RESOURCE_OBJECTS: Meta = Meta::new(
    "apiserver_resource_objects",
    Kind::Gauge,
    Stability::Alpha,
    "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
);
/// Hidden from 1.37 (STABLE, deprecated in 1.34.0: three releases).
const STORAGE_OBJECTS: Meta = Meta::new(
    "apiserver_storage_objects",
    Kind::Gauge,
    Stability::Stable,
    "[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
)
.deprecated_since("1.34.0");

/// STABLE since 1.30; kube reads it with a Status call to a member.
const STORAGE_SIZE: Meta = Meta::new(
    "apiserver_storage_size_bytes",
    Kind::Gauge,
    Stability::Stable,
    "Size of the storage database file physically allocated in bytes.",
);

/// kube's storage operations, by the names it records them under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Get,
    Create,
    Update,
    Delete,
    List,
    GetCurrentResourceVersion,
}

const OPERATIONS: [Operation; 6] = [
    Operation::Get,
    Operation::Create,
    Operation::Update,
    Operation::Delete,
    Operation::List,
    Operation::GetCurrentResourceVersion,
];

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Get => "get",
            Operation::Create => "create",
            Operation::Update => "update",
            Operation::Delete => "delete",
            Operation::List => "list",
            Operation::GetCurrentResourceVersion => "getCurrentResourceVersion",
        }
    }
}

/// One operation's counts for one resource.
#[derive(Debug)]
struct Calls {
    latency: Histogram,
    errors: AtomicU64,
}

/// What one resource's storage calls and watches counted.
#[derive(Debug)]
pub struct ResourceStorage {
    calls: [Calls; OPERATIONS.len()],
    events: AtomicU64,
    bookmarks: AtomicU64,
}

impl Default for ResourceStorage {
    fn default() -> Self {
        ResourceStorage {
            calls: std::array::from_fn(|_| Calls {
                latency: Histogram::new(DURATION_BUCKETS),
                errors: AtomicU64::new(0),
            }),
            events: AtomicU64::new(0),
            bookmarks: AtomicU64::new(0),
        }
    }
}

impl ResourceStorage {
    /// One call to etcd (kube's RecordEtcdRequest): `failed` when etcd
    /// answered with an error, not with a result such as "not found".
    pub fn call(&self, operation: Operation, took: Duration, failed: bool) {
        let calls = &self.calls[operation as usize];
        calls.latency.observe(took.as_secs_f64());
        if failed {
            calls.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Events received by a watch (not progress notifications).
    pub fn events_received(&self, count: usize) {
        self.events.fetch_add(count as u64, Ordering::Relaxed);
    }

    /// A progress notification received by a watch.
    pub fn bookmark(&self) {
        self.bookmarks.fetch_add(1, Ordering::Relaxed);
    }
}

/// Every resource's storage and watch cache counters, shared by the
/// versions a resource is served in.
#[derive(Debug)]
pub struct StorageMetrics {
    storage: LabelMap<ResourceStorage, 2>,
    caches: LabelMap<CacheCounters, 2>,
    /// etcd's database size as last read; -1 when the last read failed
    /// (kube then leaves the series out).
    database_size: AtomicI64,
}

impl Default for StorageMetrics {
    fn default() -> Self {
        StorageMetrics {
            storage: LabelMap::default(),
            caches: LabelMap::default(),
            database_size: AtomicI64::new(-1),
        }
    }
}

/// A served resource as the scrape finds it: its object count (None: its
/// cache has not loaded) and its cache's state.
#[derive(Debug, Clone)]
pub struct ResourceState {
    pub group: String,
    pub resource: String,
    pub objects: Option<usize>,
    pub resource_version: i64,
    pub capacity: usize,
}

impl StorageMetrics {
    /// The storage counters of `group`/`resource`.
    pub fn storage(&self, group: &str, resource: &str) -> Arc<Series<ResourceStorage, 2>> {
        self.storage.get([group, resource], ResourceStorage::default)
    }

    /// The watch cache counters of `group`/`resource`.
    pub fn cache(&self, group: &str, resource: &str) -> Arc<Series<CacheCounters, 2>> {
        self.caches.get([group, resource], CacheCounters::default)
    }

    /// etcd's database size (its Status `dbSize`), None when unread.
    pub fn set_database_size(&self, bytes: Option<i64>) {
        self.database_size.store(bytes.unwrap_or(-1), Ordering::Relaxed);
    }

    /// The families, with the served resources' states (one per group and
    /// resource); with `show_hidden`, the hidden deprecated ones too.
    pub fn write(&self, out: &mut String, served: &[ResourceState], show_hidden: bool) {
        let storage = self.storage.all();
        let names = ["operation", "group", "resource"];
        let calls = || {
            storage.iter().flat_map(|s| {
                let [group, resource] = s.labels();
                OPERATIONS.iter().map(move |&op| ([op.name(), group, resource], &s.value.calls[op as usize]))
            })
        };
        let made = || calls().filter(|(_, c)| c.latency.count() > 0);
        ETCD_DURATION.write_histograms(out, names, made().map(|(l, c)| (l, &c.latency)));
        ETCD_REQUESTS.write(out, names, made().map(|(l, c)| (l, c.latency.count() as f64)));
        let failed = made().filter(|(_, c)| c.errors.load(Ordering::Relaxed) > 0);
        ETCD_ERRORS.write(out, names, failed.map(|(l, c)| (l, c.errors.load(Ordering::Relaxed) as f64)));
        let pairs = ["group", "resource"];
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64;
        EVENTS_RECEIVED.write(out, pairs, storage.iter().map(|s| (s.labels(), load(&s.value.events))));
        BOOKMARKS.write(out, pairs, storage.iter().map(|s| (s.labels(), load(&s.value.bookmarks))));
        if show_hidden {
            BOOKMARK_COUNTS.write(out, pairs, storage.iter().map(|s| (s.labels(), load(&s.value.bookmarks))));
        }
        let count = |state: &ResourceState| state.objects.map_or(-1.0, |n| n as f64);
        let objects = served.iter().map(|s| ([s.group.as_str(), s.resource.as_str()], count(s)));
        RESOURCE_OBJECTS.write(out, pairs, objects);
        if show_hidden {
            // `groupResource.String()`: `pods`, `deployments.apps`.
            let qualified: Vec<(String, f64)> = served
                .iter()
                .map(|s| match s.group.is_empty() {
                    true => (s.resource.clone(), count(s)),
                    false => (format!("{}.{}", s.resource, s.group), count(s)),
                })
                .collect();
            STORAGE_OBJECTS.write(out, ["resource"], qualified.iter().map(|(r, n)| ([r.as_str()], *n)));
        }
        let size = self.database_size.load(Ordering::Relaxed);
        let sizes = (size >= 0).then_some((["etcd-0"], size as f64));
        STORAGE_SIZE.write(out, ["storage_cluster_id"], sizes);
        let caches = self.caches.all();
        super::watch::write_caches(out, &caches, served);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_operation_and_resource() {
        let metrics = StorageMetrics::default();
        let configmaps = metrics.storage("", "configmaps");
        configmaps.value.call(Operation::Create, Duration::from_millis(3), false);
        configmaps.value.call(Operation::Create, Duration::from_millis(30), true);
        metrics.storage("apps", "deployments").value.call(Operation::List, Duration::from_millis(1), false);
        let served = [ResourceState {
            group: "apps".into(),
            resource: "deployments".into(),
            objects: Some(2),
            resource_version: 7,
            capacity: 100,
        }];
        let mut out = String::new();
        metrics.write(&mut out, &served, true);
        assert!(!out.contains("apiserver_storage_size_bytes"), "not read yet");
        metrics.set_database_size(Some(20480));
        let mut out = String::new();
        metrics.write(&mut out, &served, true);
        assert!(out.contains("apiserver_storage_size_bytes{storage_cluster_id=\"etcd-0\"} 20480\n"));
        let create = "operation=\"create\",group=\"\",resource=\"configmaps\"";
        assert!(
            out.contains(&format!("etcd_request_duration_seconds_bucket{{{create},le=\"0.005\"}} 1\n")),
            "{out}"
        );
        assert!(out.contains(&format!("etcd_request_duration_seconds_count{{{create}}} 2\n")));
        assert!(out.contains(&format!("etcd_requests_total{{{create}}} 2\n")));
        assert!(out.contains(&format!("etcd_request_errors_total{{{create}}} 1\n")));
        assert!(!out.contains("etcd_request_errors_total{operation=\"list\""), "no failures, no series");
        assert!(!out.contains("operation=\"get\""), "an operation never made has no series");
        assert!(out.contains("apiserver_resource_objects{group=\"apps\",resource=\"deployments\"} 2\n"));
        assert!(
            out.contains("# HELP apiserver_storage_objects [STABLE] (Deprecated since 1.34.0) [DEPRECATED,")
        );
        assert!(out.contains("apiserver_storage_objects{resource=\"deployments.apps\"} 2\n"));
        let mut shown = String::new();
        metrics.write(&mut shown, &served, false);
        assert!(!shown.contains("apiserver_storage_objects"), "hidden in 1.37");
    }
}
