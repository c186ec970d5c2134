//! API Priority and Fairness configuration as kubectl meets it: a fresh
//! server lists kube's bootstrap FlowSchemas and priority levels with
//! kube's columns; a schema naming a missing level is marked Dangling
//! until the level exists; a mandatory object's spec cannot change; a
//! suggested one is restored while its autoupdate annotation is true,
//! left alone once it is false, and made again when deleted. Every
//! response names, by uid, the schema and level that classified it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, get_raw, header};

/// Waits until `check` holds for what `kubectl args` prints.
async fn eventually(api: &ApiServer, args: &[&str], check: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = api.kubectl(args);
        let printed = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && check(&printed) {
            return printed;
        }
        assert!(Instant::now() < deadline, "kubectl {args:?} never as awaited: {printed}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The whitespace-separated cells of the row of `name` in a table.
fn row(table: &str, name: &str) -> Vec<String> {
    let line = table.lines().find(|l| l.split_whitespace().next() == Some(name));
    line.unwrap_or_else(|| panic!("no row {name} in {table}")).split_whitespace().map(String::from).collect()
}

/// kube's bootstrap FlowSchemas, by name.
const SCHEMAS: [&str; 11] = [
    "catch-all",
    "exempt",
    "global-default",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-system-service-accounts",
    "probes",
    "service-accounts",
    "system-leader-election",
    "system-node-high",
    "system-nodes",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_configuration_and_dangling_schemas_on_rtcd() {
    let api = ApiServer::start(Backend::Rtcd).await;
    let names =
        eventually(&api, &["get", "flowschemas", "-o", "name"], |out| out.lines().count() == 11).await;
    let mut listed: Vec<&str> =
        names.lines().map(|l| l.trim_start_matches("flowschema.flowcontrol.apiserver.k8s.io/")).collect();
    listed.sort_unstable();
    assert_eq!(listed, SCHEMAS);

    // kube's columns and numbers.
    let levels = api.ok(&["get", "prioritylevelconfigurations"]);
    let header: Vec<&str> = levels.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"]
    );
    assert_eq!(row(&levels, "workload-low")[1..6], ["Limited", "100", "128", "6", "50"]);
    assert_eq!(row(&levels, "catch-all")[1..6], ["Limited", "5", "<none>", "<none>", "<none>"]);
    assert_eq!(row(&levels, "exempt")[1..6], ["Exempt", "<none>", "<none>", "<none>", "<none>"]);
    assert_eq!(levels.lines().count(), 9, "{levels}");
    let schemas = eventually(&api, &["get", "flowschemas"], |out| {
        row(out, "exempt").last().map(String::as_str) == Some("False")
    })
    .await;
    let header: Vec<&str> = schemas.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    );
    assert_eq!(row(&schemas, "probes")[1..4], ["exempt", "2", "<none>"]);
    assert_eq!(row(&schemas, "global-default")[1..4], ["global-default", "9900", "ByUser"]);
    responses_name_their_schema_and_level(&api).await;
    let annotation = "jsonpath={.metadata.annotations.apf\\.kubernetes\\.io/autoupdate-spec}";
    assert_eq!(api.ok(&["get", "flowschema", "global-default", "-o", annotation]), "true");

    // A schema naming a level that does not exist yet.
    let mine = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "mine"},
        "spec": {"priorityLevelConfiguration": {"name": "my-level"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}]}]}});
    api.ok_stdin(&["create", "-f", "-"], &mine.to_string());
    let dangling = "jsonpath={.status.conditions[?(@.type==\"Dangling\")].status}";
    eventually(&api, &["get", "flowschema", "mine", "-o", dangling], |out| out == "True").await;
    assert_eq!(api.ok(&["get", "flowschema", "mine", "-o", "jsonpath={.spec.matchingPrecedence}"]), "1000");
    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "my-level"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}});
    api.ok_stdin(&["create", "-f", "-"], &level.to_string());
    eventually(&api, &["get", "flowschema", "mine", "-o", dangling], |out| out == "False").await;
    assert_eq!(
        api.ok(&[
            "get",
            "prioritylevelconfiguration",
            "my-level",
            "-o",
            "jsonpath={.spec.limited.nominalConcurrencyShares}"
        ]),
        "30"
    );

    // Mandatory specs are fixed; bad schemas are refused with kube's texts.
    let out = api.kubectl(&[
        "patch",
        "flowschema",
        "catch-all",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchingPrecedence":9999}}"#,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("spec of 'catch-all' must equal the fixed value"), "{stderr}");
    let mut bad = mine.clone();
    bad["metadata"]["name"] = json!("bad");
    bad["spec"]["matchingPrecedence"] = json!(1);
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &bad.to_string());
    assert!(!ok);
    assert!(
        stderr.contains("spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"),
        "{stderr}"
    );

    // Suggested objects: restored while the annotation says so, left
    // alone once it does not, made again when deleted.
    let precedence = "jsonpath={.spec.matchingPrecedence}";
    api.ok(&[
        "patch",
        "flowschema",
        "global-default",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchingPrecedence":9800}}"#,
    ]);
    eventually(&api, &["get", "flowschema", "global-default", "-o", precedence], |out| out == "9900").await;
    let keep_mine = r#"{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"false"}},"spec":{"matchingPrecedence":9800}}"#;
    api.ok(&["patch", "flowschema", "global-default", "--type=merge", "-p", keep_mine]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(api.ok(&["get", "flowschema", "global-default", "-o", precedence]), "9800");
    api.ok(&["delete", "flowschema", "service-accounts"]);
    eventually(&api, &["get", "flowschema", "service-accounts", "-o", precedence], |out| out == "9000").await;
}

/// A response's `X-Kubernetes-PF-*` headers are the uids of a stored
/// FlowSchema and of the priority level it names.
async fn responses_name_their_schema_and_level(api: &ApiServer) {
    let addr = api.url.trim_start_matches("http://");
    let (code, head, _) = get_raw(addr, "/api/v1/namespaces", &[]).await;
    assert_eq!(code, 200, "{head}");
    let schema_uid = header(&head, "X-Kubernetes-PF-FlowSchema-UID").unwrap_or_else(|| panic!("{head}"));
    let level_uid = header(&head, "X-Kubernetes-PF-PriorityLevel-UID").unwrap_or_else(|| panic!("{head}"));
    let schemas: Value = serde_json::from_str(&api.ok(&["get", "flowschemas", "-o", "json"])).unwrap();
    let schema = schemas["items"].as_array().unwrap().iter().find(|s| s["metadata"]["uid"] == schema_uid);
    let schema = schema.unwrap_or_else(|| panic!("no FlowSchema has uid {schema_uid}"));
    let level = schema["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap();
    let uid = api.ok(&["get", "prioritylevelconfiguration", level, "-o", "jsonpath={.metadata.uid}"]);
    assert_eq!(level_uid, uid);
}
