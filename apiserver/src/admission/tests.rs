//! The plugin selection and the plugins built here, each against what kube's
//! does to the same write.

use serde_json::{Value, json};

use super::plugins::{self, Known, PluginConfig};
use super::*;
use crate::request::UserInfo;

fn names(enabled: &[&Known]) -> Vec<&'static str> {
    enabled.iter().map(|k| k.name).collect()
}

fn list(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn the_default_set_and_the_flags_follow_kubes_order_not_the_flags() {
    let default = plugins::enabled(&[], &[]).unwrap();
    let built: Vec<_> =
        default.iter().filter(|k| k.support == plugins::Support::Built).map(|k| k.name).collect();
    assert_eq!(
        built,
        [
            "NamespaceLifecycle",
            "LimitRanger",
            "ServiceAccount",
            "TaintNodesByCondition",
            "PodSecurity",
            "Priority",
            "DefaultTolerationSeconds",
            "DefaultStorageClass",
            "StorageObjectInUseProtection",
            "PersistentVolumeClaimResize",
            "RuntimeClass",
            "CertificateApproval",
            "CertificateSigning",
            "DefaultIngressClass",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionWebhook",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionWebhook",
            "ResourceQuota",
        ]
    );
    assert!(names(&default).contains(&"ValidatingAdmissionWebhook"));
    assert!(!names(&default).contains(&"AlwaysPullImages"));

    let chosen = plugins::enabled(
        &list(&["AlwaysDeny", "AlwaysPullImages", "NamespaceExists"]),
        &list(&["NamespaceLifecycle"]),
    )
    .unwrap();
    let chosen = names(&chosen);
    let position = |name| chosen.iter().position(|n| *n == name);
    assert_eq!(position("NamespaceLifecycle"), None);
    assert!(position("NamespaceExists") < position("AlwaysPullImages"));
    assert_eq!(chosen.last(), Some(&"AlwaysDeny"), "AlwaysDeny stays last");
}

#[test]
fn bad_plugin_flags_are_refused_with_kubes_texts() {
    let err = plugins::enabled(&list(&["Nope"]), &[]).unwrap_err();
    assert_eq!(err, "enable-admission-plugins plugin \"Nope\" is unknown");
    let err = plugins::enabled(&[], &list(&["AlsoNope"])).unwrap_err();
    assert_eq!(err, "disable-admission-plugins plugin \"AlsoNope\" is unknown");
    let err = plugins::enabled(&list(&["AlwaysDeny", "AlwaysAdmit"]), &list(&["AlwaysDeny", "AlwaysAdmit"]))
        .unwrap_err();
    assert_eq!(
        err,
        "[AlwaysAdmit AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped"
    );
    // Asked for by name but not built: the server does not start without it.
    let err = plugins::enabled(&list(&["NodeRestriction", "X"]), &[]).unwrap_err();
    assert_eq!(
        err,
        "[enable-admission-plugins plugin \"X\" is unknown, admission plugin \"NodeRestriction\" is not built into rtcd-apiserver yet]"
    );
}

pub(crate) fn write(
    operation: Operation,
    group: &str,
    resource: &str,
    kind: &str,
    object: Option<Value>,
) -> Attributes {
    Attributes {
        user: UserInfo::apiserver(),
        operation,
        kind: GroupVersionKind { group: group.into(), version: "v1".into(), kind: kind.into() },
        resource: GroupVersionResource {
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
        },
        subresource: None,
        name: object.as_ref().and_then(|o| o["metadata"]["name"].as_str()).unwrap_or("").to_string(),
        namespace: Some("default".into()),
        object,
        old_object: None,
        options: json!({}),
        dry_run: false,
        notes: Default::default(),
        normalize: None,
        reinvocation: Default::default(),
        field_manager: None,
    }
}

fn pod(spec: Value) -> Attributes {
    write(Operation::Create, "", "pods", "Pod", Some(json!({"metadata": {"name": "p"}, "spec": spec})))
}

fn chain(enable: &[&str]) -> Chain {
    let enabled = plugins::enabled(&list(enable), &[]).unwrap();
    let only: Vec<&Known> = enabled.into_iter().filter(|k| enable.contains(&k.name)).collect();
    let config = PluginConfig {
        not_ready_toleration_seconds: 60,
        unreachable_toleration_seconds: 120,
        ..Default::default()
    };
    let lookups = Lookups::default();
    let webhooks = super::webhook::Webhooks::new(&lookups, Default::default());
    Chain::new(plugins::build(&only, &config, &lookups, &webhooks))
}

#[tokio::test]
async fn pods_get_the_default_tolerations_they_lack() {
    let chain = chain(&["DefaultTolerationSeconds"]);
    let mut bare = pod(json!({"containers": [{"name": "c", "image": "i"}]}));
    chain.admit(&mut bare).await.unwrap();
    assert_eq!(
        bare.object.unwrap()["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 120},
        ])
    );
    // One already tolerated (any effect): only the other is added.
    let own = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists"});
    let mut partial = pod(json!({"tolerations": [own.clone()]}));
    chain.admit(&mut partial).await.unwrap();
    let tolerations = partial.object.unwrap()["spec"]["tolerations"].clone();
    assert_eq!(tolerations.as_array().unwrap().len(), 2);
    assert_eq!(tolerations[0], own);
    assert_eq!(tolerations[1]["key"], "node.kubernetes.io/not-ready");
    // An empty key tolerates every taint: nothing to add.
    let all = json!([{"operator": "Exists"}]);
    let mut everything = pod(json!({"tolerations": all.clone()}));
    chain.admit(&mut everything).await.unwrap();
    assert_eq!(everything.object.unwrap()["spec"]["tolerations"], all);
    // A status write is left alone.
    let mut status = pod(json!({}));
    status.subresource = Some("status".into());
    chain.admit(&mut status).await.unwrap();
    assert!(status.object.unwrap()["spec"].get("tolerations").is_none());
}

#[tokio::test]
async fn always_pull_images_sets_and_then_insists_on_always() {
    let chain = chain(&["AlwaysPullImages"]);
    let spec = json!({
        "initContainers": [{"name": "init", "image": "a", "imagePullPolicy": "Never"}],
        "containers": [{"name": "c", "image": "b", "imagePullPolicy": "IfNotPresent"}, {"name": "d", "image": "c"}],
    });
    let mut created = pod(spec.clone());
    chain.admit(&mut created).await.unwrap();
    let object = created.object.clone().unwrap();
    for path in [
        &object["spec"]["initContainers"][0],
        &object["spec"]["containers"][0],
        &object["spec"]["containers"][1],
    ] {
        assert_eq!(path["imagePullPolicy"], "Always");
    }
    chain.validate(&created).await.unwrap();
    // Undone after the mutating step (as a webhook could): refused.
    let mut undone = created.clone();
    undone.object.as_mut().unwrap()["spec"]["containers"][1]["imagePullPolicy"] = json!("IfNotPresent");
    let err = chain.validate(&undone).await.unwrap_err();
    assert_eq!(
        (err.code(), err.to_string()),
        (
            403,
            "pods \"p\" is forbidden: spec.containers[1].imagePullPolicy: Unsupported value: \"IfNotPresent\": supported values: \"Always\""
                .to_string()
        )
    );
    // An update that brings no new image keeps the pod's policies.
    let mut update =
        write(Operation::Update, "", "pods", "Pod", Some(json!({"metadata": {"name": "p"}, "spec": spec})));
    update.old_object = update.object.clone();
    chain.admit(&mut update).await.unwrap();
    assert_eq!(update.object.as_ref().unwrap()["spec"]["containers"][0]["imagePullPolicy"], "IfNotPresent");
    chain.validate(&update).await.unwrap();
}

#[tokio::test]
async fn new_nodes_are_tainted_not_ready_once() {
    let chain = chain(&["TaintNodesByCondition"]);
    let node = |spec: Value| {
        write(Operation::Create, "", "nodes", "Node", Some(json!({"metadata": {"name": "n"}, "spec": spec})))
    };
    let not_ready = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
    let mut bare = node(json!({}));
    chain.admit(&mut bare).await.unwrap();
    assert_eq!(bare.object.unwrap()["spec"]["taints"], json!([not_ready.clone()]));
    let other = json!({"key": "gpu", "value": "yes", "effect": "NoSchedule"});
    let mut tainted = node(json!({"taints": [other.clone(), not_ready.clone()]}));
    chain.admit(&mut tainted).await.unwrap();
    assert_eq!(tainted.object.unwrap()["spec"]["taints"], json!([other, not_ready]));
    let mut update = node(json!({}));
    update.operation = Operation::Update;
    chain.admit(&mut update).await.unwrap();
    assert!(update.object.unwrap()["spec"].get("taints").is_none(), "only new nodes");
}

#[tokio::test]
async fn always_deny_names_the_object_as_kube_does() {
    let chain = chain(&["AlwaysDeny"]);
    let mut named = pod(json!({}));
    let err = chain.admit(&mut named).await.unwrap_err();
    assert_eq!(err.to_string(), "pods \"p\" is forbidden: admission control is denying all modifications");
    let mut generated = write(
        Operation::Create,
        "apps",
        "deployments",
        "Deployment",
        Some(json!({"metadata": {"generateName": "web-"}})),
    );
    let err = chain.admit(&mut generated).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "deployments.apps \"web-\" is forbidden: admission control is denying all modifications"
    );
    let mut unnamed = write(Operation::Create, "", "configmaps", "ConfigMap", Some(json!({"metadata": {}})));
    let err = chain.validate(&unnamed).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "configmaps \"Unknown\" is forbidden: admission control is denying all modifications"
    );
    assert_eq!(err.status()["details"], json!({"name": "Unknown", "kind": "configmaps"}));
    unnamed.operation = Operation::Delete;
    assert_eq!(chain.admit(&mut unnamed).await.unwrap_err().code(), 403);
}

#[tokio::test]
async fn tenants_may_not_spread_pods_by_zone_or_add_external_ips() {
    let chain = chain(&["LimitPodHardAntiAffinityTopology", "DenyServiceExternalIPs"]);
    let term = |key: &str| json!({"labelSelector": {}, "topologyKey": key});
    let anti = |key: &str| {
        pod(
            json!({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(key)]}}}),
        )
    };
    chain.validate(&anti("kubernetes.io/hostname")).await.unwrap();
    let err = chain.validate(&anti("topology.kubernetes.io/zone")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "pods \"p\" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed"
    );
    // Preferred terms are only preferences.
    let preferred =
        pod(json!({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": term("topology.kubernetes.io/zone")}]}}}));
    chain.validate(&preferred).await.unwrap();

    let service = |ips: Value| json!({"metadata": {"name": "web"}, "spec": {"externalIPs": ips}});
    let created = write(Operation::Create, "", "services", "Service", Some(service(json!(["1.2.3.4"]))));
    let err = chain.validate(&created).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "services \"web\" is forbidden: Use of external IPs is denied by admission control"
    );
    chain
        .validate(&write(Operation::Create, "", "services", "Service", Some(service(json!([])))))
        .await
        .unwrap();
    // Kept on update (set before the plugin was enabled), never added.
    let mut update = write(Operation::Update, "", "services", "Service", Some(service(json!(["1.2.3.4"]))));
    update.old_object = Some(service(json!(["1.2.3.4", "5.6.7.8"])));
    chain.validate(&update).await.unwrap();
    update.object = Some(service(json!(["1.2.3.4", "9.9.9.9"])));
    assert_eq!(chain.validate(&update).await.unwrap_err().code(), 403);
}

#[tokio::test]
async fn pods_asking_for_extended_resources_tolerate_their_nodes() {
    let chain = chain(&["ExtendedResourceToleration"]);
    let gpu = |requests: Value| json!({"name": "c", "image": "i", "resources": {"requests": requests}});
    let mut asking = pod(json!({
        "containers": [gpu(json!({"nvidia.com/gpu": "1", "cpu": "1"}))],
        "initContainers": [gpu(json!({"example.com/fpga": "1", "kubernetes.io/native": "1", "requests.x/y": "1"}))],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }));
    chain.admit(&mut asking).await.unwrap();
    assert_eq!(
        asking.object.unwrap()["spec"]["tolerations"],
        json!([
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "example.com/fpga", "operator": "Exists", "effect": "NoSchedule"},
        ])
    );
    let mut plain = pod(json!({"containers": [gpu(json!({"cpu": "1"}))]}));
    chain.admit(&mut plain).await.unwrap();
    assert!(plain.object.unwrap()["spec"].get("tolerations").is_none());
}
