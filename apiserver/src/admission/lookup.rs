//! How plugins read (and, for NamespaceAutoProvision, create) the objects
//! they decide on: through the stores of namespaces, ServiceAccounts,
//! LimitRanges, PriorityClasses, Storage-, Ingress- and RuntimeClasses,
//! Services and their Endpoints, and webhook configurations,
//! handed over once those are registered (they are registered through the
//! same chain the plugins belong to, so they cannot exist before them); and
//! what they ask the authorizers, handed over once those exist.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;

use crate::errors::ApiError;
use crate::request::UserInfo;

/// The objects of one resource, as plugins need them.
#[async_trait]
pub trait Objects: Send + Sync + std::fmt::Debug {
    /// Object `name` in `namespace`: from the watch cache when
    /// `any_version` will do, else the latest from storage. None when
    /// there is no such object.
    async fn read(
        &self,
        namespace: Option<&str>,
        name: &str,
        any_version: bool,
    ) -> Result<Option<Value>, ApiError>;

    /// Every object (in `namespace`, if given): from the watch cache when
    /// `any_version` will do, else the latest from storage.
    async fn list(&self, namespace: Option<&str>, any_version: bool) -> Result<Vec<Value>, ApiError>;

    /// Creates `object` (a body as a client would send it) as the server.
    async fn create_as_server(&self, namespace: Option<&str>, object: Value) -> Result<(), ApiError>;

    /// Writes the status `change` makes of the latest object, by
    /// compare-and-swap as the server: on a concurrent write, `change` runs
    /// again on the fresh object, so what it checks holds when written.
    /// `change` may refuse.
    async fn update_status(
        &self,
        namespace: Option<&str>,
        name: &str,
        change: &StatusChange<'_>,
    ) -> Result<Value, ApiError>;
}

/// What `Objects::update_status` makes of an object.
pub type StatusChange<'a> = dyn Fn(&Value) -> Result<Value, ApiError> + Send + Sync + 'a;

/// Something plugins use that exists only after them (a store, the authorizers), handed over
/// once and shared by every plugin holding a clone.
pub struct Handoff<T: ?Sized> {
    set: Arc<OnceLock<Arc<T>>>,
}

impl<T: ?Sized> Clone for Handoff<T> {
    fn clone(&self) -> Self {
        Handoff { set: self.set.clone() }
    }
}

impl<T: ?Sized> Default for Handoff<T> {
    fn default() -> Self {
        Handoff { set: Arc::new(OnceLock::new()) }
    }
}

/// Not derived: the stores hold the plugins through their admission chain,
/// so printing a store would never end.
impl<T: ?Sized> std::fmt::Debug for Handoff<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handoff").field("set", &self.set.get().is_some()).finish()
    }
}

impl<T: ?Sized> Handoff<T> {
    pub fn set(&self, value: Arc<T>) {
        let _ = self.set.set(value);
    }

    pub fn get(&self) -> Option<&T> {
        self.set.get().map(Arc::as_ref)
    }
}

/// A resource's objects, once served; shared by every plugin that needs
/// them.
#[derive(Clone, Default, Debug)]
pub struct Lookup {
    served: Handoff<dyn Objects>,
}

impl Lookup {
    pub fn set(&self, objects: Arc<dyn Objects>) {
        self.served.set(objects);
    }

    pub fn get(&self) -> Result<&dyn Objects, ApiError> {
        self.served.get().ok_or_else(|| ApiError::Internal("not served yet".into()))
    }

    /// Object `name` from the cache, or from storage when the cache does
    /// not have it (it may lag an object created just now).
    pub async fn find(&self, namespace: Option<&str>, name: &str) -> Result<Option<Value>, ApiError> {
        let objects = self.get()?;
        match objects.read(namespace, name, true).await? {
            Some(found) => Ok(Some(found)),
            None => objects.read(namespace, name, false).await,
        }
    }
}

/// What plugins ask the server's authorizers (kube's `WantsAuthorizer`).
pub trait Permissions: Send + Sync {
    /// Whether `user` may `verb` the cluster-wide `resource` of `group` named `name`.
    fn allows(&self, user: &Arc<UserInfo>, verb: &str, group: &str, resource: &str, name: &str) -> bool;
}

/// The server's authorizers, once they exist (they follow the stores, which hold the plugins).
pub type PermissionsLookup = Handoff<dyn Permissions>;

/// The lookups a server's plugins share.
#[derive(Debug, Clone, Default)]
pub struct Lookups {
    pub namespaces: Lookup,
    pub service_accounts: Lookup,
    pub limit_ranges: Lookup,
    pub priority_classes: Lookup,
    pub storage_classes: Lookup,
    pub ingress_classes: Lookup,
    pub runtime_classes: Lookup,
    pub services: Lookup,
    pub endpoints: Lookup,
    pub mutating_webhooks: Lookup,
    pub validating_webhooks: Lookup,
    pub resource_quotas: Lookup,
    pub policies: Lookup,
    pub policy_bindings: Lookup,
    pub mutating_policies: Lookup,
    pub mutating_policy_bindings: Lookup,
    /// Any kind, for policies' params.
    pub kinds: KindLookup,
    pub permissions: PermissionsLookup,
}

/// kube's 404 for a namespace that is not there.
pub fn namespace_not_found(name: &str) -> ApiError {
    ApiError::NotFound { qualified: "namespaces".into(), name: name.to_string() }
}

/// A served resource's objects read into `T`s (sorted by name), parsed
/// again only when one of them changed: configurations read on every
/// write (webhooks, policies) cost a cache list, not a parse.
pub struct Parsed<T> {
    lookup: Lookup,
    parsed: std::sync::Mutex<(String, Arc<Vec<T>>)>,
}

impl<T> std::fmt::Debug for Parsed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parsed").field("lookup", &self.lookup).finish_non_exhaustive()
    }
}

impl<T> Parsed<T> {
    pub fn new(lookup: Lookup) -> Parsed<T> {
        Parsed { lookup, parsed: std::sync::Mutex::new((String::new(), Arc::new(Vec::new()))) }
    }

    /// Every object as `parse` reads it (none while the resource is not
    /// served yet), from the watch cache: an object written a moment ago
    /// applies to the next request.
    pub async fn get(&self, parse: impl Fn(&Value) -> Vec<T>) -> Result<Arc<Vec<T>>, ApiError> {
        let Ok(objects) = self.lookup.get() else {
            return Ok(Arc::new(Vec::new()));
        };
        let mut all = objects.list(None, true).await?;
        all.sort_by(|a, b| crate::runtime::meta::name_of(a).cmp(crate::runtime::meta::name_of(b)));
        let signature: String = all
            .iter()
            .map(|o| {
                let (name, rv) =
                    (crate::runtime::meta::name_of(o), crate::runtime::meta::resource_version_of(o));
                format!("{name}@{rv};")
            })
            .collect();
        let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if parsed.0 != signature {
            *parsed = (signature, Arc::new(all.iter().flat_map(&parse).collect()));
        }
        Ok(parsed.1.clone())
    }
}

/// Objects of any served kind, by apiVersion and kind (a policy's params).
pub trait Kinds: Send + Sync + std::fmt::Debug {
    /// The objects of `kind` in `api_version`, and whether they live in
    /// namespaces; None when the kind is not served.
    fn objects_of(&self, api_version: &str, kind: &str) -> Option<(Arc<dyn Objects>, bool)>;
}

/// Every served kind, once the server is up.
#[derive(Clone, Default)]
pub struct KindLookup(Arc<OnceLock<Arc<dyn Kinds>>>);

impl std::fmt::Debug for KindLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KindLookup").field("served", &self.0.get().is_some()).finish()
    }
}

impl KindLookup {
    pub fn set(&self, kinds: Arc<dyn Kinds>) {
        let _ = self.0.set(kinds);
    }

    pub fn objects_of(&self, api_version: &str, kind: &str) -> Option<(Arc<dyn Objects>, bool)> {
        self.0.get()?.objects_of(api_version, kind)
    }
}
