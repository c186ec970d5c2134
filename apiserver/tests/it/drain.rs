//! What a scheduler and an operator draining a node do, with no kubelet: pods bound to nodes
//! through `pods/binding` and `bindings` (as kube-scheduler posts them), `kubectl drain`
//! evicting them through `pods/eviction` while a PodDisruptionBudget (whose status the test
//! writes, as kube's disruption controller would) holds them and once it lets them go,
//! `kubectl debug` adding an ephemeral container, and a namespace's `finalize`.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, json, request};

const JSON: &str = "application/json";

const MANIFEST: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {app: web}}
spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lone}
spec: {containers: [{name: app, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: solo}
spec: {containers: [{name: app, image: busybox}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}
"#;

fn binding(pod: &str, node: &str) -> String {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod, "annotations": {"scheduled-by": "test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
    .to_string()
}

fn get(api: &ApiServer, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json"]);
    json(&api.ok(&args))
}

async fn pods_are_bound(api: &ApiServer, addr: &str) {
    let pods = "/api/v1/namespaces/default/pods";
    for (pod, node) in [("web-1", "n1"), ("web-2", "n1"), ("lone", "n1")] {
        let (code, status) =
            request(addr, "POST", &format!("{pods}/{pod}/binding"), JSON, &binding(pod, node)).await;
        assert_eq!(
            (code, status["status"].as_str(), status["code"].as_i64()),
            (201, Some("Success"), Some(201))
        );
    }
    // The older namespace-wide endpoint.
    let (code, _) =
        request(addr, "POST", "/api/v1/namespaces/default/bindings", JSON, &binding("solo", "n2")).await;
    assert_eq!(code, 201);
    let pod = get(api, &["pod", "web-1"]);
    assert_eq!(pod["spec"]["nodeName"], "n1");
    assert_eq!(pod["metadata"]["annotations"]["scheduled-by"], "test");
    let scheduled =
        pod["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled");
    assert_eq!(scheduled.map(|c| c["status"].clone()), Some(json!("True")), "{pod}");
    assert_eq!(get(api, &["pod", "solo"])["spec"]["nodeName"], "n2");

    // kube's refusals.
    let (code, status) =
        request(addr, "POST", &format!("{pods}/web-1/binding"), JSON, &binding("web-1", "n2")).await;
    assert_eq!(code, 409);
    assert_eq!(
        status["message"],
        "Operation cannot be fulfilled on pods/binding \"web-1\": pod web-1 is already assigned to node \"n1\""
    );
    let (code, status) =
        request(addr, "POST", &format!("{pods}/web-2/binding"), JSON, &binding("web-1", "n2")).await;
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some("name in URL does not match name in Binding object"))
    );
    let no_target =
        json!({"kind": "Binding", "metadata": {"name": "web-2"}, "target": {"kind": "Node"}}).to_string();
    let (code, status) = request(addr, "POST", &format!("{pods}/web-2/binding"), JSON, &no_target).await;
    assert_eq!((code, status["message"].as_str()), (500, Some("target.name: Required value")));
    let (code, _) =
        request(addr, "POST", &format!("{pods}/ghost/binding"), JSON, &binding("ghost", "n1")).await;
    assert_eq!(code, 404);
    assert_eq!(get(api, &["pod", "web-1"])["spec"]["nodeName"], "n1", "a refused binding changes nothing");

    // What their kubelet would report: running and ready.
    for pod in ["web-1", "web-2", "lone"] {
        let status = r#"{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#;
        api.ok(&["patch", "pod", pod, "--subresource=status", "-p", status]);
    }
}

/// The budget's status as kube's disruption controller writes it.
fn budget_status(api: &ApiServer, allowed: i64) {
    let status = json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
        "currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2}});
    api.ok(&["patch", "pdb", "web", "--subresource=status", "--type=merge", "-p", &status.to_string()]);
}

async fn drain_respects_the_budget(api: &ApiServer, addr: &str) {
    // A budget its controller has not seen yet holds every pod it selects.
    let eviction = |pod: &str| {
        json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}}).to_string()
    };
    let evict = "/api/v1/namespaces/default/pods/web-1/eviction";
    let (code, status) = request(addr, "POST", evict, JSON, &eviction("web-1")).await;
    assert_eq!((code, status["reason"].as_str()), (429, Some("TooManyRequests")), "{status}");
    assert_eq!(
        status["details"]["causes"][0]["message"],
        "The disruption budget web is still being processed by the server."
    );

    budget_status(api, 0);
    let (code, status) = request(addr, "POST", evict, JSON, &eviction("web-1")).await;
    assert_eq!(code, 429);
    assert_eq!(status["message"], "Cannot evict pod as it would violate the pod's disruption budget.");
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 2 currently"})
    );
    let (code, status) = request(addr, "POST", evict, JSON, &eviction("web-2")).await;
    assert_eq!(
        (code, status["message"].as_str()),
        (400, Some("name in URL does not match name in Eviction object"))
    );

    // kubectl drain: cordons, evicts what it may, and gives up on the rest.
    let (ok, _, stderr) = api.kubectl_in(&["drain", "n1", "--force", "--grace-period=0", "--timeout=6s"], "");
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("Cannot evict pod as it would violate the pod's disruption budget."), "{stderr}");
    assert_eq!(get(api, &["node", "n1"])["spec"]["unschedulable"], true);
    let left = api.ok(&["get", "pods", "-o", "name"]);
    assert!(left.contains("pod/web-1") && left.contains("pod/web-2") && !left.contains("pod/lone"), "{left}");

    // Once the budget allows two disruptions, the drain completes and spends them.
    budget_status(api, 2);
    let out = api.ok(&["drain", "n1", "--force", "--grace-period=0", "--timeout=30s"]);
    assert!(out.contains("node/n1 drained"), "{out}");
    let left = api.ok(&["get", "pods", "-o", "name"]);
    assert_eq!(left.trim(), "pod/solo", "only the pod on n2 is left");
    let budget = get(api, &["pdb", "web"]);
    assert_eq!(budget["status"]["disruptionsAllowed"], 0, "{budget}");
    let disrupted = budget["status"]["disruptedPods"].as_object().unwrap();
    assert!(disrupted.contains_key("web-1") && disrupted.contains_key("web-2"), "{budget}");
    let condition = &budget["status"]["conditions"][0];
    assert_eq!(
        (condition["type"].as_str(), condition["reason"].as_str()),
        (Some("DisruptionAllowed"), Some("InsufficientPods"))
    );
}

async fn ephemeral_containers_and_finalize(api: &ApiServer, addr: &str) {
    let out = api.ok(&["debug", "solo", "--image=busybox:1.36", "--container=debugger", "--target=app"]);
    assert!(!out.contains("error"), "{out}");
    let pod = get(api, &["pod", "solo"]);
    let debugger = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(
        (debugger["name"].as_str(), debugger["image"].as_str(), debugger["targetContainerName"].as_str()),
        (Some("debugger"), Some("busybox:1.36"), Some("app")),
        "{pod}"
    );
    // Added only: never changed nor removed, never through the pod itself.
    let path = "/api/v1/namespaces/default/pods/solo/ephemeralcontainers";
    let (code, status) = request(
        addr,
        "PATCH",
        path,
        "application/merge-patch+json",
        r#"{"spec":{"ephemeralContainers":[]}}"#,
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("existing ephemeral containers \"debugger\" may not be removed"),
        "{status}"
    );
    let changed = r#"{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox:1.37","targetContainerName":"app"}]}}"#;
    let (code, status) = request(addr, "PATCH", path, "application/merge-patch+json", changed).await;
    assert_eq!(code, 422, "{status}");
    let (code, status) = request(
        addr,
        "PATCH",
        path,
        "application/strategic-merge-patch+json",
        r#"{"spec":{"ephemeralContainers":[{"name":"app","image":"busybox","ports":[{"containerPort":80}]}]}}"#,
    )
    .await;
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap();
    assert!(message.contains("spec.ephemeralContainers[0].name: Duplicate value: \"app\""), "{message}");
    assert!(message.contains("ports: Forbidden: cannot be set for an Ephemeral Container"), "{message}");

    // namespaces/finalize writes the namespace's finalizers and nothing else.
    api.ok(&["create", "namespace", "fin"]);
    let mut namespace = get(api, &["namespace", "fin"]);
    assert_eq!(namespace["spec"]["finalizers"], json!(["kubernetes"]));
    namespace["spec"]["finalizers"] = json!([]);
    namespace["metadata"]["labels"]["ignored"] = json!("yes");
    let (code, _) =
        request(addr, "PUT", "/api/v1/namespaces/fin/finalize", JSON, &namespace.to_string()).await;
    assert_eq!(code, 200);
    let namespace = get(api, &["namespace", "fin"]);
    assert!(namespace["spec"].get("finalizers").is_none_or(|f| f == &json!([])), "{namespace}");
    assert!(namespace["metadata"]["labels"].get("ignored").is_none(), "{namespace}");
}

async fn discovery_lists_them(addr: &str) {
    let (_, list) = request(addr, "GET", "/api/v1", JSON, "").await;
    let find = |name: &str| list["resources"].as_array().unwrap().iter().find(|r| r["name"] == name).cloned();
    let eviction = find("pods/eviction").expect("pods/eviction");
    assert_eq!(
        (&eviction["group"], &eviction["version"], &eviction["kind"], &eviction["verbs"]),
        (&json!("policy"), &json!("v1"), &json!("Eviction"), &json!(["create"]))
    );
    assert_eq!(find("pods/binding").map(|b| b["kind"].clone()), Some(json!("Binding")));
    assert_eq!(find("bindings").map(|b| b["verbs"].clone()), Some(json!(["create"])));
    assert_eq!(find("serviceaccounts/token").map(|t| t["kind"].clone()), Some(json!("TokenRequest")));
    assert_eq!(find("namespaces/finalize").map(|t| t["verbs"].clone()), Some(json!(["update"])));
    assert!(find("pods/ephemeralcontainers").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_a_node_through_evictions() {
    let api = ApiServer::start(Backend::Rtcd).await;
    let addr = api.url.trim_start_matches("http://").to_string();
    api.ok_stdin(&["apply", "-f", "-"], MANIFEST);
    discovery_lists_them(&addr).await;
    pods_are_bound(&api, &addr).await;
    drain_respects_the_budget(&api, &addr).await;
    ephemeral_containers_and_finalize(&api, &addr).await;
}
