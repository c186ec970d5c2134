//! MutatingAdmissionPolicies as kubectl meets them: an apply configuration
//! labels every new ConfigMap with its param's value (kept labels stay, a
//! custom resource is mutated the same way); a JSON patch with a `test`
//! caps Deployments' replicas only where the test holds; an apply
//! configuration that would replace an atomic field is refused with kube's
//! 403 and text unless the policy fails open; a bad policy gets kube's 422.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, request};

const REGISTRATION: &str = "admissionregistration.k8s.io/v1";

fn policy(name: &str, resource: (&str, &str), mutation: Value, extra: Value) -> String {
    let (group, resource) = resource;
    let mut spec = json!({
        "matchConstraints": {"resourceRules": [{"apiGroups": [group], "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"], "resources": [resource]}]},
        "mutations": [mutation],
        "reinvocationPolicy": "Never",
    });
    spec.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    json!({"apiVersion": REGISTRATION, "kind": "MutatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec})
        .to_string()
}

fn binding(name: &str, policy: &str, param: Option<&str>) -> String {
    let mut spec = json!({"policyName": policy});
    if let Some(param) = param {
        spec["paramRef"] = json!({"name": param, "namespace": "default", "parameterNotFoundAction": "Deny"});
    }
    json!({"apiVersion": REGISTRATION, "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": name}, "spec": spec})
        .to_string()
}

fn deployment(name: &str, replicas: u32) -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    .to_string()
}

fn get(api: &ApiServer, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    serde_json::from_str(&api.ok(&all)).unwrap()
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start(backend).await;
    api.ok(&["create", "configmap", "team", "--from-literal=name=storage"]);

    // An apply configuration, with a param: the label merges into those
    // the object has.
    let labels = json!({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
        "Object{metadata: Object.metadata{labels: {'team': params.data.name, 'by': 'policy'}}}"}});
    let extra = json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConditions": [{"name": "not-the-param", "expression": "object.metadata.name != 'team'"}]});
    api.ok_stdin(&["create", "-f", "-"], &policy("team-labels", ("", "configmaps"), labels, extra));
    let stored = get(&api, &["mutatingadmissionpolicy", "team-labels"]);
    assert_eq!(stored["spec"]["failurePolicy"], "Fail");
    assert_eq!(stored["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
    api.ok_stdin(&["create", "-f", "-"], &binding("team-labels", "team-labels", Some("team")));
    let table = api.ok(&["get", "mutatingadmissionpolicybindings"]);
    assert!(
        table.starts_with(
            "NAME          POLICYNAME    PARAMREF       AGE\nteam-labels   team-labels   default/team   "
        ),
        "{table}"
    );

    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "labels": {"keep": "yes", "by": "me"}}, "data": {"a": "b"}});
    api.ok_stdin(&["create", "-f", "-"], &config.to_string());
    let labels = &get(&api, &["configmap", "app"])["metadata"]["labels"];
    assert_eq!(labels, &json!({"keep": "yes", "by": "policy", "team": "storage"}));
    // The param is read at each write.
    api.ok(&["patch", "configmap", "team", "-p", r#"{"data":{"name":"network"}}"#]);
    api.ok(&["label", "configmap", "app", "extra=1"]);
    assert_eq!(get(&api, &["configmap", "app"])["metadata"]["labels"]["team"], "network");
    // The match condition leaves the param alone.
    assert!(get(&api, &["configmap", "team"])["metadata"]["labels"].is_null());

    // A JSON patch whose test decides: replicas 5 become 3, others stay.
    let cap = json!({"patchType": "JSONPatch", "jsonPatch": {"expression": "[
        JSONPatch{op: 'test', path: '/spec/replicas', value: 5},
        JSONPatch{op: 'replace', path: '/spec/replicas', value: 3},
        JSONPatch{op: 'add', path: '/metadata/annotations', value: {}},
        JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('example.com/capped'), value: 'true'}
    ]"}});
    api.ok_stdin(&["create", "-f", "-"], &policy("cap", ("apps", "deployments"), cap, json!({})));
    api.ok_stdin(&["create", "-f", "-"], &binding("cap", "cap", None));
    api.ok_stdin(&["create", "-f", "-"], &deployment("five", 5));
    api.ok_stdin(&["create", "-f", "-"], &deployment("two", 2));
    let five = get(&api, &["deployment", "five"]);
    assert_eq!(five["spec"]["replicas"], 3);
    assert_eq!(five["metadata"]["annotations"]["example.com/capped"], "true");
    // Defaults are set again after the mutation, as kube does.
    assert_eq!(five["spec"]["strategy"]["type"], "RollingUpdate");
    let two = get(&api, &["deployment", "two"]);
    assert_eq!(two["spec"]["replicas"], 2);
    assert!(two["metadata"]["annotations"].get("example.com/capped").is_none());

    // Replacing an atomic struct whole is refused: kube's 403, reason
    // Invalid, naming policy, binding and path.
    let selector = json!({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
        "Object{spec: Object.spec{selector: Object.spec.selector{matchLabels: {'app': 'x'}}}}"}});
    api.ok_stdin(&["create", "-f", "-"], &policy("selector", ("apps", "deployments"), selector, json!({})));
    api.ok_stdin(&["create", "-f", "-"], &binding("selector", "selector", None));
    let addr = api.url.trim_start_matches("http://");
    let (code, status) = request(
        addr,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        "application/json",
        &deployment("three", 1),
    )
    .await;
    assert_eq!(code, 403, "{status}");
    assert_eq!(status["reason"], "Invalid");
    let message = "policy 'selector' with binding 'selector' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector";
    assert_eq!(status["message"], message);
    assert_eq!(status["details"]["causes"], json!([{"message": message}]));
    assert_eq!(status["details"]["kind"], "deployments");
    assert!(!api.kubectl(&["get", "deployment", "three"]).status.success());
    // Failing open, the write goes through unmutated by that policy.
    api.ok(&["patch", "mutatingadmissionpolicy", "selector", "-p", r#"{"spec":{"failurePolicy":"Ignore"}}"#]);
    api.ok_stdin(&["create", "-f", "-"], &deployment("three", 1));
    assert_eq!(
        get(&api, &["deployment", "three"])["spec"]["selector"]["matchLabels"],
        json!({"app": "three"})
    );

    // kube's validation.
    let bad = json!({"apiVersion": REGISTRATION, "kind": "MutatingAdmissionPolicy", "metadata": {"name": "bad"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["DELETE"], "resources": ["pods"]}]},
            "mutations": [{"patchType": "JSONPatch"}]}});
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], &bad.to_string());
    assert!(!ok);
    for cause in [
        "spec.matchConstraints.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CREATE\", \"UPDATE\"",
        "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch",
        "spec.reinvocationPolicy: Required value",
    ] {
        assert!(err.contains(cause), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_policies_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_policies_on_etcd() {
    scenario(Backend::Etcd).await;
}
