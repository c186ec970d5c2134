//! CEL written to take the API server down, as issue 44's probe wrote it:
//! CRD rules and admission policies thousands of terms deep, or longer than
//! kube allows, are refused with kube's texts at creation; a rule at the
//! edge of kube's depth is accepted and evaluated on every create; rules
//! kube's static estimate puts far over budget are refused at creation;
//! rules and policies that would run for minutes stop at kube's cost limit
//! with kube's texts; the server answers throughout.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend};

fn crd(rule: &str) -> String {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "x-kubernetes-validations": [{"rule": rule}],
                    "properties": {"n": {"type": "integer"}, "a": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}]}})
    .to_string()
}

fn policy(expression: &str) -> String {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "deep"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": expression}]}})
    .to_string()
}

fn refused(api: &ApiServer, body: &str) -> String {
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], body);
    assert!(!ok, "accepted");
    stderr
}

fn alive(api: &ApiServer) {
    assert_eq!(api.ok(&["get", "--raw", "/readyz"]), "ok");
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start(backend).await;

    // Deeper than kube's 250: refused at creation, with cel-go's text.
    let deep = format!("self.n{} > 0", "+1".repeat(6000));
    let stderr = refused(&api, &crd(&deep));
    assert!(
        stderr.contains("compilation failed: max recursion depth exceeded"),
        "{}",
        &stderr[..stderr.len().min(400)]
    );
    alive(&api);
    let selects = format!("self{} == 1", ".a".repeat(49_000));
    let stderr = refused(&api, &crd(&selects));
    assert!(
        stderr.contains("compilation failed: max recursion depth exceeded"),
        "{}",
        &stderr[..stderr.len().min(400)]
    );
    let long = format!("self{} == 1", ".a".repeat(60_000));
    let stderr = refused(&api, &crd(&long));
    assert!(
        stderr.contains(&format!(
            "compilation failed: expression code point size exceeds limit: size: {}, limit 100000",
            long.chars().count()
        )),
        "{}",
        &stderr[..stderr.len().min(400)]
    );
    let parentheses = format!("{}self.n{} > 0", "(".repeat(100_000), ")".repeat(100_000));
    let stderr = refused(&api, &crd(&parentheses));
    assert!(
        stderr.contains("compilation failed: expression code point size exceeds limit"),
        "{}",
        &stderr[..stderr.len().min(400)]
    );
    let stderr = refused(&api, &policy(&format!("1{} > 0", "+1".repeat(6000))));
    assert!(
        stderr.contains("compilation failed: max recursion depth exceeded"),
        "{}",
        &stderr[..stderr.len().min(400)]
    );
    alive(&api);

    // At the edge of the depth: stored, and evaluated on every create.
    let edge = format!("self.n{} > 240", "+1".repeat(240));
    api.ok_stdin(&["create", "-f", "-"], &crd(&edge));
    let established = || {
        let crd: Value =
            serde_json::from_str(&api.ok(&["get", "crd", "gadgets.example.com", "-o", "json"])).unwrap();
        crd["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !established() {
        assert!(std::time::Instant::now() < deadline, "the CRD was never established");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let gadget = |name: &str, n: i64| {
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": {"n": n}}).to_string()
    };
    // (Discovery may lag the CRD a moment.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &gadget("one", 1));
        if ok {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no gadget could be created: {stderr}");
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let stderr = refused(&api, &gadget("zero", -1));
    assert!(
        stderr.contains("spec: Invalid value: failed rule: self.n+1+1"),
        "{}",
        &stderr[..stderr.len().min(400)]
    );
    alive(&api);
    costly_rules(&api);
    costly_policy(&api);
    alive(&api);
}

/// Retries `create` of `body` until `accepted` says the answer is the one
/// awaited (a CRD's kind or a policy takes a moment to be served).
fn create_until(api: &ApiServer, body: &str, accepted: impl Fn(bool, &str) -> bool) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], body);
        if accepted(ok, &stderr) {
            return stderr;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never answered as awaited: {}",
            &stderr[..stderr.len().min(400)]
        );
        if ok {
            api.ok_stdin(&["delete", "-f", "-"], body);
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

/// The CRD of `costly_rules`: `bounded` gives its lists and strings the
/// limits that keep kube's static estimate within budget.
fn tally_crd(bounded: bool) -> String {
    let rules = json!([{"rule": "self.items.all(x, self.items.all(y, y >= 0))"},
        {"rule": "self.strs.all(s, s.matches(self.p))"}]);
    let (items, strs, p) = if bounded {
        (
            json!({"type": "array", "maxItems": 1000, "items": {"type": "integer"}}),
            json!({"type": "array", "maxItems": 1000, "items": {"type": "string", "maxLength": 400}}),
            json!({"type": "string", "maxLength": 50}),
        )
    } else {
        (
            json!({"type": "array", "items": {"type": "integer"}}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "string"}),
        )
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "tallies.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "tallies", "singular": "tally", "kind": "Tally", "listKind": "TallyList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "x-kubernetes-validations": rules, "properties": {
                    "items": items, "strs": strs, "p": p}}}}}}]}})
    .to_string()
}

/// Rules whose estimated cost kube refuses at creation (a quadratic loop
/// and a regex over lists and strings without bounds) are refused with
/// kube's texts. Bounded, the same rules are accepted: the quadratic one
/// over 1,000 × 1,000 elements then stops at kube's per-call limit when it
/// runs, and no rule after it runs; a regex over a thousand strings is
/// compiled once and passes.
fn costly_rules(api: &ApiServer) {
    let stderr = refused(api, &tally_crd(false));
    let over = "exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, \
        maxProperties, and maxLength where arrays, maps, and strings are declared)";
    for i in 0..2 {
        let expected = format!(
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[{i}].rule: \
            Forbidden: estimated rule cost {over}"
        );
        assert!(stderr.contains(&expected), "{}", &stderr[..stderr.len().min(1200)]);
    }
    let total = format!(
        "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total \
        for entire OpenAPIv3 schema {over}"
    );
    assert!(stderr.contains(&total), "{}", &stderr[..stderr.len().min(1200)]);

    api.ok_stdin(&["create", "-f", "-"], &tally_crd(true));
    let tally = |name: &str, items: Vec<i64>, strs: Vec<String>| {
        json!({"apiVersion": "example.com/v1", "kind": "Tally", "metadata": {"name": name},
            "spec": {"items": items, "strs": strs, "p": "(\\w\\d){200}"}})
        .to_string()
    };
    let stderr = create_until(api, &tally("many", (0..1000).collect(), vec![]), |ok, stderr| {
        !ok && !stderr.contains("the server doesn't have a resource type")
            && !stderr.contains("no matches for kind")
            && !stderr.contains("could not find the requested resource")
    });
    let expected = "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': \
        no further validation rules will be run due to call cost exceeds limit for rule: \
        self.items.all(x, self.items.all(y, y >= 0))";
    assert!(stderr.contains(expected), "{}", &stderr[..stderr.len().min(600)]);
    assert!(!stderr.contains("self.strs"), "a rule ran after the limit: {stderr}");

    let matching = vec!["a1".repeat(200); 1000];
    api.ok_stdin(&["create", "-f", "-"], &tally("matching", vec![1, 2], matching));
    let stderr = refused(api, &tally("unmatched", vec![1], vec!["zz".to_string()]));
    assert!(
        stderr.contains("spec: Invalid value: failed rule: self.strs.all(s, s.matches(self.p))"),
        "{stderr}"
    );
}

/// A policy validation over 2,000 × 2,000 keys stops at the per-call limit
/// and denies with kube's text.
fn costly_policy(api: &ApiServer) {
    let expression =
        "!object.metadata.name.startsWith('costly') || object.data.all(k, object.data.all(j, j != ''))";
    let mut policy: Value = serde_json::from_str(&policy(expression)).unwrap();
    policy["metadata"]["name"] = json!("costly");
    api.ok_stdin(&["create", "-f", "-"], &policy.to_string());
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "costly"}, "spec": {"policyName": "costly", "validationActions": ["Deny"]}});
    api.ok_stdin(&["create", "-f", "-"], &binding.to_string());
    let data: serde_json::Map<String, Value> = (0..2000).map(|i| (format!("k{i}"), json!("v"))).collect();
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "costly-map", "namespace": "default"},
        "data": data});
    let stderr = create_until(api, &config_map.to_string(), |ok, _| !ok);
    let expected = format!(
        "ValidatingAdmissionPolicy 'costly' with binding 'costly' denied request: expression '{expression}' \
        resulted in error: operation cancelled: actual cost limit exceeded"
    );
    assert!(stderr.contains(&expected), "{}", &stderr[..stderr.len().min(600)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_cel_is_refused_not_fatal_on_rtcd() {
    scenario(Backend::Rtcd).await;
}
