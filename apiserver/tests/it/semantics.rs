//! API semantics over raw HTTP, on rtcd and on etcd: WatchList, watch
//! errors, read-your-writes lists, dry runs, generateName,
//! deletecollection, and kube's error codes for bad requests.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, next_event, open_watch, request};

const JSON: &str = "application/json";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str, labels: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"k": name}})
        .to_string()
}

async fn watch_list(addr: &str) {
    for name in ["wl-a", "wl-b"] {
        assert_eq!(request(addr, "POST", CMS, JSON, &cm(name, json!({"set": "wl"}))).await.0, 201);
    }
    let path = format!(
        "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=set%3Dwl"
    );
    let mut watch = open_watch(addr, &path).await;
    let mut added = Vec::new();
    let end = loop {
        let event = next_event(&mut watch).await;
        match event["type"].as_str() {
            Some("ADDED") => added.push(event["object"]["metadata"]["name"].as_str().unwrap().to_string()),
            Some("BOOKMARK") => break event,
            other => panic!("unexpected {other:?}: {event}"),
        }
    };
    added.sort();
    assert_eq!(added, ["wl-a", "wl-b"]);
    assert_eq!(end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    let end_rv: i64 = end["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    // Live events follow, newer than the bookmark.
    request(addr, "POST", CMS, JSON, &cm("wl-c", json!({"set": "wl"}))).await;
    let live = next_event(&mut watch).await;
    assert_eq!(
        (live["type"].as_str(), live["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("wl-c"))
    );
    let rv: i64 = live["object"]["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    assert!(rv > end_rv);

    // sendInitialEvents needs resourceVersionMatch=NotOlderThan: an error,
    // never a watch that silently ignores it.
    let (code, status) =
        request(addr, "GET", &format!("{CMS}?watch=true&sendInitialEvents=true"), JSON, "").await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")), "{status}");
}

async fn lists_read_their_writes(addr: &str) {
    for i in 0..20 {
        let name = format!("ryw-{i}");
        assert_eq!(request(addr, "POST", CMS, JSON, &cm(&name, json!({"set": "ryw"}))).await.0, 201);
        let (code, list) = request(addr, "GET", &format!("{CMS}?labelSelector=set%3Dryw"), JSON, "").await;
        assert_eq!(code, 200);
        let items = list["items"].as_array().unwrap();
        assert_eq!(items.len(), i + 1, "a list right after a create must include it");
    }
}

async fn writes_and_their_errors(addr: &str) {
    // dryRun=All validates and answers, but writes nothing.
    let (code, obj) = request(addr, "POST", &format!("{CMS}?dryRun=All"), JSON, &cm("dry", json!({}))).await;
    assert_eq!((code, obj["metadata"]["name"].as_str()), (201, Some("dry")));
    assert_eq!(request(addr, "GET", &format!("{CMS}/dry"), JSON, "").await.0, 404);
    let (code, _) =
        request(addr, "POST", &format!("{CMS}?dryRun=Sometimes"), JSON, &cm("dry", json!({}))).await;
    assert_eq!(code, 400);

    // generateName: the server picks the name.
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}).to_string();
    let (code, obj) = request(addr, "POST", CMS, JSON, &body).await;
    let name = obj["metadata"]["name"].as_str().unwrap();
    assert!(code == 201 && name.starts_with("gen-") && name.len() == 9, "{obj}");

    // Bad input: kube's codes and reasons, nothing written.
    let cases = [
        ("POST", CMS.to_string(), JSON, "{not json".to_string(), 400, "BadRequest"),
        ("POST", CMS.to_string(), JSON, cm("Bad_Name", json!({})), 422, "Invalid"),
        ("POST", CMS.to_string(), JSON, cm("wl-a", json!({})), 409, "AlreadyExists"),
        (
            "POST",
            format!("{CMS}?fieldValidation=Strict"),
            JSON,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"s"},"bogus":1}"#.to_string(),
            400,
            "BadRequest",
        ),
        ("PATCH", format!("{CMS}/wl-a"), "application/apply-patch+yaml", "{}".to_string(), 422, "Invalid"),
        (
            "PATCH",
            format!("{CMS}/missing"),
            "application/merge-patch+json",
            "{}".to_string(),
            404,
            "NotFound",
        ),
        ("GET", "/api/v1/namespaces/default/widgets".to_string(), JSON, String::new(), 404, "NotFound"),
        (
            "POST",
            "/api/v1/namespaces/nowhere/configmaps".to_string(),
            JSON,
            cm("x", json!({})),
            404,
            "NotFound",
        ),
        ("GET", format!("{CMS}?fieldSelector=data.k%3Dx"), JSON, String::new(), 400, "BadRequest"),
        ("GET", format!("{CMS}?labelSelector=a%20in%20("), JSON, String::new(), 400, "BadRequest"),
    ];
    for (method, path, content_type, body, want_code, want_reason) in cases {
        let (code, status) = request(addr, method, &path, content_type, &body).await;
        assert_eq!(
            (code, status["reason"].as_str()),
            (want_code, Some(want_reason)),
            "{method} {path}: {status}"
        );
        assert_eq!(status["kind"], "Status");
    }
    assert_eq!(request(addr, "GET", &format!("{CMS}/s"), JSON, "").await.0, 404);

    // A stale resourceVersion on update: 409 Conflict.
    let (_, current) = request(addr, "GET", &format!("{CMS}/wl-a"), JSON, "").await;
    let mut stale = current.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    let (code, status) = request(addr, "PUT", &format!("{CMS}/wl-a"), JSON, &stale.to_string()).await;
    assert_eq!((code, status["reason"].as_str()), (409, Some("Conflict")));

    // deletecollection by label: exactly the matching objects go.
    let (code, _) = request(addr, "DELETE", &format!("{CMS}?labelSelector=set%3Dryw"), JSON, "").await;
    assert_eq!(code, 200);
    let (_, left) = request(addr, "GET", &format!("{CMS}?labelSelector=set%3Dryw"), JSON, "").await;
    assert_eq!(left["items"].as_array().unwrap().len(), 0);
    let (_, others) = request(addr, "GET", &format!("{CMS}?labelSelector=set%3Dwl"), JSON, "").await;
    assert_eq!(others["items"].as_array().unwrap().len(), 3);
}

async fn a_watch_from_a_lists_revision_sees_what_follows(addr: &str) {
    let (_, list) = request(addr, "GET", CMS, JSON, "").await;
    let rv: i64 = list["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    let mut watch = open_watch(addr, &format!("{CMS}?watch=true&resourceVersion={rv}")).await;
    request(addr, "POST", CMS, JSON, &cm("after", json!({}))).await;
    let event = next_event(&mut watch).await;
    assert_eq!(
        (event["type"].as_str(), event["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("after"))
    );
}

async fn service_addresses(addr: &str) {
    let svcs = "/api/v1/namespaces/default/services";
    let svc = |name: &str, ip: &str| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
               "spec": {"clusterIP": ip, "ports": [{"port": 80}]}})
        .to_string()
    };
    let (code, one) = request(addr, "POST", svcs, JSON, &svc("one", "10.0.0.77")).await;
    assert_eq!((code, one["spec"]["clusterIP"].as_str()), (201, Some("10.0.0.77")), "{one}");
    // Taken: refused, and nothing written.
    let (code, status) = request(addr, "POST", svcs, JSON, &svc("two", "10.0.0.77")).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(request(addr, "GET", &format!("{svcs}/two"), JSON, "").await.0, 404);
    // The kubernetes Service holds the first address.
    assert_eq!(request(addr, "POST", svcs, JSON, &svc("three", "10.0.0.1")).await.0, 422);
    // Freed with its Service.
    assert_eq!(request(addr, "DELETE", &format!("{svcs}/one"), JSON, "").await.0, 200);
    let (code, two) = request(addr, "POST", svcs, JSON, &svc("two", "10.0.0.77")).await;
    assert_eq!((code, two["spec"]["clusterIP"].as_str()), (201, Some("10.0.0.77")), "{two}");
}

/// What the review of the first version found, each checked.
async fn writes_that_must_not_go_astray(addr: &str) {
    request(addr, "POST", CMS, JSON, &cm("keep", json!({"set": "keep"}))).await;
    // client-go sends dryRun in the DeleteOptions body: nothing is deleted.
    let (code, _) = request(addr, "DELETE", &format!("{CMS}/keep"), JSON, r#"{"dryRun":["All"]}"#).await;
    assert_eq!(code, 200);
    let (code, _) =
        request(addr, "DELETE", &format!("{CMS}?labelSelector=set%3Dkeep"), JSON, r#"{"dryRun":["All"]}"#)
            .await;
    assert_eq!(code, 200);
    assert_eq!(request(addr, "GET", &format!("{CMS}/keep"), JSON, "").await.0, 200);
    // A PUT that leaves the namespace out keeps the object in its namespace.
    let (_, current) = request(addr, "GET", &format!("{CMS}/keep"), JSON, "").await;
    let mut body = current.clone();
    body["metadata"].as_object_mut().unwrap().remove("namespace");
    body["data"] = json!({"k": "changed"});
    assert_eq!(request(addr, "PUT", &format!("{CMS}/keep"), JSON, &body.to_string()).await.0, 200);
    let (_, list) = request(addr, "GET", &format!("{CMS}?labelSelector=set%3Dkeep"), JSON, "").await;
    assert_eq!(list["items"][0]["metadata"]["namespace"], "default", "{list}");
    // A uid in the body that is not the object's: 409.
    let mut other = list["items"][0].clone();
    other["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    other["metadata"].as_object_mut().unwrap().remove("resourceVersion");
    let (code, status) = request(addr, "PUT", &format!("{CMS}/keep"), JSON, &other.to_string()).await;
    assert_eq!((code, status["reason"].as_str()), (409, Some("Conflict")));
    // Namespaced kinds are written only inside a namespace.
    let (code, _) = request(addr, "POST", "/api/v1/configmaps", JSON, &cm("nowhere", json!({}))).await;
    assert_eq!(code, 405);
    assert_eq!(request(addr, "DELETE", "/api/v1/configmaps", JSON, "").await.0, 405);
    assert_eq!(request(addr, "GET", &format!("{CMS}/keep"), JSON, "").await.0, 200);
    // A watch of a revision far ahead: kube's 504 with the cause client-go
    // relists on, as an error answer.
    let (code, status) =
        request(addr, "GET", &format!("{CMS}/keep?resourceVersion=999999999"), JSON, "").await;
    assert_eq!(code, 504, "{status}");
    assert_eq!(status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
    // The same for an Exact list ahead of etcd (etcd's "future revision").
    let path = format!("{CMS}?resourceVersion=999999999&resourceVersionMatch=Exact");
    let (code, status) = request(addr, "GET", &path, JSON, "").await;
    assert_eq!(code, 504, "{status}");
    assert_eq!(status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
}

async fn semantics(backend: Backend) {
    let api = ApiServer::start(backend).await;
    let addr = api.url.trim_start_matches("http://").to_string();
    watch_list(&addr).await;
    lists_read_their_writes(&addr).await;
    writes_and_their_errors(&addr).await;
    a_watch_from_a_lists_revision_sees_what_follows(&addr).await;
    service_addresses(&addr).await;
    writes_that_must_not_go_astray(&addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantics_on_rtcd() {
    semantics(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantics_on_etcd() {
    semantics(Backend::Etcd).await;
}
