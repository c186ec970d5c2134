//! Admission plugins as kubectl meets them: kube's default set (the system
//! namespaces cannot be deleted, pods run as a ServiceAccount with its token
//! mounted and get their default tolerations, new nodes are tainted
//! not-ready, LimitRanges' defaults and bounds apply, PriorityClasses give
//! pods their priority), plugins enabled by flag
//! (NamespaceAutoProvision, AlwaysPullImages, ExtendedResourceToleration), and
//! flags kube refuses.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, free_port};

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start_prepared(backend, false, |dir| {
        let flags = "--enable-admission-plugins=AlwaysPullImages,NamespaceAutoProvision,ExtendedResourceToleration\n\
                     --default-not-ready-toleration-seconds=42\n";
        std::fs::write(dir.join("flags"), flags).unwrap();
    })
    .await;

    for name in ["default", "kube-system"] {
        let out = api.kubectl(&["delete", "namespace", name]);
        assert!(!out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "Error from server (Forbidden): namespaces \"{name}\" is forbidden: this namespace may not be deleted\n"
            )
        );
    }
    assert_eq!(api.ok(&["get", "namespace", "default", "-o", "jsonpath={.status.phase}"]), "Active");

    // NamespaceAutoProvision: the namespace appears with the first object.
    api.ok(&["create", "configmap", "settings", "-n", "made-for-me", "--from-literal=a=b"]);
    assert_eq!(api.ok(&["get", "namespace", "made-for-me", "-o", "name"]), "namespace/made-for-me\n");

    // AlwaysPullImages and DefaultTolerationSeconds (42 s by flag, 300 s
    // by default).
    api.ok(&["run", "web", "--image=nginx:1.27", "--image-pull-policy=IfNotPresent"]);
    let pod = json_of(&api.ok(&["get", "pod", "web", "-o", "json"]));
    assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Always");
    assert_eq!(
        pod["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 42},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );

    // ServiceAccount: pods run as `default` (made in every namespace by the
    // controller) with kube's projected token volume mounted.
    assert_eq!(pod["spec"]["serviceAccountName"], "default");
    let volume = pod["spec"]["volumes"][0]["name"].as_str().unwrap();
    assert!(volume.starts_with("kube-api-access-"), "{pod}");
    assert_eq!(
        pod["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
    );
    assert_eq!(
        api.ok(&["get", "serviceaccount", "default", "-n", "made-for-me", "-o", "name"]),
        "serviceaccount/default
"
    );
    let out = api.kubectl(&[
        "run",
        "lost",
        "--image=nginx",
        "--overrides",
        r#"{"spec":{"serviceAccountName":"ghost"}}"#,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error from server (Forbidden): pods \"lost\" is forbidden: error looking up service account default/ghost: serviceaccount \"ghost\" not found\n"
    );

    // LimitRanger: the namespace's defaults fill the pod, its bounds refuse.
    api.ok(&["create", "namespace", "limited"]);
    let range = json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "bounds", "namespace": "limited"},
        "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}, "defaultRequest": {"memory": "128Mi"}}]}});
    api.ok_stdin(&["create", "-f", "-"], &range.to_string());
    assert_eq!(api.ok(&["get", "limits", "-n", "limited", "-o", "name"]), "limitrange/bounds\n");
    api.ok(&["run", "small", "-n", "limited", "--image=nginx"]);
    let small = json_of(&api.ok(&["get", "pod", "small", "-n", "limited", "-o", "json"]));
    assert_eq!(
        small["spec"]["containers"][0]["resources"],
        json!({"limits": {"memory": "1Gi"}, "requests": {"memory": "128Mi"}})
    );
    assert_eq!(
        small["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: memory request for container small; memory limit for container small"
    );
    let greedy = r#"{"spec":{"containers":[{"name":"greedy","image":"nginx","resources":{"limits":{"memory":"2Gi"}}}]}}"#;
    let out = api.kubectl(&["run", "greedy", "-n", "limited", "--image=nginx", "--overrides", greedy]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error from server (Forbidden): pods \"greedy\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi\n"
    );

    // Priority: the system classes exist and stay; a pod's class gives its
    // priority.
    let classes = api.ok(&["get", "priorityclasses", "--no-headers"]);
    let rows: Vec<Vec<&str>> = classes.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 2, "{classes}");
    assert_eq!(rows[0][..3], ["system-cluster-critical", "2000000000", "false"]);
    assert_eq!(rows[1][..3], ["system-node-critical", "2000001000", "false"]);
    let out = api.kubectl(&["delete", "priorityclass", "system-node-critical"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error from server (Forbidden): priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a system priority class and cannot be deleted\n"
    );
    api.ok(&["create", "priorityclass", "high", "--value=1000", "--description=important"]);
    let urgent = r#"{"spec":{"priorityClassName":"high"}}"#;
    api.ok(&["run", "urgent", "--image=nginx", "--overrides", urgent]);
    assert_eq!(
        api.ok(&["get", "pod", "urgent", "-o", "jsonpath={.spec.priority} {.spec.preemptionPolicy}"]),
        "1000 PreemptLowerPriority"
    );

    // ExtendedResourceToleration: a GPU pod tolerates the GPU nodes' taint
    // (its request defaulted from its limit).
    let gpu = r#"{"spec":{"containers":[{"name":"trainer","image":"cuda","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}"#;
    api.ok(&["run", "trainer", "--image=cuda", "--overrides", gpu]);
    let trainer = json_of(&api.ok(&["get", "pod", "trainer", "-o", "json"]));
    let tolerations = trainer["spec"]["tolerations"].as_array().unwrap();
    assert!(
        tolerations.contains(&json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})),
        "{tolerations:?}"
    );

    // TaintNodesByCondition.
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"},
        "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}});
    api.ok_stdin(&["create", "-f", "-"], &node.to_string());
    let node = json_of(&api.ok(&["get", "node", "worker-1", "-o", "json"]));
    assert_eq!(
        node["spec"]["taints"],
        json!([
            {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_plugins_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_plugins_on_etcd() {
    scenario(Backend::Etcd).await;
}

/// Unknown names, a name in both lists, and a plugin asked for that is not
/// built here stop the server before it serves, with kube's texts.
#[test]
fn admission_flags_kube_refuses_stop_the_server() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
            .args(["--plain-http", &format!("--secure-port={}", free_port())])
            .args(["--etcd-servers=http://127.0.0.1:1"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let unknown = run(&["--enable-admission-plugins=NamespaceLifecycle,Bogus"]);
    assert!(unknown.contains("enable-admission-plugins plugin \"Bogus\" is unknown"), "{unknown}");
    let both =
        run(&["--enable-admission-plugins=AlwaysPullImages", "--disable-admission-plugins=AlwaysPullImages"]);
    assert!(
        both.contains(
            "[AlwaysPullImages] in enable-admission-plugins and disable-admission-plugins overlapped"
        ),
        "{both}"
    );
    let missing = run(&["--enable-admission-plugins=NodeRestriction"]);
    assert!(
        missing.contains("admission plugin \"NodeRestriction\" is not built into rtcd-apiserver yet"),
        "{missing}"
    );
}
