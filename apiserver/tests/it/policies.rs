//! ValidatingAdmissionPolicies as kubectl meets them: a policy with a
//! ConfigMap param denies Deployments over the param's replica limit with
//! kube's text and code; a Warn+Audit binding warns instead of denying; a
//! missing param denies as its binding says; a binding that selects only
//! namespaces applies to all the policy matches there; bad policies get
//! kube's 422.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn deployment(name: &str, replicas: u32) -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    .to_string()
}

fn binding(name: &str, policy: &str, param: Option<&str>, actions: &[&str]) -> String {
    let mut spec = json!({"policyName": policy, "validationActions": actions});
    if let Some(param) = param {
        spec["paramRef"] = json!({"name": param, "namespace": "default", "parameterNotFoundAction": "Deny"});
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name}, "spec": spec})
    .to_string()
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start(backend).await;
    api.ok(&["create", "configmap", "replica-limits", "--from-literal=maxReplicas=3"]);
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "replica-limit"},
    "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
        "variables": [{"name": "limit", "expression": "int(params.data.maxReplicas)"}],
        "validations": [{"expression": "object.spec.replicas <= variables.limit",
            "messageExpression": "'replicas must be no greater than ' + string(variables.limit)"}],
    }});
    api.ok_stdin(&["create", "-f", "-"], &policy.to_string());
    let stored: Value =
        serde_json::from_str(&api.ok(&["get", "validatingadmissionpolicy", "replica-limit", "-o", "json"]))
            .unwrap();
    assert_eq!(stored["spec"]["failurePolicy"], "Fail");
    assert_eq!(stored["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
    api.ok_stdin(
        &["create", "-f", "-"],
        &binding("replica-limit-binding", "replica-limit", Some("replica-limits"), &["Deny"]),
    );

    let out = api.kubectl_with(&["create", "-f", "-"], Some(&deployment("big", 5)), &[]);
    assert_eq!(
        stderr(&out),
        // kubectl prints an Invalid status from its causes, as it does
        // against kube (whose documentation shows the same empty field).
        "The deployments \"big\" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: replicas must be no greater than 3\n"
    );
    assert!(!api.kubectl(&["get", "deployment", "big"]).status.success());
    api.ok_stdin(&["create", "-f", "-"], &deployment("small", 2));
    // The param is read at each write: raising the limit lets it through.
    api.ok(&["patch", "configmap", "replica-limits", "-p", r#"{"data":{"maxReplicas":"6"}}"#]);
    api.ok_stdin(&["create", "-f", "-"], &deployment("big", 5));
    // (Scaling goes through deployments/scale, which the rule leaves out.)
    api.ok(&["scale", "deployment", "big", "--replicas=7"]);
    let out = api.kubectl(&["patch", "deployment", "big", "-p", r#"{"spec":{"replicas":8}}"#]);
    assert!(stderr(&out).contains("denied request: replicas must be no greater than 6"), "{}", stderr(&out));

    // Scale changes are admitted as the autoscaling/v1 Scale they are.
    let scale = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "scale-cap"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["deployments/scale"]}]},
            "validations": [{"expression": "object.kind == 'Scale' && object.spec.replicas <= 10", "reason": "Forbidden"}]}});
    api.ok_stdin(&["create", "-f", "-"], &scale.to_string());
    api.ok_stdin(&["create", "-f", "-"], &binding("scale-cap-binding", "scale-cap", None, &["Deny"]));
    api.ok(&["scale", "deployment", "big", "--replicas=4"]);
    let out = api.kubectl(&["scale", "deployment", "big", "--replicas=20"]);
    assert_eq!(
        stderr(&out),
        "Error from server (Forbidden): deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'scale-cap' with binding 'scale-cap-binding' denied request: failed expression: object.kind == 'Scale' && object.spec.replicas <= 10\n"
    );
    assert_eq!(api.ok(&["get", "deployment", "big", "-o", "jsonpath={.spec.replicas}"]), "4");

    // Warn and Audit: the write goes through with kube's warning.
    let labels = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "team-label"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "has(object.metadata.labels) && 'team' in object.metadata.labels",
                "message": "every configmap needs a team label"}]}});
    api.ok_stdin(&["create", "-f", "-"], &labels.to_string());
    api.ok_stdin(
        &["create", "-f", "-"],
        &binding("team-label-binding", "team-label", None, &["Warn", "Audit"]),
    );
    let out = api.kubectl(&["create", "configmap", "unlabelled", "--from-literal=a=b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "Warning: Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label-binding': every configmap needs a team label\n"
    );

    // kube's documented binding: only a namespace selector, so every
    // resource the policy matches, in the namespaces it selects.
    let demo = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "demo-policy.example.com"},
        "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 2"}]}});
    api.ok_stdin(&["create", "-f", "-"], &demo.to_string());
    let demo_binding = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "demo-binding-test.example.com"},
        "spec": {"policyName": "demo-policy.example.com", "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"environment": "test"}}}}});
    api.ok_stdin(&["create", "-f", "-"], &demo_binding.to_string());
    api.ok(&["create", "namespace", "staging"]);
    api.ok(&["label", "namespace", "staging", "environment=test"]);
    let out = api.kubectl_with(&["create", "-n", "staging", "-f", "-"], Some(&deployment("wide", 3)), &[]);
    assert!(
        stderr(&out).contains("ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 2"),
        "{}",
        stderr(&out)
    );
    api.ok_stdin(&["create", "-f", "-"], &deployment("wide", 3));

    // A binding whose param is missing denies, as parameterNotFoundAction says.
    api.ok_stdin(
        &["create", "-f", "-"],
        &binding("missing-param", "replica-limit", Some("absent"), &["Deny"]),
    );
    let out = api.kubectl_with(&["create", "-f", "-"], Some(&deployment("third", 1)), &[]);
    assert!(
        stderr(&out).contains("with binding 'missing-param' denied request: no params found for policy binding with `Deny` parameterNotFoundAction"),
        "{}",
        stderr(&out)
    );

    // Bad policies and bindings get kube's 422 texts.
    let bad = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "bad"}, "spec": {"failurePolicy": "Sometimes", "validations": [{"expression": "object.spec.replicas <="}]}});
    let text = stderr(&api.kubectl_with(&["create", "-f", "-"], Some(&bad.to_string()), &[]));
    for expected in [
        "spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"",
        "spec.matchConstraints: Required value",
        "spec.validations[0].expression: Invalid value: \"object.spec.replicas <=\": compilation failed: ",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    let text = stderr(&api.kubectl_with(
        &["create", "-f", "-"],
        Some(&binding("both", "replica-limit", None, &["Deny", "Warn"])),
        &[],
    ));
    assert!(
        text.contains(
            "spec.validationActions: Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn"
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policies_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policies_on_etcd() {
    scenario(Backend::Etcd).await;
}
