//! kube-controller-manager's ServiceAccount controller: every namespace
//! that is not being deleted has a `default` ServiceAccount, made when the
//! namespace appears and made again if it is deleted. Pods need it: the
//! ServiceAccount admission plugin runs pods as `default` when they name no
//! account.

use std::time::Duration;

use serde_json::json;

use crate::admission::service_account::DEFAULT_ACCOUNT;
use crate::cacher::{Delivery, EventType, ReadAt};
use crate::errors::ApiError;
use crate::registry::{Resources, WriteContext};
use crate::runtime::meta;

const RETRY: Duration = Duration::from_secs(1);

/// Follows namespaces and ServiceAccounts for ever.
pub async fn run(resources: Resources) {
    loop {
        if let Err(e) = follow(&resources).await {
            tracing::warn!(error = %e, "serviceaccount controller's watches failed; retrying");
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn follow(resources: &Resources) -> Result<(), ApiError> {
    let mut namespaces = resources.store("", "namespaces")?.follow().await?;
    let mut accounts = resources.store("", "serviceaccounts")?.follow().await?;
    for delivery in std::mem::take(&mut namespaces.initial) {
        if let Some(namespace) = live_namespace(&delivery) {
            ensure_default(resources, &namespace).await;
        }
    }
    loop {
        tokio::select! {
            delivery = namespaces.live.recv() => {
                let Some(delivery) = delivery else { return Ok(()) };
                if let Some(namespace) = live_namespace(&delivery) {
                    ensure_default(resources, &namespace).await;
                }
            }
            delivery = accounts.live.recv() => {
                let Some(delivery) = delivery else { return Ok(()) };
                if let Delivery::Event { kind: EventType::Deleted, object, .. } = &delivery
                    && meta::name_of(&object.value()) == DEFAULT_ACCOUNT
                    && let Some(namespace) = object.namespace()
                {
                    ensure_default(resources, namespace).await;
                }
            }
        }
    }
}

/// The namespace an event is about, when it exists and is not being deleted.
fn live_namespace(delivery: &Delivery) -> Option<String> {
    let Delivery::Event { kind, object, .. } = delivery else { return None };
    let namespace = &object.value();
    (*kind != EventType::Deleted && !meta::is_being_deleted(namespace))
        .then(|| meta::name_of(namespace).to_string())
}

/// Creates `default` in `namespace` when it is missing and the namespace is
/// live (read from storage: a namespace deleted meanwhile gets nothing).
async fn ensure_default(resources: &Resources, namespace: &str) {
    if let Err(e) = try_ensure_default(resources, namespace).await {
        tracing::warn!(namespace, error = %e, "cannot make the default serviceaccount");
    }
}

async fn try_ensure_default(resources: &Resources, namespace: &str) -> Result<(), ApiError> {
    let accounts = resources.store("", "serviceaccounts")?;
    match accounts.get(Some(namespace), DEFAULT_ACCOUNT, &ReadAt::default()).await {
        Err(ApiError::NotFound { .. }) => {}
        other => return other.map(drop),
    }
    let live = resources.store("", "namespaces")?.get(None, namespace, &ReadAt::default()).await;
    match live {
        Ok(ns) if !meta::is_being_deleted(&ns) => {}
        Ok(_) | Err(ApiError::NotFound { .. }) => return Ok(()),
        Err(e) => return Err(e),
    }
    let body = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT_ACCOUNT}});
    let (account, _) = accounts.decode(body, crate::runtime::FieldValidation::Strict)?;
    match accounts.create(&WriteContext::server(), Some(namespace), account).await {
        Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
        // The namespace began terminating meanwhile.
        Err(ApiError::ForbiddenFor { .. }) | Err(ApiError::NotFound { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::admission::service_account::TOKEN_MOUNT_PATH;
    use crate::registry::tests::{Cluster, eventually};

    async fn cluster_with_team() -> Cluster {
        let c = Cluster::new().await;
        tokio::spawn(run(c.resources.clone()));
        c.create("", "namespaces", None, json!({"metadata": {"name": "team"}})).await.unwrap();
        eventually("team's default serviceaccount", || async {
            c.get("", "serviceaccounts", Some("team"), "default").await.is_ok()
        })
        .await;
        c
    }

    fn pod(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    }

    fn container(name: &str) -> Value {
        json!({"name": name, "image": "busybox"})
    }

    #[tokio::test]
    async fn every_namespace_keeps_a_default_serviceaccount() {
        let c = cluster_with_team().await;
        eventually("default's too", || async {
            c.get("", "serviceaccounts", Some("default"), "default").await.is_ok()
        })
        .await;
        let first = c.get("", "serviceaccounts", Some("team"), "default").await.unwrap();
        c.delete("", "serviceaccounts", Some("team"), "default").await.unwrap();
        eventually("it to be made again", || async {
            c.get("", "serviceaccounts", Some("team"), "default")
                .await
                .is_ok_and(|again| meta::uid_of(&again) != meta::uid_of(&first))
        })
        .await;
    }

    #[tokio::test]
    async fn pods_run_as_an_existing_account_with_its_token_mounted() {
        let c = cluster_with_team().await;
        let mut own = container("own");
        own["volumeMounts"] = json!([{"name": "mine", "mountPath": TOKEN_MOUNT_PATH}]);
        let spec = json!({
            "initContainers": [container("init")],
            "containers": [container("app"), own],
            "volumes": [{"name": "mine", "emptyDir": {}}],
        });
        let created = c.create("", "pods", Some("team"), pod("web", spec)).await.unwrap();
        let spec = &created["spec"];
        assert_eq!(spec["serviceAccountName"], "default");
        let volume = spec["volumes"][1].clone();
        let name = volume["name"].as_str().unwrap();
        assert!(name.starts_with("kube-api-access-") && name.len() == "kube-api-access-".len() + 5, "{name}");
        assert_eq!(
            volume["projected"]["sources"],
            json!([
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ])
        );
        assert_eq!(volume["projected"]["defaultMode"], 420);
        let mount = json!({"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
        assert_eq!(spec["initContainers"][0]["volumeMounts"], json!([mount.clone()]));
        assert_eq!(spec["containers"][0]["volumeMounts"], json!([mount]));
        assert_eq!(
            spec["containers"][1]["volumeMounts"].as_array().unwrap().len(),
            1,
            "its own mount is kept"
        );

        // Opting out: the pod's word wins over the account's.
        let quiet = json!({"containers": [container("app")], "automountServiceAccountToken": false});
        let created = c.create("", "pods", Some("team"), pod("quiet", quiet)).await.unwrap();
        assert!(created["spec"].get("volumes").is_none(), "{created}");
        let account = json!({"metadata": {"name": "robot"}, "automountServiceAccountToken": false,
            "imagePullSecrets": [{"name": "registry"}]});
        c.create("", "serviceaccounts", Some("team"), account).await.unwrap();
        let robot = json!({"serviceAccountName": "robot", "containers": [container("app")]});
        let created = c.create("", "pods", Some("team"), pod("robot", robot)).await.unwrap();
        assert!(created["spec"].get("volumes").is_none(), "{created}");
        assert_eq!(created["spec"]["imagePullSecrets"], json!([{"name": "registry"}]));
        let insists = json!({"serviceAccountName": "robot", "automountServiceAccountToken": true,
            "containers": [container("app")]});
        let created = c.create("", "pods", Some("team"), pod("insists", insists)).await.unwrap();
        assert_eq!(created["spec"]["volumes"].as_array().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn missing_accounts_unlisted_secrets_and_mirror_pods_are_refused_with_kubes_texts() {
        let c = cluster_with_team().await;
        let missing = json!({"serviceAccountName": "ghost", "containers": [container("app")]});
        let err = c.create("", "pods", Some("team"), pod("p", missing)).await.unwrap_err();
        assert_eq!(
            (err.code(), err.to_string()),
            (
                403,
                "pods \"p\" is forbidden: error looking up service account team/ghost: serviceaccount \"ghost\" not found"
                    .to_string()
            )
        );

        let strict = json!({"metadata": {"name": "strict", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
            "secrets": [{"name": "allowed"}]});
        c.create("", "serviceaccounts", Some("team"), strict).await.unwrap();
        let volumes = |secret: &str| {
            json!({"serviceAccountName": "strict", "automountServiceAccountToken": false,
                "containers": [container("app")], "volumes": [{"name": "s", "secret": {"secretName": secret}}]})
        };
        c.create("", "pods", Some("team"), pod("fine", volumes("allowed"))).await.unwrap();
        let err = c.create("", "pods", Some("team"), pod("nosy", volumes("other"))).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "pods \"nosy\" is forbidden: volume with secret.secretName=\"other\" is not allowed because service account strict does not reference that secret"
        );

        let mut mirror =
            pod("static", json!({"serviceAccountName": "default", "containers": [container("app")]}));
        mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
        let err = c.create("", "pods", Some("team"), mirror).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "pods \"static\" is forbidden: a mirror pod may not reference service accounts"
        );
    }
}
