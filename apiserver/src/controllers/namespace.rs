//! Namespace deletion, as kube's namespace controller does it: a deleted
//! namespace is marked Terminating (by its store), then this controller,
//! watching namespaces, deletes everything in it and finally clears
//! `spec.finalizers`, which lets the namespace go. A namespace left
//! Terminating by an earlier run is picked up from the watch's initial
//! state.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::cacher::{Delivery, Filter, ListOptions, ReadAt};
use crate::errors::ApiError;
use crate::registry::{DeleteOptions, Resources, WriteContext};
use crate::runtime::meta;

/// How long to wait between tries while objects with finalizers remain.
const RETRY: Duration = Duration::from_secs(1);

/// Watches namespaces for ever; each one being deleted is finalized once.
pub async fn run(resources: Resources) {
    let running: Arc<Mutex<HashSet<String>>> = Arc::default();
    loop {
        if let Err(e) = watch_namespaces(&resources, &running).await {
            tracing::warn!(error = %e, "namespace controller's watch failed; retrying");
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Follows namespaces until the watch ends.
async fn watch_namespaces(
    resources: &Resources,
    running: &Arc<Mutex<HashSet<String>>>,
) -> Result<(), ApiError> {
    let mut watch = resources.store("", "namespaces")?.follow().await?;
    let initial = std::mem::take(&mut watch.initial);
    for delivery in initial {
        consider(resources, running, &delivery);
    }
    while let Some(delivery) = watch.live.recv().await {
        consider(resources, running, &delivery);
    }
    Ok(())
}

/// Starts finalizing a namespace that is being deleted, unless that is
/// already under way.
fn consider(resources: &Resources, running: &Arc<Mutex<HashSet<String>>>, delivery: &Delivery) {
    let Delivery::Event { object, .. } = delivery else { return };
    let namespace = &object.value();
    if !meta::is_being_deleted(namespace) {
        return;
    }
    let name = meta::name_of(namespace).to_string();
    let uid = meta::uid_of(namespace).to_string();
    let key = format!("{name}/{uid}");
    if !running.lock().unwrap_or_else(|p| p.into_inner()).insert(key.clone()) {
        return;
    }
    let resources = resources.clone();
    let running = running.clone();
    tokio::spawn(async move {
        loop {
            match finalize(&resources, &name, &uid).await {
                Ok(true) | Err(ApiError::NotFound { .. }) => break,
                Ok(false) => {}
                Err(e) => tracing::warn!(namespace = name, error = %e, "namespace deletion will retry"),
            }
            tokio::time::sleep(RETRY).await;
        }
        running.lock().unwrap_or_else(|p| p.into_inner()).remove(&key);
    });
}

/// Deletes what is left in namespace `name` (the one with `uid`); true once
/// nothing is and the namespace has been released, or when that namespace
/// is gone or no longer being deleted.
async fn finalize(resources: &Resources, name: &str, uid: &str) -> Result<bool, ApiError> {
    let namespaces = resources.store("", "namespaces")?;
    let ctx = WriteContext::server();
    // Only the namespace this deletion is for, while it is being deleted:
    // never a namespace made anew under the same name.
    let current = match namespaces.get(None, name, &ReadAt::default()).await {
        Err(ApiError::NotFound { .. }) => return Ok(true),
        other => other?,
    };
    if meta::uid_of(&current) != uid || !meta::is_being_deleted(&current) {
        return Ok(true);
    }
    // Read from storage, not the caches: the namespace must not go while
    // anything in it is left, however far behind a cache might be.
    for served in resources.all().iter().filter(|s| s.store.resource().namespaced) {
        let store = &served.store;
        let opts = ListOptions {
            filter: Filter { namespace: Some(name.to_string()), ..Filter::default() },
            ..ListOptions::default()
        };
        for item in store.list_from_storage(&opts).await?.items {
            let item_name = meta::name_of(&item).to_string();
            match store.delete(&ctx, Some(name), &item_name, &DeleteOptions::default()).await {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if !store.list_from_storage(&opts).await?.items.is_empty() {
            return Ok(false);
        }
    }
    // Its contents are gone: clear spec.finalizers; the namespace goes
    // now, or when its metadata.finalizers are cleared.
    let cleared = namespaces
        .update_with(&ctx, None, name, None, |old: &Value| {
            if meta::uid_of(old) != uid {
                return Err(ApiError::NotFound { qualified: "namespaces".into(), name: name.to_string() });
            }
            let mut new = old.clone();
            new["spec"]["finalizers"] = json!([]);
            meta::metadata_mut(&mut new).remove("resourceVersion");
            Ok(new)
        })
        .await;
    match cleared {
        Ok(_) | Err(ApiError::NotFound { .. }) => Ok(true),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::Deleted;
    use crate::registry::tests::{Cluster, configmap, deployment, eventually, service};

    #[tokio::test]
    async fn the_namespace_controller_empties_and_removes_a_deleted_namespace() {
        let c = Cluster::new().await;
        tokio::spawn(run(c.resources.clone()));
        c.create("", "namespaces", None, json!({"metadata": {"name": "team"}})).await.unwrap();
        c.create("", "configmaps", Some("team"), configmap("cfg")).await.unwrap();
        c.create("apps", "deployments", Some("team"), deployment("web")).await.unwrap();
        c.create("", "services", Some("team"), service("web", None)).await.unwrap();
        c.create("", "configmaps", Some("default"), configmap("elsewhere")).await.unwrap();
        assert_eq!(c.ip_addresses().await.len(), 1);
        assert!(matches!(c.delete("", "namespaces", None, "team").await, Ok(Deleted::Pending(_))));
        eventually("the namespace to go", || async {
            matches!(c.get("", "namespaces", None, "team").await, Err(ApiError::NotFound { .. }))
        })
        .await;
        let in_team = ListOptions {
            filter: Filter { namespace: Some("team".into()), ..Filter::default() },
            ..ListOptions::default()
        };
        for (group, plural) in [("", "configmaps"), ("apps", "deployments"), ("", "services")] {
            let left = c.store(group, plural).list_from_storage(&in_team).await.unwrap();
            assert!(left.items.is_empty(), "{plural} left: {:?}", left.items);
        }
        assert!(c.ip_addresses().await.is_empty(), "the Service's cluster IP is freed");
        assert!(c.get("", "configmaps", Some("default"), "elsewhere").await.is_ok());
        // The name may be used again.
        c.create("", "namespaces", None, json!({"metadata": {"name": "team"}})).await.unwrap();
        c.create("", "configmaps", Some("team"), configmap("cfg")).await.unwrap();
    }
}
