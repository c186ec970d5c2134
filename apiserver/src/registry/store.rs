//! The generic store of one resource (kube's `genericregistry.Store`): what
//! get, list, watch, create, update, patch and delete do to any object,
//! through the kind's [`Strategy`] and [`WriteHooks`], the admission chain,
//! storage for writes and the [`ReadDelegator`] for reads.
//!
//! Writes:
//! * create: mutating admission → server metadata and the kind's
//!   preparation → validation → hooks → validating admission → storage's
//!   create-if-absent;
//! * update and patch: GuaranteedUpdate — read, make the new object, admit
//!   it against the current one, then compare-and-swap on its revision,
//!   all again from the fresh object after a concurrent write;
//! * delete: preconditions and admission against the stored object, then a
//!   delete on its revision, or a deletionTimestamp while finalizers (or a
//!   kind's graceful deletion: a pod's grace period) hold it.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};

use super::metadata;
use super::scale;
use super::strategy::{Strategy, WriteHooks};
use super::{Codec, Resource};
use crate::admission::{self, Attributes, GroupVersionKind, GroupVersionResource, Operation};
use crate::cacher::{ListOptions, ListResult, Listing, ReadAt, ReadDelegator, Watch, WatchSpec};
use crate::errors::{self, ApiError};
use crate::fieldmanager::{self, FieldManager};
use crate::patch::{self, PatchType};
use crate::request::UserInfo;
use crate::runtime::meta::{self, metadata_mut};
use crate::runtime::{Expected, FieldValidation};
use crate::storage::{Preconditions, Storage, StorageError, Swap};

/// `DeleteOptions` as far as this server acts on them.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub preconditions: Preconditions,
    /// `propagationPolicy` (or the older `orphanDependents`); `None`: what
    /// the object's finalizers say, else Background.
    pub propagation: Option<Propagation>,
    /// `gracePeriodSeconds`: how long a gracefully deleted object (a pod)
    /// is given; None for the kind's own default.
    pub grace_period_seconds: Option<i64>,
}

/// What becomes of an object's dependents (objects whose ownerReferences
/// name it) when it is deleted; the garbage collector carries it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// The object goes at once; then its dependents.
    Background,
    /// The object waits (finalizer `foregroundDeletion`) until its
    /// dependents that block owner deletion are gone.
    Foreground,
    /// Its dependents stay, their references to it removed (finalizer
    /// `orphan`), then it goes.
    Orphan,
}

/// How a delete ended: gone, or marked and waiting for finalizers.
#[derive(Debug, Clone, PartialEq)]
pub enum Deleted {
    Gone(Value),
    Pending(Value),
}

/// Whether a write etcd finds too large may lose its managedFields to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    AsItIs,
    DropManagedFields,
}

/// Takes `object`'s managedFields away; whether it had any.
fn drop_managed_fields(object: &mut Value) -> bool {
    let metadata = object.get_mut("metadata").and_then(Value::as_object_mut);
    metadata.and_then(|m| m.remove("managedFields")).is_some()
}

/// Who asks for a write, whether it is only tried, and where admission's
/// warnings and audit annotations go.
#[derive(Debug, Clone)]
pub struct WriteContext {
    pub user: Arc<UserInfo>,
    pub dry_run: bool,
    pub notes: Arc<admission::Notes>,
    /// The manager a client's write is recorded as in managedFields; the
    /// server's own writes (`None`) leave managedFields as they are.
    pub field_manager: Option<String>,
    /// A server-side apply: its managedFields are what it is about, never
    /// dropped to make the object fit.
    pub applying: bool,
}

impl WriteContext {
    pub fn new(user: Arc<UserInfo>, dry_run: bool) -> Self {
        WriteContext { user, dry_run, notes: Arc::default(), field_manager: None, applying: false }
    }

    /// Recorded in managedFields as `manager`.
    pub fn managed_by(mut self, manager: String) -> Self {
        self.field_manager = Some(manager);
        self
    }

    /// The server's own writes (controllers, bootstrap).
    pub fn server() -> Self {
        WriteContext::new(UserInfo::apiserver(), false)
    }

    /// With the request's notes, which the endpoint hands on.
    pub fn noting_into(mut self, notes: Arc<admission::Notes>) -> Self {
        self.notes = notes;
        self
    }
}

/// The objects of one resource.
#[derive(Debug, Clone)]
pub struct Store {
    resource: Arc<Resource>,
    codec: Codec,
    strategy: Arc<dyn Strategy>,
    hooks: Option<Arc<dyn WriteHooks>>,
    storage: Arc<dyn Storage>,
    reads: ReadDelegator,
    admission: Arc<admission::Chain>,
    /// What admission uses to decode an object a webhook patched.
    normalize: admission::Normalize,
    /// `/registry/<storage prefix>/`: every key of the resource.
    collection: String,
    /// managedFields and server-side apply.
    fields: Arc<FieldManager>,
}

impl Store {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        resource: Arc<Resource>,
        codec: Codec,
        strategy: Arc<dyn Strategy>,
        hooks: Option<Arc<dyn WriteHooks>>,
        storage: Arc<dyn Storage>,
        reads: ReadDelegator,
        admission: Arc<admission::Chain>,
        etcd_prefix: &str,
    ) -> Store {
        let collection = format!("{etcd_prefix}/{}/", resource.storage_prefix);
        let normalize = normalizer(resource.clone(), codec.clone(), strategy.clone());
        let fields = Arc::new(field_manager(&resource, &codec));
        Store { resource, codec, strategy, hooks, storage, reads, admission, normalize, collection, fields }
    }

    pub fn resource(&self) -> &Resource {
        &self.resource
    }

    pub fn codec(&self) -> &Codec {
        &self.codec
    }

    pub fn strategy(&self) -> &dyn Strategy {
        self.strategy.as_ref()
    }

    pub fn reads(&self) -> &ReadDelegator {
        &self.reads
    }

    /// The key prefix of every object of the resource.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// `/registry/<prefix>/<namespace>/<name>`, or without the namespace for
    /// cluster-scoped kinds.
    pub fn key(&self, namespace: Option<&str>, name: &str) -> String {
        match namespace {
            Some(ns) if self.resource.namespaced => format!("{}{ns}/{name}", self.collection),
            _ => format!("{}{name}", self.collection),
        }
    }

    /// Decodes a body as an object of this resource, with kube's field
    /// validation; the object and the warnings to send.
    pub fn decode(&self, body: Value, validation: FieldValidation) -> Result<(Value, Vec<String>), ApiError> {
        decode_as(&self.resource, &self.codec, self.strategy.as_ref(), body, validation)
    }

    pub async fn get(&self, namespace: Option<&str>, name: &str, at: &ReadAt) -> Result<Value, ApiError> {
        self.reads.get(&self.key(namespace, name), name, at).await
    }

    pub async fn list(&self, opts: &ListOptions) -> Result<ListResult, ApiError> {
        self.reads.list(&self.collection, opts).await
    }

    /// The same list, its objects still encoded where the cache served it.
    pub async fn listing(&self, opts: &ListOptions) -> Result<Listing, ApiError> {
        self.reads.listing(&self.collection, opts).await
    }

    /// A list read from storage itself, never from the cache.
    pub async fn list_from_storage(&self, opts: &ListOptions) -> Result<ListResult, ApiError> {
        self.reads.list_from_storage(&self.collection, opts).await
    }

    pub fn watch(&self, spec: WatchSpec) -> Result<Watch, ApiError> {
        self.reads.watch(spec)
    }

    /// What the server's own controllers follow (an informer): every
    /// object as the first events, then every change, for a day at most;
    /// once the watch cache has its first list.
    pub async fn follow(&self) -> Result<Watch, ApiError> {
        while !self.reads.cacher().is_ready() {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        self.watch(WatchSpec {
            filter: crate::cacher::Filter::default(),
            start: crate::cacher::WatchStart::CurrentState,
            not_older_than: 0,
            bookmarks: false,
            initial_events_end: false,
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(24 * 3600),
        })
    }

    /// Creates `object` (decoded) in `namespace`; the stored object, with
    /// its resourceVersion (none on a dry run).
    pub async fn create(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        object: Value,
    ) -> Result<Value, ApiError> {
        let name = meta::name_of(&object).to_string();
        self.strategy.check_create(&name)?;
        let mut object = object;
        // The creator manages what it sent; admission's changes are no one's.
        if let Some(manager) = &ctx.field_manager {
            self.fields.update(&json!({}), &mut object, manager, None, &meta::now());
        }
        let mut attributes = self.attributes(ctx, Operation::Create, None, namespace, &name);
        attributes.object = Some(object);
        self.admission.admit(&mut attributes).await?;
        let mut object = attributes.object.take().unwrap_or_default();
        let name = metadata::prepare_create(&self.resource, self.strategy.as_ref(), &mut object, namespace)?;
        self.strategy.stamp_requester(&mut object, &ctx.user);
        let causes = metadata::validate_create(
            self.strategy.name_rule(),
            self.strategy.builtin_finalizer_rule(),
            &object,
        );
        metadata::refuse(&self.resource, &object, causes, self.strategy.validate(&object))?;
        let key = self.key(namespace, &name);
        let undo = match &self.hooks {
            Some(hooks) => hooks.begin_create(&mut object, ctx.dry_run).await?,
            None => None,
        };
        attributes.name = name.clone();
        attributes.object = Some(object);
        let admitted = self.admission.validate(&attributes).await;
        let object = attributes.object.take().unwrap_or_default();
        if ctx.dry_run {
            admitted?;
            if self.storage.get(&key).await.map_err(|e| self.error(e, &name))?.is_some() {
                return Err(ApiError::AlreadyExists { qualified: self.resource.qualified_name(), name });
            }
            // Through storage's version and back, as a real create.
            return self.reads.present(self.reads.to_storage(object).await?).await;
        }
        let written = async {
            admitted?;
            let mut object = self.reads.to_storage(object).await?;
            let bytes = encode(&object)?;
            let created = match self.storage.create(&key, bytes, self.resource.ttl_seconds).await {
                // As kube: managedFields can be large, and are safe to drop.
                Err(StorageError::TooLarge(_)) if !ctx.applying && drop_managed_fields(&mut object) => {
                    self.storage.create(&key, encode(&object)?, self.resource.ttl_seconds).await
                }
                created => created,
            };
            let rv = created.map_err(|e| self.error(e, &name))?;
            Ok((object, rv))
        };
        match written.await {
            Ok((object, rv)) => self.reads.present(crate::cacher::to_value_at(object, rv)).await,
            Err(e) => {
                // Not stored: give back what the kind took for it.
                undo_begin(undo).await;
                Err(e)
            }
        }
    }

    /// Replaces an object (PUT) with `object` (decoded); a non-empty
    /// `metadata.resourceVersion` must be the stored one (409 otherwise).
    pub async fn update(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        object: Value,
    ) -> Result<Value, ApiError> {
        check_body_name(&self.resource, name, namespace, &object)?;
        let wanted_rv = meta::resource_version_of(&object).to_string();
        // A uid in the body names the object meant: not one made anew.
        let wanted_uid = Preconditions {
            uid: Some(meta::uid_of(&object).to_string()).filter(|uid| !uid.is_empty()),
            resource_version: None,
        };
        self.update_with(ctx, namespace, name, subresource, |old| {
            self.check_resource_version(name, old, &wanted_rv)?;
            check_preconditions(&self.resource, name, old, &wanted_uid)?;
            let mut new = object.clone();
            metadata::prepare_update(&self.resource, self.strategy.as_ref(), old, &mut new, subresource);
            self.track(ctx, old, &mut new, subresource);
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
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        kind: PatchType,
        body: &[u8],
        validation: FieldValidation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let mut warnings = Vec::new();
        let updated = self
            .update_with(ctx, namespace, name, subresource, |old| {
                let patched = patch::apply(kind, self.strategy.patch_schema(), old, body)?;
                let (mut new, warned) = self.decode_change(patched, namespace, name, validation)?;
                self.check_resource_version(name, old, meta::resource_version_of(&new))?;
                metadata::prepare_update(&self.resource, self.strategy.as_ref(), old, &mut new, subresource);
                self.track(ctx, old, &mut new, subresource);
                warnings = warned;
                Ok(new)
            })
            .await?;
        Ok((updated, warnings))
    }

    /// A client's change to the object (a patch's or an apply's result)
    /// decoded as the kind's, and named as in the URL; with the decoder's
    /// warnings.
    fn decode_change(
        &self,
        changed: Value,
        namespace: Option<&str>,
        name: &str,
        validation: FieldValidation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let (new, warned) = self.decode(changed, validation)?;
        check_body_name(&self.resource, name, namespace, &new)?;
        Ok((new, warned))
    }

    /// A resourceVersion a client names (none: `""`) must be the stored
    /// object's: kube's 409 otherwise.
    pub fn check_resource_version(&self, name: &str, old: &Value, wanted: &str) -> Result<(), ApiError> {
        if !wanted.is_empty() && meta::resource_version_of(old) != wanted {
            return Err(errors::modified(&self.resource.qualified_name(), name));
        }
        Ok(())
    }

    /// Records a client's update in `new`'s managedFields.
    pub fn track(&self, ctx: &WriteContext, old: &Value, new: &mut Value, subresource: Option<&str>) {
        if let Some(manager) = &ctx.field_manager {
            self.fields.update(old, new, manager, subresource, &meta::now());
        }
    }

    /// Server-side apply of `config` for `ctx`'s field manager: merged into
    /// the object, or creating it when there is none (`true` then). The
    /// result and the warnings its decoding produced.
    #[allow(clippy::too_many_arguments)]
    pub async fn apply(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        config: &Value,
        force: bool,
        validation: FieldValidation,
    ) -> Result<(Value, Vec<String>, bool), ApiError> {
        let applying = WriteContext { applying: true, ..ctx.clone() };
        let ctx = &applying;
        let manager = ctx.field_manager.clone().unwrap_or_default();
        let mut warnings = Vec::new();
        loop {
            let updated = self
                .update_with(ctx, namespace, name, subresource, |old| {
                    let applied =
                        self.fields.apply(old, config, &manager, force, subresource, &meta::now())?;
                    let (mut new, warned) = self.decode_change(applied, namespace, name, validation)?;
                    // A resourceVersion applied is a precondition.
                    self.check_resource_version(name, old, meta::resource_version_of(config))?;
                    // The managers the apply wrote are final: preparing the
                    // update (which takes everything but status from the
                    // stored object for /status) must not bring back the
                    // stored ones.
                    let managed = meta::metadata_mut(&mut new).remove("managedFields");
                    metadata::prepare_update(
                        &self.resource,
                        self.strategy.as_ref(),
                        old,
                        &mut new,
                        subresource,
                    );
                    match managed {
                        Some(managed) => meta::metadata_mut(&mut new).insert("managedFields".into(), managed),
                        None => meta::metadata_mut(&mut new).remove("managedFields"),
                    };
                    warnings = warned;
                    Ok(new)
                })
                .await;
            match updated {
                Ok(object) => return Ok((object, warnings, false)),
                Err(ApiError::NotFound { .. }) if subresource.is_none() => {}
                Err(e) => return Err(e),
            }
            // Nothing there yet: the apply creates it, from an empty object
            // with the URL's name.
            let mut empty = json!({"apiVersion": self.resource.api_version(), "kind": self.resource.kind,
                                   "metadata": {"name": name}});
            if let Some(ns) = namespace.filter(|_| self.resource.namespaced) {
                empty["metadata"]["namespace"] = json!(ns);
            }
            let applied = self.fields.apply(&empty, config, &manager, force, None, &meta::now())?;
            let (object, warned) = self.decode(applied, validation)?;
            check_body_name(&self.resource, name, namespace, &object)?;
            let server = WriteContext { field_manager: None, ..ctx.clone() };
            match self.create(&server, namespace, object).await {
                Ok(created) => return Ok((created, warned, true)),
                // Made meanwhile: apply to it.
                Err(ApiError::AlreadyExists { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// GuaranteedUpdate: `update` makes the new object from the current one
    /// (which carries its resourceVersion), admission sees both, then the
    /// new one is written if the object has not changed meanwhile; from the
    /// fresh object again if it has. An object being deleted whose last
    /// finalizer goes is removed in the same request.
    pub async fn update_with<F>(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        mut update: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError>,
    {
        let key = self.key(namespace, name);
        let mut current = self.storage.get(&key).await.map_err(|e| self.error(e, name))?;
        loop {
            let (stored, old) = self.as_read(&key, name, current).await?;
            let mut new = update(&old)?;
            if ctx.field_manager.is_none() {
                // The server's own writes are nobody's, but what they remove
                // is nobody's any more either.
                self.fields.forget_removed(&old, &mut new);
            }
            let mut attributes = self.attributes(ctx, Operation::Update, subresource, namespace, name);
            attributes.object = Some(new);
            attributes.old_object = Some(old);
            if subresource == Some("scale") {
                self.admit_scale(&mut attributes).await?;
            } else {
                self.admission.admit(&mut attributes).await?;
                self.validate_update(
                    subresource,
                    attributes.object.as_ref(),
                    attributes.old_object.as_ref(),
                )?;
                self.admission.validate(&attributes).await?;
            }
            let new = attributes.object.take().unwrap_or_default();
            if ctx.dry_run {
                return self.reads.present(self.reads.to_storage(new).await?).await;
            }
            let new = self.reads.to_storage(new).await?;
            let bytes = encode(&new)?;
            if bytes == stored.value {
                // Nothing changed: nothing is written.
                let value = attributes.old_object.take().unwrap_or_default();
                self.finish_deletion(&key, name, &value, stored.resource_version).await?;
                return Ok(value);
            }
            let old = attributes.old_object.take().unwrap_or_default();
            // An apply keeps its managers: the rest may drop them to fit.
            let to_fit = if ctx.applying { Fit::AsItIs } else { Fit::DropManagedFields };
            match self.swap(&key, name, &old, new, bytes, stored.resource_version, to_fit).await? {
                Written::Done(value, rv) => {
                    self.finish_deletion(&key, name, &value, rv).await?;
                    return Ok(value);
                }
                Written::Changed(fresh) => current = fresh,
            }
        }
    }

    /// The stored object as the kind reads it, or kube's 404 when there is
    /// none. As kube decodes what it reads, it is defaulted: an object
    /// stored before a default existed compares with its replacement as
    /// defaulted (a live Pod's spec would otherwise seem changed).
    async fn as_read(
        &self,
        key: &str,
        name: &str,
        current: Option<crate::storage::Object>,
    ) -> Result<(crate::storage::Object, Value), ApiError> {
        let Some(stored) = current else {
            return Err(ApiError::NotFound {
                qualified: self.resource.qualified_name(),
                name: name.to_string(),
            });
        };
        let read = crate::cacher::to_value(key, &stored.value, stored.resource_version)?;
        let mut old = self.reads.present(read).await?;
        self.strategy.set_defaults(&mut old);
        Ok((stored, old))
    }

    /// Writes `new` (as `bytes`) over revision `expected` by
    /// compare-and-swap: the object as read back, after the kind's
    /// after-update hooks ran, or the fresher object another write left.
    /// An object etcd finds too large is tried again without its
    /// managedFields where `to_fit` allows, as kube's update and patch
    /// handlers do.
    #[allow(clippy::too_many_arguments)]
    async fn swap(
        &self,
        key: &str,
        name: &str,
        old: &Value,
        mut new: Value,
        bytes: Bytes,
        expected: i64,
        to_fit: Fit,
    ) -> Result<Written, ApiError> {
        let swapped = match self.storage.put_if(key, bytes, expected).await {
            Err(StorageError::TooLarge(_))
                if to_fit == Fit::DropManagedFields && drop_managed_fields(&mut new) =>
            {
                self.storage.put_if(key, encode(&new)?, expected).await
            }
            swapped => swapped,
        };
        match swapped.map_err(|e| self.error(e, name))? {
            Swap::Done(rv) => {
                let value = self.reads.present(crate::cacher::to_value_at(new, rv)).await?;
                if let Some(hooks) = &self.hooks {
                    hooks.after_update(old, &value).await;
                }
                Ok(Written::Done(value, rv))
            }
            Swap::Changed(fresh) => Ok(Written::Changed(fresh)),
        }
    }

    /// Changes a stored object with no admission and no validation, as
    /// kube's own `GuaranteedUpdate` writes do (binding a pod to a node):
    /// `change` is re-run on the latest object until its compare-and-swap
    /// wins. A dry run answers the change without writing it.
    pub async fn guaranteed_update<F>(
        &self,
        namespace: Option<&str>,
        name: &str,
        dry_run: bool,
        mut change: F,
    ) -> Result<Value, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError>,
    {
        let key = self.key(namespace, name);
        let mut current = self.storage.get(&key).await.map_err(|e| self.error(e, name))?;
        loop {
            let (stored, old) = self.as_read(&key, name, current).await?;
            let mut new = change(&old)?;
            if let Some(metadata) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("resourceVersion");
            }
            let new = self.reads.to_storage(new).await?;
            if dry_run {
                return self.reads.present(new).await;
            }
            let bytes = encode(&new)?;
            match self.swap(&key, name, &old, new, bytes, stored.resource_version, Fit::AsItIs).await? {
                Written::Done(value, _) => return Ok(value),
                Written::Changed(fresh) => current = fresh,
            }
        }
    }

    /// The kind's and the metadata's checks of an update.
    fn validate_update(
        &self,
        subresource: Option<&str>,
        new: Option<&Value>,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let (new, old) = (new.unwrap_or(&Value::Null), old.unwrap_or(&Value::Null));
        let causes = metadata::validate_update(old, new, self.strategy.builtin_finalizer_rule());
        let kinds = self.strategy.validate_subresource_update(subresource, new, old);
        metadata::refuse(&self.resource, new, causes, kinds)
    }

    /// Admission of a scale change, which plugins see as the Scale it is
    /// (kube's scale subresource): `attributes` hold the whole workloads
    /// before and after, with the replicas admission settled on.
    async fn admit_scale(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        let paths = self.resource.scale.as_ref().ok_or(ApiError::NoSuchPath)?;
        let workload = attributes.object.take().unwrap_or_default();
        let old_workload = attributes.old_object.take().unwrap_or_default();
        let own_kind = std::mem::replace(&mut attributes.kind, scale::kind());
        let normalize = attributes.normalize.take();
        let field_manager = attributes.field_manager.take();
        attributes.object = Some(scale::of(paths, &workload)?);
        attributes.old_object = Some(scale::of(paths, &old_workload)?);
        self.admission.admit(attributes).await?;
        let workload = scale::with_admitted_replicas(paths, workload, attributes.object.as_ref());
        self.validate_update(None, Some(&workload), Some(&old_workload))?;
        attributes.object = Some(scale::of(paths, &workload)?);
        self.admission.validate(attributes).await?;
        (attributes.kind, attributes.normalize, attributes.field_manager) =
            (own_kind, normalize, field_manager);
        attributes.object = Some(workload);
        attributes.old_object = Some(old_workload);
        Ok(())
    }

    /// Removes an object being deleted once nothing holds it any more.
    async fn finish_deletion(&self, key: &str, name: &str, value: &Value, rv: i64) -> Result<(), ApiError> {
        if !deletion_finished(value, self.resource.is("", "namespaces")) {
            return Ok(());
        }
        let must_be = Preconditions { resource_version: Some(rv), uid: None };
        match self.storage.delete(key, &must_be).await {
            Ok(_) => {
                self.after_delete(value).await;
                Ok(())
            }
            Err(StorageError::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(e, name)),
        }
    }

    /// Deletes an object: at once, or (with finalizers, or a kind whose
    /// deletion is graceful) by marking it with a deletionTimestamp until
    /// they are cleared.
    pub async fn delete(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        self.strategy.check_delete(name)?;
        let key = self.key(namespace, name);
        let current = self.get(namespace, name, &ReadAt::default()).await?;
        check_preconditions(&self.resource, name, &current, &opts.preconditions)?;
        let mut attributes = self.attributes(ctx, Operation::Delete, None, namespace, name);
        attributes.old_object = Some(current.clone());
        self.admission.admit(&mut attributes).await?;
        self.admission.validate(&attributes).await?;
        // kube treats a negative grace period as one second.
        let requested = opts.grace_period_seconds.map(|seconds| if seconds < 0 { 1 } else { seconds });
        if meta::is_being_deleted(&current) {
            return self.delete_again(ctx, namespace, name, current, requested, opts).await;
        }
        let grace = self.strategy.grace_period(&current, requested);
        let collector_finalizers = gc_finalizers(&current, opts.propagation);
        let held = !meta::finalizers(&current).is_empty() || collector_finalizers.is_some();
        if !held && grace.is_none() && !self.strategy.delete_is_graceful() {
            return self.delete_now(ctx, &key, name, current, &opts.preconditions).await;
        }
        let marked = self.mark_deleted(ctx, namespace, name, grace.unwrap_or(0), opts).await?;
        Ok(self.after_marking(marked))
    }

    /// A delete of an object already being deleted: a graceful one may
    /// only shorten its grace period; finalizers are not added any more.
    async fn delete_again(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        current: Value,
        requested: Option<i64>,
        opts: &DeleteOptions,
    ) -> Result<Deleted, ApiError> {
        let key = self.key(namespace, name);
        let graceful = self.strategy.grace_period(&current, requested).is_some();
        let period = meta::deletion_grace_period(&current).unwrap_or(0);
        match requested {
            Some(shorter) if graceful && shorter < period => {
                let marked = self
                    .update_with(ctx, namespace, name, None, |old| {
                        check_preconditions(&self.resource, name, old, &opts.preconditions)?;
                        let mut new = old.clone();
                        let meta = metadata_mut(&mut new);
                        meta.remove("resourceVersion");
                        // The deadline moves by what the period lost.
                        meta.insert("deletionTimestamp".into(), json!(shortened(old, shorter)));
                        meta.insert("deletionGracePeriodSeconds".into(), json!(shorter));
                        Ok(new)
                    })
                    .await?;
                Ok(self.after_marking(marked))
            }
            // A graceful deletion whose period already ran out (an earlier
            // delete marked it but did not remove it) finishes now.
            _ if graceful && period == 0 && meta::finalizers(&current).is_empty() => {
                self.delete_now(ctx, &key, name, current, &opts.preconditions).await
            }
            _ => Ok(Deleted::Pending(current)),
        }
    }

    /// Marks an object for deletion: a deletionTimestamp `grace` seconds
    /// ahead, the collector's finalizers the propagation asks for, and a
    /// new generation (kube's `BeforeDelete` / `markAsDeleting`).
    async fn mark_deleted(
        &self,
        ctx: &WriteContext,
        namespace: Option<&str>,
        name: &str,
        grace: i64,
        opts: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        self.update_with(ctx, namespace, name, None, |old| {
            check_preconditions(&self.resource, name, old, &opts.preconditions)?;
            let mut new = old.clone();
            let finalizers = gc_finalizers(old, opts.propagation);
            let meta = metadata_mut(&mut new);
            meta.remove("resourceVersion");
            meta.insert("deletionTimestamp".into(), json!(meta::seconds_from_now(grace)));
            meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
            if let Some(generation) = meta.get("generation").and_then(Value::as_i64).filter(|g| *g > 0) {
                meta.insert("generation".into(), json!(generation + 1));
            }
            if let Some(finalizers) = finalizers {
                meta.insert("finalizers".into(), json!(finalizers));
            }
            self.strategy.prepare_for_delete(&mut new);
            Ok(new)
        })
        .await
    }

    /// After marking: an object nothing holds and whose grace period is
    /// zero is gone (a pod never scheduled, a forced delete): the marking
    /// write removed it (`finish_deletion`), or on a dry run would have.
    /// Any other waits for its finalizers, or its kubelet.
    fn after_marking(&self, marked: Value) -> Deleted {
        let graceful = self.strategy.grace_period(&marked, None).is_some();
        let expired = meta::deletion_grace_period(&marked).unwrap_or(0) == 0;
        if graceful && expired && meta::finalizers(&marked).is_empty() {
            return Deleted::Gone(marked);
        }
        Deleted::Pending(marked)
    }

    /// Removes an object from storage at once; the object as it was last
    /// stored (`current` for a dry run).
    async fn delete_now(
        &self,
        ctx: &WriteContext,
        key: &str,
        name: &str,
        current: Value,
        preconditions: &Preconditions,
    ) -> Result<Deleted, ApiError> {
        if ctx.dry_run {
            return Ok(Deleted::Gone(current));
        }
        let deleted = match self.storage.delete(key, preconditions).await {
            Ok(deleted) => deleted,
            // Another delete won the race (a kubelet finishing the pod).
            Err(StorageError::NotFound { .. }) if meta::is_being_deleted(&current) => {
                return Ok(Deleted::Gone(current));
            }
            Err(e) => return Err(self.error(e, name)),
        };
        let deleted = crate::cacher::to_value(key, &deleted.value, deleted.resource_version)?;
        self.after_delete(&deleted).await;
        Ok(Deleted::Gone(self.reads.present(deleted).await?))
    }

    async fn after_delete(&self, object: &Value) {
        if let Some(hooks) = &self.hooks {
            hooks.after_delete(object).await;
        }
    }

    fn attributes(
        &self,
        ctx: &WriteContext,
        operation: Operation,
        subresource: Option<&str>,
        namespace: Option<&str>,
        name: &str,
    ) -> Attributes {
        let r = &self.resource;
        Attributes {
            user: ctx.user.clone(),
            operation,
            kind: GroupVersionKind {
                group: r.group.clone(),
                version: r.version.clone(),
                kind: r.kind.clone(),
            },
            resource: GroupVersionResource {
                group: r.group.clone(),
                version: r.version.clone(),
                resource: r.plural.clone(),
            },
            subresource: subresource.map(str::to_string),
            name: name.to_string(),
            namespace: namespace.filter(|_| r.namespaced).map(str::to_string),
            object: None,
            old_object: None,
            options: operation_options(operation, ctx.dry_run),
            dry_run: ctx.dry_run,
            notes: ctx.notes.clone(),
            normalize: Some(self.normalize.clone()),
            reinvocation: admission::Reinvocation::default(),
            field_manager: Some(self.fields.clone()),
        }
    }

    fn error(&self, err: StorageError, name: &str) -> ApiError {
        ApiError::from_storage(err, &self.resource.qualified_name(), name)
    }
}

/// The field manager of a resource, its shape read from the kind's OpenAPI
/// schema when first needed (a kind without one is walked as it comes).
pub fn field_manager(resource: &Resource, codec: &Codec) -> FieldManager {
    let source: fieldmanager::SchemaSource = match codec.openapi() {
        Some(openapi) => Arc::new(move || {
            let (root, definitions) = openapi.schema_with_definitions();
            fieldmanager::Schema::from_openapi(&root, &definitions)
        }),
        None => Arc::new(fieldmanager::Schema::deduced),
    };
    FieldManager::new(&resource.api_version(), &resource.kind, resource.has_status, source)
}

/// A body decoded as an object of `resource` and defaulted.
fn decode_as(
    resource: &Resource,
    codec: &Codec,
    strategy: &dyn Strategy,
    body: Value,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let api_version = resource.api_version();
    let roundtrip = |value: Value| codec.roundtrip(value);
    let expected = Expected { api_version: &api_version, kind: &resource.kind, roundtrip: &roundtrip };
    let (mut object, warnings) = crate::runtime::decode::decode(expected, body, validation)?;
    strategy.set_defaults(&mut object);
    Ok((object, warnings))
}

/// Decoding for objects admission changed: unknown fields dropped quietly,
/// as kube's decoder of a patched object drops them.
fn normalizer(resource: Arc<Resource>, codec: Codec, strategy: Arc<dyn Strategy>) -> admission::Normalize {
    admission::Normalize(Arc::new(move |object| {
        Ok(decode_as(&resource, &codec, strategy.as_ref(), object, FieldValidation::Ignore)?.0)
    }))
}

/// The options of a write as admission reports them: CreateOptions,
/// UpdateOptions (also for patches) or DeleteOptions, with `dryRun`.
fn operation_options(operation: Operation, dry_run: bool) -> Value {
    let kind = match operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => return Value::Null,
    };
    let mut options = json!({"apiVersion": "meta.k8s.io/v1", "kind": kind});
    if dry_run {
        options["dryRun"] = json!(["All"]);
    }
    options
}

/// Lets admission plugins read (and create) objects through their store.
#[async_trait::async_trait]
impl admission::Objects for Store {
    async fn read(
        &self,
        namespace: Option<&str>,
        name: &str,
        any_version: bool,
    ) -> Result<Option<Value>, ApiError> {
        let at = ReadAt { resource_version: any_version.then_some(0), exact: false };
        match self.get(namespace, name, &at).await {
            Ok(found) => Ok(Some(found)),
            Err(ApiError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn list(&self, namespace: Option<&str>, any_version: bool) -> Result<Vec<Value>, ApiError> {
        let filter = crate::cacher::Filter { namespace: namespace.map(str::to_string), ..Default::default() };
        if any_version {
            let at = ReadAt { resource_version: Some(0), exact: false };
            return Ok(self.list(&ListOptions { at, filter, ..ListOptions::default() }).await?.items);
        }
        Ok(self.list_from_storage(&ListOptions { filter, ..ListOptions::default() }).await?.items)
    }

    async fn create_as_server(&self, namespace: Option<&str>, body: Value) -> Result<(), ApiError> {
        let (object, _) = self.decode(body, crate::runtime::FieldValidation::Strict)?;
        self.create(&WriteContext::server(), namespace, object).await.map(drop)
    }

    async fn update_status(
        &self,
        namespace: Option<&str>,
        name: &str,
        change: &admission::StatusChange<'_>,
    ) -> Result<Value, ApiError> {
        self.update_with(&WriteContext::server(), namespace, name, Some("status"), |old| {
            let mut new = change(old)?;
            metadata::prepare_update(&self.resource, self.strategy.as_ref(), old, &mut new, Some("status"));
            Ok(new)
        })
        .await
    }
}

/// How a compare-and-swap write ended.
enum Written {
    /// Stored: the object as read back, and its revision.
    Done(Value, i64),
    /// Another write came first: the object it left (none if deleted).
    Changed(Option<crate::storage::Object>),
}

/// Gives back what a kind's `begin_create` took, when the object was not
/// stored after all.
async fn undo_begin(undo: Option<super::Undo>) {
    if let Some(undo) = undo {
        undo().await;
    }
}

fn check_preconditions(
    resource: &Resource,
    name: &str,
    current: &Value,
    preconditions: &Preconditions,
) -> Result<(), ApiError> {
    if let Some(uid) = &preconditions.uid
        && meta::uid_of(current) != uid
    {
        let why = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            meta::uid_of(current)
        );
        return Err(ApiError::Conflict { qualified: resource.qualified_name(), name: name.to_string(), why });
    }
    if let Some(rv) = preconditions.resource_version
        && meta::resource_version_of(current) != rv.to_string()
    {
        let why = format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            meta::resource_version_of(current)
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
    match object["metadata"]["name"].as_str() {
        Some(given) if given == name => {}
        None | Some("") => {
            return Err(metadata::invalid(
                resource,
                "",
                "FieldValueRequired",
                "metadata.name",
                "Required value: name is required",
            ));
        }
        Some(given) => {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({given}) does not match the name on the URL ({name})"
            )));
        }
    }
    if resource.namespaced
        && let (Some(ns), Some(given)) = (namespace, meta::namespace_of(object))
        && given != ns
    {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request".into(),
        ));
    }
    Ok(())
}

/// The finalizers `object` gets when deleted with `propagation` (kube's
/// `deletionFinalizersForGarbageCollection`), if they differ from its own:
/// `orphan` for Orphan, `foregroundDeletion` for Foreground, neither for
/// Background; without a policy the object's own choice stands.
fn gc_finalizers(object: &Value, propagation: Option<Propagation>) -> Option<Vec<String>> {
    use super::metadata::{FOREGROUND, ORPHAN};
    let current = meta::finalizers(object);
    let wants = |finalizer: &str, policy: Propagation| match propagation {
        Some(p) => p == policy,
        None => current.contains(&finalizer),
    };
    let (orphan, foreground) =
        (wants(ORPHAN, Propagation::Orphan), wants(FOREGROUND, Propagation::Foreground));
    let mut new: Vec<String> =
        current.iter().filter(|f| **f != ORPHAN && **f != FOREGROUND).map(|f| f.to_string()).collect();
    new.extend(orphan.then(|| ORPHAN.to_string()));
    new.extend(foreground.then(|| FOREGROUND.to_string()));
    let same = new.len() == current.len() && new.iter().all(|f| current.contains(&f.as_str()));
    (!same).then_some(new)
}

/// An object being deleted goes once nothing holds it: no finalizers left
/// (and for a namespace, none in `spec.finalizers` either: those are its
/// contents, cleared by the namespace controller).
/// A graceful deletion still running (a pod's kubelet has not finished it)
/// holds it too (kube's `shouldDeleteDuringUpdate`).
fn deletion_finished(object: &Value, namespace: bool) -> bool {
    let spec_finalizers = namespace && object["spec"]["finalizers"].as_array().is_some_and(|f| !f.is_empty());
    let grace_running = meta::deletion_grace_period(object).is_some_and(|seconds| seconds > 0);
    meta::is_being_deleted(object)
        && meta::finalizers(object).is_empty()
        && !spec_finalizers
        && !grace_running
}

/// How many objects and lists `value` nests, walked without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 1)];
    while let Some((value, level)) = pending.pop() {
        match value {
            Value::Object(fields) => pending.extend(fields.values().map(|child| (child, level + 1))),
            Value::Array(items) => pending.extend(items.iter().map(|child| (child, level + 1))),
            _ => continue,
        }
        deepest = deepest.max(level);
    }
    deepest
}

/// The deletionTimestamp of an object whose grace period is cut to
/// `seconds`: earlier by what the period lost.
fn shortened(object: &Value, seconds: i64) -> String {
    let period = meta::deletion_grace_period(object).unwrap_or(0);
    let deadline =
        object["metadata"]["deletionTimestamp"].as_str().and_then(|t| t.parse::<jiff::Timestamp>().ok());
    match deadline.and_then(|d| d.checked_sub(jiff::SignedDuration::from_secs(period - seconds)).ok()) {
        Some(at) => at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        None => meta::seconds_from_now(seconds),
    }
}

/// How deep a stored object may nest (objects and lists). Reads decode
/// stored bytes with serde_json, which stops at 128 levels, and lists and
/// watch events wrap objects in more: an object deeper than this would be
/// stored, then unreadable (GET and DELETE failing, LIST leaving it out).
const MAX_STORED_DEPTH: usize = 100;

/// The bytes stored: the object without its resourceVersion (that is the
/// key's revision, filled in on every read). Refused when it nests too
/// deep to be read back, whichever write made it (apply's managedFields
/// nest as deep as the fields they name).
fn encode(object: &Value) -> Result<Bytes, ApiError> {
    if !object.is_object() {
        return Err(ApiError::Internal("an object must be a JSON object".into()));
    }
    let depth = depth(object);
    if depth > MAX_STORED_DEPTH {
        return Err(ApiError::Unprocessable(format!(
            "the object nests {depth} levels deep: at most {MAX_STORED_DEPTH} can be stored and read back"
        )));
    }
    let mut object = object.clone();
    metadata_mut(&mut object).remove("resourceVersion");
    serde_json::to_vec(&object).map(Bytes::from).map_err(|e| ApiError::Internal(e.to_string()))
}
