//! kube-controller-manager's pvc-protection, pv-protection and vac-protection controllers. The
//! StorageObjectInUseProtection admission plugin puts a finalizer on every new
//! PersistentVolumeClaim, PersistentVolume and VolumeAttributesClass, so deleting one only marks
//! it; these controllers take the finalizer off (and the object goes) once nothing uses it:
//! * a claim, once no pod scheduled to a node mounts it (a pod whose deletion is final, forced
//!   or confirmed by its kubelet, no longer holds the ephemeral claim made for it);
//! * a volume, once it is not `Bound`;
//! * a class, once no volume or claim names it.
//!
//! As kube's, they also give the finalizer to objects not being deleted that lack it (made
//! before the plugin was on). What is being deleted is kept in memory, so pod churn costs a
//! lookup, not a list, when no claim in its namespace waits.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use serde_json::{Value, json};

use crate::admission::storage_protection::{CLAIM_FINALIZER, CLASS_FINALIZER, VOLUME_FINALIZER};
use crate::cacher::{Delivery, EventType, Filter, ListOptions};
use crate::errors::ApiError;
use crate::registry::{Resources, Store, WriteContext};
use crate::runtime::meta;

const RETRY: Duration = Duration::from_secs(1);

/// A kind these controllers protect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Claim,
    Volume,
    Class,
}

impl Kind {
    fn store(self, resources: &Resources) -> Result<Store, ApiError> {
        match self {
            Kind::Claim => resources.store("", "persistentvolumeclaims"),
            Kind::Volume => resources.store("", "persistentvolumes"),
            Kind::Class => resources.store("storage.k8s.io", "volumeattributesclasses"),
        }
    }

    fn finalizer(self) -> &'static str {
        match self {
            Kind::Claim => CLAIM_FINALIZER,
            Kind::Volume => VOLUME_FINALIZER,
            Kind::Class => CLASS_FINALIZER,
        }
    }
}

/// Follows claims, volumes, classes and pods for ever.
pub async fn run(resources: Resources) {
    loop {
        let mut protection = Protection {
            resources: resources.clone(),
            held_claims: HashMap::new(),
            held_classes: BTreeSet::new(),
        };
        if let Err(e) = protection.follow().await {
            tracing::warn!(error = %e, "storage protection controllers' watches failed; retrying");
        }
        tokio::time::sleep(RETRY).await;
    }
}

struct Protection {
    resources: Resources,
    /// Claims being deleted and still held, by namespace.
    held_claims: HashMap<String, BTreeSet<String>>,
    /// Classes being deleted and still held.
    held_classes: BTreeSet<String>,
}

impl Protection {
    async fn follow(&mut self) -> Result<(), ApiError> {
        let mut claims = Kind::Claim.store(&self.resources)?.follow().await?;
        let mut volumes = Kind::Volume.store(&self.resources)?.follow().await?;
        let mut classes = Kind::Class.store(&self.resources)?.follow().await?;
        let mut pods = self.resources.store("", "pods")?.follow().await?;
        for (kind, watch) in
            [(Kind::Claim, &mut claims), (Kind::Volume, &mut volumes), (Kind::Class, &mut classes)]
        {
            for delivery in std::mem::take(&mut watch.initial) {
                self.observe(kind, &delivery).await;
            }
        }
        loop {
            tokio::select! {
                delivery = claims.live.recv() => {
                    self.observe(Kind::Claim, &delivery.ok_or_else(ended)?).await;
                    self.recheck_classes().await;
                }
                delivery = volumes.live.recv() => {
                    self.observe(Kind::Volume, &delivery.ok_or_else(ended)?).await;
                    self.recheck_classes().await;
                }
                delivery = classes.live.recv() => self.observe(Kind::Class, &delivery.ok_or_else(ended)?).await,
                delivery = pods.live.recv() => {
                    if let Delivery::Event { object, .. } = delivery.ok_or_else(ended)? {
                        self.recheck_claims(object.namespace().unwrap_or_default()).await;
                    }
                }
            }
        }
    }

    /// One event of a protected kind: the object's finalizer added, or taken off when it is
    /// being deleted and unused.
    async fn observe(&mut self, kind: Kind, delivery: &Delivery) {
        let Delivery::Event { kind: event, object, .. } = delivery else { return };
        let object = &object.value();
        let held = *event != EventType::Deleted && self.settle(kind, object).await;
        self.mark(kind, meta::namespace_of(object), meta::name_of(object), held);
    }

    /// Keeps in memory whether the object is still held (looked at again when what may use it
    /// changes).
    fn mark(&mut self, kind: Kind, namespace: Option<&str>, name: &str, held: bool) {
        match kind {
            Kind::Claim => {
                let namespace = namespace.unwrap_or_default();
                let names = self.held_claims.entry(namespace.to_string()).or_default();
                if held {
                    names.insert(name.to_string());
                } else {
                    names.remove(name);
                    if names.is_empty() {
                        self.held_claims.remove(namespace);
                    }
                }
            }
            Kind::Class if held => {
                self.held_classes.insert(name.to_string());
            }
            Kind::Class => {
                self.held_classes.remove(name);
            }
            Kind::Volume => {}
        }
    }

    /// Adds or removes `kind`'s finalizer on `object` as it needs; whether the object is being
    /// deleted and still held by it.
    async fn settle(&self, kind: Kind, object: &Value) -> bool {
        let finalizer = kind.finalizer();
        let has = meta::finalizers(object).contains(&finalizer);
        let outcome = match (meta::is_being_deleted(object), has) {
            (false, false) => self.change_finalizer(kind, object, true).await.map(|()| false),
            (true, true) => match self.in_use(kind, object).await {
                Ok(true) => Ok(true),
                Ok(false) => self.change_finalizer(kind, object, false).await.map(|()| false),
                Err(e) => Err(e),
            },
            _ => Ok(false),
        };
        outcome.unwrap_or_else(|e| {
            tracing::warn!(object = meta::name_of(object), error = %e, "storage protection could not settle");
            // Looked at again on the next event that touches it.
            true
        })
    }

    async fn in_use(&self, kind: Kind, object: &Value) -> Result<bool, ApiError> {
        match kind {
            Kind::Claim => self.claim_in_use(object).await,
            Kind::Volume => Ok(object["status"]["phase"] == "Bound"),
            Kind::Class => self.class_in_use(meta::name_of(object)).await,
        }
    }

    /// kube's podUsesPVCForDeletion over the claim's namespace, read from storage (a pod
    /// created a moment ago counts).
    async fn claim_in_use(&self, claim: &Value) -> Result<bool, ApiError> {
        let namespace = meta::namespace_of(claim).unwrap_or_default();
        let pods = list(&self.resources.store("", "pods")?, Some(namespace)).await?;
        Ok(pods.iter().any(|pod| pod_uses_claim(pod, claim)))
    }

    async fn class_in_use(&self, class: &str) -> Result<bool, ApiError> {
        let volumes = list(&Kind::Volume.store(&self.resources)?, None).await?;
        if volumes.iter().any(|v| v["spec"]["volumeAttributesClassName"] == class) {
            return Ok(true);
        }
        let claims = list(&Kind::Claim.store(&self.resources)?, None).await?;
        Ok(claims.iter().any(|c| {
            c["spec"]["volumeAttributesClassName"] == class
                || c["status"]["currentVolumeAttributesClassName"] == class
                || c["status"]["modifyVolumeStatus"]["targetVolumeAttributesClassName"] == class
        }))
    }

    /// After a pod changed in `namespace`: the claims there still held, looked at again.
    async fn recheck_claims(&mut self, namespace: &str) {
        let Some(names) = self.held_claims.get(namespace).cloned() else { return };
        for name in names {
            self.recheck(Kind::Claim, Some(namespace), &name).await;
        }
    }

    /// After a volume or claim changed: the classes still held, looked at again.
    async fn recheck_classes(&mut self) {
        for name in self.held_classes.clone() {
            self.recheck(Kind::Class, None, &name).await;
        }
    }

    async fn recheck(&mut self, kind: Kind, namespace: Option<&str>, name: &str) {
        let current = match kind.store(&self.resources) {
            Ok(store) => store.get(namespace, name, &Default::default()).await,
            Err(e) => Err(e),
        };
        let held = match current {
            Ok(object) => self.settle(kind, &object).await,
            Err(_) => false,
        };
        self.mark(kind, namespace, name, held);
    }

    /// Adds (`add`) or removes the kind's finalizer, as an update of the same object; an object
    /// being deleted goes with its last finalizer.
    async fn change_finalizer(&self, kind: Kind, object: &Value, add: bool) -> Result<(), ApiError> {
        let store = kind.store(&self.resources)?;
        let (uid, finalizer) = (meta::uid_of(object).to_string(), kind.finalizer());
        let changed = store
            .update_with(
                &WriteContext::server(),
                meta::namespace_of(object),
                meta::name_of(object),
                None,
                |old| {
                    if meta::uid_of(old) != uid {
                        // Made again under the same name: not this object.
                        let qualified = store.resource().qualified_name();
                        return Err(ApiError::NotFound { qualified, name: meta::name_of(old).to_string() });
                    }
                    let mut new = old.clone();
                    let metadata = meta::metadata_mut(&mut new);
                    let mut finalizers: Vec<Value> =
                        metadata.get("finalizers").and_then(Value::as_array).cloned().unwrap_or_default();
                    finalizers.retain(|f| f != finalizer);
                    if add {
                        finalizers.push(json!(finalizer));
                    }
                    metadata.insert("finalizers".into(), Value::Array(finalizers));
                    metadata.remove("resourceVersion");
                    Ok(new)
                },
            )
            .await;
        match changed {
            Ok(_) | Err(ApiError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// kube's podUsesPVCForDeletion: only a pod scheduled to a node holds a claim (the kubelet
/// will not start one whose claim is being deleted); its ephemeral claim (`<pod>-<volume>`,
/// controlled by the pod) not once the pod's deletion is final.
fn pod_uses_claim(pod: &Value, claim: &Value) -> bool {
    if pod["spec"]["nodeName"].as_str().unwrap_or_default().is_empty() {
        return false;
    }
    let claim_name = meta::name_of(claim);
    let pod_name = meta::name_of(pod);
    pod["spec"]["volumes"].as_array().into_iter().flatten().any(|volume| {
        let named = volume["persistentVolumeClaim"]["claimName"] == claim_name;
        let ephemeral = volume.get("ephemeral").is_some_and(|e| !e.is_null())
            && format!("{pod_name}-{}", volume["name"].as_str().unwrap_or_default()) == claim_name
            && controlled_by(claim, meta::uid_of(pod));
        named || (ephemeral && !is_shut_down(pod))
    })
}

/// A pod whose deletion is final: marked with a zero grace period (forced, or confirmed by its
/// kubelet).
fn is_shut_down(pod: &Value) -> bool {
    meta::is_being_deleted(pod) && meta::deletion_grace_period(pod) == Some(0)
}

fn controlled_by(object: &Value, uid: &str) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|owner| owner["controller"] == true && owner["uid"] == uid)
}

/// Every object (in `namespace`, if given), from storage.
async fn list(store: &Store, namespace: Option<&str>) -> Result<Vec<Value>, ApiError> {
    let options = ListOptions {
        filter: Filter { namespace: namespace.map(str::to_string), ..Filter::default() },
        ..ListOptions::default()
    };
    Ok(store.list_from_storage(&options).await?.items)
}

fn ended() -> ApiError {
    ApiError::Internal("a watch ended".into())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::registry::DeleteOptions;
    use crate::registry::tests::{Cluster, ctx, eventually};

    const STORAGE: &str = "storage.k8s.io";

    async fn cluster() -> Cluster {
        let c = Cluster::new().await;
        tokio::spawn(run(c.resources.clone()));
        // Pods run as `default`, which the ServiceAccount plugin wants to exist.
        c.create("", "serviceaccounts", Some("default"), json!({"metadata": {"name": "default"}}))
            .await
            .unwrap();
        c
    }

    fn claim(name: &str, class: Option<&str>) -> Value {
        json!({"metadata": {"name": name}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "volumeAttributesClassName": class}})
    }

    fn pod(name: &str, node: &str, claim: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}})
    }

    async fn gone(c: &Cluster, group: &str, plural: &str, namespace: Option<&str>, name: &str) {
        eventually(&format!("{plural}/{name} to go"), || async {
            matches!(c.get(group, plural, namespace, name).await, Err(ApiError::NotFound { .. }))
        })
        .await;
    }

    /// Still there after the controller has had a moment, marked as being deleted.
    async fn kept(c: &Cluster, group: &str, plural: &str, namespace: Option<&str>, name: &str) -> Value {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let object = c.get(group, plural, namespace, name).await.unwrap();
        assert!(meta::is_being_deleted(&object), "{object}");
        object
    }

    #[tokio::test]
    async fn a_claim_mounted_by_a_scheduled_pod_waits_for_the_pod() {
        let c = cluster().await;
        let created =
            c.create("", "persistentvolumeclaims", Some("default"), claim("data", None)).await.unwrap();
        assert_eq!(meta::finalizers(&created), vec![CLAIM_FINALIZER]);
        c.create("", "pods", Some("default"), pod("web", "node-1", "data")).await.unwrap();
        // A pod not scheduled yet holds nothing.
        c.create("", "pods", Some("default"), pod("pending", "", "data")).await.unwrap();

        c.delete("", "persistentvolumeclaims", Some("default"), "data").await.unwrap();
        let held = kept(&c, "", "persistentvolumeclaims", Some("default"), "data").await;
        assert_eq!(meta::finalizers(&held), vec![CLAIM_FINALIZER]);

        let now = DeleteOptions { grace_period_seconds: Some(0), ..DeleteOptions::default() };
        c.store("", "pods").delete(&ctx(), Some("default"), "web", &now).await.unwrap();
        gone(&c, "", "persistentvolumeclaims", Some("default"), "data").await;
    }

    #[tokio::test]
    async fn a_bound_volume_waits_until_it_is_released() {
        let c = cluster().await;
        let volume = json!({"metadata": {"name": "pv1"}, "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"}}});
        let created = c.create("", "persistentvolumes", None, volume).await.unwrap();
        assert_eq!(meta::finalizers(&created), vec![VOLUME_FINALIZER]);
        let set_phase = |phase: &'static str| {
            let store = c.store("", "persistentvolumes");
            async move {
                store
                    .guaranteed_update(None, "pv1", false, |old| {
                        let mut new = old.clone();
                        new["status"] = json!({"phase": phase});
                        Ok(new)
                    })
                    .await
                    .unwrap();
            }
        };
        set_phase("Bound").await;
        c.delete("", "persistentvolumes", None, "pv1").await.unwrap();
        kept(&c, "", "persistentvolumes", None, "pv1").await;
        set_phase("Released").await;
        gone(&c, "", "persistentvolumes", None, "pv1").await;
    }

    #[tokio::test]
    async fn a_class_named_by_a_claim_waits_for_the_claim() {
        let c = cluster().await;
        let class = json!({"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "3000"}});
        let created = c.create(STORAGE, "volumeattributesclasses", None, class).await.unwrap();
        assert_eq!(meta::finalizers(&created), vec![CLASS_FINALIZER]);
        c.create("", "persistentvolumeclaims", Some("default"), claim("fast", Some("gold"))).await.unwrap();
        c.delete(STORAGE, "volumeattributesclasses", None, "gold").await.unwrap();
        kept(&c, STORAGE, "volumeattributesclasses", None, "gold").await;
        // Unused, the claim goes at once; then the class.
        c.delete("", "persistentvolumeclaims", Some("default"), "fast").await.unwrap();
        gone(&c, "", "persistentvolumeclaims", Some("default"), "fast").await;
        gone(&c, STORAGE, "volumeattributesclasses", None, "gold").await;
    }

    #[test]
    fn only_a_scheduled_pod_holds_a_claim_and_a_final_deletion_frees_its_ephemeral_one() {
        let named = pod("web", "node-1", "data");
        assert!(pod_uses_claim(&named, &json!({"metadata": {"name": "data"}})));
        assert!(!pod_uses_claim(&pod("web", "", "data"), &json!({"metadata": {"name": "data"}})));
        let mut ephemeral = json!({"metadata": {"name": "web", "uid": "u1"}, "spec": {
            "nodeName": "node-1", "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]}});
        let owned = json!({"metadata": {"name": "web-scratch",
            "ownerReferences": [{"uid": "u1", "controller": true}]}});
        let stranger = json!({"metadata": {"name": "web-scratch"}});
        assert!(pod_uses_claim(&ephemeral, &owned));
        assert!(!pod_uses_claim(&ephemeral, &stranger), "not made for this pod");
        ephemeral["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        ephemeral["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        assert!(!pod_uses_claim(&ephemeral, &owned));
    }
}
