//! CustomResourceDefinitions come alive here (kube's naming, establishing
//! and finalizer controllers of apiextensions-apiserver, in one):
//!
//! * a CRD's names are accepted unless another CRD of its group already
//!   uses one of them (`NamesAccepted`, with kube's reasons);
//! * once accepted, its served versions are served (under the accepted
//!   names) and then it is marked `Established`, so a client that sees the
//!   condition finds the resource; a change to its versions, schemas or
//!   columns serves them anew;
//! * a CRD being deleted has its objects deleted, waits (a minute at most
//!   per attempt) for them to be gone, stops being served and lets go of
//!   its cleanup finalizer, reporting each step in `Terminating`.
//!
//! Everything is driven by the CRDs' watch: a restart serves the
//! established CRDs again from the initial state and resumes cleanups.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cacher::{Delivery, EventType, ListOptions};
use crate::customresource;
use crate::errors::ApiError;
use crate::registry::kinds::customresourcedefinition::{
    CLEANUP_FINALIZER, GROUP, condition, condition_is_true, set_condition,
};
use crate::registry::{DeleteOptions, Resources, Store, WriteContext};
use crate::runtime::meta;

const PLURAL: &str = "customresourcedefinitions";
const RETRY: Duration = Duration::from_secs(1);
/// How long one cleanup waits for the objects (and their finalizers) to go.
const CLEANUP_WAIT: Duration = Duration::from_secs(60);

/// What one CRD is served as: the resource keys and what they were made
/// from (to tell when to serve it anew).
struct Serving {
    made_from: Value,
    keys: Vec<(String, String, String)>,
}

#[derive(Default)]
struct State {
    /// The latest version of every CRD, by name (for name conflicts).
    known: HashMap<String, Value>,
    serving: HashMap<String, Serving>,
}

/// Follows CRDs for ever.
pub async fn run(resources: Resources) {
    let cleaning: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut state = State::default();
    loop {
        if let Err(e) = follow(&resources, &mut state, &cleaning).await {
            tracing::warn!(error = %e, "CustomResourceDefinition controller's watch failed; retrying");
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn follow(
    resources: &Resources,
    state: &mut State,
    cleaning: &Arc<Mutex<HashSet<String>>>,
) -> Result<(), ApiError> {
    let store = resources.store(GROUP, PLURAL)?;
    let mut watch = store.follow().await?;
    let initial = std::mem::take(&mut watch.initial);
    state.known.clear();
    for delivery in &initial {
        if let Delivery::Event { object, .. } = delivery {
            let crd = object.value();
            state.known.insert(meta::name_of(&crd).to_string(), crd);
        }
    }
    // CRDs deleted while the watch was down left no event: stop serving them.
    let gone: Vec<String> = state.serving.keys().filter(|n| !state.known.contains_key(*n)).cloned().collect();
    for name in gone {
        unserve(resources, state, &name);
    }
    for delivery in initial {
        handle(resources, &store, state, cleaning, delivery).await;
    }
    while let Some(delivery) = watch.live.recv().await {
        handle(resources, &store, state, cleaning, delivery).await;
    }
    Ok(())
}

async fn handle(
    resources: &Resources,
    store: &Store,
    state: &mut State,
    cleaning: &Arc<Mutex<HashSet<String>>>,
    delivery: Delivery,
) {
    let Delivery::Event { kind, object, .. } = delivery else { return };
    let crd = object.value();
    let name = meta::name_of(&crd).to_string();
    if kind == EventType::Deleted {
        state.known.remove(&name);
        unserve(resources, state, &name);
    } else {
        state.known.insert(name.clone(), crd.clone());
        reconcile(resources, store, state, cleaning, &crd).await;
    }
    // Names this CRD held or gave up may now be free for another of its
    // group that waits for them.
    let waiting: Vec<Value> = state
        .known
        .values()
        .filter(|o| meta::name_of(o) != name && o["spec"]["group"] == crd["spec"]["group"])
        .filter(|o| !condition_is_true(o, "NamesAccepted") && !meta::is_being_deleted(o))
        .cloned()
        .collect();
    for other in waiting {
        reconcile(resources, store, state, cleaning, &other).await;
    }
}

/// Brings one CRD's serving and status to what it says.
async fn reconcile(
    resources: &Resources,
    store: &Store,
    state: &mut State,
    cleaning: &Arc<Mutex<HashSet<String>>>,
    crd: &Value,
) {
    let name = meta::name_of(crd).to_string();
    if meta::is_being_deleted(crd) {
        // Served while its objects are deleted (after a restart too), its
        // storage version at least, so they can be.
        if condition_is_true(crd, "Established") {
            let mut serving = crd.clone();
            serving["spec"]["names"] = crd["status"]["acceptedNames"].clone();
            for version in serving["spec"]["versions"].as_array_mut().into_iter().flatten() {
                if version["storage"] == true {
                    version["served"] = json!(true);
                }
            }
            if let Err(e) = serve(resources, state, &name, &serving) {
                tracing::warn!(crd = name, error = %e, "cannot serve CustomResourceDefinition being deleted");
            }
        }
        start_cleanup(resources, cleaning, crd);
        return;
    }
    let (accepted, desired) = accept_names(crd, &state.known);
    if let Some(names) = accepted {
        let mut serving = crd.clone();
        serving["spec"]["names"] = names;
        if let Err(e) = serve(resources, state, &name, &serving) {
            tracing::warn!(crd = name, error = %e, "cannot serve CustomResourceDefinition");
            return;
        }
    }
    if desired["status"] != crd["status"] {
        match write_status(store, &name, meta::uid_of(crd), &desired["status"]).await {
            // Known at once, so the next CRD's names are checked against it.
            Ok(written) => {
                state.known.insert(name, written);
            }
            Err(e) => tracing::warn!(crd = name, error = %e, "cannot update CustomResourceDefinition status"),
        }
    }
}

/// The names the CRD is to be served under (None while they conflict),
/// and the CRD with its naming conditions as they should be.
fn accept_names(crd: &Value, known: &HashMap<String, Value>) -> (Option<Value>, Value) {
    let name = meta::name_of(crd);
    let group = &crd["spec"]["group"];
    let names = &crd["spec"]["names"];
    let (mut resource_names, mut kinds) = (HashSet::new(), HashSet::new());
    for other in known.values().filter(|o| meta::name_of(o) != name && &o["spec"]["group"] == group) {
        let theirs = &other["status"]["acceptedNames"];
        for key in ["plural", "singular"] {
            resource_names.extend(theirs[key].as_str().map(str::to_string));
        }
        resource_names.extend(strings(&theirs["shortNames"]));
        for key in ["kind", "listKind"] {
            kinds.extend(theirs[key].as_str().map(str::to_string));
        }
    }
    let in_use =
        |v: &Value, set: &HashSet<String>| v.as_str().filter(|n| set.contains(*n)).map(str::to_string);
    let mut conflict = None;
    if let Some(n) = in_use(&names["plural"], &resource_names) {
        conflict = Some(("PluralConflict", format!("{n:?} is already in use")));
    }
    if let Some(n) = in_use(&names["singular"], &resource_names) {
        conflict = Some(("SingularConflict", format!("{n:?} is already in use")));
    }
    let short: Vec<String> = strings(&names["shortNames"])
        .into_iter()
        .filter(|s| resource_names.contains(s))
        .map(|s| format!("{s:?} is already in use"))
        .collect();
    match short.len() {
        0 => {}
        1 => conflict = Some(("ShortNamesConflict", short[0].clone())),
        _ => conflict = Some(("ShortNamesConflict", format!("[{}]", short.join(", ")))),
    }
    if let Some(n) = in_use(&names["kind"], &kinds) {
        conflict = Some(("KindConflict", format!("{n:?} is already in use")));
    }
    if let Some(n) = in_use(&names["listKind"], &kinds) {
        conflict = Some(("ListKindConflict", format!("{n:?} is already in use")));
    }
    let mut desired = crd.clone();
    match conflict {
        None => {
            desired["status"]["acceptedNames"] = names.clone();
            set_condition(&mut desired, "NamesAccepted", "True", "NoConflicts", "no conflicts found");
            set_condition(
                &mut desired,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            );
            (Some(names.clone()), desired)
        }
        Some((reason, message)) => {
            set_condition(&mut desired, "NamesAccepted", "False", reason, &message);
            if condition(crd, "Established").is_none() {
                set_condition(
                    &mut desired,
                    "Established",
                    "False",
                    "NotAccepted",
                    "not all names are accepted",
                );
            }
            // An established CRD keeps serving the names it had.
            let kept = condition_is_true(crd, "Established").then(|| crd["status"]["acceptedNames"].clone());
            (kept, desired)
        }
    }
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

/// Serves the CRD's versions, anew if what they are made from changed.
fn serve(resources: &Resources, state: &mut State, name: &str, crd: &Value) -> Result<(), ApiError> {
    let made_from = json!({"spec": crd["spec"], "terminating": meta::is_being_deleted(crd)});
    if state.serving.get(name).is_some_and(|s| s.made_from == made_from) {
        return Ok(());
    }
    unserve(resources, state, name);
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for kind in customresource::kinds(crd, resources.webhook_caller()) {
        let r = &kind.resource;
        let key = (r.group.clone(), r.version.clone(), r.plural.clone());
        if let Err(e) = resources.add(kind) {
            for (group, version, plural) in &keys {
                resources.remove(group, version, plural);
            }
            return Err(e);
        }
        keys.push(key);
    }
    state.serving.insert(name.to_string(), Serving { made_from, keys });
    Ok(())
}

fn unserve(resources: &Resources, state: &mut State, name: &str) {
    if let Some(serving) = state.serving.remove(name) {
        for (group, version, plural) in &serving.keys {
            resources.remove(group, version, plural);
        }
    }
}

/// Writes the CRD's status (the one with `uid` only); the CRD written.
async fn write_status(store: &Store, name: &str, uid: &str, status: &Value) -> Result<Value, ApiError> {
    store
        .update_with(&WriteContext::server(), None, name, Some("status"), |old| {
            if meta::uid_of(old) != uid {
                return Err(ApiError::NotFound {
                    qualified: format!("{PLURAL}.{GROUP}"),
                    name: name.to_string(),
                });
            }
            let mut new = old.clone();
            new["status"] = status.clone();
            meta::metadata_mut(&mut new).remove("resourceVersion");
            Ok(new)
        })
        .await
}

/// Deletes a deleted CRD's objects in a task of its own (once per CRD).
fn start_cleanup(resources: &Resources, cleaning: &Arc<Mutex<HashSet<String>>>, crd: &Value) {
    if !meta::finalizers(crd).contains(&CLEANUP_FINALIZER) {
        return;
    }
    let key = format!("{}/{}", meta::name_of(crd), meta::uid_of(crd));
    if !cleaning.lock().unwrap_or_else(|p| p.into_inner()).insert(key.clone()) {
        return;
    }
    let (resources, cleaning, crd) = (resources.clone(), cleaning.clone(), crd.clone());
    tokio::spawn(async move {
        loop {
            match clean_up(&resources, &crd).await {
                Ok(()) | Err(ApiError::NotFound { .. }) => break,
                Err(e) => {
                    tracing::warn!(crd = meta::name_of(&crd), error = %e, "CustomResourceDefinition cleanup will retry")
                }
            }
            tokio::time::sleep(RETRY).await;
        }
        cleaning.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
    });
}

/// One attempt at a deleted CRD's cleanup, each step in `Terminating`.
async fn clean_up(resources: &Resources, crd: &Value) -> Result<(), ApiError> {
    let store = resources.store(GROUP, PLURAL)?;
    let (name, uid) = (meta::name_of(crd), meta::uid_of(crd));
    let mut status = crd.clone();
    if !condition_is_true(crd, "Established") {
        set_condition(
            &mut status,
            "Terminating",
            "False",
            "NeverEstablished",
            "resource was never established",
        );
        write_status(&store, name, uid, &status["status"]).await?;
        return release(&store, name, uid).await;
    }
    set_condition(
        &mut status,
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    );
    write_status(&store, name, uid, &status["status"]).await?;
    match delete_objects(resources, crd).await {
        Ok(()) => {
            set_condition(
                &mut status,
                "Terminating",
                "False",
                "InstanceDeletionCompleted",
                "removed all instances",
            );
            write_status(&store, name, uid, &status["status"]).await?;
            release(&store, name, uid).await
        }
        Err(why) => {
            set_condition(&mut status, "Terminating", "True", why.0, &why.1);
            write_status(&store, name, uid, &status["status"]).await?;
            Err(ApiError::Internal(why.1))
        }
    }
}

/// Deletes every object of the CRD and waits for them to be gone; the
/// Terminating reason and message if they are not.
async fn delete_objects(resources: &Resources, crd: &Value) -> Result<(), (&'static str, String)> {
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let plural = crd["status"]["acceptedNames"]["plural"].as_str().unwrap_or_default();
    // Its own storage only (never a built-in resource of the same name),
    // through the storage version when it is served: objects stored in it
    // need no conversion (a broken conversion webhook does not keep the
    // CRD from going).
    let prefix = format!("{group}/{plural}");
    let storage_version = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str());
    let mut served: Vec<_> = resources
        .all()
        .into_iter()
        .filter(|s| {
            let resource = s.store.resource();
            resource.is(group, plural) && resource.storage_prefix == prefix
        })
        .collect();
    served.sort_by_key(|s| Some(s.store.resource().version.as_str()) != storage_version);
    let served = served.into_iter().next();
    let Some(served) = served else {
        return Err((
            "InstanceDeletionFailed",
            "could not list instances: the resource is not served".into(),
        ));
    };
    let objects = &served.store;
    let ctx = WriteContext::server();
    let list = || async { objects.list_from_storage(&ListOptions::default()).await.map(|l| l.items) };
    let items =
        list().await.map_err(|e| ("InstanceDeletionFailed", format!("could not list instances: {e}")))?;
    let mut failures = Vec::new();
    for item in &items {
        let namespace = meta::namespace_of(item).filter(|ns| !ns.is_empty());
        match objects.delete(&ctx, namespace, meta::name_of(item), &DeleteOptions::default()).await {
            Ok(_) | Err(ApiError::NotFound { .. }) => {}
            Err(e) => failures.push(e.to_string()),
        }
    }
    if !failures.is_empty() {
        return Err((
            "InstanceDeletionFailed",
            format!("could not issue all deletes: {}", failures.join(", ")),
        ));
    }
    let deadline = Instant::now() + CLEANUP_WAIT;
    loop {
        match list().await {
            Ok(left) if left.is_empty() => return Ok(()),
            Ok(left) if Instant::now() >= deadline => {
                let why = format!("{} CustomResources remaining", left.len());
                return Err((
                    "InstanceDeletionCheck",
                    format!("could not confirm zero CustomResources remaining: {why}"),
                ));
            }
            Ok(_) => tokio::time::sleep(RETRY).await,
            Err(e) => {
                return Err((
                    "InstanceDeletionCheck",
                    format!("could not confirm zero CustomResources remaining: {e}"),
                ));
            }
        }
    }
}

/// Lifts the cleanup finalizer; the CRD goes once it has no other.
async fn release(store: &Store, name: &str, uid: &str) -> Result<(), ApiError> {
    store
        .update_with(&WriteContext::server(), None, name, None, |old| {
            if meta::uid_of(old) != uid {
                return Err(ApiError::NotFound {
                    qualified: format!("{PLURAL}.{GROUP}"),
                    name: name.to_string(),
                });
            }
            let mut new = old.clone();
            let kept: Vec<&str> =
                meta::finalizers(old).into_iter().filter(|f| *f != CLEANUP_FINALIZER).collect();
            let metadata = meta::metadata_mut(&mut new);
            metadata.insert("finalizers".into(), json!(kept));
            metadata.remove("resourceVersion");
            Ok(new)
        })
        .await
        .map(drop)
}
