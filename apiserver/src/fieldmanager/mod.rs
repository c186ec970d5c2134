//! Field ownership (`metadata.managedFields`) and server-side apply, as
//! kube's field manager keeps them.
//!
//! Every write through the API records who changed which fields: a create,
//! update or non-apply patch as an `Update` manager named by the request's
//! `fieldManager` (else its User-Agent's product), which takes the fields it
//! changed from whoever had them. An apply (`application/apply-patch+yaml`)
//! declares the fields its manager wants: they are merged into the object,
//! fields the manager applied before and no longer does are removed unless
//! someone else manages them, and changing a field another manager holds is
//! a conflict (409) unless the apply forces it.
//!
//! Written by hand: no crate on the registry implements structured-merge-diff
//! (a Rust port exists on GitHub only). The parts: `fieldpath` (paths, sets
//! and their `fieldsV1` text), `schema` (a kind's shape from its OpenAPI
//! schema), `typed` (walks along that shape), `managed` (the managers of an
//! object), `conflict` (the 409), and here the two operations.

mod conflict;
mod fieldpath;
mod last_applied;
mod managed;
mod schema;
mod typed;

use std::sync::{Arc, OnceLock};

use serde_json::Value;

pub use managed::{Managed, Manager, Operation};
pub use schema::Schema;

use crate::errors::ApiError;
use crate::runtime::meta;
use fieldpath::{Path, PathElement, Set};

/// At most this many `Update` managers are kept; older ones are folded into
/// [`ANCIENT_CHANGES`] (kube's cap).
const MAX_UPDATE_MANAGERS: usize = 10;
const ANCIENT_CHANGES: &str = "ancient-changes";

/// Who holds what an object had before its first apply (kube's name).
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// The fields of every object that nobody manages: the server sets them.
const SERVER_OWNED: &[&[&str]] = &[
    &["apiVersion"],
    &["kind"],
    &["metadata"],
    &["metadata", "name"],
    &["metadata", "namespace"],
    &["metadata", "creationTimestamp"],
    &["metadata", "selfLink"],
    &["metadata", "uid"],
    &["metadata", "clusterName"],
    &["metadata", "generation"],
    &["metadata", "managedFields"],
    &["metadata", "resourceVersion"],
];

/// Where a kind's shape comes from, built on first use.
pub type SchemaSource = Arc<dyn Fn() -> Schema + Send + Sync>;

/// One resource's field manager.
pub struct FieldManager {
    /// `<group>/<version>` or `v1`: what managers are recorded in.
    api_version: String,
    kind: String,
    /// With a status subresource, the object's writes do not own status and
    /// the subresource's own nothing else (kube's reset fields).
    has_status: bool,
    source: SchemaSource,
    schema: OnceLock<Schema>,
}

impl std::fmt::Debug for FieldManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldManager").field("api_version", &self.api_version).finish_non_exhaustive()
    }
}

impl FieldManager {
    pub fn new(api_version: &str, kind: &str, has_status: bool, source: SchemaSource) -> FieldManager {
        FieldManager {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            has_status,
            source,
            schema: OnceLock::new(),
        }
    }

    fn schema(&self) -> &Schema {
        self.schema.get_or_init(|| (self.source)())
    }

    fn manager(&self, name: &str, operation: Operation, subresource: Option<&str>) -> Manager {
        Manager {
            name: name.to_string(),
            operation,
            api_version: self.api_version.clone(),
            subresource: subresource.unwrap_or_default().to_string(),
        }
    }

    /// A mutating admission policy's apply configuration merged into `live`
    /// as an apply merges it, with no ownership recorded (kube's
    /// `ApplyStructuredMergeDiff`). Refused, in kube's words, when it names
    /// a field the schema does not have, or sets an atomic list, map or
    /// struct (which would be replaced whole).
    pub fn merge_configuration(&self, live: &Value, config: &Value) -> Result<Value, String> {
        let schema = self.schema();
        typed::field_set(schema, config)
            .map_err(|why| format!("failed to convert patch object to typed object: {why}"))?;
        let atomics = typed::atomics(schema, config);
        if !atomics.is_empty() {
            return Err(format!(
                "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
                atomics.join(", ")
            ));
        }
        typed::merge(schema, live, config).map_err(|why| format!("failed to merge patch: {why}"))
    }

    /// Records `manager`'s change from `live` to `new` (an `Update`) in
    /// `new`'s managedFields. Managed fields `new` carries replace the live
    /// ones (a client may edit them; `[]` or `[{}]` clears them); when it
    /// carries none, or garbage, or the write is to a subresource, the live
    /// ones are kept. An existing object nobody manages stays unmanaged.
    /// Never fails: a change that cannot be tracked keeps the live managers,
    /// as kube's `UpdateNoErrors` does.
    pub fn update(&self, live: &Value, new: &mut Value, manager: &str, subresource: Option<&str>, now: &str) {
        let live_managed = || Managed::decode(live).unwrap_or_default();
        let mut managed = match (subresource, new.pointer("/metadata/managedFields")) {
            (Some(_), _) => live_managed(),
            (None, Some(list)) if is_reset(list) => Managed::default(),
            (None, _) => match Managed::decode(new) {
                Ok(managed) if !managed.is_empty() => managed,
                _ => live_managed(),
            },
        };
        meta::metadata_mut(new).remove("managedFields");
        let creating = meta::uid_of(live).is_empty();
        if managed.is_empty() && !creating {
            // Objects written before anyone was tracked stay untracked
            // until an apply.
            return;
        }
        let live = without_managed_fields(live);
        self.record_update(
            &mut managed,
            &live,
            new,
            &self.manager(manager, Operation::Update, subresource),
            now,
        );
        finish(&mut managed);
        managed.encode_into(new);
    }

    /// For a write nobody is recorded for (the server's own: the garbage
    /// collector taking a finalizer or an owner reference away): the fields
    /// it removed are no longer anyone's, so a later apply of them is not a
    /// conflict with their former owner.
    pub fn forget_removed(&self, live: &Value, new: &mut Value) {
        let Ok(mut managed) = Managed::decode(new) else { return };
        if managed.is_empty() {
            return;
        }
        let removed =
            typed::compare(self.schema(), &without_managed_fields(live), &without_managed_fields(new))
                .removed;
        if removed.is_empty() {
            return;
        }
        for entry in &mut managed.entries {
            entry.fields = entry.fields.difference(&removed);
        }
        managed.entries.retain(|e| !e.fields.is_empty());
        managed.encode_into(new);
    }

    /// The managers after `manager` changed `live` into `new`: it takes the
    /// fields it changed (its time then is `now`), from whoever held them;
    /// removed fields are nobody's.
    fn record_update(&self, managed: &mut Managed, live: &Value, new: &Value, manager: &Manager, now: &str) {
        let comparison = typed::compare(self.schema(), live, new);
        let changed = self.owned_by(&manager.subresource, &comparison.modified.union(&comparison.added));
        for entry in &mut managed.entries {
            entry.fields = entry.fields.difference(&changed).difference(&comparison.removed);
        }
        managed.entries.retain(|e| !e.fields.is_empty());
        if !changed.is_empty() {
            let previous = managed.get(manager).map(|e| e.fields.clone()).unwrap_or_default();
            managed.put(manager, previous.union(&changed), Some(now.to_string()));
        }
    }

    /// Applies `config` for `manager` to `live` (an empty object when there
    /// is none yet): the new object, with its managedFields. A change to a
    /// field another manager holds is a 409 unless `force`.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        subresource: Option<&str>,
        now: &str,
    ) -> Result<Value, ApiError> {
        self.check_config(config)?;
        let mut managed = Managed::decode(live)
            .map_err(|e| ApiError::Untyped(format!("failed to decode managed fields: {e}")))?;
        let live_content = without_managed_fields(live);
        if managed.is_empty() {
            // What is there already is someone's: an apply that changes it
            // conflicts with that someone.
            let first = self.manager(BEFORE_FIRST_APPLY, Operation::Update, subresource);
            let empty = serde_json::json!({});
            self.record_update(&mut managed, &empty, &live_content, &first, now);
            finish(&mut managed);
        }
        let manager = self.manager(manager, Operation::Apply, subresource);
        let takeover = manager.name == "kubectl";
        // Only kubectl's takeover tries again, from the managers as they were.
        let mut attempt = if takeover { managed.clone() } else { std::mem::take(&mut managed) };
        let mut new = match self.apply_managed(&live_content, config, &mut attempt, &manager, force, now) {
            Ok(new) => new,
            // kubectl's client-side apply said the same: the server-side
            // apply takes over from it, if that covers every conflict.
            Err(Refusal::Conflicts(conflicts)) if takeover => {
                let left = last_applied::remaining_conflicts(self, &live_content, conflicts);
                if !left.is_empty() {
                    return Err(conflict::error(&left));
                }
                self.apply_managed(&live_content, config, &mut managed, &manager, true, now)?
            }
            Err(refusal) => return Err(refusal.into()),
        };
        if takeover {
            last_applied::update_annotation(&mut new, config);
        }
        Ok(new)
    }

    /// The apply itself, on content without managedFields; the new object
    /// with the managers written into it.
    fn apply_managed(
        &self,
        live: &Value,
        config: &Value,
        managed: &mut Managed,
        manager: &Manager,
        force: bool,
        now: &str,
    ) -> Result<Value, Refusal> {
        let schema = self.schema();
        let applied = typed::field_set(schema, config).map_err(|e| {
            ApiError::Untyped(format!("failed to create typed patch object ({}): {e}", self.describe(config)))
        })?;
        let applied = self.owned_by(&manager.subresource, &applied);
        let merged = typed::merge(schema, live, config)
            .map_err(|e| ApiError::Untyped(format!("failed to merge config: {e}")))?;
        let (last, last_time) = match managed.get(manager) {
            Some(entry) => (entry.fields.clone(), entry.time.clone()),
            None => (Set::new(), None),
        };
        let new = self.prune(&merged, managed, manager, &last, &applied);
        // The applier's entry now says what this configuration sets.
        managed.put(manager, applied, last_time);

        let comparison = typed::compare(schema, live, &new);
        let changed = self.owned_by(&manager.subresource, &comparison.modified.union(&comparison.added));
        let conflicts: Vec<(Manager, Set)> = managed
            .entries
            .iter()
            .filter(|e| &e.manager != manager)
            .map(|e| (e.manager.clone(), e.fields.intersection(&changed)))
            .filter(|(_, taken)| !taken.is_empty())
            .collect();
        if !force && !conflicts.is_empty() {
            return Err(Refusal::Conflicts(conflicts));
        }
        for entry in managed.entries.iter_mut().filter(|e| &e.manager != manager) {
            entry.fields = entry.fields.difference(&changed).difference(&comparison.removed);
        }
        // An apply that changes nothing leaves the applier's time alone.
        if &new != live
            && let Some(entry) = managed.entries.iter_mut().find(|e| &e.manager == manager)
        {
            entry.time = Some(now.to_string());
        }
        let mut new = new;
        finish(managed);
        managed.encode_into(&mut new);
        Ok(new)
    }

    /// kube's checks of an applied configuration before anything else: an
    /// object of this endpoint's kind and version, without managedFields.
    fn check_config(&self, config: &Value) -> Result<(), ApiError> {
        let version = config["apiVersion"].as_str().unwrap_or_default();
        let kind = config["kind"].as_str().unwrap_or_default();
        if version != self.api_version || kind != self.kind {
            let (group, version) = version.rsplit_once('/').unwrap_or(("", version));
            return Err(ApiError::BadRequest(format!("invalid object type: {group}/{version}, Kind={kind}")));
        }
        if !config.pointer("/metadata/managedFields").is_none_or(Value::is_null) {
            return Err(ApiError::BadRequest("metadata.managedFields must be nil".into()));
        }
        Ok(())
    }

    /// `<namespace>/<name>; <group/version>, Kind=<kind>` as kube names the
    /// object in field manager errors.
    fn describe(&self, object: &Value) -> String {
        let namespace = object.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
        let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        let group_version = if self.api_version.contains('/') {
            self.api_version.clone()
        } else {
            format!("/{}", self.api_version)
        };
        format!("{namespace}/{name}; {group_version}, Kind={}", self.kind)
    }

    /// Removes from `merged` what the applier managed before (`last`) and no
    /// longer applies (`applied` is what it applies now), unless another
    /// manager holds it; what the applier never set stays. `managed` still
    /// holds the applier's previous entry, which does not count.
    fn prune(
        &self,
        merged: &Value,
        managed: &Managed,
        applier: &Manager,
        last: &Set,
        applied: &Set,
    ) -> Value {
        // Applying all it applied before (re-applying, or adding fields), the
        // applier gives up nothing.
        if last.difference(applied).is_empty() {
            return merged.clone();
        }
        let schema = self.schema();
        let named = |set: &Set| typed::with_named_fields(schema, set);
        let set_of = |value: &Value| named(&typed::stored_field_set(schema, value));
        // kube's three steps. 1: take out everything the applier had.
        let pruned = typed::remove(schema, merged, &named(last));
        // 2: put back what anyone still manages (the applier's new set
        // included): of the merged object, remove only what is neither left
        // nor managed.
        let mut owned = applied.clone();
        for entry in managed.entries.iter().filter(|e| &e.manager != applier) {
            owned.union_with(&entry.fields);
        }
        let merged_set = set_of(merged);
        let keep = set_of(&pruned).union(&named(&owned));
        let pruned = typed::remove(schema, merged, &merged_set.difference(&keep));
        // 3: of what that still took out, only what the applier had goes
        // (a field under one it had, that it never set, stays).
        let gone = merged_set.difference(&set_of(&pruned)).intersection(&named(last));
        typed::remove(schema, merged, &gone)
    }

    /// `set` without what this write does not own: status through the
    /// object when status has its own subresource, anything but status
    /// through the status subresource.
    fn owned_by(&self, subresource: &str, set: &Set) -> Set {
        if !self.has_status {
            return set.clone();
        }
        let status = PathElement::Field("status".into());
        match subresource {
            "status" => {
                let mut only = Set::new();
                for path in set.paths().into_iter().filter(|p| p.0.first() == Some(&status)) {
                    only.insert(&path);
                }
                only
            }
            _ => {
                let mut without = Set::new();
                for path in set.paths().into_iter().filter(|p| p.0.first() != Some(&status)) {
                    without.insert(&path);
                }
                without
            }
        }
    }
}

/// `object` without its managedFields, to compare and merge content only.
fn without_managed_fields(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    copy
}

/// Why an apply did not go through: conflicts (which kubectl's takeover
/// may yet allow), or an error.
enum Refusal {
    Conflicts(Vec<(Manager, Set)>),
    Error(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Refusal {
        Refusal::Error(error)
    }
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> ApiError {
        match refusal {
            Refusal::Conflicts(conflicts) => conflict::error(&conflicts),
            Refusal::Error(error) => error,
        }
    }
}

/// What every write does last: nobody manages what the server sets, and
/// the oldest updaters beyond the cap become one.
fn finish(managed: &mut Managed) {
    let mut server_owned = Set::new();
    for path in SERVER_OWNED {
        server_owned.insert(&Path::of_fields(path));
    }
    for entry in &mut managed.entries {
        entry.fields = entry.fields.difference(&server_owned);
    }
    managed.entries.retain(|e| !e.fields.is_empty());
    cap_updaters(managed);
}

/// Folds the oldest `Update` managers into one [`ANCIENT_CHANGES`] entry
/// per API version while there are more than [`MAX_UPDATE_MANAGERS`]:
/// oldest first, the first of each version becoming the bucket the later
/// ones of that version join.
fn cap_updaters(managed: &mut Managed) {
    let entries = &mut managed.entries;
    let mut updaters: Vec<usize> =
        (0..entries.len()).filter(|&i| entries[i].manager.operation == Operation::Update).collect();
    let mut count = updaters.len();
    if count <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by_cached_key(|&i| {
        (entries[i].time.clone().unwrap_or_default(), entries[i].manager.identity())
    });
    // Per version, the entry that is (or becomes) its bucket: one folded
    // before, else the oldest updater of that version.
    let mut bucket_of: std::collections::HashMap<String, usize> = updaters
        .iter()
        .filter(|&&i| entries[i].manager.name == ANCIENT_CHANGES)
        .map(|&i| (entries[i].manager.api_version.clone(), i))
        .collect();
    let mut folded = vec![false; entries.len()];
    for i in updaters {
        if count <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].manager.api_version.clone();
        let Some(&bucket) = bucket_of.get(&version) else {
            bucket_of.insert(version, i);
            continue;
        };
        if bucket == i {
            continue;
        }
        entries[bucket].manager.name = ANCIENT_CHANGES.into();
        entries[bucket].manager.subresource.clear();
        let fields = std::mem::take(&mut entries[i].fields);
        entries[bucket].fields.union_with(&fields);
        entries[bucket].time = entries[i].time.clone();
        folded[i] = true;
        count -= 1;
    }
    let mut index = 0;
    entries.retain(|_| {
        index += 1;
        !folded[index - 1]
    });
}

/// `[]` or `[{}]`: a client clearing managedFields.
fn is_reset(list: &Value) -> bool {
    match list.as_array().map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => only.as_object().is_some_and(|o| o.values().all(is_zero)),
        _ => false,
    }
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// The manager a request writes as: its `fieldManager`, else the product
/// of its User-Agent (`kubectl/v1.37 (linux)` → `kubectl`), printable
/// characters only, 128 bytes at most; `unknown` when that leaves nothing.
pub fn manager_name(field_manager: Option<&str>, user_agent: &str) -> String {
    if let Some(name) = field_manager.filter(|m| !m.is_empty()) {
        return name.to_string();
    }
    let product = user_agent.split('/').next().unwrap_or_default();
    let mut name = String::new();
    for c in product.chars().filter(|c| !c.is_control()) {
        if name.len() + c.len_utf8() > 128 {
            break;
        }
        name.push(c);
    }
    if name.is_empty() { "unknown".to_string() } else { name }
}

#[cfg(test)]
mod tests;
