//! The roles and bindings every cluster starts with (kube's bootstrap
//! policy), created at startup and reconciled on every start: missing rules
//! and subjects are added, nothing is removed, and an object annotated
//! `rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone.

use std::time::Duration;

use serde_json::{Value, json};

use super::index::{GROUP, RbacIndex};
use super::{components, controllers};
use crate::cacher::ReadAt;
use crate::errors::ApiError;
use crate::registry::{Resources, WriteContext};

const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

pub(super) fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": groups, "resources": resources})
}

/// A rule for the objects named `names` only.
pub(super) fn named_rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> Value {
    let mut rule = rule(verbs, groups, resources);
    rule["resourceNames"] = json!(names);
    rule
}

fn urls(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"verbs": verbs, "nonResourceURLs": urls})
}

pub(super) fn role(name: &str, labels: Value, rules: Vec<Value>) -> Value {
    let mut labels = labels;
    labels["kubernetes.io/bootstrapping"] = json!("rbac-defaults");
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels, "annotations": {AUTOUPDATE: "true"}},
        "rules": rules,
    })
}

fn aggregated(name: &str, labels: Value, selector: &str) -> Value {
    let mut role = role(name, labels, Vec::new());
    role["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {selector: "true"}}]});
    role
}

pub(super) fn binding(name: &str, role: &str, subjects: &[(&str, &str)]) -> Value {
    let subjects: Vec<Value> =
        subjects.iter().map(|(kind, name)| json!({"kind": kind, "apiGroup": GROUP, "name": name})).collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {AUTOUPDATE: "true"},
        },
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

/// Every ClusterRole the API server makes: the bootstrap ones, its components' and
/// kube-controller-manager's controllers'.
fn every_cluster_role() -> impl Iterator<Item = Value> {
    cluster_roles().into_iter().chain(components::cluster_roles()).chain(controllers::cluster_roles())
}

/// The bindings of [`every_cluster_role`]'s roles.
fn every_cluster_role_binding() -> impl Iterator<Item = Value> {
    cluster_role_bindings()
        .into_iter()
        .chain(components::cluster_role_bindings())
        .chain(controllers::cluster_role_bindings())
}

/// The bootstrap ClusterRoles.
pub fn cluster_roles() -> Vec<Value> {
    let rw: Vec<&str> = READ.iter().chain(WRITE).copied().collect();
    let health = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    vec![
        role("cluster-admin", json!({}), vec![rule(&["*"], &["*"], &["*"]), urls(&["*"], &["*"])]),
        role(
            "system:discovery",
            json!({}),
            vec![urls(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        role("system:public-info-viewer", json!({}), vec![urls(&["get"], &health)]),
        role(
            "system:monitoring",
            json!({}),
            vec![urls(
                &["get"],
                &[
                    "/healthz",
                    "/healthz/*",
                    "/livez",
                    "/livez/*",
                    "/metrics",
                    "/metrics/slis",
                    "/readyz",
                    "/readyz/*",
                ],
            )],
        ),
        role(
            "system:basic-user",
            json!({}),
            vec![
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(&["create"], &["authentication.k8s.io"], &["selfsubjectreviews"]),
            ],
        ),
        role(
            "system:auth-delegator",
            json!({}),
            vec![
                rule(&["create"], &["authentication.k8s.io"], &["tokenreviews"]),
                rule(&["create"], &["authorization.k8s.io"], &["subjectaccessreviews"]),
            ],
        ),
        role(
            "system:service-account-issuer-discovery",
            json!({}),
            vec![urls(
                &["get"],
                &[
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
            )],
        ),
        aggregated("admin", json!({}), "rbac.authorization.k8s.io/aggregate-to-admin"),
        aggregated(
            "edit",
            json!({"rbac.authorization.k8s.io/aggregate-to-admin": "true"}),
            "rbac.authorization.k8s.io/aggregate-to-edit",
        ),
        aggregated(
            "view",
            json!({"rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
            "rbac.authorization.k8s.io/aggregate-to-view",
        ),
        role(
            "system:aggregate-to-admin",
            json!({"rbac.authorization.k8s.io/aggregate-to-admin": "true"}),
            vec![
                rule(&["create"], &["authorization.k8s.io"], &["localsubjectaccessreviews"]),
                rule(&rw, &["rbac.authorization.k8s.io"], &["rolebindings", "roles"]),
            ],
        ),
        role(
            "system:aggregate-to-edit",
            json!({"rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
            vec![
                rule(
                    READ,
                    &[""],
                    &[
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy",
                        "secrets",
                        "services/proxy",
                    ],
                ),
                rule(&["impersonate"], &[""], &["serviceaccounts"]),
                rule(WRITE, &[""], &["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]),
                rule(&["create"], &[""], &["pods/eviction"]),
                rule(
                    WRITE,
                    &[""],
                    &[
                        "configmaps",
                        "events",
                        "persistentvolumeclaims",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "secrets",
                        "serviceaccounts",
                        "services",
                        "services/proxy",
                    ],
                ),
                rule(&["create"], &[""], &["serviceaccounts/token"]),
                rule(
                    WRITE,
                    &["apps"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/rollback",
                        "deployments/scale",
                        "replicasets",
                        "replicasets/scale",
                        "statefulsets",
                        "statefulsets/scale",
                    ],
                ),
                rule(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
                rule(WRITE, &["batch"], &["cronjobs", "jobs"]),
                // The old extensions group, which kube's policy still names.
                rule(
                    WRITE,
                    &["extensions"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/rollback",
                        "deployments/scale",
                        "ingresses",
                        "networkpolicies",
                        "replicasets",
                        "replicasets/scale",
                        "replicationcontrollers/scale",
                    ],
                ),
                rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
                rule(WRITE, &["networking.k8s.io"], &["ingresses", "networkpolicies"]),
                rule(&rw, &["coordination.k8s.io"], &["leases"]),
            ],
        ),
        role(
            "system:aggregate-to-view",
            json!({"rbac.authorization.k8s.io/aggregate-to-view": "true"}),
            vec![
                rule(
                    READ,
                    &[""],
                    &[
                        "configmaps",
                        "endpoints",
                        "persistentvolumeclaims",
                        "persistentvolumeclaims/status",
                        "pods",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/status",
                    ],
                ),
                rule(
                    READ,
                    &[""],
                    &[
                        "bindings",
                        "events",
                        "limitranges",
                        "namespaces/status",
                        "pods/log",
                        "pods/status",
                        "replicationcontrollers/status",
                        "resourcequotas",
                        "resourcequotas/status",
                    ],
                ),
                rule(READ, &[""], &["namespaces"]),
                rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
                rule(
                    READ,
                    &["apps"],
                    &[
                        "controllerrevisions",
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "statefulsets",
                        "statefulsets/scale",
                        "statefulsets/status",
                    ],
                ),
                rule(
                    READ,
                    &["autoscaling"],
                    &["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
                ),
                rule(READ, &["batch"], &["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
                rule(
                    READ,
                    &["extensions"],
                    &[
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "ingresses",
                        "ingresses/status",
                        "networkpolicies",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "replicationcontrollers/scale",
                    ],
                ),
                rule(READ, &["policy"], &["poddisruptionbudgets", "poddisruptionbudgets/status"]),
                rule(READ, &["networking.k8s.io"], &["ingresses", "ingresses/status", "networkpolicies"]),
            ],
        ),
    ]
}

/// The bootstrap ClusterRoleBindings.
pub fn cluster_role_bindings() -> Vec<Value> {
    vec![
        binding("cluster-admin", "cluster-admin", &[("Group", "system:masters")]),
        binding("system:discovery", "system:discovery", &[("Group", "system:authenticated")]),
        binding("system:basic-user", "system:basic-user", &[("Group", "system:authenticated")]),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            &[("Group", "system:authenticated"), ("Group", "system:unauthenticated")],
        ),
        binding("system:monitoring", "system:monitoring", &[("Group", "system:monitoring")]),
        binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            &[("Group", "system:serviceaccounts")],
        ),
    ]
}

/// Creates or reconciles the bootstrap policy, retrying until storage
/// answers; then tells `index` (which makes the API server ready).
pub async fn run(resources: Resources, index: RbacIndex) {
    loop {
        match reconcile_all(&resources).await {
            Ok(()) => return index.mark_bootstrapped(),
            Err(e) => {
                tracing::warn!(error = %e, "reconciling the bootstrap RBAC policy; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

async fn reconcile_all(resources: &Resources) -> Result<(), ApiError> {
    for wanted in every_cluster_role() {
        reconcile(resources, "clusterroles", wanted, "rules").await?;
    }
    for wanted in every_cluster_role_binding() {
        reconcile(resources, "clusterrolebindings", wanted, "subjects").await?;
    }
    Ok(())
}

/// Creates `wanted`, or adds to the stored object the entries of `list`
/// (rules, subjects) it lacks.
async fn reconcile(resources: &Resources, plural: &str, wanted: Value, list: &str) -> Result<(), ApiError> {
    let store = resources.store(GROUP, plural)?;
    let ctx = WriteContext::server();
    let name = wanted["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let current = match store.get(None, &name, &ReadAt::default()).await {
        Err(ApiError::NotFound { .. }) => {
            return match store.create(&ctx, None, wanted).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
                Err(e) => Err(e),
            };
        }
        other => other?,
    };
    if current["metadata"]["annotations"][AUTOUPDATE] == "false" {
        return Ok(());
    }
    let Some(merged) = merged(&current, &wanted, list) else { return Ok(()) };
    tracing::info!(plural, name, "reconciled a bootstrap RBAC object");
    store.update(&ctx, None, &name, None, merged).await.map(|_| ())
}

/// `current` with what `wanted` adds to it; None when nothing is missing.
fn merged(current: &Value, wanted: &Value, list: &str) -> Option<Value> {
    let mut object = current.clone();
    let mut changed = false;
    let have: Vec<Value> = current[list].as_array().cloned().unwrap_or_default();
    let mut entries = have.clone();
    for entry in wanted[list].as_array().into_iter().flatten() {
        if !have.contains(entry) {
            entries.push(entry.clone());
            changed = true;
        }
    }
    if changed {
        object[list] = Value::Array(entries);
    }
    if wanted.get("aggregationRule").is_some()
        && current.get("aggregationRule") != wanted.get("aggregationRule")
    {
        object["aggregationRule"] = wanted["aggregationRule"].clone();
        changed = true;
    }
    changed.then_some(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_role_is_a_bootstrap_role() {
        let names: Vec<String> =
            every_cluster_role().map(|r| r["metadata"]["name"].as_str().unwrap().to_string()).collect();
        for binding in every_cluster_role_binding() {
            let role = binding["roleRef"]["name"].as_str().unwrap();
            assert!(names.iter().any(|n| n == role), "{role}");
        }
    }

    #[test]
    fn reconciling_adds_what_is_missing_and_removes_nothing() {
        let wanted = binding("x", "view", &[("Group", "a"), ("Group", "b")]);
        let mut current = wanted.clone();
        current["subjects"] =
            json!([{"kind": "User", "apiGroup": GROUP, "name": "added-by-hand"}, wanted["subjects"][0]]);
        let merged = merged(&current, &wanted, "subjects").unwrap();
        let names: Vec<&str> =
            merged["subjects"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["added-by-hand", "a", "b"]);
        assert_eq!(super::merged(&merged, &wanted, "subjects"), None, "nothing more to add");
    }
}
