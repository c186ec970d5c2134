//! The roles of kube-controller-manager's controllers, one per controller, and their bindings
//! to the ServiceAccounts in `kube-system` the controllers run as when kube-controller-manager
//! is started with `--use-service-account-credentials` (as kubeadm starts it): each controller
//! then authenticates with its own account's token and may do only what its role allows.
//! Rules as kube 1.36 makes them with its default feature gates (kube's
//! `bootstrappolicy/controller_policy.go`).

use serde_json::{Value, json};

use super::bootstrap::{binding, named_rule, role, rule};

/// The prefix of the controllers' role and binding names.
const PREFIX: &str = "system:controller:";

/// The controllers' ClusterRoles (`system:controller:<controller>`).
pub fn cluster_roles() -> Vec<Value> {
    vec![
        controller(
            "attachdetach-controller",
            vec![
                rule(&["list", "watch"], &[""], &["persistentvolumeclaims", "persistentvolumes"]),
                rule(&["get", "list", "watch"], &[""], &["nodes"]),
                rule(&["patch", "update"], &[""], &["nodes/status"]),
                rule(&["list", "watch"], &[""], &["pods"]),
                events(),
                rule(
                    &["create", "delete", "get", "list", "watch"],
                    &["storage.k8s.io"],
                    &["volumeattachments"],
                ),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["csidrivers"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["csinodes"]),
            ],
        ),
        controller(
            "certificate-controller",
            vec![
                rule(
                    &["delete", "get", "list", "watch"],
                    &["certificates.k8s.io"],
                    &["certificatesigningrequests"],
                ),
                rule(
                    &["update"],
                    &["certificates.k8s.io"],
                    &["certificatesigningrequests/approval", "certificatesigningrequests/status"],
                ),
                named_rule(
                    &["approve"],
                    &["certificates.k8s.io"],
                    &["signers"],
                    &["kubernetes.io/kube-apiserver-client-kubelet"],
                ),
                named_rule(
                    &["sign"],
                    &["certificates.k8s.io"],
                    &["signers"],
                    &[
                        "kubernetes.io/kube-apiserver-client",
                        "kubernetes.io/kube-apiserver-client-kubelet",
                        "kubernetes.io/kubelet-serving",
                        "kubernetes.io/legacy-unknown",
                    ],
                ),
                rule(&["create"], &["authorization.k8s.io"], &["subjectaccessreviews"]),
                events(),
            ],
        ),
        controller(
            "clusterrole-aggregation-controller",
            vec![rule(
                &["escalate", "get", "list", "patch", "update", "watch"],
                &["rbac.authorization.k8s.io"],
                &["clusterroles"],
            )],
        ),
        controller(
            "cronjob-controller",
            vec![
                rule(&["get", "list", "update", "watch"], &["batch"], &["cronjobs"]),
                rule(&["create", "delete", "get", "list", "patch", "update", "watch"], &["batch"], &["jobs"]),
                rule(&["update"], &["batch"], &["cronjobs/status"]),
                rule(&["update"], &["batch"], &["cronjobs/finalizers"]),
                rule(&["delete", "list", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "daemon-set-controller",
            vec![
                rule(&["get", "list", "watch"], &["apps", "extensions"], &["daemonsets"]),
                rule(&["update"], &["apps", "extensions"], &["daemonsets/status"]),
                rule(&["update"], &["apps", "extensions"], &["daemonsets/finalizers"]),
                rule(&["list", "watch"], &[""], &["nodes"]),
                rule(&["create", "delete", "list", "patch", "watch"], &[""], &["pods"]),
                rule(&["create"], &[""], &["pods/binding"]),
                rule(
                    &["create", "delete", "get", "list", "patch", "update", "watch"],
                    &["apps"],
                    &["controllerrevisions"],
                ),
                events(),
            ],
        ),
        controller(
            "deployment-controller",
            vec![
                rule(&["get", "list", "update", "watch"], &["apps", "extensions"], &["deployments"]),
                rule(&["update"], &["apps", "extensions"], &["deployments/status"]),
                rule(&["update"], &["apps", "extensions"], &["deployments/finalizers"]),
                rule(
                    &["create", "delete", "get", "list", "patch", "update", "watch"],
                    &["apps", "extensions"],
                    &["replicasets"],
                ),
                rule(&["get", "list", "update", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "device-taint-eviction-controller",
            vec![
                rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
                rule(&["patch", "update"], &[""], &["pods/status"]),
                rule(&["get", "list", "watch"], &["resource.k8s.io"], &["resourceclaims"]),
                rule(&["get", "list", "watch"], &["resource.k8s.io"], &["resourceslices"]),
                rule(&["get", "list", "watch"], &["resource.k8s.io"], &["deviceclasses"]),
                events(),
            ],
        ),
        controller(
            "disruption-controller",
            vec![
                rule(&["get", "list", "watch"], &["apps", "extensions"], &["deployments"]),
                rule(&["get", "list", "watch"], &["apps", "extensions"], &["replicasets"]),
                rule(&["get", "list", "watch"], &[""], &["replicationcontrollers"]),
                rule(&["get", "list", "watch"], &["policy"], &["poddisruptionbudgets"]),
                rule(&["get", "list", "watch"], &["apps"], &["statefulsets"]),
                rule(&["update"], &["policy"], &["poddisruptionbudgets/status"]),
                rule(&["patch", "update"], &[""], &["pods/status"]),
                rule(&["get"], &["*"], &["*/scale"]),
                events(),
            ],
        ),
        controller(
            "endpoint-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["pods", "services"]),
                rule(&["create", "delete", "get", "list", "update", "watch"], &[""], &["endpoints"]),
                rule(&["create"], &[""], &["endpoints/restricted"]),
                events(),
            ],
        ),
        controller(
            "endpointslice-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["nodes", "pods", "services"]),
                rule(&["update"], &[""], &["services/finalizers"]),
                rule(
                    &["create", "delete", "get", "list", "update", "watch"],
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                ),
                events(),
            ],
        ),
        controller(
            "endpointslicemirroring-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["endpoints", "services"]),
                rule(&["update"], &[""], &["services/finalizers"]),
                rule(&["update"], &[""], &["endpoints/finalizers"]),
                rule(
                    &["create", "delete", "get", "list", "update", "watch"],
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                ),
                events(),
            ],
        ),
        controller(
            "ephemeral-volume-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["pods"]),
                rule(&["update"], &[""], &["pods/finalizers"]),
                rule(&["create", "get", "list", "watch"], &[""], &["persistentvolumeclaims"]),
                events(),
            ],
        ),
        controller(
            "expand-controller",
            vec![
                rule(&["get", "list", "patch", "update", "watch"], &[""], &["persistentvolumes"]),
                rule(&["patch", "update"], &[""], &["persistentvolumeclaims/status"]),
                rule(&["get", "list", "watch"], &[""], &["persistentvolumeclaims"]),
                events(),
            ],
        ),
        controller(
            "generic-garbage-collector",
            vec![rule(&["delete", "get", "list", "patch", "update", "watch"], &["*"], &["*"]), events()],
        ),
        controller(
            "horizontal-pod-autoscaler",
            vec![
                rule(&["get", "list", "watch"], &["autoscaling"], &["horizontalpodautoscalers"]),
                rule(&["update"], &["autoscaling"], &["horizontalpodautoscalers/status"]),
                rule(&["get", "update"], &["*"], &["*/scale"]),
                rule(&["list", "watch"], &[""], &["pods"]),
                rule(&["list", "watch"], &["metrics.k8s.io"], &["pods"]),
                rule(&["get", "list", "watch"], &["custom.metrics.k8s.io"], &["*"]),
                rule(&["get", "list", "watch"], &["external.metrics.k8s.io"], &["*"]),
                events(),
            ],
        ),
        controller(
            "job-controller",
            vec![
                rule(&["get", "list", "patch", "update", "watch"], &["batch"], &["jobs"]),
                rule(&["update"], &["batch"], &["jobs/status"]),
                rule(&["update"], &["batch"], &["jobs/finalizers"]),
                rule(&["create", "delete", "list", "patch", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "legacy-service-account-token-cleaner",
            vec![
                named_rule(
                    &["get"],
                    &[""],
                    &["configmaps"],
                    &["kube-apiserver-legacy-service-account-token-tracking"],
                ),
                rule(&["delete", "patch"], &[""], &["secrets"]),
            ],
        ),
        controller(
            "namespace-controller",
            vec![
                rule(&["delete", "get", "list", "watch"], &[""], &["namespaces"]),
                rule(&["update"], &[""], &["namespaces/finalize", "namespaces/status"]),
                rule(&["delete", "deletecollection", "get", "list", "watch"], &["*"], &["*"]),
            ],
        ),
        controller(
            "node-controller",
            vec![
                rule(&["delete", "get", "list", "patch", "update", "watch"], &[""], &["nodes"]),
                rule(&["patch", "update"], &[""], &["nodes/status"]),
                rule(&["patch", "update"], &[""], &["pods/status"]),
                rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "persistent-volume-binder",
            vec![
                rule(&["create", "delete", "get", "list", "update", "watch"], &[""], &["persistentvolumes"]),
                rule(&["update"], &[""], &["persistentvolumes/status"]),
                rule(&["get", "list", "update", "watch"], &[""], &["persistentvolumeclaims"]),
                rule(&["update"], &[""], &["persistentvolumeclaims/status"]),
                rule(&["create", "delete", "get", "list", "watch"], &[""], &["pods"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["storageclasses"]),
                rule(&["list", "watch"], &[""], &["nodes"]),
                events(),
                rule(&["watch"], &[""], &["events"]),
            ],
        ),
        controller(
            "pod-garbage-collector",
            vec![
                rule(&["delete", "list", "watch"], &[""], &["pods"]),
                rule(&["get", "list", "watch"], &[""], &["nodes"]),
                rule(&["patch"], &[""], &["pods/status"]),
            ],
        ),
        controller(
            "pv-protection-controller",
            vec![rule(&["get", "list", "update", "watch"], &[""], &["persistentvolumes"]), events()],
        ),
        controller(
            "pvc-protection-controller",
            vec![
                rule(&["get", "list", "update", "watch"], &[""], &["persistentvolumeclaims"]),
                rule(&["update"], &[""], &["persistentvolumeclaims/status"]),
                rule(&["get", "list", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "replicaset-controller",
            vec![
                rule(&["get", "list", "update", "watch"], &["apps", "extensions"], &["replicasets"]),
                rule(&["update"], &["apps", "extensions"], &["replicasets/status"]),
                rule(&["update"], &["apps", "extensions"], &["replicasets/finalizers"]),
                rule(&["create", "delete", "list", "patch", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "replication-controller",
            vec![
                rule(&["get", "list", "update", "watch"], &[""], &["replicationcontrollers"]),
                rule(&["update"], &[""], &["replicationcontrollers/status"]),
                rule(&["update"], &[""], &["replicationcontrollers/finalizers"]),
                rule(&["create", "delete", "list", "patch", "watch"], &[""], &["pods"]),
                events(),
            ],
        ),
        controller(
            "resource-claim-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["pods"]),
                rule(&["update"], &[""], &["pods/finalizers"]),
                rule(
                    &["create", "delete", "get", "list", "watch"],
                    &["resource.k8s.io"],
                    &["resourceclaims"],
                ),
                rule(
                    &["patch", "update"],
                    &["resource.k8s.io"],
                    &["resourceclaims", "resourceclaims/status"],
                ),
                rule(&["patch", "update"], &[""], &["pods/status"]),
                events(),
                rule(&["patch", "update"], &["resource.k8s.io"], &["resourceclaims/binding"]),
            ],
        ),
        controller(
            "resourcequota-controller",
            vec![
                rule(&["list", "watch"], &["*"], &["*"]),
                rule(&["update"], &[""], &["resourcequotas/status"]),
                events(),
            ],
        ),
        controller(
            "root-ca-cert-publisher",
            vec![rule(&["create", "update"], &[""], &["configmaps"]), events()],
        ),
        controller(
            "route-controller",
            vec![
                rule(&["list", "watch"], &[""], &["nodes"]),
                rule(&["patch"], &[""], &["nodes/status"]),
                events(),
            ],
        ),
        controller(
            "selinux-warning-controller",
            vec![
                events(),
                rule(&["get", "list", "watch"], &[""], &["persistentvolumes"]),
                rule(&["get", "list", "watch"], &[""], &["persistentvolumeclaims"]),
                rule(&["get", "list", "watch"], &[""], &["pods"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["csidrivers"]),
            ],
        ),
        controller(
            "service-account-controller",
            vec![rule(&["create"], &[""], &["serviceaccounts"]), events()],
        ),
        controller(
            "service-cidrs-controller",
            vec![
                rule(&["get", "list", "patch", "update", "watch"], &["networking.k8s.io"], &["servicecidrs"]),
                rule(&["patch", "update"], &["networking.k8s.io"], &["servicecidrs/finalizers"]),
                rule(&["patch", "update"], &["networking.k8s.io"], &["servicecidrs/status"]),
                rule(&["get", "list", "watch"], &["networking.k8s.io"], &["ipaddresses"]),
                events(),
            ],
        ),
        controller(
            "service-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["services"]),
                rule(&["patch", "update"], &[""], &["services/status"]),
                rule(&["list", "watch"], &[""], &["nodes"]),
                events(),
            ],
        ),
        controller(
            "statefulset-controller",
            vec![
                rule(&["list", "watch"], &[""], &["pods"]),
                rule(&["get", "list", "watch"], &["apps"], &["statefulsets"]),
                rule(&["update"], &["apps"], &["statefulsets/status"]),
                rule(&["update"], &["apps"], &["statefulsets/finalizers"]),
                rule(&["create", "delete", "get", "patch", "update"], &[""], &["pods"]),
                rule(
                    &["create", "delete", "get", "list", "patch", "update", "watch"],
                    &["apps"],
                    &["controllerrevisions"],
                ),
                rule(&["create", "get", "list", "watch"], &[""], &["persistentvolumeclaims"]),
                rule(&["delete", "update"], &[""], &["persistentvolumeclaims"]),
                rule(&["update"], &[""], &["pods/finalizers"]),
                events(),
            ],
        ),
        controller(
            "ttl-after-finished-controller",
            vec![rule(&["delete", "get", "list", "watch"], &["batch"], &["jobs"]), events()],
        ),
        controller(
            "ttl-controller",
            vec![rule(&["list", "patch", "update", "watch"], &[""], &["nodes"]), events()],
        ),
        controller(
            "validatingadmissionpolicy-status-controller",
            vec![
                rule(
                    &["get", "list", "watch"],
                    &["admissionregistration.k8s.io"],
                    &["validatingadmissionpolicies"],
                ),
                rule(
                    &["get", "patch", "update"],
                    &["admissionregistration.k8s.io"],
                    &["validatingadmissionpolicies/status"],
                ),
                events(),
            ],
        ),
        controller(
            "volumeattributesclass-protection-controller",
            vec![
                rule(&["get", "list", "watch"], &[""], &["persistentvolumeclaims"]),
                rule(&["get", "list", "watch"], &[""], &["persistentvolumes"]),
                rule(&["get", "list", "update", "watch"], &["storage.k8s.io"], &["volumeattributesclasses"]),
                events(),
            ],
        ),
    ]
}

/// `system:controller:<controller>` bound to the ServiceAccount `kube-system/<controller>`.
pub fn cluster_role_bindings() -> Vec<Value> {
    cluster_roles()
        .iter()
        .filter_map(|role| role["metadata"]["name"].as_str())
        .map(|name| {
            let mut bound = binding(name, name, &[]);
            let account = name.trim_start_matches(PREFIX);
            bound["subjects"] =
                json!([{"kind": "ServiceAccount", "name": account, "namespace": "kube-system"}]);
            bound
        })
        .collect()
}

fn controller(name: &str, rules: Vec<Value>) -> Value {
    role(&format!("{PREFIX}{name}"), json!({}), rules)
}

/// What nearly every controller has: recording Events, in either API.
fn events() -> Value {
    rule(&["create", "patch", "update"], &["", "events.k8s.io"], &["events"])
}
