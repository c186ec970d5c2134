//! ServiceAccount (kube's `plugin/pkg/admission/serviceaccount`): a pod is
//! created running as a ServiceAccount that exists — `default` when it
//! names none — gets that account's image pull secrets when it has none,
//! and, unless either of them opts out, a projected volume with a bound
//! token, the cluster CA and its namespace, mounted in every container at
//! kube's path. Mirror pods (made by a kubelet from a file) may reference
//! neither accounts nor secrets. Only creates are changed or checked.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::lookup::Lookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::{ApiError, go_quote};
use crate::runtime::meta;

pub const DEFAULT_ACCOUNT: &str = "default";
/// Where kube mounts the token, CA and namespace.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The prefix of the projected volume's generated name.
const VOLUME_PREFIX: &str = "kube-api-access-";
/// kube's projected token lifetime (one hour and seven seconds, which
/// marks it as a kube-made token).
const TOKEN_SECONDS: i64 = 3607;
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
const ENFORCE_MOUNTABLE: &str = "kubernetes.io/enforce-mountable-secrets";

#[derive(Debug)]
pub struct ServiceAccount {
    accounts: Lookup,
}

impl ServiceAccount {
    pub fn new(accounts: Lookup) -> Self {
        ServiceAccount { accounts }
    }

    /// The account, waiting a little for `default` (its controller makes it
    /// just after the namespace), as kube does: ten tries 100-200 ms apart.
    async fn account(&self, attributes: &Attributes, name: &str) -> Result<Value, ApiError> {
        let namespace = attributes.namespace.as_deref().unwrap_or_default();
        let tries = if name == DEFAULT_ACCOUNT { 10 } else { 1 };
        for attempt in 0..tries {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(100 + u64::from(rand_below(100)))).await;
            }
            let found = if attempt == 0 {
                self.accounts.find(Some(namespace), name).await
            } else {
                self.accounts.get()?.read(Some(namespace), name, false).await
            };
            if let Some(account) =
                found.map_err(|e| lookup_failed(attributes, namespace, name, &e.to_string()))?
            {
                return Ok(account);
            }
        }
        Err(lookup_failed(
            attributes,
            namespace,
            name,
            &format!("serviceaccount {} not found", go_quote(name)),
        ))
    }
}

fn lookup_failed(attributes: &Attributes, namespace: &str, name: &str, why: &str) -> ApiError {
    attributes.forbidden(format!("error looking up service account {namespace}/{name}: {why}"))
}

/// A small random number, from a fresh UUID (no other randomness needed).
fn rand_below(bound: u8) -> u8 {
    uuid::Uuid::new_v4().as_bytes()[0] % bound
}

/// A pod being created (kube also looks at ephemeral containers, which
/// are not served here).
fn created_pod(attributes: &Attributes) -> bool {
    attributes.operation == Operation::Create && attributes.is("", "pods") && attributes.object.is_some()
}

fn is_mirror(pod: &Value) -> bool {
    pod["metadata"]["annotations"].get(MIRROR_ANNOTATION).is_some()
}

#[async_trait]
impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !created_pod(attributes) || attributes.object.as_ref().is_some_and(is_mirror) {
            return self.validate(attributes).await;
        }
        let pod = attributes.object.as_ref().unwrap_or(&Value::Null);
        let name =
            pod["spec"]["serviceAccountName"].as_str().filter(|n| !n.is_empty()).unwrap_or(DEFAULT_ACCOUNT);
        let name = name.to_string();
        let account = self.account(attributes, &name).await?;
        let Some(spec) = attributes.spec_mut() else {
            return Ok(());
        };
        spec["serviceAccountName"] = json!(name);
        // The pod's preference wins, then the account's; kube mounts by default.
        let automount = spec["automountServiceAccountToken"]
            .as_bool()
            .or(account["automountServiceAccountToken"].as_bool())
            .unwrap_or(true);
        if automount {
            mount_token(spec);
        }
        let pull_secrets = account["imagePullSecrets"].as_array().filter(|a| !a.is_empty());
        if spec["imagePullSecrets"].as_array().is_none_or(Vec::is_empty)
            && let Some(secrets) = pull_secrets
        {
            spec["imagePullSecrets"] = secrets.iter().map(|s| json!({"name": s["name"]})).collect();
        }
        self.validate(attributes).await
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if !created_pod(attributes) {
            return Ok(());
        }
        let pod = attributes.object.as_ref().unwrap_or(&Value::Null);
        if is_mirror(pod) {
            return check_mirror(attributes, pod);
        }
        let Some(name) = pod["spec"]["serviceAccountName"].as_str().filter(|n| !n.is_empty()) else {
            let namespace = attributes.namespace.as_deref().unwrap_or_default();
            return Err(attributes.forbidden(format!(
                "no service account specified for pod {namespace}/{}",
                meta::name_of(pod)
            )));
        };
        let account = self.account(attributes, name).await?;
        let enforce =
            account["metadata"]["annotations"][ENFORCE_MOUNTABLE].as_str().is_some_and(parse_go_bool);
        if enforce && let Err(why) = mountable_only(&account, pod) {
            return Err(attributes.forbidden(why));
        }
        Ok(())
    }
}

/// Go's `strconv.ParseBool` truth values.
fn parse_go_bool(text: &str) -> bool {
    matches!(text, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// Adds the token volume (unless one is there) and mounts it in every init
/// and regular container that has nothing at kube's path.
fn mount_token(spec: &mut Value) {
    let existing = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let volume = existing.clone().unwrap_or_else(|| meta::generate_name(VOLUME_PREFIX));
    let mount = json!({"name": volume, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        for container in spec.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
            let mounts = container["volumeMounts"].as_array();
            if mounts.into_iter().flatten().any(|m| m["mountPath"] == TOKEN_MOUNT_PATH)
                || !container.is_object()
            {
                continue;
            }
            let mut mounts = mounts.cloned().unwrap_or_default();
            mounts.push(mount.clone());
            container["volumeMounts"] = Value::Array(mounts);
            mounted = true;
        }
    }
    if existing.is_none() && mounted {
        let mut volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
        volumes.push(token_volume(&volume));
        spec["volumes"] = Value::Array(volumes);
    }
}

/// kube's projected volume: a bound token, the cluster CA from the
/// `kube-root-ca.crt` ConfigMap, and the pod's namespace.
fn token_volume(name: &str) -> Value {
    json!({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}})
}

/// Mirror pods run outside the API's control: no accounts, secrets or
/// token projections.
fn check_mirror(attributes: &Attributes, pod: &Value) -> Result<(), ApiError> {
    let spec = &pod["spec"];
    if spec["serviceAccountName"].as_str().is_some_and(|n| !n.is_empty()) {
        return Err(attributes.forbidden("a mirror pod may not reference service accounts"));
    }
    if !secret_names(spec).is_empty() {
        return Err(attributes.forbidden("a mirror pod may not reference secrets"));
    }
    let projections = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|v| v["projected"]["sources"].as_array().into_iter().flatten());
    if projections.clone().any(|source| source.get("serviceAccountToken").is_some()) {
        return Err(attributes.forbidden("a mirror pod may not use ServiceAccountToken volume projections"));
    }
    Ok(())
}

/// Every secret a pod spec names: volumes (secret, projected, CSI), env and
/// envFrom of every container, image pull secrets.
fn secret_names(spec: &Value) -> Vec<String> {
    let mut names = Vec::new();
    let mut add = |v: &Value| {
        if let Some(name) = v.as_str().filter(|n| !n.is_empty()) {
            names.push(name.to_string());
        }
    };
    for volume in spec["volumes"].as_array().into_iter().flatten() {
        add(&volume["secret"]["secretName"]);
        add(&volume["csi"]["nodePublishSecretRef"]["name"]);
        for source in volume["projected"]["sources"].as_array().into_iter().flatten() {
            add(&source["secret"]["name"]);
        }
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in spec[list].as_array().into_iter().flatten() {
            for env in container["env"].as_array().into_iter().flatten() {
                add(&env["valueFrom"]["secretKeyRef"]["name"]);
            }
            for from in container["envFrom"].as_array().into_iter().flatten() {
                add(&from["secretRef"]["name"]);
            }
        }
    }
    for secret in spec["imagePullSecrets"].as_array().into_iter().flatten() {
        add(&secret["name"]);
    }
    names
}

/// With `kubernetes.io/enforce-mountable-secrets: "true"` on the account, a
/// pod may use only the secrets the account lists (kube's texts).
fn mountable_only(account: &Value, pod: &Value) -> Result<(), String> {
    let listed = |field: &str| -> Vec<&str> {
        account[field].as_array().into_iter().flatten().filter_map(|s| s["name"].as_str()).collect()
    };
    let (mountable, pullable) = (listed("secrets"), listed("imagePullSecrets"));
    let account_name = meta::name_of(account);
    let spec = &pod["spec"];
    for volume in spec["volumes"].as_array().into_iter().flatten() {
        if let Some(secret) = volume["secret"]["secretName"].as_str()
            && !mountable.contains(&secret)
        {
            return Err(format!(
                "volume with secret.secretName=\"{secret}\" is not allowed because service account {account_name} does not reference that secret"
            ));
        }
    }
    for (list, what) in [("initContainers", "init container"), ("containers", "container")] {
        for container in spec[list].as_array().into_iter().flatten() {
            let container_name = container["name"].as_str().unwrap_or_default();
            for env in container["env"].as_array().into_iter().flatten() {
                if let Some(secret) = env["valueFrom"]["secretKeyRef"]["name"].as_str()
                    && !mountable.contains(&secret)
                {
                    let env_name = env["name"].as_str().unwrap_or_default();
                    return Err(format!(
                        "{what} {container_name} with envVar {env_name} referencing secret.secretName=\"{secret}\" is not allowed because service account {account_name} does not reference that secret"
                    ));
                }
            }
            for from in container["envFrom"].as_array().into_iter().flatten() {
                if let Some(secret) = from["secretRef"]["name"].as_str()
                    && !mountable.contains(&secret)
                {
                    return Err(format!(
                        "{what} {container_name} with envFrom referencing secret.secretName=\"{secret}\" is not allowed because service account {account_name} does not reference that secret"
                    ));
                }
            }
        }
    }
    for (i, secret) in spec["imagePullSecrets"].as_array().into_iter().flatten().enumerate() {
        let name = secret["name"].as_str().unwrap_or_default();
        if !pullable.contains(&name) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{name}\" is not allowed because service account {account_name} does not reference that imagePullSecret"
            ));
        }
    }
    Ok(())
}
