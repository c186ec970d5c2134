//! Admission webhooks as kubectl meets them, against a real HTTPS webhook
//! on loopback: a mutating webhook reached through a Service's endpoints
//! labels ConfigMaps in selected namespaces (warning and all); a validating
//! webhook's refusal reaches kubectl in kube's words; unreachable, slow and
//! misbehaving webhooks fail the write (`Fail`) or are passed over
//! (`Ignore`) and the object is left as it was; dry runs and bad
//! configurations get kube's answers.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, free_port};
use crate::webhook_server::WebhookServer;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A ConfigMap body with `labels`.
fn configmap(name: &str, labels: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
        .to_string()
}

/// One validating webhook on ConfigMap creates whose object carries
/// `probe=<probe>`.
fn probe_hook(name: &str, probe: &str, url: &str, ca: &str, failure: &str, timeout: u32) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "objectSelector": {"matchLabels": {"probe": probe}},
        "failurePolicy": failure,
        "sideEffects": "None",
        "timeoutSeconds": timeout,
        "admissionReviewVersions": ["v1"],
    })
}

async fn scenario(backend: Backend) {
    let hooks = WebhookServer::start().await;
    // ConfigMap writes audited with their bodies: the webhooks' annotations
    // (the patch one only at Request level and above) are in the events.
    let api = ApiServer::start_prepared(backend, false, |dir| {
        let policy = dir.join("audit-policy.yaml");
        std::fs::write(
            &policy,
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Request\n  resources: [{group: \"\", resources: [configmaps]}]\n",
        )
        .unwrap();
        let flags = [
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", dir.join("audit.log").display()),
        ];
        std::fs::write(dir.join("flags"), flags.join("\n")).unwrap();
    })
    .await;
    let ca = hooks.ca_bundle();

    // The mutating webhook runs "in the cluster": a Service whose
    // endpoints are the webhook's address on this machine.
    api.ok(&["create", "namespace", "webhooks"]);
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks", "namespace": "webhooks"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": hooks.port}]}});
    api.ok_stdin(&["create", "-f", "-"], &service.to_string());
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "hooks", "namespace": "webhooks"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": hooks.port}]}]});
    api.ok_stdin(&["apply", "-f", "-"], &endpoints.to_string());
    let mutating = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "labeller"},
    "webhooks": [{
        "name": "label.rtcd.dev",
        "clientConfig": {"service": {"namespace": "webhooks", "name": "hooks", "path": "/mutate"}, "caBundle": ca},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "namespaceSelector": {"matchLabels": {"inject": "yes"}},
        "sideEffects": "NoneOnDryRun",
        "admissionReviewVersions": ["v1beta1", "v1"],
    }]});
    api.ok_stdin(&["create", "-f", "-"], &mutating.to_string());
    // kube's defaults are filled in.
    let stored: Value =
        serde_json::from_str(&api.ok(&["get", "mutatingwebhookconfiguration", "labeller", "-o", "json"]))
            .unwrap();
    let hook = &stored["webhooks"][0];
    assert_eq!(
        (hook["failurePolicy"].as_str(), hook["matchPolicy"].as_str()),
        (Some("Fail"), Some("Equivalent"))
    );
    assert_eq!(
        (hook["timeoutSeconds"].as_i64(), hook["reinvocationPolicy"].as_str()),
        (Some(10), Some("Never"))
    );
    assert_eq!(hook["clientConfig"]["service"]["port"], 443);
    assert_eq!(hook["rules"][0]["scope"], "*");
    assert_eq!(hook["objectSelector"], json!({}));

    api.ok(&["create", "namespace", "shop"]);
    api.ok(&["label", "namespace", "shop", "inject=yes"]);
    let out = api.kubectl(&["create", "configmap", "prices", "-n", "shop", "--from-literal=a=1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "Warning: labelled by the test webhook\n");
    assert_eq!(
        api.ok(&["get", "configmap", "prices", "-n", "shop", "-o", "jsonpath={.metadata.labels.mutated}"]),
        "yes"
    );
    let audit = std::fs::read_to_string(api.dir.path().join("audit.log")).unwrap();
    let event: Value = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["verb"] == "create" && e["objectRef"]["name"] == "prices")
        .unwrap_or_else(|| panic!("the create of prices is not audited: {audit}"));
    let annotations = &event["annotations"];
    assert_eq!(annotations["label.rtcd.dev/decision"], "labelled");
    let mutation: Value = serde_json::from_str(
        annotations["mutation.webhook.admission.k8s.io/round_0_index_0"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(mutation, json!({"configuration": "labeller", "webhook": "label.rtcd.dev", "mutated": true}));
    let patch: Value =
        serde_json::from_str(annotations["patch.webhook.admission.k8s.io/round_0_index_0"].as_str().unwrap())
            .unwrap();
    assert_eq!(patch["patchType"], "JSONPatch");
    assert_eq!(
        patch["patch"][0],
        json!({"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}})
    );
    // Outside the selected namespaces the webhook is not called.
    let before = hooks.calls.load(Ordering::SeqCst);
    api.ok(&["create", "configmap", "plain", "--from-literal=a=1"]);
    assert_eq!(api.ok(&["get", "configmap", "plain", "-o", "jsonpath={.metadata.labels}"]), "");
    assert_eq!(hooks.calls.load(Ordering::SeqCst), before);
    // A dry run calls a NoneOnDryRun webhook and stores nothing.
    let out = api.kubectl(&[
        "create",
        "configmap",
        "tried",
        "-n",
        "shop",
        "--from-literal=a=1",
        "--dry-run=server",
        "-o",
        "jsonpath={.metadata.labels.mutated}",
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "yes", "{}", stderr(&out));
    assert!(!api.kubectl(&["get", "configmap", "tried", "-n", "shop"]).status.success());

    // Validating webhooks: one refusing, and probes of failing ones.
    let closed = free_port();
    let validating = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "guards"},
    "webhooks": [
        {
            "name": "deny.rtcd.dev",
            "clientConfig": {"url": hooks.url("/deny"), "caBundle": ca},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        },
        probe_hook("down.rtcd.dev", "down", &format!("https://127.0.0.1:{closed}/"), &ca, "Fail", 10),
        probe_hook("slow.rtcd.dev", "slow", &hooks.url("/slow"), &ca, "Fail", 1),
        probe_hook("uid.rtcd.dev", "uid", &hooks.url("/wrong-uid"), &ca, "Fail", 10),
        probe_hook("garbage.rtcd.dev", "garbage", &hooks.url("/garbage"), &ca, "Fail", 10),
        probe_hook("untrusted.rtcd.dev", "untrusted", &hooks.url("/"), "", "Fail", 10),
        probe_hook("ignored.rtcd.dev", "ignored", &format!("https://127.0.0.1:{closed}/"), &ca, "Ignore", 10),
    ]});
    api.ok_stdin(&["create", "-f", "-"], &validating.to_string());
    let table = api.ok(&[
        "get",
        "validatingwebhookconfigurations",
        "--no-headers",
        "-o",
        "custom-columns=N:.metadata.name",
    ]);
    assert_eq!(table, "guards\n");
    let printed = api.ok(&["get", "validatingwebhookconfiguration", "guards"]);
    let columns: Vec<String> =
        printed.lines().map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(columns[..2], ["NAME WEBHOOKS", "guards 7"]);

    let refuse = |name: &str, labels: Value| {
        let out = api.kubectl_with(&["create", "-f", "-"], Some(&configmap(name, labels)), &[]);
        assert!(!out.status.success(), "{name} was created");
        assert!(!api.kubectl(&["get", "configmap", name]).status.success(), "{name} was stored");
        stderr(&out)
    };
    assert_eq!(
        refuse("denied", json!({"deny": "yes"})),
        "Error from server (Forbidden): error when creating \"STDIN\": admission webhook \"deny.rtcd.dev\" denied the request: configmaps labelled deny=yes are refused\n"
    );
    assert_eq!(
        refuse("down", json!({"probe": "down"})),
        format!(
            "Error from server (InternalError): error when creating \"STDIN\": Internal error occurred: failed calling webhook \"down.rtcd.dev\": failed to call webhook: Post \"https://127.0.0.1:{closed}/?timeout=10s\": dial tcp 127.0.0.1:{closed}: connect: connection refused\n"
        )
    );
    let slow = refuse("slow", json!({"probe": "slow"}));
    assert!(slow.ends_with(&format!("failed calling webhook \"slow.rtcd.dev\": failed to call webhook: Post \"https://127.0.0.1:{}/slow?timeout=1s\": context deadline exceeded\n", hooks.port)), "{slow}");
    let uid = refuse("uid", json!({"probe": "uid"}));
    assert!(uid.contains("failed calling webhook \"uid.rtcd.dev\": received invalid webhook response: expected response.uid="), "{uid}");
    let garbage = refuse("garbage", json!({"probe": "garbage"}));
    assert!(
        garbage.contains("failed calling webhook \"garbage.rtcd.dev\": received invalid webhook response: "),
        "{garbage}"
    );
    let untrusted = refuse("untrusted", json!({"probe": "untrusted"}));
    assert!(
        untrusted.contains("failed calling webhook \"untrusted.rtcd.dev\": failed to call webhook: Post "),
        "{untrusted}"
    );
    // Ignore: the write goes on without the webhook.
    api.ok_stdin(&["create", "-f", "-"], &configmap("ignored", json!({"probe": "ignored"})));
    // An update the deny webhook refuses leaves the object as it was.
    let out = api.kubectl(&["label", "configmap", "plain", "deny=yes"]);
    assert!(
        stderr(&out).contains("denied the request: configmaps labelled deny=yes are refused"),
        "{}",
        stderr(&out)
    );
    assert_eq!(api.ok(&["get", "configmap", "plain", "-o", "jsonpath={.metadata.labels}"]), "");

    // A webhook that may have side effects cannot be configured in v1.
    let mut bad = validating.clone();
    bad["metadata"]["name"] = json!("bad");
    bad["webhooks"] = json!([{"name": "short", "clientConfig": {"url": "http://x"}, "sideEffects": "Some", "admissionReviewVersions": ["v2"]}]);
    let out = api.kubectl_with(&["create", "-f", "-"], Some(&bad.to_string()), &[]);
    let text = stderr(&out);
    for expected in [
        "webhooks[0].name: Invalid value: \"short\": should be a domain with at least three segments separated by dots",
        "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
        "webhooks[0].admissionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }

    // The calls are counted as kube counts them.
    let metrics = api.ok(&["get", "--raw", "/metrics"]);
    assert!(metrics.contains("apiserver_admission_webhook_request_total{name=\"label.rtcd.dev\",type=\"admit\",operation=\"CREATE\",code=\"200\",rejected=\"false\"}"), "{metrics}");
    assert!(metrics.contains("apiserver_admission_webhook_rejection_count{name=\"deny.rtcd.dev\",type=\"validating\",operation=\"CREATE\",error_type=\"no_error\",rejection_code=\"403\"}"));
    assert!(metrics.contains(
        "apiserver_admission_webhook_fail_open_count{name=\"ignored.rtcd.dev\",type=\"validating\"} 1"
    ));
}

/// A mutating webhook on ConfigMaps named `<prefix>*`.
fn mutating_hook(name: &str, prefix: &str, url: &str, ca: &str, reinvoke: &str) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "matchConditions": [{"name": "prefix", "expression": format!("object.metadata.name.startsWith('{prefix}')")}],
        "sideEffects": "None",
        "reinvocationPolicy": reinvoke,
        "admissionReviewVersions": ["v1"],
    })
}

fn configuration(kind: &str, name: &str, webhooks: Value) -> String {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "webhooks": webhooks})
        .to_string()
}

/// Reinvocation, match conditions, and webhooks answering what no object
/// can take: each a clear error, nothing stored, the server unaffected.
async fn behaviours(backend: Backend) {
    let hooks = WebhookServer::start().await;
    // Validating webhooks are called with the token the admission
    // configuration file's kubeconfig gives for 127.0.0.1.
    let api = ApiServer::start_prepared(backend, false, |dir| {
        let users = format!(
            "apiVersion: v1\nkind: Config\nusers:\n- name: '*'\n  user: {{token: wrong}}\n- name: 127.0.0.1:{}\n  user: {{token: s3cret}}\n",
            hooks.port
        );
        std::fs::write(dir.join("creds.kubeconfig"), users).unwrap();
        std::fs::write(
            dir.join("admission.yaml"),
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ValidatingAdmissionWebhook\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: creds.kubeconfig\n",
        )
        .unwrap();
        let flags = format!("--admission-control-config-file={}\n", dir.join("admission.yaml").display());
        std::fs::write(dir.join("flags"), flags).unwrap();
    })
    .await;
    let ca = hooks.ca_bundle();
    let mutating = "MutatingWebhookConfiguration";
    // Configurations are called in name order: "a-notes" sees the object
    // before "b-labels" labels it; IfNeeded calls it again afterwards.
    let notes = |reinvoke: &str| {
        json!([mutating_hook("notes.rtcd.dev", "re-", &hooks.url("/note-label"), &ca, reinvoke)])
    };
    api.ok_stdin(&["create", "-f", "-"], &configuration(mutating, "a-notes", notes("Never")));
    let labels = json!([mutating_hook("labels.rtcd.dev", "re-", &hooks.url("/add-label"), &ca, "Never")]);
    api.ok_stdin(&["create", "-f", "-"], &configuration(mutating, "b-labels", labels));
    api.ok(&["create", "configmap", "re-never", "--from-literal=a=b"]);
    let saw =
        |name: &str| api.ok(&["get", "configmap", name, "-o", "jsonpath={.metadata.annotations.a-saw-b}"]);
    assert_eq!(saw("re-never"), "no");
    api.ok_stdin(&["apply", "-f", "-"], &configuration(mutating, "a-notes", notes("IfNeeded")));
    api.ok(&["create", "configmap", "re-ifneeded", "--from-literal=a=b"]);
    assert_eq!(saw("re-ifneeded"), "yes");
    assert_eq!(api.ok(&["get", "configmap", "re-ifneeded", "-o", "jsonpath={.metadata.labels.b}"]), "yes");
    // Outside the match condition neither is called.
    api.ok(&["create", "configmap", "other", "--from-literal=a=b"]);
    assert_eq!(api.ok(&["get", "configmap", "other", "-o", "jsonpath={.metadata.annotations}"]), "");

    // Validating: a condition that cannot be evaluated fails closed.
    let guard = json!([{
        "name": "blocked.rtcd.dev",
        "clientConfig": {"url": hooks.url("/deny-all"), "caBundle": ca},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        "matchConditions": [
            {"name": "blocked-only", "expression": "object.metadata.name.startsWith('blocked-')"},
            {"name": "needs-data", "expression": "object.data.k == 'v'"},
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }]);
    api.ok_stdin(&["create", "-f", "-"], &configuration("ValidatingWebhookConfiguration", "blocker", guard));
    let out = api.kubectl(&["create", "configmap", "blocked-one", "--from-literal=k=v"]);
    assert_eq!(
        stderr(&out),
        "error: failed to create configmap: admission webhook \"blocked.rtcd.dev\" denied the request: blocked\n"
    );
    api.ok(&["create", "configmap", "free-one", "--from-literal=k=v"]);
    let out = api.kubectl(&["create", "configmap", "blocked-two", "--from-literal=other=v"]);
    let text = stderr(&out);
    assert!(text.contains("configmaps \"blocked-two\" is forbidden: failed calling webhook \"blocked.rtcd.dev\": matchCondition needs-data: "), "{text}");

    // Misbehaving mutating webhooks (Fail): each refused, nothing stored.
    let bad = json!([
        mutating_hook("huge.rtcd.dev", "huge-", &hooks.url("/huge"), &ca, "Never"),
        mutating_hook("break.rtcd.dev", "break-", &hooks.url("/break"), &ca, "Never"),
        mutating_hook("redirect.rtcd.dev", "redirect-", &hooks.url("/redirect"), &ca, "Never"),
    ]);
    api.ok_stdin(&["create", "-f", "-"], &configuration(mutating, "c-misbehaving", bad));
    for (name, expected) in [
        ("huge-one", "failed calling webhook \"huge.rtcd.dev\": failed to call webhook: Post "),
        (
            "break-one",
            "Internal error occurred: admission webhook \"break.rtcd.dev\" returned a patch whose result cannot be decoded: ",
        ),
        (
            "redirect-one",
            "failed calling webhook \"redirect.rtcd.dev\": failed to call webhook: the server responded with the status code 307 but did not return more information",
        ),
    ] {
        let out = api.kubectl(&["create", "configmap", name, "--from-literal=a=b"]);
        assert!(!out.status.success(), "{name} was created");
        assert!(stderr(&out).contains(expected), "{name}: {}", stderr(&out));
        assert!(!api.kubectl(&["get", "configmap", name]).status.success(), "{name} was stored");
    }
    let out = api.kubectl(&["create", "configmap", "huge-two", "--from-literal=a=b"]);
    assert!(stderr(&out).contains("the response is larger than 8388608 bytes"), "{}", stderr(&out));
    // The server is unaffected.
    api.ok(&["create", "configmap", "after", "--from-literal=a=b"]);

    // The webhook that wants the token gets it.
    let whoami = json!([probe_hook("token.rtcd.dev", "token", &hooks.url("/needs-token"), &ca, "Fail", 10)]);
    api.ok_stdin(
        &["create", "-f", "-"],
        &configuration("ValidatingWebhookConfiguration", "token-check", whoami),
    );
    api.ok_stdin(&["create", "-f", "-"], &configmap("with-token", json!({"probe": "token"})));

    // A webhook refusing everything cannot lock its configuration in.
    let wall = json!([{
        "name": "wall.rtcd.dev",
        "clientConfig": {"url": hooks.url("/deny-all"), "caBundle": ca},
        "rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }]);
    api.ok_stdin(&["create", "-f", "-"], &configuration("ValidatingWebhookConfiguration", "wall", wall));
    assert!(
        stderr(&api.kubectl(&["create", "configmap", "walled", "--from-literal=a=b"]))
            .contains("denied the request: blocked")
    );
    api.ok(&["delete", "validatingwebhookconfiguration", "wall"]);
    api.ok(&["create", "configmap", "walled", "--from-literal=a=b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_behaviours_on_rtcd() {
    behaviours(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_behaviours_on_etcd() {
    behaviours(Backend::Etcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_on_etcd() {
    scenario(Backend::Etcd).await;
}
