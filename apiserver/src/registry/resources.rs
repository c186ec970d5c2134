//! The resources served right now. Discovery, OpenAPI, the request router
//! and the namespace controller read this set on every use, so a resource
//! added or removed while the server runs (a CustomResourceDefinition) is
//! served or gone at once; each has its own watch cache, started when it is
//! added and stopped when it is removed.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use super::kinds::Kind;
use super::store::Store;
use crate::admission;
use crate::admission::webhook::Caller;
use crate::cacher::{CacheConfig, Cacher, ReadDelegator};
use crate::errors::ApiError;
use crate::metrics::StorageMetrics;
use crate::metrics::storage::ResourceState;
use crate::storage::{Instrumented, Storage};

/// A served resource and its store.
#[derive(Debug)]
pub struct ServedResource {
    pub store: Store,
    /// Registration order, which discovery keeps.
    order: u64,
}

/// `(group, version, plural)`.
type Key = (String, String, String);

#[derive(Debug, Default)]
struct Served {
    by_name: BTreeMap<Key, Arc<ServedResource>>,
    next_order: u64,
}

/// The served set, shared by everything that reads it.
#[derive(Debug, Clone)]
pub struct Resources {
    served: Arc<RwLock<Served>>,
    storage: Arc<dyn Storage>,
    admission: Arc<admission::Chain>,
    cache: CacheConfig,
    /// `/registry`, normalized: one leading slash, none trailing.
    etcd_prefix: String,
    /// Bumped on every change, so that derived documents (OpenAPI) know when
    /// to rebuild.
    generation: watch::Sender<u64>,
    /// How the server reaches webhooks (CRDs' conversion webhooks).
    webhooks: Arc<Caller>,
    /// Every resource's storage and watch cache counters (`/metrics`).
    metrics: Arc<StorageMetrics>,
}

impl Resources {
    pub fn new(
        storage: Arc<dyn Storage>,
        admission: Arc<admission::Chain>,
        cache: CacheConfig,
        etcd_prefix: &str,
    ) -> Resources {
        Resources {
            served: Arc::default(),
            storage,
            admission,
            cache,
            etcd_prefix: normalize_prefix(etcd_prefix),
            generation: watch::channel(0).0,
            webhooks: Arc::new(Caller::new(&admission::Lookups::default())),
            metrics: Arc::default(),
        }
    }

    /// Reaching webhooks through `caller` (the admission plugins' own, so
    /// Services resolve and connections are shared).
    pub fn with_webhook_caller(mut self, caller: Arc<Caller>) -> Resources {
        self.webhooks = caller;
        self
    }

    /// How the server reaches webhooks.
    pub fn webhook_caller(&self) -> &Arc<Caller> {
        &self.webhooks
    }

    /// Every resource's storage and watch cache counters.
    pub fn storage_metrics(&self) -> &Arc<StorageMetrics> {
        &self.metrics
    }

    /// Where every resource's objects are.
    pub fn storage(&self) -> &dyn Storage {
        self.storage.as_ref()
    }

    /// `/registry`: where every key lives.
    pub fn etcd_prefix(&self) -> &str {
        &self.etcd_prefix
    }

    /// Serves a kind: its store and watch cache start now. A kind already
    /// served under the same group, version and plural is refused.
    pub fn add(&self, kind: Kind) -> Result<Arc<ServedResource>, ApiError> {
        let resource = Arc::new(kind.resource);
        let key = (resource.group.clone(), resource.version.clone(), resource.plural.clone());
        let mut served = self.served.write().unwrap_or_else(|p| p.into_inner());
        if served.by_name.contains_key(&key) {
            return Err(ApiError::AlreadyExists {
                qualified: "resources".into(),
                name: resource.qualified_name(),
            });
        }
        // Two resources under overlapping keys would list each other's
        // objects (`services` over the core `services/specs`); versions of
        // one resource share its objects, and never keep them in two places
        // (a CRD naming a built-in resource).
        let prefix = format!("{}/", resource.storage_prefix);
        if let Some(other) = served.by_name.values().find(|other| {
            let other = other.store.resource();
            let theirs = format!("{}/", other.storage_prefix);
            let same_resource = other.is(&resource.group, &resource.plural);
            let this: &super::Resource = &resource;
            let shared = [(this, other), (other, this)]
                .iter()
                .any(|(one, two)| one.shares_storage_of.is_some_and(|(g, p)| two.is(g, p)));
            if same_resource || shared {
                return theirs != prefix;
            }
            theirs.starts_with(&prefix) || prefix.starts_with(&theirs)
        }) {
            return Err(ApiError::Conflict {
                qualified: "resources".into(),
                name: resource.qualified_name(),
                why: format!(
                    "its storage prefix {:?} overlaps that of {}",
                    resource.storage_prefix,
                    other.store.resource().qualified_name()
                ),
            });
        }
        let collection = format!("{}/{}/", self.etcd_prefix, resource.storage_prefix);
        // Its calls and its cache counted under its group and resource.
        let counters = self.metrics.storage(&resource.group, &resource.plural);
        let storage: Arc<dyn Storage> = Arc::new(Instrumented::new(self.storage.clone(), counters));
        let read_storage = kind.view.over(storage.clone());
        let counters = self.metrics.cache(&resource.group, &resource.plural);
        let cacher = Cacher::start_counted(read_storage.clone(), collection, self.cache.clone(), counters);
        let reads = ReadDelegator::new(read_storage, cacher, resource.qualified_name()).with_view(kind.view);
        let store = Store::new(
            resource,
            kind.codec,
            kind.strategy,
            kind.hooks,
            storage,
            reads,
            self.admission.clone(),
            &self.etcd_prefix,
        );
        let order = served.next_order;
        served.next_order += 1;
        let entry = Arc::new(ServedResource { store, order });
        served.by_name.insert(key, entry.clone());
        drop(served);
        self.generation.send_modify(|g| *g += 1);
        Ok(entry)
    }

    /// Stops serving a resource: requests for it answer 404 from now on and
    /// its watches end. Its objects stay in storage.
    pub fn remove(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ServedResource>> {
        let key = (group.to_string(), version.to_string(), plural.to_string());
        let removed = self.served.write().unwrap_or_else(|p| p.into_inner()).by_name.remove(&key);
        if let Some(entry) = &removed {
            entry.store.reads().cacher().stop();
            self.generation.send_modify(|g| *g += 1);
        }
        removed
    }

    /// The resource served at `group`/`version` under `plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ServedResource>> {
        let key = (group.to_string(), version.to_string(), plural.to_string());
        self.served.read().unwrap_or_else(|p| p.into_inner()).by_name.get(&key).cloned()
    }

    /// The store of a resource, in whichever version it is served (a
    /// built-in one must be).
    pub fn store(&self, group: &str, plural: &str) -> Result<Store, ApiError> {
        // A custom resource may be served in any versions (all of them store
        // the same objects); `v1` when it is one of them.
        let served = self.served.read().unwrap_or_else(|p| p.into_inner());
        let matching: Vec<&Arc<ServedResource>> =
            served.by_name.values().filter(|s| s.store.resource().is(group, plural)).collect();
        let chosen = matching.iter().find(|s| s.store.resource().version == "v1").or(matching.first());
        chosen.map(|s| s.store.clone()).ok_or_else(|| ApiError::Internal(format!("{plural} are not served")))
    }

    /// Every served resource, in registration order.
    pub fn all(&self) -> Vec<Arc<ServedResource>> {
        let mut all: Vec<_> =
            self.served.read().unwrap_or_else(|p| p.into_inner()).by_name.values().cloned().collect();
        all.sort_by_key(|served| served.order);
        all
    }

    /// The named API groups served (besides core), in registration order.
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> = Vec::new();
        for served in self.all() {
            let group = &served.store.resource().group;
            if !group.is_empty() && !groups.contains(group) {
                groups.push(group.clone());
            }
        }
        groups
    }

    /// Changes whenever a resource is added or removed.
    pub fn generation(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// Whether every watch cache has loaded (readiness).
    pub fn caches_ready(&self) -> bool {
        self.all().iter().all(|served| served.store.reads().cacher().is_ready())
    }

    /// The storage and watch cache families, the object counts read from
    /// the caches (one per group and resource, whatever its versions);
    /// with `show_hidden`, kube's hidden deprecated ones too.
    pub fn write_metrics(&self, out: &mut String, show_hidden: bool) {
        let mut states: Vec<ResourceState> = Vec::new();
        for served in self.all() {
            let resource = served.store.resource();
            if states.iter().any(|s| resource.is(&s.group, &s.resource)) {
                continue;
            }
            let cacher = served.store.reads().cacher();
            states.push(ResourceState {
                group: resource.group.clone(),
                resource: resource.plural.clone(),
                objects: cacher.is_ready().then(|| cacher.stats().0),
                resource_version: cacher.resource_version(),
                capacity: cacher.capacity(),
            });
        }
        states.sort_by(|a, b| (&a.group, &a.resource).cmp(&(&b.group, &b.resource)));
        self.metrics.write(out, &states, show_hidden);
    }
}

/// `registry/` or `/registry` → `/registry`.
fn normalize_prefix(prefix: &str) -> String {
    format!("/{}", prefix.trim_matches('/'))
}

/// Policies' params may be objects of any served kind.
impl crate::admission::lookup::Kinds for Resources {
    fn objects_of(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<(Arc<dyn crate::admission::Objects>, bool)> {
        let served = self.all().into_iter().find(|s| {
            let resource = s.store.resource();
            resource.kind == kind && resource.api_version() == api_version
        })?;
        let namespaced = served.store.resource().namespaced;
        Some((Arc::new(served.store.clone()), namespaced))
    }
}
