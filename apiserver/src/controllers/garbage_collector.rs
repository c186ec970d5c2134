//! The garbage collector (kube-controller-manager's): it follows every
//! resource's objects and their `ownerReferences`, and
//!
//! * deletes an object once none of its owners exists (an owner deleted
//!   with Background goes at once and leaves its dependents to this);
//! * for an owner deleted with Orphan (finalizer `orphan`), removes the
//!   references to it from its dependents, then the finalizer;
//! * for an owner deleted with Foreground (finalizer `foregroundDeletion`),
//!   deletes its dependents, in the foreground too, and removes the
//!   finalizer once no dependent that blocks owner deletion is left.
//!
//! The graph of owners is built from the watch caches; before a dependent
//! is deleted, each of its owners is looked up in storage, so a late event
//! can never make it delete an object whose owner exists. Nothing acts
//! before every resource's initial state is in; after a restart those
//! initial states show what was left half done, and it is done again.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::cacher::{Delivery, EventType, ReadAt};
use crate::errors::ApiError;
use crate::registry::metadata::{FOREGROUND, ORPHAN};
use crate::registry::{DeleteOptions, Propagation, Resources, Store, WriteContext};
use crate::runtime::meta;
use crate::storage::Preconditions;

/// How long to wait before trying failed work again, and between looks for
/// resources added at runtime.
const RETRY: Duration = Duration::from_secs(1);

/// A served resource: `(group, plural)`.
type ResourceKey = (String, String);

/// What the forwarders tell the collector.
enum Change {
    /// A resource's whole state (its watch began, or began again).
    Reset(ResourceKey, Vec<Value>),
    Upsert(ResourceKey, Value),
    Gone(Value),
    /// The resource is no longer served: its objects are forgotten, and it
    /// is followed again if it comes back.
    Unserved(ResourceKey),
}

/// One object in the graph.
#[derive(Debug, Clone)]
struct Node {
    resource: ResourceKey,
    namespace: Option<String>,
    name: String,
    owners: Vec<Owner>,
    deleting: Deleting,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deleting {
    No,
    /// Being deleted, held by other finalizers.
    Plain,
    Orphan,
    Foreground,
}

/// One `ownerReferences` entry.
#[derive(Debug, Clone, PartialEq)]
struct Owner {
    uid: String,
    api_version: String,
    kind: String,
    name: String,
    /// `blockOwnerDeletion`: a Foreground delete of the owner waits for it.
    blocks: bool,
}

/// Something to look at again, by uid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Work {
    /// Do the owners of this dependent still hold it?
    Dependent(String),
    /// An owner being deleted with Orphan.
    Orphan(String),
    /// An owner being deleted with Foreground.
    Foreground(String),
}

/// Owners and dependents, by uid.
#[derive(Default)]
struct Graph {
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, BTreeSet<String>>,
    /// Resources whose initial state is in.
    synced: HashSet<ResourceKey>,
}

impl Graph {
    /// Takes in a change; what it gives reason to look at.
    fn apply(&mut self, change: Change) -> Vec<Work> {
        match change {
            Change::Reset(resource, objects) => {
                let keep: HashSet<&str> = objects.iter().map(meta::uid_of).collect();
                let gone: Vec<String> = (self.nodes.iter())
                    .filter(|(uid, node)| node.resource == resource && !keep.contains(uid.as_str()))
                    .map(|(uid, _)| uid.clone())
                    .collect();
                let mut work: Vec<Work> = gone.iter().flat_map(|uid| self.remove(uid)).collect();
                for object in &objects {
                    work.extend(self.upsert(resource.clone(), object));
                }
                self.synced.insert(resource);
                work
            }
            Change::Upsert(resource, object) => self.upsert(resource, &object),
            Change::Gone(object) => self.remove(meta::uid_of(&object)),
            Change::Unserved(resource) => {
                let work = self.apply(Change::Reset(resource.clone(), Vec::new()));
                self.synced.remove(&resource);
                work
            }
        }
    }

    fn upsert(&mut self, resource: ResourceKey, object: &Value) -> Vec<Work> {
        let uid = meta::uid_of(object).to_string();
        let node = Node {
            resource,
            namespace: meta::namespace_of(object).map(str::to_string),
            name: meta::name_of(object).to_string(),
            owners: owners_of(object),
            deleting: deleting(object),
        };
        if let Some(old) = self.nodes.get(&uid) {
            for owner in &old.owners {
                self.dependents.entry(owner.uid.clone()).or_default().remove(&uid);
            }
        }
        for owner in &node.owners {
            self.dependents.entry(owner.uid.clone()).or_default().insert(uid.clone());
        }
        let mut work = Vec::new();
        // A dependent needs a look when an owner is missing from the graph
        // or is waiting for its dependents to go.
        let unheld = node
            .owners
            .iter()
            .any(|o| self.nodes.get(&o.uid).is_none_or(|n| n.deleting == Deleting::Foreground));
        if unheld && node.deleting == Deleting::No {
            work.push(Work::Dependent(uid.clone()));
        }
        match node.deleting {
            Deleting::Orphan => work.push(Work::Orphan(uid.clone())),
            Deleting::Foreground => {
                work.push(Work::Foreground(uid.clone()));
                let dependents = self.dependents.get(&uid).into_iter().flatten();
                work.extend(dependents.map(|d| Work::Dependent(d.clone())));
            }
            Deleting::No | Deleting::Plain => {}
        }
        self.nodes.insert(uid, node);
        work
    }

    /// An object went: its dependents need a look, and so do owners waiting
    /// for it.
    fn remove(&mut self, uid: &str) -> Vec<Work> {
        let Some(node) = self.nodes.remove(uid) else { return Vec::new() };
        let mut work: Vec<Work> =
            self.dependents.get(uid).into_iter().flatten().map(|d| Work::Dependent(d.clone())).collect();
        for owner in &node.owners {
            if let Some(set) = self.dependents.get_mut(&owner.uid) {
                set.remove(uid);
            }
            if self.nodes.get(&owner.uid).is_some_and(|o| o.deleting == Deleting::Foreground) {
                work.push(Work::Foreground(owner.uid.clone()));
            }
        }
        if !self.nodes.contains_key(uid) && self.dependents.get(uid).is_some_and(BTreeSet::is_empty) {
            self.dependents.remove(uid);
        }
        work
    }

    /// The dependents of `owner` whose reference to it blocks its deletion.
    fn blocking(&self, owner: &str) -> usize {
        let dependents = self.dependents.get(owner).into_iter().flatten();
        dependents
            .filter_map(|d| self.nodes.get(d))
            .filter(|d| d.owners.iter().any(|o| o.uid == owner && o.blocks))
            .count()
    }
}

fn owners_of(object: &Value) -> Vec<Owner> {
    let refs = object["metadata"]["ownerReferences"].as_array().map(Vec::as_slice).unwrap_or_default();
    refs.iter()
        .map(|r| Owner {
            uid: r["uid"].as_str().unwrap_or_default().to_string(),
            api_version: r["apiVersion"].as_str().unwrap_or_default().to_string(),
            kind: r["kind"].as_str().unwrap_or_default().to_string(),
            name: r["name"].as_str().unwrap_or_default().to_string(),
            blocks: r["blockOwnerDeletion"].as_bool().unwrap_or(false),
        })
        .collect()
}

fn deleting(object: &Value) -> Deleting {
    let finalizers = meta::finalizers(object);
    match meta::is_being_deleted(object) {
        false => Deleting::No,
        true if finalizers.contains(&ORPHAN) => Deleting::Orphan,
        true if finalizers.contains(&FOREGROUND) => Deleting::Foreground,
        true => Deleting::Plain,
    }
}

/// Runs for ever: follows every resource (those added later too) and
/// works through what their changes call for.
pub async fn run(resources: Resources) {
    let (changes, mut incoming) = mpsc::channel(1024);
    let mut followed = HashSet::new();
    let mut generation = resources.generation();
    follow_new(&resources, &mut followed, &changes);
    let mut graph = Graph::default();
    let mut queue: BTreeSet<Work> = BTreeSet::new();
    let mut retry = tokio::time::interval(RETRY);
    loop {
        tokio::select! {
            Some(change) = incoming.recv() => {
                let mut unserved = take_in(change, &mut graph, &mut followed, &mut queue);
                while let Ok(change) = incoming.try_recv() {
                    unserved |= take_in(change, &mut graph, &mut followed, &mut queue);
                }
                // A resource let go of may be served again already.
                if unserved {
                    follow_new(&resources, &mut followed, &changes);
                }
            }
            Ok(()) = generation.changed() => follow_new(&resources, &mut followed, &changes),
            _ = retry.tick() => {}
        }
        // Nothing is decided on a partial graph.
        if !followed.iter().all(|r| graph.synced.contains(r)) {
            continue;
        }
        for work in std::mem::take(&mut queue) {
            if let Err(e) = do_work(&resources, &graph, &work).await {
                tracing::info!(?work, error = %e, "garbage collection will retry");
                queue.insert(work);
            }
        }
    }
}

/// Takes a change into the graph and its work into the queue; true when
/// it let go of a resource.
fn take_in(
    change: Change,
    graph: &mut Graph,
    followed: &mut HashSet<ResourceKey>,
    queue: &mut BTreeSet<Work>,
) -> bool {
    let unserved = match &change {
        Change::Unserved(resource) => followed.remove(resource),
        _ => false,
    };
    queue.extend(graph.apply(change));
    unserved
}

/// Starts following each served resource not followed yet.
fn follow_new(resources: &Resources, followed: &mut HashSet<ResourceKey>, changes: &mpsc::Sender<Change>) {
    for served in resources.all() {
        let resource = served.store.resource();
        let key = (resource.group.clone(), resource.plural.clone());
        if followed.insert(key.clone()) {
            tokio::spawn(forward(resources.clone(), key, changes.clone()));
        }
    }
}

/// Passes one resource's changes on, starting again from its whole state
/// whenever its watch ends, until the resource is no longer served.
async fn forward(resources: Resources, key: ResourceKey, changes: mpsc::Sender<Change>) {
    loop {
        // Looked up each time: a resource removed and added again is
        // another store.
        let Ok(store) = resources.store(&key.0, &key.1) else {
            let _ = changes.send(Change::Unserved(key)).await;
            return;
        };
        match store.follow().await {
            Ok(mut watch) => {
                let objects = watch.initial.drain(..).filter_map(|d| match d {
                    Delivery::Event { object, .. } => Some(object.value()),
                    Delivery::Bookmark { .. } => None,
                });
                if changes.send(Change::Reset(key.clone(), objects.collect())).await.is_err() {
                    return;
                }
                while let Some(delivery) = watch.live.recv().await {
                    let Delivery::Event { kind, object, .. } = delivery else { continue };
                    let change = match kind {
                        EventType::Deleted => Change::Gone(object.value()),
                        EventType::Added | EventType::Modified => Change::Upsert(key.clone(), object.value()),
                    };
                    if changes.send(change).await.is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                tracing::warn!(resource = ?key, error = %e, "garbage collector's watch failed; retrying")
            }
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn do_work(resources: &Resources, graph: &Graph, work: &Work) -> Result<(), ApiError> {
    match work {
        Work::Dependent(uid) => match graph.nodes.get(uid) {
            Some(node) if node.deleting == Deleting::No => collect_dependent(resources, uid, node).await,
            _ => Ok(()),
        },
        Work::Orphan(uid) => match graph.nodes.get(uid) {
            Some(owner) if owner.deleting == Deleting::Orphan => {
                orphan_dependents(resources, graph, uid, owner).await
            }
            _ => Ok(()),
        },
        Work::Foreground(uid) => match graph.nodes.get(uid) {
            Some(owner) if owner.deleting == Deleting::Foreground && graph.blocking(uid) == 0 => {
                remove_finalizer(resources, uid, owner, FOREGROUND).await
            }
            _ => Ok(()),
        },
    }
}

/// What an owner reference points at, as storage has it now.
#[derive(Debug, PartialEq)]
enum OwnerState {
    Absent,
    /// Exists and is not waiting for its dependents.
    Solid,
    /// Being deleted in the foreground.
    Waiting,
}

/// kube's rule for a dependent: with any solid owner it stays, losing its
/// references to absent and waiting owners; else with a waiting owner it
/// is deleted in the foreground; with only absent owners, in the
/// background.
async fn collect_dependent(resources: &Resources, uid: &str, node: &Node) -> Result<(), ApiError> {
    let mut states = Vec::with_capacity(node.owners.len());
    for owner in &node.owners {
        match owner_state(resources, owner, node.namespace.as_deref()).await? {
            Some(state) => states.push((owner, state)),
            // A kind this server does not serve: never collect on a guess.
            None => return Ok(()),
        }
    }
    let solid = states.iter().any(|(_, s)| *s == OwnerState::Solid);
    let waiting = states.iter().any(|(_, s)| *s == OwnerState::Waiting);
    let store = store_of(resources, &node.resource)?;
    if solid {
        let drop: HashSet<&str> =
            states.iter().filter(|(_, s)| *s != OwnerState::Solid).map(|(o, _)| o.uid.as_str()).collect();
        if drop.is_empty() {
            return Ok(());
        }
        return remove_owner_refs(&store, uid, node, &drop).await;
    }
    let propagation = if waiting { Propagation::Foreground } else { Propagation::Background };
    let opts = DeleteOptions {
        preconditions: Preconditions { uid: Some(uid.to_string()), resource_version: None },
        propagation: Some(propagation),
        grace_period_seconds: None,
    };
    match store.delete(&WriteContext::server(), node.namespace.as_deref(), &node.name, &opts).await {
        Ok(_) | Err(ApiError::NotFound { .. } | ApiError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Looks `owner` up in storage; `None` when its kind is not served here.
async fn owner_state(
    resources: &Resources,
    owner: &Owner,
    dependent_namespace: Option<&str>,
) -> Result<Option<OwnerState>, ApiError> {
    let group = owner.api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let served = resources.all().into_iter().find(|s| {
        let r = s.store.resource();
        r.group == group && r.kind == owner.kind
    });
    let Some(served) = served else { return Ok(None) };
    // A namespaced owner lives in its dependent's namespace.
    let namespace = if served.store.resource().namespaced { dependent_namespace } else { None };
    Ok(Some(match served.store.get(namespace, &owner.name, &ReadAt::default()).await {
        Err(ApiError::NotFound { .. }) => OwnerState::Absent,
        Err(e) => return Err(e),
        Ok(found) if meta::uid_of(&found) != owner.uid => OwnerState::Absent,
        Ok(found) if deleting(&found) == Deleting::Foreground => OwnerState::Waiting,
        Ok(_) => OwnerState::Solid,
    }))
}

/// Orphan: every dependent loses its reference to `uid`, then the owner
/// its `orphan` finalizer.
async fn orphan_dependents(
    resources: &Resources,
    graph: &Graph,
    uid: &str,
    owner: &Node,
) -> Result<(), ApiError> {
    let only = HashSet::from([uid]);
    for dependent in graph.dependents.get(uid).into_iter().flatten() {
        if let Some(node) = graph.nodes.get(dependent) {
            remove_owner_refs(&store_of(resources, &node.resource)?, dependent, node, &only).await?;
        }
    }
    remove_finalizer(resources, uid, owner, ORPHAN).await
}

/// Removes the references to `owners` from the object `uid`.
async fn remove_owner_refs(
    store: &Store,
    uid: &str,
    node: &Node,
    owners: &HashSet<&str>,
) -> Result<(), ApiError> {
    let changed = store
        .update_with(&WriteContext::server(), node.namespace.as_deref(), &node.name, None, |old| {
            same_object(old, uid, store, &node.name)?;
            let mut new = old.clone();
            let metadata = meta::metadata_mut(&mut new);
            if let Some(Value::Array(refs)) = metadata.get_mut("ownerReferences") {
                refs.retain(|r| !owners.contains(r["uid"].as_str().unwrap_or_default()));
                if refs.is_empty() {
                    metadata.remove("ownerReferences");
                }
            }
            metadata.remove("resourceVersion");
            Ok(new)
        })
        .await;
    gone_is_done(changed)
}

/// Removes `finalizer` from the object `uid` (which then goes if it was
/// the last).
async fn remove_finalizer(
    resources: &Resources,
    uid: &str,
    node: &Node,
    finalizer: &str,
) -> Result<(), ApiError> {
    let store = store_of(resources, &node.resource)?;
    let changed = store
        .update_with(&WriteContext::server(), node.namespace.as_deref(), &node.name, None, |old| {
            same_object(old, uid, &store, &node.name)?;
            let mut new = old.clone();
            let metadata = meta::metadata_mut(&mut new);
            if let Some(Value::Array(finalizers)) = metadata.get_mut("finalizers") {
                finalizers.retain(|f| f != finalizer);
            }
            metadata.remove("resourceVersion");
            Ok(new)
        })
        .await;
    gone_is_done(changed)
}

/// Work on an object made again under the same name is not this work.
fn same_object(object: &Value, uid: &str, store: &Store, name: &str) -> Result<(), ApiError> {
    match meta::uid_of(object) == uid {
        true => Ok(()),
        false => {
            Err(ApiError::NotFound { qualified: store.resource().qualified_name(), name: name.to_string() })
        }
    }
}

fn gone_is_done(result: Result<Value, ApiError>) -> Result<(), ApiError> {
    match result {
        Ok(_) | Err(ApiError::NotFound { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

fn store_of(resources: &Resources, resource: &ResourceKey) -> Result<Store, ApiError> {
    resources.store(&resource.0, &resource.1)
}

#[cfg(test)]
mod tests;
