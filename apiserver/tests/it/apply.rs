//! Server-side apply as a user meets it, on rtcd and on etcd: real kubectl
//! (`apply --server-side`, `--force-conflicts`, conflicts with `kubectl
//! patch`/`label` managers, fields a manager stops applying), the official
//! Python client's server-side apply, managedFields as kube writes them,
//! and the refusals of bad applies (nothing stored).

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, json, request};

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 80}]
      - name: log
        image: busybox
"#;

fn get(api: &ApiServer, what: &str) -> Value {
    json(&api.ok(&["get", what, "-o", "json", "--show-managed-fields"]))
}

/// The managedFields entry of `manager`, if it has one.
fn entry<'a>(object: &'a Value, manager: &str) -> Option<&'a Value> {
    object["metadata"]["managedFields"].as_array()?.iter().find(|e| e["manager"] == manager)
}

async fn apply_suite(backend: Backend) {
    let api = ApiServer::start(backend).await;
    let apply = ["apply", "--server-side", "-f", "-"];

    // Create by apply.
    let (ok, out, err) = api.kubectl_in(&apply, DEPLOYMENT);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "deployment.apps/web serverside-applied");
    let web = get(&api, "deployment/web");
    let kubectl = entry(&web, "kubectl").unwrap_or_else(|| panic!("no kubectl manager: {web}"));
    assert_eq!(kubectl["operation"], "Apply");
    assert_eq!(kubectl["apiVersion"], "apps/v1");
    assert_eq!(kubectl["fieldsType"], "FieldsV1");
    let fields = &kubectl["fieldsV1"];
    assert_eq!(fields["f:spec"]["f:replicas"], json!({}));
    assert_eq!(fields["f:metadata"]["f:labels"], json!({"f:app": {}, "f:tier": {}}));
    let containers = &fields["f:spec"]["f:template"]["f:spec"]["f:containers"];
    let web_container = &containers["k:{\"name\":\"web\"}"];
    assert_eq!(web_container["."], json!({}), "{containers}");
    assert_eq!(web_container["f:image"], json!({}));
    // ports are keyed by port and protocol, the protocol defaulted
    assert_eq!(
        web_container["f:ports"]["k:{\"containerPort\":80,\"protocol\":\"TCP\"}"]["f:containerPort"],
        json!({}),
        "{web_container}"
    );
    assert!(containers.get("k:{\"name\":\"log\"}").is_some());
    // Fields the server sets are nobody's.
    assert!(fields["f:metadata"].get("f:name").is_none() && fields.get("f:status").is_none());
    // kubectl hides managedFields unless asked.
    let plain = json(&api.ok(&["get", "deployment/web", "-o", "json"]));
    assert!(plain["metadata"].get("managedFields").is_none());

    // Applying the same again changes nothing.
    let rv = web["metadata"]["resourceVersion"].clone();
    assert!(api.kubectl_in(&apply, DEPLOYMENT).0);
    assert_eq!(
        get(&api, "deployment/web")["metadata"]["resourceVersion"],
        rv,
        "a no-op apply writes nothing"
    );

    // Another manager takes replicas; kubectl's apply now conflicts and
    // nothing is stored.
    api.ok(&["patch", "deployment/web", "--type=merge", "-p", r#"{"spec":{"replicas":5}}"#]);
    api.ok(&["label", "deployment/web", "owner=ops"]);
    let web = get(&api, "deployment/web");
    assert_eq!(entry(&web, "kubectl-patch").unwrap()["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert!(entry(&web, "kubectl").unwrap()["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    let changed = DEPLOYMENT.replace("replicas: 2", "replicas: 3");
    let (ok, _, err) = api.kubectl_in(&apply, &changed);
    assert!(!ok);
    assert!(
        err.contains(
            r#"Apply failed with 1 conflict: conflict with "kubectl-patch" using apps/v1: .spec.replicas"#
        ),
        "{err}"
    );
    assert_eq!(get(&api, "deployment/web")["spec"]["replicas"], 5);

    // Forced, kubectl takes replicas back; the patcher's entry goes.
    let forced = ["apply", "--server-side", "--force-conflicts", "-f", "-"];
    let (ok, _, err) = api.kubectl_in(&forced, &changed);
    assert!(ok, "{err}");
    let web = get(&api, "deployment/web");
    assert_eq!(web["spec"]["replicas"], 3);
    assert!(entry(&web, "kubectl-patch").is_none(), "{}", web["metadata"]["managedFields"]);
    assert_eq!(entry(&web, "kubectl").unwrap()["fieldsV1"]["f:spec"]["f:replicas"], json!({}));

    // Fields kubectl stops applying go; what another manager set stays.
    let smaller =
        changed.replace(", tier: front", "").replace("      - name: log\n        image: busybox\n", "");
    let (ok, _, err) = api.kubectl_in(&apply, &smaller);
    assert!(ok, "{err}");
    let web = get(&api, "deployment/web");
    let labels = &web["metadata"]["labels"];
    assert_eq!(labels, &json!({"app": "web", "owner": "ops"}), "tier removed, kubectl-label's owner kept");
    let names: Vec<&str> = web["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, vec!["web"]);
    assert!(entry(&web, "kubectl-label").is_some());

    // A scaler (kubectl scale, an autoscaler) takes spec.replicas through
    // /scale; a manifest that stops setting replicas then leaves them be.
    api.ok(&["scale", "deployment/web", "--replicas=7"]);
    let web = get(&api, "deployment/web");
    let scaler =
        web["metadata"]["managedFields"].as_array().unwrap().iter().find(|e| e["subresource"] == "scale");
    assert_eq!(scaler.map(|e| &e["fieldsV1"]), Some(&json!({"f:spec": {"f:replicas": {}}})), "{web}");
    let (ok, _, err) = api.kubectl_in(&apply, &smaller.replace("  replicas: 3\n", ""));
    assert!(ok, "{err}");
    assert_eq!(get(&api, "deployment/web")["spec"]["replicas"], 7);

    // A server-side dry run shows the result and stores nothing.
    let (ok, out, err) = api.kubectl_in(
        &["apply", "--server-side", "--force-conflicts", "--dry-run=server", "-o", "json", "-f", "-"],
        DEPLOYMENT,
    );
    assert!(ok, "{err}");
    assert_eq!(json(&out)["spec"]["replicas"], 2, "{out}");
    assert_eq!(get(&api, "deployment/web")["spec"]["replicas"], 7);

    // Client-side apply keeps working beside it, and kubectl's server-side
    // apply takes over what its client-side apply set (no conflict over a
    // field nobody changed since), keeping the annotation up to date.
    let csa = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: csa}\ndata: {a: '1', b: '1'}\n";
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], csa);
    assert!(ok, "{err}");
    let before = get(&api, "configmap/csa");
    assert_eq!(entry(&before, "kubectl-client-side-apply").unwrap()["operation"], "Update");
    let (ok, _, err) = api.kubectl_in(&apply, &csa.replace("a: '1'", "a: '2'"));
    assert!(ok, "{err}");
    let after = get(&api, "configmap/csa");
    assert_eq!(after["data"], json!({"a": "2", "b": "1"}));
    assert_eq!(entry(&after, "kubectl").unwrap()["fieldsV1"]["f:data"], json!({"f:a": {}, "f:b": {}}));
    let annotation = after["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(json(annotation)["data"]["a"], "2", "{annotation}");
    // Someone else's server-side apply of the same field conflicts.
    let (ok, _, err) = api.kubectl_in(
        &["apply", "--server-side", "--field-manager=team-b", "-f", "-"],
        &csa.replace("a: '1'", "a: '3'"),
    );
    assert!(!ok && err.contains(r#"conflict with "kubectl": .data.a"#), "{err}");

    refusals(&api).await;
    python_client(&api);
}

/// Bad applies get kube's answers and store nothing.
async fn refusals(api: &ApiServer) {
    let addr = api.url.trim_start_matches("http://");
    let path = "/api/v1/namespaces/default/configmaps/bad";
    let with_manager = format!("{path}?fieldManager=test");
    let yaml = "application/apply-patch+yaml";
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {a: '1'}\n";

    let (code, status) = request(addr, "PATCH", path, yaml, body).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let (code, status) = request(addr, "PATCH", &with_manager, yaml, "- a\n- b\n").await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
    let (code, status) = request(addr, "PATCH", &with_manager, yaml, "a: [\n").await;
    assert_eq!(code, 400, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("error encoding patch: error converting YAML to JSON: yaml: ")
    );
    let managed = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, managedFields: [{manager: x}]}\n";
    let (code, status) = request(addr, "PATCH", &with_manager, yaml, managed).await;
    assert_eq!((code, status["message"].as_str()), (400, Some("metadata.managedFields must be nil")));
    let wrong = body.replace("apiVersion: v1", "apiVersion: v2");
    let (code, status) = request(addr, "PATCH", &with_manager, yaml, &wrong).await;
    assert_eq!(code, 400, "{status}");
    assert_eq!(status["message"], "invalid object type: /v2, Kind=ConfigMap");
    let unknown = body.replace("\ndata:", "\nbogus: 1\ndata:");
    let (code, status) = request(addr, "PATCH", &with_manager, yaml, &unknown).await;
    assert_eq!(code, 500, "{status}");
    assert_eq!(
        status["message"],
        "failed to create typed patch object (/bad; /v1, Kind=ConfigMap): .bogus: field not declared in schema"
    );
    let other = body.replace("name: bad", "name: other");
    let (code, status) = request(addr, "PATCH", &with_manager, yaml, &other).await;
    assert_eq!(code, 400);
    assert_eq!(status["message"], "the name of the object (other) does not match the name on the URL (bad)");
    let merge = "application/merge-patch+json";
    let (code, status) = request(addr, "PATCH", &format!("{path}?force=true"), merge, "{}").await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["details"]["causes"][0]["field"], "force");
    let (code, _) = request(addr, "GET", path, "", "").await;
    assert_eq!(code, 404, "nothing was stored");

    // A good one creates (201), then updates (200).
    assert_eq!(request(addr, "PATCH", &with_manager, yaml, body).await.0, 201);
    let (code, cm) = request(addr, "PATCH", &with_manager, yaml, &body.replace("'1'", "'2'")).await;
    assert_eq!((code, &cm["data"]["a"]), (200, &json!("2")));
}

/// The official Python client's server-side apply (its dynamic client).
fn python_client(api: &ApiServer) {
    let script = r#"
import json
from kubernetes import config, dynamic
from kubernetes.client import api_client
from kubernetes.dynamic.exceptions import ConflictError
client = dynamic.DynamicClient(api_client.ApiClient(configuration=config.load_kube_config()))
cms = client.resources.get(api_version="v1", kind="ConfigMap")
body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py", "namespace": "default"},
        "data": {"k": "1"}}
first = cms.server_side_apply(body=body, name="py", namespace="default", field_manager="python")
body["data"]["k"] = "2"
try:
    cms.server_side_apply(body=body, name="py", namespace="default", field_manager="other")
    conflict = None
except ConflictError as e:
    conflict = json.loads(e.body)
forced = cms.server_side_apply(body=body, name="py", namespace="default", field_manager="other",
                               force_conflicts=True)
managers = sorted((m["manager"], m["operation"]) for m in forced.metadata.managedFields)
print(json.dumps({"first": first.data.k, "conflict": conflict, "forced": forced.data.k, "managers": managers}))
"#;
    let out = api.python(script, &[]);
    assert!(out.status.success(), "python failed:\n{}\n{}", String::from_utf8_lossy(&out.stderr), api.log());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = json(stdout.lines().last().unwrap_or_default());
    assert_eq!(result["first"], "1");
    assert_eq!(result["conflict"]["code"], 409);
    assert_eq!(
        result["conflict"]["message"],
        "Apply failed with 1 conflict: conflict with \"python\": .data.k"
    );
    assert_eq!(result["forced"], "2");
    assert_eq!(result["managers"], json!([["other", "Apply"]]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_on_rtcd() {
    apply_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_on_etcd() {
    apply_suite(Backend::Etcd).await;
}
