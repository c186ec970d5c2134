//! Input kube-apiserver refuses and rtcd-apiserver must refuse the same way
//! (names, labels, finalizers, pod updates, resource versions, continue tokens).
//! Every expected text is kube's own (apimachinery's validation, core's pod
//! update rules, the watch cache and etcd3 store errors).

use base64::Engine as _;
use rtcd_proto::etcdserverpb::CompactionRequest;
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, next_event, open_watch, request};

const JSON: &str = "application/json";
const CMS: &str = "/api/v1/namespaces/default/configmaps";
const PODS: &str = "/api/v1/namespaces/default/pods";
const FUTURE: i64 = 999_999_999;

/// kube's texts, as `IsQualifiedName` and `IsValidLabelValue` give them.
const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn cm(metadata: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}).to_string()
}

/// A 422 Invalid with exactly this message; its causes.
async fn invalid(
    addr: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
    message: &str,
) -> Value {
    let (code, status) = request(addr, method, path, content_type, body).await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")), "{method} {path}: {status}");
    assert_eq!(status["message"].as_str(), Some(message), "{method} {path}");
    status["details"]["causes"].clone()
}

async fn labels_and_annotations(addr: &str) {
    let long = "v".repeat(64);
    let causes = invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "lbl", "labels": {"k": long}})),
        &format!("ConfigMap \"lbl\" is invalid: metadata.labels: Invalid value: \"{long}\": must be no more than 63 bytes"),
    )
    .await;
    assert_eq!(causes[0]["field"], "metadata.labels");
    assert_eq!(causes[0]["reason"], "FieldValueInvalid");
    invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "lbl", "labels": {"a/": "v"}})),
        &format!(
            "ConfigMap \"lbl\" is invalid: [metadata.labels: Invalid value: \"a/\": name part must be non-empty, metadata.labels: Invalid value: \"a/\": {NAME_PART}]"
        ),
    )
    .await;
    let big = "x".repeat(256 * 1024);
    let causes = invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "ann", "annotations": {"a": big}})),
        "ConfigMap \"ann\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes",
    )
    .await;
    assert_eq!(causes[0]["reason"], "FieldValueTooLong");
    // Updates are checked too.
    assert_eq!(request(addr, "POST", CMS, JSON, &cm(json!({"name": "lbl"}))).await.0, 201);
    invalid(
        addr,
        "PATCH",
        &format!("{CMS}/lbl"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"k": "-v"}}}).to_string(),
        "ConfigMap \"lbl\" is invalid: metadata.labels: Invalid value: \"-v\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    )
    .await;
}

async fn names(addr: &str) {
    invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "a..b"})),
        &format!("ConfigMap \"a..b\" is invalid: metadata.name: Invalid value: \"a..b\": {SUBDOMAIN}"),
    )
    .await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}).to_string();
    invalid(
        addr,
        "POST",
        "/api/v1/namespaces",
        JSON,
        &ns,
        "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots",
    )
    .await;
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc"},
                     "spec": {"ports": [{"port": 80}]}})
    .to_string();
    invalid(
        addr,
        "POST",
        "/api/v1/namespaces/default/services",
        JSON,
        &svc,
        "Service \"1svc\" is invalid: metadata.name: Invalid value: \"1svc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    )
    .await;
}

async fn finalizers(addr: &str) {
    let neither = "name is neither a standard finalizer name nor is it fully qualified";
    invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "fin", "finalizers": [""]})),
        &format!(
            "ConfigMap \"fin\" is invalid: [metadata.finalizers: Invalid value: \"\": name part must be non-empty, metadata.finalizers: Invalid value: \"\": {NAME_PART}, metadata.finalizers[0]: Invalid value: \"\": {neither}]"
        ),
    )
    .await;
    invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "fin", "finalizers": ["/"]})),
        &format!(
            "ConfigMap \"fin\" is invalid: [metadata.finalizers: Invalid value: \"/\": prefix part must be non-empty, metadata.finalizers: Invalid value: \"/\": name part must be non-empty, metadata.finalizers: Invalid value: \"/\": {NAME_PART}]"
        ),
    )
    .await;
    invalid(
        addr,
        "POST",
        CMS,
        JSON,
        &cm(json!({"name": "fin", "finalizers": ["example.com/ok", "mine"]})),
        &format!("ConfigMap \"fin\" is invalid: metadata.finalizers[1]: Invalid value: \"mine\": {neither}"),
    )
    .await;
    // kube's own finalizer names need no prefix.
    let standard = cm(json!({"name": "fin-standard", "finalizers": ["orphan", "kubernetes"]}));
    assert_eq!(request(addr, "POST", CMS, JSON, &standard).await.0, 201);
    // Being deleted: finalizers may only go. (Not 'orphan' here: the garbage collector takes it off a deleted
    // object at any moment, which would make it a "new" finalizer in the patch below.)
    let ok = cm(json!({"name": "fin", "finalizers": ["example.com/ok", "example.com/two"]}));
    assert_eq!(request(addr, "POST", CMS, JSON, &ok).await.0, 201);
    assert_eq!(request(addr, "DELETE", &format!("{CMS}/fin"), JSON, "").await.0, 200);
    invalid(
        addr,
        "PATCH",
        &format!("{CMS}/fin"),
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": ["example.com/ok", "example.com/two", "example.com/more"]}}).to_string(),
        "ConfigMap \"fin\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/more\"}",
    )
    .await;
    let done = json!({"metadata": {"finalizers": null}}).to_string();
    assert_eq!(
        request(addr, "PATCH", &format!("{CMS}/fin"), "application/merge-patch+json", &done).await.0,
        200
    );
}

async fn pod_updates(addr: &str) {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "a", "image": "nginx:1"}]}})
    .to_string();
    assert_eq!(request(addr, "POST", PODS, JSON, &pod).await.0, 201);
    let strategic = "application/strategic-merge-patch+json";
    let add = json!({"spec": {"containers": [{"name": "b", "image": "busybox"}]}}).to_string();
    let causes = invalid(
        addr,
        "PATCH",
        &format!("{PODS}/p"),
        strategic,
        &add,
        "Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers",
    )
    .await;
    assert_eq!(causes[0]["reason"], "FieldValueForbidden");
    // The image may change.
    let image = json!({"spec": {"containers": [{"name": "a", "image": "nginx:2"}]}}).to_string();
    let (code, patched) = request(addr, "PATCH", &format!("{PODS}/p"), strategic, &image).await;
    assert_eq!(
        (code, patched["spec"]["containers"][0]["image"].as_str()),
        (200, Some("nginx:2")),
        "{patched}"
    );
    // Anything else may not.
    let policy = json!({"spec": {"restartPolicy": "Never"}}).to_string();
    let (code, status) = request(addr, "PATCH", &format!("{PODS}/p"), strategic, &policy).await;
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with("Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"),
        "{message}"
    );
}

async fn future_resource_versions(addr: &str) {
    let too_large = format!("Timeout: Too large resource version: {FUTURE}, current: ");
    request(addr, "POST", CMS, JSON, &cm(json!({"name": "rv"}))).await;
    for path in [format!("{CMS}/rv?resourceVersion={FUTURE}"), format!("{CMS}?resourceVersion={FUTURE}")] {
        let (code, status) = request(addr, "GET", &path, JSON, "").await;
        assert_eq!((code, status["reason"].as_str()), (504, Some("Timeout")), "{path}: {status}");
        assert!(status["message"].as_str().unwrap().starts_with(&too_large), "{status}");
        assert_eq!(status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
    }
    // A WatchList the cache cannot serve in time: kube's cacher ends the
    // watch with the 504 Status as an ERROR event.
    let path = format!(
        "{CMS}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion={FUTURE}"
    );
    let mut watch = open_watch(addr, &path).await;
    let event = next_event(&mut watch).await;
    assert_eq!(event["type"], "ERROR", "{event}");
    let status = &event["object"];
    assert_eq!((status["code"].as_u64(), status["reason"].as_str()), (Some(504), Some("Timeout")), "{event}");
    assert!(status["message"].as_str().unwrap().starts_with(&too_large), "{event}");
    assert_eq!(status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
}

fn token(json: Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json.to_string())
}

async fn continue_tokens(api: &ApiServer, addr: &str) {
    for name in ["ct-a", "ct-b", "ct-c"] {
        request(addr, "POST", CMS, JSON, &cm(json!({"name": name}))).await;
    }
    // A forged revision ahead of etcd: the 504 names the token's revision.
    let ahead = token(json!({"v": "meta.k8s.io/v1", "rv": FUTURE, "start": "ct-b\u{0}"}));
    let (code, status) = request(addr, "GET", &format!("{CMS}?limit=1&continue={ahead}"), JSON, "").await;
    assert_eq!((code, status["reason"].as_str()), (504, Some("Timeout")), "{status}");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("Timeout: Too large resource version: {FUTURE}, current: ")),
        "{message}"
    );
    // Malformed tokens: 400 with kube's reasons.
    let cases = [
        ("abcde".to_string(), "illegal base64 data at input byte 4"),
        (
            token(json!({"v": "meta.k8s.io/v1", "rv": 0, "start": "a"})),
            "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ),
        (
            token(json!({"v": "meta.k8s.io/v1", "rv": 5, "start": ""})),
            "encoded start key empty (version meta.k8s.io/v1)",
        ),
        (
            token(json!({"v": "v9", "rv": 5, "start": "a"})),
            "server does not recognize this encoded version v9",
        ),
        (token(json!({"v": "meta.k8s.io/v1", "rv": 5, "start": "../secrets/x"})), "../secrets/x"),
    ];
    for (bad, why) in cases {
        let (code, status) = request(addr, "GET", &format!("{CMS}?limit=1&continue={bad}"), JSON, "").await;
        assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")), "{status}");
        assert_eq!(status["message"], format!("invalid continue token: continue key is not valid: {why}"));
    }
    // Compacted: 410, and a token that goes on at the latest revision.
    let (_, first) = request(addr, "GET", &format!("{CMS}?limit=1"), JSON, "").await;
    let next = first["metadata"]["continue"].as_str().unwrap().to_string();
    let (_, written) = request(addr, "POST", CMS, JSON, &cm(json!({"name": "ct-d"}))).await;
    let revision: i64 = written["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    let compact = CompactionRequest { revision, physical: true };
    KvClient::new(api.member.channel()).compact(compact).await.unwrap();
    let (code, status) = request(addr, "GET", &format!("{CMS}?limit=1&continue={next}"), JSON, "").await;
    assert_eq!((code, status["reason"].as_str()), (410, Some("Expired")), "{status}");
    assert!(
        status["message"].as_str().unwrap().starts_with(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results."
        ),
        "{status}"
    );
    let fresh = status["metadata"]["continue"].as_str().unwrap();
    let (code, rest) = request(addr, "GET", &format!("{CMS}?continue={fresh}"), JSON, "").await;
    assert_eq!(code, 200, "{rest}");
    assert!(!rest["items"].as_array().unwrap().is_empty());
}

async fn refusals(backend: Backend) {
    let api = ApiServer::start(backend).await;
    let addr = api.url.trim_start_matches("http://").to_string();
    labels_and_annotations(&addr).await;
    names(&addr).await;
    finalizers(&addr).await;
    pod_updates(&addr).await;
    future_resource_versions(&addr).await;
    continue_tokens(&api, &addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_on_rtcd() {
    refusals(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_on_etcd() {
    refusals(Backend::Etcd).await;
}
