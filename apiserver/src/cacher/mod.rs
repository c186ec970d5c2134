//! The watch cache of one resource (kube-apiserver's Cacher): one etcd
//! watch on the resource's prefix feeds an in-memory copy of every object
//! and a window of recent events; lists and watches are served from it, and
//! every event is fanned out to all watchers, each with a bounded buffer.
//!
//! * `object`: an object as the cache holds it (encoded).
//! * `reflector`: the storage list + watch that keeps the cache current.
//! * `watchers`: per-watcher filters, buffers, bookmarks and the fanout.
//! * `window`: recent events, bounded by count and, across caches, bytes.
//! * `delegator`: each read served from the cache or from storage.

mod delegator;
mod object;
mod reflector;
#[cfg(test)]
mod tests;
mod watchers;
mod window;

pub use delegator::{ListOptions, ListResult, Listing, ReadAt, ReadDelegator, to_value, to_value_at};
pub use object::CachedObject;
pub use watchers::{Delivery, Filter, WATCHER_BUFFER};
pub use window::WindowBytes;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use crate::errors::ApiError;
use crate::metrics::Series;
use crate::metrics::StorageMetrics;
use crate::metrics::watch::CacheCounters;
use crate::storage::Storage;
use watchers::Watchers;
use window::Window;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as etcd reported it.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventType,
    /// The object after the change (before it, for a deletion).
    pub object: Arc<CachedObject>,
    /// The object before the change, if it existed.
    pub prev: Option<Arc<CachedObject>>,
    pub resource_version: i64,
}

/// Tunables, with kube-apiserver's values as defaults.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// How many recent events are kept for watches that resume.
    pub window: usize,
    /// The bytes every cache's recent events may hold together (shared by
    /// the caches made with clones of this configuration).
    pub window_bytes: Arc<WindowBytes>,
    /// How often a watcher that allows bookmarks gets one.
    pub bookmark_every: Duration,
    /// How long a consistent read waits for the cache to catch up before
    /// it is served from etcd instead.
    pub fresh_timeout: Duration,
}

/// `--watch-cache-window-bytes`'s default.
pub const DEFAULT_WINDOW_BYTES: usize = 128 << 20;

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            window: 10_000,
            window_bytes: WindowBytes::new(DEFAULT_WINDOW_BYTES),
            bookmark_every: Duration::from_secs(60),
            fresh_timeout: Duration::from_secs(3),
        }
    }
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// With the current state as ADDED events (resourceVersion unset or
    /// "0", or a WatchList's initial events).
    CurrentState,
    /// With the changes after this revision.
    After(i64),
    /// With the changes from now on.
    Now,
}

/// A watch as asked for.
#[derive(Debug, Clone)]
pub struct WatchSpec {
    pub filter: Filter,
    pub start: WatchStart,
    /// At least this revision must be in the initial state (WatchList's
    /// NotOlderThan); 0 for any.
    pub not_older_than: i64,
    pub bookmarks: bool,
    /// WatchList: end the initial events with the `initial-events-end`
    /// bookmark.
    pub initial_events_end: bool,
    pub deadline: Instant,
}

/// A registered watch: what to send first, then what the fanout queues.
#[derive(Debug)]
pub struct Watch {
    pub initial: Vec<Delivery>,
    pub live: mpsc::Receiver<Delivery>,
    registration: Registration,
}

/// Unregisters a watcher when its watch is dropped.
#[derive(Debug)]
struct Registration {
    cacher: Arc<Shared>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.cacher.lock().watchers.remove(self.id);
    }
}

impl Watch {
    pub fn id(&self) -> u64 {
        self.registration.id
    }
}

#[derive(Debug)]
struct State {
    objects: BTreeMap<String, Arc<CachedObject>>,
    /// The `size` of every object in `objects`.
    objects_bytes: usize,
    window: Window,
    /// Everything up to this revision has been seen.
    resource_version: i64,
    watchers: Watchers,
    ready: bool,
    /// The resource is no longer served: no new watchers, no more changes.
    stopped: bool,
}

#[derive(Debug)]
struct Shared {
    prefix: String,
    config: CacheConfig,
    /// Its resource's watch cache counters (`/metrics`).
    counters: Counters,
    state: Mutex<State>,
    /// The cache's revision, for reads waiting until it is fresh.
    fresh: watch::Sender<i64>,
    /// Asks the reflector to request a progress notification.
    progress: mpsc::Sender<()>,
    /// Set when the resource is no longer served: the reflector ends.
    stop: watch::Sender<bool>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; go on.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The watch cache of one resource prefix.
#[derive(Debug, Clone)]
pub struct Cacher {
    shared: Arc<Shared>,
}

/// A resource's watch cache counters, shared by the caches of its versions.
pub type Counters = Arc<Series<CacheCounters, 2>>;

impl Cacher {
    /// Starts the cache of `prefix` (ending in `/`) and its reflector.
    pub fn start(storage: Arc<dyn Storage>, prefix: String, config: CacheConfig) -> Cacher {
        Self::start_counted(storage, prefix, config, StorageMetrics::default().cache("", ""))
    }

    /// As [`Self::start`], counting into `counters`.
    pub fn start_counted(
        storage: Arc<dyn Storage>,
        prefix: String,
        config: CacheConfig,
        counters: Counters,
    ) -> Cacher {
        let (fresh, _) = watch::channel(0);
        let (progress, progress_rx) = mpsc::channel(1);
        let (stop, stopped) = watch::channel(false);
        let state = State {
            objects: BTreeMap::new(),
            objects_bytes: 0,
            window: Window::new(config.window, config.window_bytes.clone()),
            resource_version: 0,
            watchers: Watchers::default(),
            ready: false,
            stopped: false,
        };
        let shared =
            Arc::new(Shared { prefix, config, counters, state: Mutex::new(state), fresh, progress, stop });
        let cacher = Cacher { shared };
        tokio::spawn(reflector::run(cacher.clone(), storage, progress_rx, stopped));
        tokio::spawn(bookmark_ticker(Arc::downgrade(&cacher.shared)));
        cacher
    }

    pub fn prefix(&self) -> &str {
        &self.shared.prefix
    }

    /// Stops following storage and ends every watcher (their clients see
    /// the watch end, as when kube stops serving a resource).
    pub fn stop(&self) {
        self.shared.stop.send_replace(true);
        let mut state = self.shared.lock();
        state.stopped = true;
        // Whoever still holds it must not read a frozen copy as fresh.
        state.ready = false;
        state.watchers.clear();
        let start = state.window.start();
        state.window.restart(start);
    }

    /// The revision the cache has seen up to.
    pub fn resource_version(&self) -> i64 {
        self.shared.lock().resource_version
    }

    /// Whether the first list is in (and the watch on etcd is up).
    pub fn is_ready(&self) -> bool {
        self.shared.lock().ready
    }

    /// How many objects the cache holds, and their bytes.
    pub fn stats(&self) -> (usize, usize) {
        let state = self.shared.lock();
        (state.objects.len(), state.objects_bytes)
    }

    pub fn watcher_count(&self) -> usize {
        self.shared.lock().watchers.len()
    }

    /// How many recent events the cache keeps at most (kube's capacity).
    pub fn capacity(&self) -> usize {
        self.shared.config.window
    }

    pub(crate) fn counters(&self) -> &CacheCounters {
        &self.shared.counters.value
    }

    /// Waits until the cache has seen `resource_version`, asking etcd for
    /// progress notifications meanwhile; false if it did not within the
    /// configured time.
    pub async fn wait_fresh(&self, resource_version: i64) -> bool {
        let mut fresh = self.shared.fresh.subscribe();
        if *fresh.borrow_and_update() >= resource_version && self.shared.lock().ready {
            return true;
        }
        // kube observes the reads that had to wait.
        let started = Instant::now();
        let fresh_now = self.wait_until_fresh(&mut fresh, resource_version).await;
        self.counters().waited(started.elapsed());
        fresh_now
    }

    async fn wait_until_fresh(&self, fresh: &mut watch::Receiver<i64>, resource_version: i64) -> bool {
        let give_up = tokio::time::Instant::now() + self.shared.config.fresh_timeout;
        loop {
            if *fresh.borrow_and_update() >= resource_version && self.shared.lock().ready {
                return true;
            }
            // An idle watch says nothing; a progress request makes it.
            let _ = self.shared.progress.try_send(());
            let tick = tokio::time::Instant::now() + Duration::from_millis(100);
            match tokio::time::timeout_at(tick.min(give_up), fresh.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return false,
                Err(_) if tokio::time::Instant::now() >= give_up => return false,
                Err(_) => {}
            }
        }
    }

    /// The objects that match `filter`, and the revision they are at.
    pub fn list(&self, filter: &Filter) -> (Vec<Arc<CachedObject>>, i64) {
        let state = self.shared.lock();
        let scope = self.scope(filter);
        let items = state
            .objects
            .range(scope.clone()..)
            .take_while(|(key, _)| key.starts_with(&scope))
            .filter(|(_, object)| filter.matches(object))
            .map(|(_, object)| object.clone())
            .collect();
        (items, state.resource_version)
    }

    /// One object by key.
    pub fn get(&self, key: &str) -> (Option<Arc<CachedObject>>, i64) {
        let state = self.shared.lock();
        (state.objects.get(key).cloned(), state.resource_version)
    }

    /// Registers a watch; fails with 410 Expired when it resumes from a
    /// revision older than the window.
    pub fn watch(&self, spec: WatchSpec) -> Result<Watch, ApiError> {
        let (tx, live) = mpsc::channel(WATCHER_BUFFER);
        let mut state = self.shared.lock();
        if state.stopped {
            // A watch that raced the resource's removal: nothing would ever
            // end it.
            return Err(ApiError::ServiceUnavailable(format!(
                "the watch cache of {} has stopped",
                self.shared.prefix
            )));
        }
        let initial = match spec.start {
            WatchStart::After(rv) if rv < state.window.start() => {
                return Err(ApiError::Expired(format!(
                    "too old resource version: {rv} ({})",
                    state.window.start()
                )));
            }
            WatchStart::Now => Vec::new(),
            WatchStart::After(rv) => state
                .window
                .iter()
                .filter(|event| event.resource_version > rv)
                .filter_map(|event| watchers::delivery_for(&spec.filter, event))
                .collect(),
            WatchStart::CurrentState => {
                let scope = self.scope(&spec.filter);
                let mut initial: Vec<Delivery> = state
                    .objects
                    .range(scope.clone()..)
                    .take_while(|(key, _)| key.starts_with(&scope))
                    .filter(|(_, object)| spec.filter.matches(object))
                    .map(|(_, object)| Delivery::event(EventType::Added, object.clone()))
                    .collect();
                if spec.initial_events_end {
                    initial.push(Delivery::Bookmark {
                        resource_version: state.resource_version,
                        initial_events_end: true,
                    });
                }
                initial
            }
        };
        let bookmark_every = spec.bookmarks.then_some(self.shared.config.bookmark_every);
        // What the client already has: up to its revision, or the state
        // just sent.
        let after = match spec.start {
            WatchStart::After(rv) => rv,
            WatchStart::CurrentState | WatchStart::Now => state.resource_version,
        };
        let id = state.watchers.add(spec.filter, after, tx, bookmark_every, spec.deadline);
        drop(state);
        let events = initial.iter().filter(|d| matches!(d, Delivery::Event { .. })).count();
        self.counters().init_events(events);
        Ok(Watch { initial, live, registration: Registration { cacher: self.shared.clone(), id } })
    }

    /// The key prefix a filter's namespace narrows the scan to.
    fn scope(&self, filter: &Filter) -> String {
        match &filter.namespace {
            Some(ns) => format!("{}{ns}/", self.shared.prefix),
            None => self.shared.prefix.clone(),
        }
    }

    /// Replaces the whole state with a fresh list at `resource_version`;
    /// watchers are ended (they resume from their last revision).
    fn reset(&self, objects: Vec<CachedObject>, resource_version: i64) {
        let mut state = self.shared.lock();
        if state.stopped {
            return;
        }
        state.objects_bytes = objects.iter().map(|o| o.size).sum();
        state.objects = objects.into_iter().map(|o| (o.key.clone(), Arc::new(o))).collect();
        state.window.restart(resource_version);
        state.resource_version = resource_version;
        state.watchers.clear();
        state.ready = true;
        drop(state);
        self.shared.fresh.send_replace(resource_version);
    }

    /// Applies the changes of one watch response and fans them out, under
    /// one lock: the events of one revision (a transaction) are seen by
    /// readers and new watchers all or not at all.
    fn apply_all(&self, events: Vec<Event>) {
        let mut state = self.shared.lock();
        if state.stopped {
            return;
        }
        let mut closed = 0;
        let count = events.len();
        for event in events {
            let replaced = match event.kind {
                EventType::Deleted => state.objects.remove(&event.object.key),
                _ => {
                    state.objects_bytes += event.object.size;
                    state.objects.insert(event.object.key.clone(), event.object.clone())
                }
            };
            if let Some(old) = replaced {
                state.objects_bytes = state.objects_bytes.saturating_sub(old.size);
            }
            closed += state.watchers.dispatch(&event);
            let rv = event.resource_version;
            state.window.push(event);
            state.resource_version = state.resource_version.max(rv);
        }
        let rv = state.resource_version;
        drop(state);
        self.counters().events(count);
        self.counters().terminated(closed);
        self.shared.fresh.send_replace(rv);
    }

    /// Everything up to `resource_version` has been applied.
    fn progress(&self, resource_version: i64) {
        self.counters().progress();
        let mut state = self.shared.lock();
        state.resource_version = state.resource_version.max(resource_version);
        let rv = state.resource_version;
        drop(state);
        self.shared.fresh.send_replace(rv);
    }

    fn not_ready(&self) {
        self.shared.lock().ready = false;
    }

    /// The watch on etcd is (again) up.
    fn ready_again(&self) {
        let mut state = self.shared.lock();
        // A stopped cache stays not ready, whatever its reflector last saw.
        state.ready = !state.stopped;
        let rv = state.resource_version;
        drop(state);
        self.shared.fresh.send_replace(rv);
    }
}

/// Sends due bookmarks about once a second, as kube's dispatcher does;
/// ends with the cache.
async fn bookmark_ticker(shared: std::sync::Weak<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else { return };
        let every = shared.config.bookmark_every;
        let mut state = shared.lock();
        let rv = state.resource_version;
        state.watchers.bookmarks(Instant::now(), rv, every);
    }
}
