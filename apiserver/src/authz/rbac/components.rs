//! The roles kube-apiserver makes for kube's own components (kube's
//! bootstrap policy: kube-scheduler, kube-controller-manager, kube-proxy,
//! kube-dns, the volume provisioner, kubelet certificate requests and their
//! approvers), and the bindings to the identities those components log in
//! with, so a scheduler or proxy authenticating as itself (as kubeadm sets
//! them up) may read and write what it needs. Rules as kube 1.36 makes them
//! with its default feature gates (dynamic resource allocation on).

use serde_json::{Value, json};

use super::bootstrap::{binding, named_rule, role, rule};

/// The components' ClusterRoles.
pub fn cluster_roles() -> Vec<Value> {
    vec![
        role(
            "system:heapster",
            json!({}),
            vec![
                rule(&["get", "list", "watch"], &[""], &["events", "namespaces", "nodes", "pods"]),
                rule(&["get", "list", "watch"], &["extensions"], &["deployments"]),
            ],
        ),
        role(
            "system:node-bootstrapper",
            json!({}),
            vec![rule(
                &["create", "get", "list", "watch"],
                &["certificates.k8s.io"],
                &["certificatesigningrequests"],
            )],
        ),
        role(
            "system:kube-controller-manager",
            json!({}),
            vec![
                rule(&["create", "patch", "update"], &["", "events.k8s.io"], &["events"]),
                rule(&["create"], &["coordination.k8s.io"], &["leases"]),
                named_rule(
                    &["get", "update"],
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["kube-controller-manager"],
                ),
                rule(&["create"], &[""], &["secrets", "serviceaccounts"]),
                rule(&["delete"], &[""], &["secrets"]),
                rule(&["get"], &[""], &["configmaps", "namespaces", "secrets", "serviceaccounts"]),
                rule(&["update"], &[""], &["secrets", "serviceaccounts"]),
                rule(&["create"], &["authentication.k8s.io"], &["tokenreviews"]),
                rule(&["create"], &["authorization.k8s.io"], &["subjectaccessreviews"]),
                rule(&["list", "watch"], &["*"], &["*"]),
                rule(&["create"], &[""], &["serviceaccounts/token"]),
            ],
        ),
        role("system:kube-dns", json!({}), vec![rule(&["list", "watch"], &[""], &["endpoints", "services"])]),
        role(
            "system:persistent-volume-provisioner",
            json!({}),
            vec![
                rule(&["create", "delete", "get", "list", "watch"], &[""], &["persistentvolumes"]),
                rule(&["get", "list", "update", "watch"], &[""], &["persistentvolumeclaims"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["storageclasses"]),
                rule(&["watch"], &[""], &["events"]),
                rule(&["create", "patch", "update"], &["", "events.k8s.io"], &["events"]),
            ],
        ),
        role(
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            json!({}),
            vec![rule(&["create"], &["certificates.k8s.io"], &["certificatesigningrequests/nodeclient"])],
        ),
        role(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
            json!({}),
            vec![rule(&["create"], &["certificates.k8s.io"], &["certificatesigningrequests/selfnodeclient"])],
        ),
        role(
            "system:volume-scheduler",
            json!({}),
            vec![
                rule(&["get", "list", "patch", "update", "watch"], &[""], &["persistentvolumes"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["storageclasses"]),
                rule(&["get", "list", "patch", "update", "watch"], &[""], &["persistentvolumeclaims"]),
            ],
        ),
        role(
            "system:certificates.k8s.io:legacy-unknown-approver",
            json!({}),
            vec![named_rule(
                &["approve"],
                &["certificates.k8s.io"],
                &["signers"],
                &["kubernetes.io/legacy-unknown"],
            )],
        ),
        role(
            "system:certificates.k8s.io:kubelet-serving-approver",
            json!({}),
            vec![named_rule(
                &["approve"],
                &["certificates.k8s.io"],
                &["signers"],
                &["kubernetes.io/kubelet-serving"],
            )],
        ),
        role(
            "system:certificates.k8s.io:kube-apiserver-client-approver",
            json!({}),
            vec![named_rule(
                &["approve"],
                &["certificates.k8s.io"],
                &["signers"],
                &["kubernetes.io/kube-apiserver-client"],
            )],
        ),
        role(
            "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
            json!({}),
            vec![named_rule(
                &["approve"],
                &["certificates.k8s.io"],
                &["signers"],
                &["kubernetes.io/kube-apiserver-client-kubelet"],
            )],
        ),
        role(
            "system:node-proxier",
            json!({}),
            vec![
                rule(&["list", "watch"], &[""], &["endpoints", "services"]),
                rule(&["get", "list", "watch"], &[""], &["nodes"]),
                rule(&["create", "patch", "update"], &["", "events.k8s.io"], &["events"]),
                rule(&["list", "watch"], &["networking.k8s.io"], &["servicecidrs"]),
                rule(&["list", "watch"], &["discovery.k8s.io"], &["endpointslices"]),
            ],
        ),
        role(
            "system:kube-scheduler",
            json!({}),
            vec![
                rule(&["create", "patch", "update"], &["", "events.k8s.io"], &["events"]),
                rule(&["create"], &["coordination.k8s.io"], &["leases"]),
                named_rule(
                    &["get", "list", "update", "watch"],
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["kube-scheduler"],
                ),
                rule(
                    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                    &["coordination.k8s.io"],
                    &["leasecandidates"],
                ),
                rule(&["get", "list", "watch"], &[""], &["nodes"]),
                rule(&["delete", "get", "list", "watch"], &[""], &["pods"]),
                rule(&["create"], &[""], &["bindings", "pods/binding"]),
                rule(&["patch", "update"], &[""], &["pods/status"]),
                rule(&["get", "list", "watch"], &[""], &["replicationcontrollers", "services"]),
                rule(&["get", "list", "watch"], &["apps", "extensions"], &["replicasets"]),
                rule(&["get", "list", "watch"], &["apps"], &["statefulsets"]),
                rule(&["get", "list", "watch"], &["policy"], &["poddisruptionbudgets"]),
                rule(&["get", "list", "watch"], &[""], &["persistentvolumeclaims", "persistentvolumes"]),
                rule(&["create"], &["authentication.k8s.io"], &["tokenreviews"]),
                rule(&["create"], &["authorization.k8s.io"], &["subjectaccessreviews"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["csinodes"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["volumeattachments"]),
                rule(&["get", "list", "watch"], &[""], &["namespaces"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["csidrivers"]),
                rule(&["get", "list", "watch"], &["storage.k8s.io"], &["csistoragecapacities"]),
                rule(&["get", "list", "watch"], &["resource.k8s.io"], &["deviceclasses"]),
                rule(&["get", "list", "patch", "update", "watch"], &["resource.k8s.io"], &["resourceclaims"]),
                rule(
                    &["get", "list", "patch", "update", "watch"],
                    &["resource.k8s.io"],
                    &["resourceclaims/status"],
                ),
                rule(&["update"], &[""], &["pods/finalizers"]),
                rule(&["get", "list", "watch"], &["resource.k8s.io"], &["resourceslices"]),
                rule(&["create", "delete"], &["resource.k8s.io"], &["resourceclaims"]),
                rule(&["patch", "update"], &["resource.k8s.io"], &["resourceclaims/binding"]),
            ],
        ),
    ]
}

/// Who the components' roles are bound to.
pub fn cluster_role_bindings() -> Vec<Value> {
    let mut bindings = vec![
        binding("system:kube-scheduler", "system:kube-scheduler", &[("User", "system:kube-scheduler")]),
        binding("system:volume-scheduler", "system:volume-scheduler", &[("User", "system:kube-scheduler")]),
        binding(
            "system:kube-controller-manager",
            "system:kube-controller-manager",
            &[("User", "system:kube-controller-manager")],
        ),
        binding("system:node-proxier", "system:node-proxier", &[("User", "system:kube-proxy")]),
    ];
    // kube-dns runs as a ServiceAccount: a subject with a namespace and no API group.
    let mut dns = binding("system:kube-dns", "system:kube-dns", &[]);
    dns["subjects"] = json!([{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}]);
    bindings.push(dns);
    bindings
}
