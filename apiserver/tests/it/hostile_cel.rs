//! CEL written to take the API server down, as issue 44's probe wrote it:
//! CRD rules and admission policies thousands of terms deep, or longer than
//! kube allows, are refused with kube's texts at creation; a rule at the
//! edge of kube's depth is accepted and evaluated on every create; the
//! server answers throughout.

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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_cel_is_refused_not_fatal_on_rtcd() {
    scenario(Backend::Rtcd).await;
}
