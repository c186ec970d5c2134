//! The verbs on objects (kube's registry `Store`): what get, list, create,
//! update, patch and delete do to an object and its metadata, over the
//! storage layer for writes and the watch caches for reads.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use bytes::Bytes;
use serde_json::{Value, json};
use tonic::transport::Channel;

use crate::cache::{CacheConfig, CachedObject, Cacher, Filter, Watch, WatchSpec};
use crate::errors::{self, ApiError};
use crate::object::{self, FieldValidation};
use crate::patch::{self, PatchType};
use crate::resources::{RESOURCES, Resource};
use crate::services::{self, ClusterIp, IpRange};
use crate::storage::{Etcd3Store, Object, Preconditions, StorageError};

/// `?resourceVersion=` and `?resourceVersionMatch=` of a read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadAt {
    /// None: the latest (a consistent read).
    pub resource_version: Option<i64>,
    pub exact: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub at: ReadAt,
    pub limit: i64,
    pub continue_token: Option<String>,
    pub filter: Filter,
}

#[derive(Debug, Clone)]
pub struct ListResult {
    pub items: Vec<Value>,
    pub resource_version: i64,
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
}

/// `DeleteOptions` as far as this server acts on them.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub preconditions: Preconditions,
}

/// How a delete ended: gone, or marked and waiting for finalizers.
#[derive(Debug, Clone, PartialEq)]
pub enum Deleted {
    Gone(Value),
    Pending(Value),
}

/// The objects of every resource, in etcd under one prefix.
#[derive(Debug, Clone)]
pub struct Registry {
    store: Etcd3Store,
    etcd_prefix: String,
    caches: HashMap<(&'static str, &'static str), Cacher>,
    /// Where Services' cluster IPs come from.
    service_ips: IpRange,
}

impl Registry {
    /// Serves the resources under `etcd_prefix` (kube's `--etcd-prefix`,
    /// default `/registry`), one watch cache each.
    pub fn new(channel: Channel, etcd_prefix: &str, cache: CacheConfig, service_ips: IpRange) -> Registry {
        let etcd_prefix = format!("/{}", etcd_prefix.trim_matches('/'));
        let caches = RESOURCES
            .iter()
            .map(|r| {
                let prefix = format!("{etcd_prefix}/{}/", r.storage_prefix);
                ((r.group, r.plural), Cacher::start(channel.clone(), prefix, cache.clone()))
            })
            .collect();
        Registry { store: Etcd3Store::new(channel), etcd_prefix, caches, service_ips }
    }

    pub fn store(&self) -> &Etcd3Store {
        &self.store
    }

    pub fn cache(&self, resource: &Resource) -> Result<&Cacher, ApiError> {
        self.caches
            .get(&(resource.group, resource.plural))
            .ok_or_else(|| ApiError::Internal(format!("no cache for {}", resource.qualified_name())))
    }

    /// `/registry/<prefix>/<namespace>/<name>`, or without the namespace
    /// for cluster-scoped kinds.
    pub fn key(&self, resource: &Resource, namespace: Option<&str>, name: &str) -> String {
        match namespace {
            Some(ns) if resource.namespaced => format!("{}{ns}/{name}", self.collection(resource, None)),
            _ => format!("{}{name}", self.collection(resource, None)),
        }
    }

    /// The key prefix of a collection (of one namespace, or all).
    pub fn collection(&self, resource: &Resource, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if resource.namespaced => {
                format!("{}/{}/{ns}/", self.etcd_prefix, resource.storage_prefix)
            }
            _ => format!("{}/{}/", self.etcd_prefix, resource.storage_prefix),
        }
    }

    pub async fn get(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        at: &ReadAt,
    ) -> Result<Value, ApiError> {
        let key = self.key(resource, namespace, name);
        let not_found =
            || ApiError::NotFound { qualified: resource.qualified_name(), name: name.to_string() };
        match at.resource_version {
            // The latest: straight from etcd, as kube does.
            None => {
                let object = self.store.get(&key).await.map_err(|e| storage(e, resource, name))?;
                object.map(|o| to_value(&key, &o)).transpose()?.ok_or_else(not_found)
            }
            Some(rv) => {
                let cache = self.cache(resource)?;
                if !self.wait_fresh(cache, rv).await? {
                    // "Any version" before the cache is loaded: etcd's.
                    let object = self.store.get(&key).await.map_err(|e| storage(e, resource, name))?;
                    return object.map(|o| to_value(&key, &o)).transpose()?.ok_or_else(not_found);
                }
                cache.get(&key).0.map(|o| o.value.clone()).ok_or_else(not_found)
            }
        }
    }

    pub async fn list(&self, resource: &Resource, opts: &ListOptions) -> Result<ListResult, ApiError> {
        let cache = self.cache(resource)?;
        // Pages need etcd's revision-pinned ranges: a first page at the
        // latest, a continuation, or an Exact revision (which a limit with a
        // resourceVersion and no match means). NotOlderThan and "0" are the
        // cache's, the limit ignored as kube's cache ignores it.
        let from_etcd = opts.continue_token.is_some()
            || (opts.limit > 0 && opts.at.resource_version.is_none())
            || opts.at.exact;
        if from_etcd {
            return self.list_from_etcd(resource, opts).await;
        }
        let fresh = match opts.at.resource_version {
            Some(rv) => self.wait_fresh(cache, rv).await?,
            None => {
                let prefix = self.collection(resource, None);
                let current =
                    self.store.current_revision(&prefix).await.map_err(|e| storage(e, resource, ""))?;
                cache.wait_fresh(current).await
            }
        };
        if !fresh {
            // The cache did not catch up in time: read etcd instead.
            return self.list_from_etcd(resource, opts).await;
        }
        let (items, resource_version) = cache.list(&opts.filter);
        let items = items.iter().map(|o| o.value.clone()).collect();
        Ok(ListResult { items, resource_version, continue_token: None, remaining_item_count: None })
    }

    /// A list read from etcd itself, never from the cache.
    pub async fn list_from_etcd(
        &self,
        resource: &Resource,
        opts: &ListOptions,
    ) -> Result<ListResult, ApiError> {
        let prefix = self.collection(resource, opts.filter.namespace.as_deref());
        let rv = opts.at.resource_version.unwrap_or(0);
        let page =
            self.store.list(&prefix, opts.limit, rv, opts.continue_token.as_deref()).await.map_err(|e| {
                match e {
                    StorageError::FutureRevision => ApiError::TooLargeResourceVersion {
                        requested: rv,
                        current: self.cache(resource).map_or(0, Cacher::resource_version),
                    },
                    e => storage(e, resource, ""),
                }
            })?;
        let mut items = Vec::with_capacity(page.items.len());
        for (key, object) in &page.items {
            let key = String::from_utf8_lossy(key).into_owned();
            let cached = CachedObject::new(key.clone(), parse(&key, &object.value)?, object.resource_version);
            if opts.filter.matches(&cached) {
                items.push(cached.value);
            }
        }
        Ok(ListResult {
            items,
            resource_version: page.resource_version,
            continue_token: page.continue_token,
            // How many more match is unknown when a selector filters them.
            remaining_item_count: page
                .remaining_item_count
                .filter(|_| opts.filter.labels.is_none() && opts.filter.fields.is_none()),
        })
    }

    /// Waits until the cache has seen `rv` (and has loaded at all): true
    /// when it has; false for rv 0 ("any version") while the cache is still
    /// loading, so the caller reads etcd; kube's 504 "Too large resource
    /// version" if it does not catch up within a few seconds.
    async fn wait_fresh(&self, cache: &Cacher, rv: i64) -> Result<bool, ApiError> {
        if cache.wait_fresh(rv).await {
            return Ok(true);
        }
        if rv == 0 {
            return Ok(false);
        }
        Err(ApiError::TooLargeResourceVersion { requested: rv, current: cache.resource_version() })
    }

    /// Whether every cache has loaded (readiness).
    pub fn caches_ready(&self) -> bool {
        self.caches.values().all(Cacher::is_ready)
    }

    pub fn watch(&self, resource: &Resource, spec: WatchSpec) -> Result<Watch, ApiError> {
        self.cache(resource)?.watch(spec)
    }

    /// Creates `object` (decoded, of `resource`) in `namespace`; the stored
    /// object, with its resourceVersion (none on a dry run).
    pub async fn create(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        mut object: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if resource.namespaced
            && let Some(ns) = namespace
        {
            self.check_namespace_open(ns).await?;
        }
        let name = object::prepare_create(resource, &mut object, namespace)?;
        let key = self.key(resource, namespace, &name);
        let wants_address = match resource.plural {
            "services" => services::prepare(resource, &mut object, &self.service_ips)?,
            _ => ClusterIp::NoAddress,
        };
        if dry_run {
            if self.store.get(&key).await.map_err(|e| storage(e, resource, &name))?.is_some() {
                return Err(ApiError::AlreadyExists { qualified: resource.qualified_name(), name });
            }
            return Ok(object);
        }
        let address = self.allocate(resource, &name, namespace.unwrap_or_default(), wants_address).await?;
        if let Some(ip) = address {
            services::assign(&mut object, ip);
        }
        let value = encode(&object)?;
        let created = match resource.ttl_seconds {
            Some(ttl) => self.store.create_with_ttl(&key, value, ttl).await,
            None => self.store.create(&key, value).await,
        };
        let rv = match created {
            Ok(rv) => rv,
            Err(e) => {
                self.release(address).await;
                return Err(storage(e, resource, &name));
            }
        };
        Ok(CachedObject::new(key, object, rv).value)
    }

    /// Takes a cluster IP for a new Service: the one asked for, or the
    /// first free one from a random point of the range.
    async fn allocate(
        &self,
        resource: &Resource,
        name: &str,
        namespace: &str,
        wants: ClusterIp,
    ) -> Result<Option<Ipv4Addr>, ApiError> {
        let candidates: Vec<Ipv4Addr> = match wants {
            ClusterIp::NoAddress => return Ok(None),
            ClusterIp::Exactly(ip) => vec![ip],
            ClusterIp::Any => self.service_ips.candidates().collect(),
        };
        for ip in &candidates {
            let record = encode(&services::address_object(*ip, namespace, name))?;
            match self.store.create(&services::address_key(&self.etcd_prefix, *ip), record).await {
                Ok(_) => return Ok(Some(*ip)),
                Err(StorageError::AlreadyExists { .. }) => {}
                Err(e) => return Err(storage(e, resource, name)),
            }
        }
        let message = match wants {
            ClusterIp::Exactly(ip) => {
                format!(
                    "Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
                )
            }
            _ => "Internal error: failed to allocate a serviceIP: range is full".to_string(),
        };
        Err(object::invalid(resource, name, "FieldValueInvalid", "spec.clusterIPs", &message))
    }

    /// Frees a Service's cluster IP.
    async fn release(&self, address: Option<Ipv4Addr>) {
        let Some(ip) = address else { return };
        let key = services::address_key(&self.etcd_prefix, ip);
        if let Err(e) = self.store.delete(&key, &Preconditions::default()).await
            && !matches!(e, StorageError::NotFound { .. })
        {
            tracing::warn!(%ip, error = %e, "could not free a service IP");
        }
    }

    /// What goes with an object when it is removed (a Service's IP).
    async fn removed(&self, resource: &Resource, object: &Value) {
        if resource.plural == "services" {
            self.release(services::held_address(object)).await;
        }
    }

    /// New objects go only into namespaces that exist and are not being
    /// deleted (kube's NamespaceLifecycle admission).
    async fn check_namespace_open(&self, namespace: &str) -> Result<(), ApiError> {
        let namespaces = crate::resources::find("", "v1", "namespaces")
            .ok_or_else(|| ApiError::Internal("namespaces are not served".into()))?;
        let ns =
            self.get(namespaces, None, namespace, &ReadAt { resource_version: Some(0), exact: false }).await;
        match ns {
            Ok(ns) if ns["metadata"]["deletionTimestamp"].is_string() => Err(ApiError::Forbidden(format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ))),
            Ok(_) => Ok(()),
            Err(ApiError::NotFound { .. }) => {
                // The cache may lag a namespace created just now: ask etcd.
                self.get(namespaces, None, namespace, &ReadAt::default()).await.map(|_| ())
            }
            Err(e) => Err(e),
        }
    }

    /// Replaces an object (PUT) with `object` (decoded); a non-empty
    /// `metadata.resourceVersion` must be the stored one (409 otherwise).
    pub async fn update(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        object: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        check_body_name(resource, name, namespace, &object)?;
        let wanted_rv = object["metadata"]["resourceVersion"].as_str().map(str::to_string);
        let wanted_uid = object["metadata"]["uid"].as_str().filter(|u| !u.is_empty()).map(str::to_string);
        self.update_with(resource, namespace, name, dry_run, |old| {
            if let Some(rv) = &wanted_rv
                && !rv.is_empty()
                && old["metadata"]["resourceVersion"].as_str() != Some(rv)
            {
                return Err(errors::modified(&resource.qualified_name(), name));
            }
            // A uid in the body names the object meant: not one made anew.
            if let Some(uid) = &wanted_uid
                && old["metadata"]["uid"].as_str() != Some(uid)
            {
                let why = format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    old["metadata"]["uid"].as_str().unwrap_or_default()
                );
                return Err(ApiError::Conflict {
                    qualified: resource.qualified_name(),
                    name: name.to_string(),
                    why,
                });
            }
            let mut new = object.clone();
            object::prepare_update(resource, old, &mut new, subresource);
            Ok(new)
        })
        .await
    }

    /// Applies a PATCH body to the current object, re-run on every retry
    /// of the compare-and-swap, as kube does; the result and the warnings
    /// its decoding produced.
    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        kind: PatchType,
        body: &[u8],
        validation: FieldValidation,
        dry_run: bool,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let mut warnings = Vec::new();
        let updated = self
            .update_with(resource, namespace, name, dry_run, |old| {
                let patched = patch::apply(kind, resource, old, body)?;
                let (mut new, warned) = object::decode(resource, patched, validation)?;
                check_body_name(resource, name, namespace, &new)?;
                let rv = new["metadata"]["resourceVersion"].as_str().unwrap_or_default();
                if !rv.is_empty() && old["metadata"]["resourceVersion"].as_str() != Some(rv) {
                    return Err(errors::modified(&resource.qualified_name(), name));
                }
                object::prepare_update(resource, old, &mut new, subresource);
                warnings = warned;
                Ok(new)
            })
            .await?;
        Ok((updated, warnings))
    }

    /// GuaranteedUpdate with `update` making the new object from the
    /// current one (which carries its resourceVersion). An object being
    /// deleted whose last finalizer goes is removed in the same request.
    pub async fn update_with<F>(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        dry_run: bool,
        mut update: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError>,
    {
        let key = self.key(resource, namespace, name);
        if dry_run {
            let current = self.get(resource, namespace, name, &ReadAt::default()).await?;
            return update(&current);
        }
        let mut failure = None;
        let stored = self
            .store
            .guaranteed_update(&key, &Preconditions::default(), false, |current| {
                let current = current.ok_or_else(|| StorageError::NotFound { key: key.clone() })?;
                let old = to_value(&key, current).map_err(|e| StorageError::Update(e.to_string()))?;
                let new = update(&old).map_err(|e| {
                    let message = e.to_string();
                    failure = Some(e);
                    StorageError::Update(message)
                })?;
                encode(&new).map_err(|e| StorageError::Update(e.to_string()))
            })
            .await;
        if let Some(failure) = failure.filter(|_| stored.is_err()) {
            return Err(failure);
        }
        let stored = stored.map_err(|e| storage(e, resource, name))?;
        let value = to_value(&key, &stored)?;
        if deletion_finished(&value) {
            let must_be = Preconditions { resource_version: Some(stored.resource_version), uid: None };
            match self.store.delete(&key, &must_be).await {
                Ok(_) => self.removed(resource, &value).await,
                Err(StorageError::NotFound { .. }) => {}
                Err(e) => return Err(storage(e, resource, name)),
            }
        }
        Ok(value)
    }

    /// Deletes an object: at once, or (with finalizers, or a namespace)
    /// by marking it with a deletionTimestamp until they are cleared.
    pub async fn delete(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
        dry_run: bool,
    ) -> Result<Deleted, ApiError> {
        let key = self.key(resource, namespace, name);
        let current = self.get(resource, namespace, name, &ReadAt::default()).await?;
        check_preconditions(resource, name, &current, &opts.preconditions)?;
        let graceful = !finalizers(&current).is_empty() || resource.plural == "namespaces";
        if !graceful {
            if dry_run {
                return Ok(Deleted::Gone(current));
            }
            let deleted =
                self.store.delete(&key, &opts.preconditions).await.map_err(|e| storage(e, resource, name))?;
            let deleted = to_value(&key, &deleted)?;
            self.removed(resource, &deleted).await;
            return Ok(Deleted::Gone(deleted));
        }
        if is_being_deleted(&current) {
            return Ok(Deleted::Pending(current));
        }
        let marked = self
            .update_with(resource, namespace, name, dry_run, |old| {
                check_preconditions(resource, name, old, &opts.preconditions)?;
                let mut new = old.clone();
                let meta = object::metadata_mut(&mut new);
                meta.remove("resourceVersion");
                meta.insert("deletionTimestamp".into(), json!(object::now()));
                meta.insert("deletionGracePeriodSeconds".into(), json!(0));
                if resource.plural == "namespaces" {
                    new["status"] = json!({"phase": "Terminating"});
                }
                Ok(new)
            })
            .await?;
        Ok(Deleted::Pending(marked))
    }

    /// Removes a namespace once its contents are gone: what kube's
    /// namespace controller does after a delete marks it Terminating.
    pub async fn finalize_namespace(&self, name: &str, uid: &str) -> Result<bool, ApiError> {
        let namespaces = crate::resources::find("", "v1", "namespaces")
            .ok_or_else(|| ApiError::Internal("namespaces are not served".into()))?;
        // Only the namespace this deletion is for, while it is being
        // deleted: never a namespace made anew under the same name.
        let current = match self.get(namespaces, None, name, &ReadAt::default()).await {
            Err(ApiError::NotFound { .. }) => return Ok(true),
            other => other?,
        };
        if current["metadata"]["uid"].as_str() != Some(uid) || !is_being_deleted(&current) {
            return Ok(true);
        }
        // Read from etcd, not the caches: the namespace must not go while
        // anything in it is left, however far behind a cache might be.
        for resource in RESOURCES.iter().filter(|r| r.namespaced) {
            let opts = ListOptions {
                filter: Filter { namespace: Some(name.to_string()), ..Filter::default() },
                ..ListOptions::default()
            };
            for item in self.list_from_etcd(resource, &opts).await?.items {
                let item_name = object::name_of(&item).to_string();
                match self.delete(resource, Some(name), &item_name, &DeleteOptions::default(), false).await {
                    Ok(_) | Err(ApiError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            if !self.list_from_etcd(resource, &opts).await?.items.is_empty() {
                return Ok(false);
            }
        }
        // Its contents are gone: clear spec.finalizers; the namespace goes
        // now, or when its metadata.finalizers are cleared.
        let cleared = self
            .update_with(namespaces, None, name, false, |old| {
                if old["metadata"]["uid"].as_str() != Some(uid) {
                    return Err(ApiError::NotFound {
                        qualified: "namespaces".into(),
                        name: name.to_string(),
                    });
                }
                let mut new = old.clone();
                new["spec"]["finalizers"] = json!([]);
                object::metadata_mut(&mut new).remove("resourceVersion");
                Ok(new)
            })
            .await;
        match cleared {
            Ok(_) | Err(ApiError::NotFound { .. }) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// Creates the namespaces every cluster has, if missing.
    pub async fn bootstrap(&self) -> Result<(), ApiError> {
        let namespaces = crate::resources::find("", "v1", "namespaces")
            .ok_or_else(|| ApiError::Internal("namespaces are not served".into()))?;
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            match self.create(namespaces, None, ns, false).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        // The `default/kubernetes` Service, on the range's first address,
        // as every cluster has it (clients and e2e suites look it up).
        let services = crate::resources::find("", "v1", "services")
            .ok_or_else(|| ApiError::Internal("services are not served".into()))?;
        let kubernetes = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {
                "clusterIP": self.service_ips.first().to_string(),
                "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
            },
        });
        // Its address is taken once it exists: look before creating.
        match self.get(services, Some("default"), "kubernetes", &ReadAt::default()).await {
            Err(ApiError::NotFound { .. }) => {
                match self.create(services, Some("default"), kubernetes, false).await {
                    Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn check_preconditions(
    resource: &Resource,
    name: &str,
    current: &Value,
    preconditions: &Preconditions,
) -> Result<(), ApiError> {
    let meta = &current["metadata"];
    if let Some(uid) = &preconditions.uid
        && meta["uid"].as_str() != Some(uid)
    {
        let why = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            meta["uid"].as_str().unwrap_or_default()
        );
        return Err(ApiError::Conflict { qualified: resource.qualified_name(), name: name.to_string(), why });
    }
    if let Some(rv) = preconditions.resource_version
        && meta["resourceVersion"].as_str() != Some(&rv.to_string())
    {
        let why = format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            meta["resourceVersion"].as_str().unwrap_or_default()
        );
        return Err(ApiError::Conflict { qualified: resource.qualified_name(), name: name.to_string(), why });
    }
    Ok(())
}

/// The body of a PUT or PATCH must name the object of the URL.
fn check_body_name(
    resource: &Resource,
    name: &str,
    namespace: Option<&str>,
    object: &Value,
) -> Result<(), ApiError> {
    let meta = &object["metadata"];
    match meta["name"].as_str() {
        Some(given) if given == name => {}
        None | Some("") => {
            return Err(object::invalid(
                resource,
                "",
                "FieldValueRequired",
                "metadata.name",
                "Required value: name is required",
            ));
        }
        Some(_) => {
            return Err(ApiError::BadRequest(
                "the name of the object does not match the name on the URL".into(),
            ));
        }
    }
    if resource.namespaced
        && let (Some(ns), Some(given)) = (namespace, meta["namespace"].as_str())
        && !given.is_empty()
        && given != ns
    {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request".into(),
        ));
    }
    Ok(())
}

/// An object being deleted goes once nothing holds it: no finalizers left
/// (and for a namespace, none in `spec.finalizers` either: those are its
/// contents, cleared by `finalize_namespace`).
fn deletion_finished(object: &Value) -> bool {
    let spec_finalizers = object["spec"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
    is_being_deleted(object) && finalizers(object).is_empty() && !spec_finalizers
}

fn is_being_deleted(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

fn finalizers(object: &Value) -> Vec<&str> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn storage(err: StorageError, resource: &Resource, name: &str) -> ApiError {
    ApiError::from_storage(err, &resource.qualified_name(), name)
}

/// A stored object as JSON with its resourceVersion.
fn to_value(key: &str, object: &Object) -> Result<Value, ApiError> {
    Ok(CachedObject::new(key.to_string(), parse(key, &object.value)?, object.resource_version).value)
}

fn parse(key: &str, value: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(value).map_err(|e| ApiError::Internal(format!("object at {key} is not JSON: {e}")))
}

/// The bytes stored: the object without its resourceVersion (that is the
/// key's revision, filled in on every read).
fn encode(object: &Value) -> Result<Bytes, ApiError> {
    if !object.is_object() {
        return Err(ApiError::Internal("an object must be a JSON object".into()));
    }
    let mut object = object.clone();
    object::metadata_mut(&mut object).remove("resourceVersion");
    serde_json::to_vec(&object).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()))
}
