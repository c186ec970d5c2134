//! API Priority and Fairness configuration as kubectl meets it: a fresh
//! server lists kube's bootstrap FlowSchemas and priority levels with
//! kube's columns; a schema naming a missing level is marked Dangling
//! until the level exists; a mandatory object's spec cannot change; a
//! suggested one is restored while its autoupdate annotation is true,
//! left alone once it is false, and made again when deleted. Every
//! response names, by uid, the schema and level that classified it. A
//! level with no room refuses with kube's 429 while cluster admins and
//! health checks pass, and the debug dumps and metrics show it. A level
//! and a schema edited while requests queue take effect and drop none.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{ADMIN_TOKEN, ApiServer, Backend, get_raw, header};

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
    let names = api.eventually(&["get", "flowschemas", "-o", "name"], |out| out.lines().count() == 11).await;
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
    let schemas = api
        .eventually(&["get", "flowschemas"], |out| {
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
    api.eventually(&["get", "flowschema", "mine", "-o", dangling], |out| out == "True").await;
    assert_eq!(api.ok(&["get", "flowschema", "mine", "-o", "jsonpath={.spec.matchingPrecedence}"]), "1000");
    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "my-level"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}});
    api.ok_stdin(&["create", "-f", "-"], &level.to_string());
    api.eventually(&["get", "flowschema", "mine", "-o", dangling], |out| out == "False").await;
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
    api.eventually(&["get", "flowschema", "global-default", "-o", precedence], |out| out == "9900").await;
    let keep_mine = r#"{"metadata":{"annotations":{"apf.kubernetes.io/autoupdate-spec":"false"}},"spec":{"matchingPrecedence":9800}}"#;
    api.ok(&["patch", "flowschema", "global-default", "--type=merge", "-p", keep_mine]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(api.ok(&["get", "flowschema", "global-default", "-o", precedence]), "9800");
    api.ok(&["delete", "flowschema", "service-accounts"]);
    api.eventually(&["get", "flowschema", "service-accounts", "-o", precedence], |out| out == "9000").await;
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

const ALICE_TOKEN: &str = "alice-token";

/// A GET as the holder of `token`: the status, the head and the body.
async fn get_as(api: &ApiServer, token: &str, path: &str) -> (u16, String, String) {
    let addr = api.url.trim_start_matches("http://");
    let bearer = format!("Bearer {token}");
    let (code, head, body) = get_raw(addr, path, &[("Authorization", &bearer)]).await;
    (code, head, String::from_utf8_lossy(&body).into_owned())
}

/// A server of ten seats in all that knows the admin and alice, its
/// bootstrap configuration in.
async fn start_with_ten_seats() -> ApiServer {
    let api = ApiServer::start_prepared(Backend::Rtcd, false, |dir| {
        let tokens = format!("{ADMIN_TOKEN},admin,admin-uid,system:masters\n{ALICE_TOKEN},alice,alice-uid\n");
        std::fs::write(dir.join("tokens.csv"), tokens).unwrap();
        std::fs::write(dir.join("flags"), "--max-requests-inflight=5\n--max-mutating-requests-inflight=5\n")
            .unwrap();
    })
    .await;
    api.eventually(&["get", "flowschemas", "-o", "name"], |out| out.lines().count() == 11).await;
    api
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_level_refuses_with_429_while_admins_pass() {
    // Ten seats in all; alice gets a level of one seat that rejects what
    // does not fit.
    let api = start_with_ten_seats().await;
    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "tight"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1, "lendablePercent": 0,
            "borrowingLimitPercent": 0, "limitResponse": {"type": "Reject"}}}});
    api.ok_stdin(&["create", "-f", "-"], &level.to_string());
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "alice-tight"},
        "spec": {"priorityLevelConfiguration": {"name": "tight"}, "matchingPrecedence": 500,
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}]}]}});
    api.ok_stdin(&["create", "-f", "-"], &schema.to_string());
    let uid = api.ok(&["get", "flowschema", "alice-tight", "-o", "jsonpath={.metadata.uid}"]);
    // The controller reads the new objects within seconds.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, head, _) = get_as(&api, ALICE_TOKEN, "/api/v1/namespaces/default/configmaps").await;
        if code == 200 && header(&head, "X-Kubernetes-PF-FlowSchema-UID") == Some(uid.as_str()) {
            break;
        }
        assert!(Instant::now() < deadline, "alice's requests never classified as alice-tight: {head}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Alice floods her level from 16 clients; the admin and the probes
    // go on meanwhile.
    let flood: Vec<_> = (0..16)
        .map(|_| {
            let url = api.url.clone();
            tokio::spawn(async move {
                let api_url = url.trim_start_matches("http://").to_string();
                let mut answers = Vec::new();
                for _ in 0..15 {
                    let bearer = format!("Bearer {ALICE_TOKEN}");
                    let path = "/api/v1/namespaces/kube-system/configmaps";
                    let (code, head, body) = get_raw(&api_url, path, &[("Authorization", &bearer)]).await;
                    answers.push((code, head, String::from_utf8_lossy(&body).into_owned()));
                }
                answers
            })
        })
        .collect();
    let mut admin_codes = Vec::new();
    for _ in 0..20 {
        admin_codes.push(get_as(&api, ADMIN_TOKEN, "/api/v1/namespaces/kube-system/configmaps").await.0);
        admin_codes.push(get_as(&api, ALICE_TOKEN, "/readyz").await.0);
    }
    let mut answers = Vec::new();
    for client in flood {
        answers.extend(client.await.unwrap());
    }
    assert!(admin_codes.iter().all(|c| *c == 200), "the exempt are never refused: {admin_codes:?}");
    let refused: Vec<_> = answers.iter().filter(|(code, _, _)| *code == 429).collect();
    let served = answers.iter().filter(|(code, _, _)| *code == 200).count();
    assert_eq!(refused.len() + served, answers.len(), "only 200s and 429s");
    assert!(served > 0 && !refused.is_empty(), "{served} served, {} refused", refused.len());
    let (_, head, body) = refused[0];
    assert_eq!(body, "Too many requests, please try again later.\n");
    assert!(
        header(head, "Retry-After").is_some_and(|s| s.parse::<u64>().is_ok_and(|s| (1..=32).contains(&s))),
        "{head}"
    );
    assert_eq!(header(head, "X-Kubernetes-PF-FlowSchema-UID"), Some(uid.as_str()), "{head}");

    // What the server saw, as kube's debug endpoint and metrics say it.
    let (code, _, levels) =
        get_as(&api, ADMIN_TOKEN, "/debug/api_priority_and_fairness/dump_priority_levels").await;
    assert_eq!(code, 200);
    assert!(
        levels.starts_with("PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, "),
        "{levels}"
    );
    let tight: Vec<&str> =
        levels.lines().find(|l| l.starts_with("tight,")).unwrap().split(',').map(str::trim).collect();
    assert_eq!(tight[7], refused.len().to_string(), "RejectedRequests: {levels}");
    let (_, _, metrics) = get_as(&api, ADMIN_TOKEN, "/metrics").await;
    let line = format!(
        "apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"alice-tight\",priority_level=\"tight\",reason=\"concurrency-limit\"}} {}",
        refused.len()
    );
    assert!(metrics.lines().any(|l| l == line), "no {line}");
    assert!(metrics.contains("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"tight\"} 1\n"));
    // kube's RecordDroppedRequest and RecordRequestTermination: counted as
    // 429s, and as terminated in self-defense.
    let series = "verb=\"LIST\",group=\"\",version=\"v1\",resource=\"configmaps\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"";
    let dropped = series.replacen(",group", ",dry_run=\"\",group", 1);
    let line = format!("apiserver_request_total{{{dropped},code=\"429\"}} {}", refused.len());
    assert!(metrics.lines().any(|l| l == line), "no {line}");
    let line = format!("apiserver_request_terminations_total{{{series},code=\"429\"}} {}", refused.len());
    assert!(metrics.lines().any(|l| l == line), "no {line}");
    let (code, _, requests) =
        get_as(&api, ADMIN_TOKEN, "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1")
            .await;
    assert_eq!(code, 200);
    // The dump itself is a request of the exempt level, running.
    assert!(requests.lines().any(|l| l.starts_with("exempt,") && l.contains("/debug/api_priority_and_fairness/dump_requests")), "{requests}");
}

/// A level made of `shares` that queues.
fn queueing_level(name: &str, shares: u32) -> Value {
    json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": shares, "lendablePercent": 0,
            "borrowingLimitPercent": 0, "limitResponse": {"type": "Queue",
                "queuing": {"queues": 4, "handSize": 2, "queueLengthLimit": 100}}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_edited_under_load_drops_nothing() {
    let api = start_with_ten_seats().await;
    for level in [queueing_level("narrow", 1), queueing_level("wide", 20)] {
        api.ok_stdin(&["create", "-f", "-"], &level.to_string());
    }
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "alice"},
        "spec": {"priorityLevelConfiguration": {"name": "narrow"}, "matchingPrecedence": 500,
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}]}]}});
    api.ok_stdin(&["create", "-f", "-"], &schema.to_string());
    let uid_of =
        |name: &str| api.ok(&["get", "prioritylevelconfiguration", name, "-o", "jsonpath={.metadata.uid}"]);
    let (narrow, wide) = (uid_of("narrow"), uid_of("wide"));
    let level_of =
        |head: &str| header(head, "X-Kubernetes-PF-PriorityLevel-UID").unwrap_or_default().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while level_of(&get_as(&api, ALICE_TOKEN, "/api/v1/namespaces/default/configmaps").await.1) != narrow {
        assert!(Instant::now() < deadline, "alice never on the narrow level");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Alice's clients queue on one seat while her level's shares change and
    // her schema moves to another level.
    let flood: Vec<_> = (0..8)
        .map(|_| {
            let addr = api.url.trim_start_matches("http://").to_string();
            tokio::spawn(async move {
                let bearer = format!("Bearer {ALICE_TOKEN}");
                let mut answers = Vec::new();
                for _ in 0..25 {
                    let (code, head, _) = get_raw(
                        &addr,
                        "/api/v1/namespaces/default/configmaps",
                        &[("Authorization", &bearer)],
                    )
                    .await;
                    answers.push((code, head));
                }
                answers
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    api.ok(&[
        "patch",
        "prioritylevelconfiguration",
        "narrow",
        "--type=merge",
        "-p",
        r#"{"spec":{"limited":{"nominalConcurrencyShares":2}}}"#,
    ]);
    api.ok(&[
        "patch",
        "flowschema",
        "alice",
        "--type=merge",
        "-p",
        r#"{"spec":{"priorityLevelConfiguration":{"name":"wide"}}}"#,
    ]);
    let mut answers = Vec::new();
    for client in flood {
        answers.extend(client.await.unwrap());
    }
    let codes: Vec<u16> = answers.iter().map(|(code, _)| *code).collect();
    assert!(codes.iter().all(|c| *c == 200), "every queued request served: {codes:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while level_of(&get_as(&api, ALICE_TOKEN, "/api/v1/namespaces/default/configmaps").await.1) != wide {
        assert!(Instant::now() < deadline, "alice's schema never moved to the wide level");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
