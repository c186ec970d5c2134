//! Resources registered and removed while the server runs (what a
//! CustomResourceDefinition will do), on rtcd and on etcd: the server is
//! started in-process so the test holds its `Resources`, and everything is
//! checked over HTTP as a client sees it: discovery (legacy and
//! aggregated), OpenAPI, the verbs and a watch.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::schemars::SchemaGenerator;
use rtcd_apiserver::authn::Authenticator;
use rtcd_apiserver::authz::{AlwaysAllow, Union};
use rtcd_apiserver::filters::{self, FilterState, Limits};
use rtcd_apiserver::metrics::Metrics;
use rtcd_apiserver::openapi::{ListOf, OpenApiResource, SchemaSource};
use rtcd_apiserver::options::Options;
use rtcd_apiserver::registry::kinds::Kind;
use rtcd_apiserver::registry::{Resource, Resources, Strategy};
use rtcd_apiserver::storage::{Etcd3Store, Storage};
use rtcd_apiserver::{controllers, endpoints, server};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::{Backend, Member, next_event, open_watch, request};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const GV: &str = "/apis/example.com/v1";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const OPENAPI_GV: &str = "apis/example.com/v1";

/// Every default behaviour: what a custom resource gets.
#[derive(Debug)]
struct PlainStrategy;

impl Strategy for PlainStrategy {}

/// A kind described by the test alone, with an OpenAPI description made by
/// hand (a ConfigMap's schema under another name, as a
/// CustomResourceDefinition brings its own).
fn widgets() -> Kind {
    let resource = Resource::new("example.com", "Widget", "widgets").stored_under("example.com/widgets");
    Kind::new(resource, PlainStrategy).described_by(OpenApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        list_kind: "WidgetList".into(),
        plural: "widgets".into(),
        namespaced: true,
        subresources: &[],
        schema: SchemaSource::Type(SchemaGenerator::subschema_for::<ConfigMap>),
        list_schema: SchemaSource::Type(SchemaGenerator::subschema_for::<ListOf<ConfigMap>>),
        strategic_patch: false,
    })
}

/// The in-process server and the member it stores in.
struct Server {
    _member: Member,
    resources: Resources,
    addr: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// `run` without TLS, signals or the compactor, on a port of its own.
    async fn start(backend: Backend) -> Server {
        let member = Member::start(backend).await;
        let etcd = format!("--etcd-servers={}", member.url);
        let options = Options::try_parse_from(["rtcd-apiserver", etcd.as_str()]).unwrap();
        let storage: Arc<dyn Storage> = Arc::new(Etcd3Store::new(member.channel()));
        let resources = server::serve_builtin_kinds(storage, &options).unwrap();
        tokio::spawn(controllers::bootstrap::run(resources.clone(), options.service_cluster_ip_range));
        let metrics = Arc::new(Metrics::default());
        let limits = Arc::new(Limits::new(
            options.limits.max_requests_inflight,
            options.limits.max_mutating_requests_inflight,
        ));
        let app = endpoints::App::new(resources.clone(), metrics.clone());
        let state = FilterState {
            metrics,
            limits,
            authenticator: Arc::new(Authenticator::anonymous_only()),
            authorizer: Arc::new(Union::new(vec![Arc::new(AlwaysAllow)])),
            auditor: None,
            request_timeout: options.limits.request_timeout,
            flow_control: None,
        };
        let router = filters::build(endpoints::router(app), state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        let server = Server { _member: member, resources, addr, task };
        // Ready once the bootstrap controller has made `default`.
        let deadline = Instant::now() + Duration::from_secs(30);
        while request(&server.addr, "GET", "/api/v1/namespaces/default", JSON, "").await.0 != 200 {
            assert!(Instant::now() < deadline, "the default namespace never appeared");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        server
    }
}

/// A GET with an Accept header: the status code and the JSON body.
async fn get(addr: &str, path: &str, accept: &str) -> (u16, Value) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {accept}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// The answer kube gives for a path it does not serve.
fn assert_not_found(what: &str, (code, status): &(u16, Value)) {
    assert_eq!(*code, 404, "{what}: {status}");
    assert_eq!(
        (status["kind"].as_str(), status["apiVersion"].as_str(), status["reason"].as_str()),
        (Some("Status"), Some("v1"), Some("NotFound")),
        "{what}: {status}"
    );
    assert_eq!((status["status"].as_str(), status["code"].as_i64()), (Some("Failure"), Some(404)), "{what}");
}

/// Whether the group is in `/apis`, in `/apis`' aggregated document
/// (with widgets in it), and `example.com/v1` in `/openapi/v3`.
async fn listed(addr: &str) -> (bool, bool, bool) {
    let (code, groups) = get(addr, "/apis", JSON).await;
    assert_eq!((code, groups["kind"].as_str()), (200, Some("APIGroupList")), "{groups}");
    let legacy = groups["groups"].as_array().unwrap().iter().any(|g| g["name"] == "example.com");

    let (code, aggregated) = get(addr, "/apis", AGGREGATED).await;
    assert_eq!((code, aggregated["kind"].as_str()), (200, Some("APIGroupDiscoveryList")), "{aggregated}");
    let group =
        aggregated["items"].as_array().unwrap().iter().find(|g| g["metadata"]["name"] == "example.com");
    let aggregated = group.is_some_and(|group| {
        group["versions"][0]["resources"].as_array().unwrap().iter().any(|r| r["resource"] == "widgets")
    });

    let (code, root) = get(addr, "/openapi/v3", JSON).await;
    assert_eq!(code, 200, "{root}");
    let openapi = root["paths"].get(OPENAPI_GV).is_some();
    (legacy, aggregated, openapi)
}

async fn not_served(addr: &str) {
    assert_eq!(listed(addr).await, (false, false, false));
    assert_not_found("group-version", &get(addr, GV, JSON).await);
    assert_not_found("group", &get(addr, "/apis/example.com", JSON).await);
    assert_not_found("openapi", &get(addr, &format!("/openapi/v3/{OPENAPI_GV}"), JSON).await);
    assert_not_found("list", &request(addr, "GET", WIDGETS, JSON, "").await);
    assert_not_found("get", &request(addr, "GET", &format!("{WIDGETS}/w1"), JSON, "").await);
    assert_not_found("watch", &request(addr, "GET", &format!("{WIDGETS}?watch=true"), JSON, "").await);
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}});
    assert_not_found("create", &request(addr, "POST", WIDGETS, JSON, &widget.to_string()).await);
    assert_not_found("patch", &request(addr, "PATCH", &format!("{WIDGETS}/w1"), MERGE, "{}").await);
    assert_not_found("delete", &request(addr, "DELETE", &format!("{WIDGETS}/w1"), JSON, "").await);
}

async fn served(addr: &str) {
    assert_eq!(listed(addr).await, (true, true, true));
    let (code, group) = get(addr, "/apis/example.com", JSON).await;
    assert_eq!(code, 200, "{group}");
    assert_eq!(group["preferredVersion"]["groupVersion"], "example.com/v1", "{group}");

    let (code, list) = get(addr, GV, JSON).await;
    assert_eq!((code, list["groupVersion"].as_str()), (200, Some("example.com/v1")), "{list}");
    let widgets = list["resources"].as_array().unwrap().iter().find(|r| r["name"] == "widgets").unwrap();
    assert_eq!(
        (widgets["kind"].as_str(), widgets["singularName"].as_str(), widgets["namespaced"].as_bool()),
        (Some("Widget"), Some("widget"), Some(true)),
        "{widgets}"
    );

    let (_, aggregated) = get(addr, "/apis", AGGREGATED).await;
    let group = aggregated["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "example.com")
        .unwrap();
    assert_eq!(group["versions"][0]["version"], "v1");
    let widgets = &group["versions"][0]["resources"][0];
    assert_eq!(
        (widgets["responseKind"]["kind"].as_str(), widgets["scope"].as_str()),
        (Some("Widget"), Some("Namespaced")),
        "{widgets}"
    );

    let (_, root) = get(addr, "/openapi/v3", JSON).await;
    let url = root["paths"][OPENAPI_GV]["serverRelativeURL"].as_str().unwrap();
    assert!(url.starts_with(&format!("/openapi/v3/{OPENAPI_GV}?hash=")), "{url}");
    let (code, doc) = get(addr, url, JSON).await;
    assert_eq!(code, 200);
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/apis/example.com/v1/",
        "/apis/example.com/v1/widgets",
        "/apis/example.com/v1/namespaces/{namespace}/widgets",
        "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}",
    ] {
        assert!(paths.contains_key(path), "{path} missing from {:?}", paths.keys().collect::<Vec<_>>());
    }
    let one = &paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"];
    assert_eq!(
        one["get"]["x-kubernetes-group-version-kind"],
        json!({"group": "example.com", "kind": "Widget", "version": "v1"})
    );
    assert!(paths.keys().all(|p| p.starts_with("/apis/example.com/v1/")), "{:?}", paths.keys());
}

/// Reads what is left of a watch: it must end (the connection closes)
/// without another event.
async fn assert_watch_ends(watch: &mut tokio::io::BufReader<tokio::net::TcpStream>) {
    use tokio::io::AsyncBufReadExt;
    let mut line = String::new();
    let read = tokio::time::timeout(Duration::from_secs(20), watch.read_line(&mut line)).await;
    match read {
        Ok(Ok(0)) | Ok(Err(_)) => {}
        Ok(Ok(_)) => panic!("the watch went on after its resource was removed: {line}"),
        Err(_) => panic!("the watch is still open 20s after its resource was removed"),
    }
}

async fn register_serve_and_remove(server: &Server) {
    let addr = server.addr.as_str();
    not_served(addr).await;

    server.resources.add(widgets()).unwrap();
    served(addr).await;

    // A watch from the list's revision sees the create, then the update.
    let (code, list) = request(addr, "GET", WIDGETS, JSON, "").await;
    assert_eq!((code, list["kind"].as_str()), (200, Some("WidgetList")), "{list}");
    assert_eq!(list["items"], json!([]));
    let rv = list["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = open_watch(addr, &format!("{WIDGETS}?watch=true&resourceVersion={rv}")).await;
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
                        "spec": {"size": 1}});
    let (code, created) = request(addr, "POST", WIDGETS, JSON, &widget.to_string()).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1, "{created}");
    let event = next_event(&mut watch).await;
    assert_eq!(
        (event["type"].as_str(), event["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("w1")),
        "{event}"
    );
    assert_eq!(event["object"]["kind"], "Widget");
    let (code, patched) =
        request(addr, "PATCH", &format!("{WIDGETS}/w1"), MERGE, r#"{"spec":{"size":2}}"#).await;
    assert_eq!(code, 200, "{patched}");
    let event = next_event(&mut watch).await;
    assert_eq!(event["type"], "MODIFIED", "{event}");
    assert_eq!(event["object"]["spec"]["size"], 2, "{event}");
    assert_eq!(event["object"]["metadata"]["generation"], 2, "{event}");
    assert_eq!(event["object"]["metadata"]["resourceVersion"], patched["metadata"]["resourceVersion"]);

    // Removed: the open watch ends, and nothing about it is served.
    assert!(server.resources.remove("example.com", "v1", "widgets").is_some());
    assert_watch_ends(&mut watch).await;
    not_served(addr).await;
    assert!(server.resources.remove("example.com", "v1", "widgets").is_none());
    // The built-in kinds are untouched.
    assert_eq!(request(addr, "GET", "/api/v1/namespaces/default/configmaps", JSON, "").await.0, 200);

    // Served again: the objects in storage are there, as they were.
    server.resources.add(widgets()).unwrap();
    assert!(server.resources.add(widgets()).is_err(), "a resource served twice");
    served(addr).await;
    let (code, w1) = request(addr, "GET", &format!("{WIDGETS}/w1"), JSON, "").await;
    assert_eq!(code, 200, "{w1}");
    assert_eq!((w1["spec"]["size"].as_i64(), w1["metadata"]["generation"].as_i64()), (Some(2), Some(2)));
    assert_eq!(w1["metadata"]["resourceVersion"], patched["metadata"]["resourceVersion"]);
    let (code, list) = request(addr, "GET", WIDGETS, JSON, "").await;
    assert_eq!(code, 200, "{list}");
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().filter_map(|i| i["metadata"]["name"].as_str()).collect();
    assert_eq!(names, ["w1"]);
    // And its watch cache is live again.
    let rv = list["metadata"]["resourceVersion"].as_str().unwrap();
    let mut watch = open_watch(addr, &format!("{WIDGETS}?watch=true&resourceVersion={rv}")).await;
    assert_eq!(request(addr, "DELETE", &format!("{WIDGETS}/w1"), JSON, "").await.0, 200);
    let event = next_event(&mut watch).await;
    assert_eq!(
        (event["type"].as_str(), event["object"]["metadata"]["name"].as_str()),
        (Some("DELETED"), Some("w1")),
        "{event}"
    );
}

/// A custom `services` is not a Service: no cluster IP, no Service
/// defaults, names and field selectors and columns of its own.
async fn behaviour_is_the_kinds_not_the_plurals(server: &Server) {
    let addr = server.addr.as_str();
    server
        .resources
        .add(Kind::new(
            Resource::new("example.com", "Service", "services").stored_under("example.com/services"),
            PlainStrategy,
        ))
        .unwrap();
    let path = "/apis/example.com/v1/namespaces/default/services";
    let body = json!({"apiVersion": "example.com/v1", "kind": "Service", "metadata": {"name": "a.b"},
                      "spec": {"ports": [{"port": 80}]}});
    let (code, created) = request(addr, "POST", path, JSON, &body.to_string()).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["spec"], json!({"ports": [{"port": 80}]}), "{created}");
    let (_, stored) = request(addr, "GET", &format!("{path}/a.b"), JSON, "").await;
    assert!(stored["spec"].get("clusterIP").is_none(), "{stored}");
    // The core Service is still the core Service.
    let core = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "core"},
                      "spec": {"ports": [{"port": 80}]}});
    let (code, core) =
        request(addr, "POST", "/api/v1/namespaces/default/services", JSON, &core.to_string()).await;
    assert_eq!(code, 201, "{core}");
    assert!(core["spec"]["clusterIP"].as_str().is_some_and(|ip| ip.starts_with("10.0.0.")), "{core}");

    let (code, status) =
        request(addr, "GET", &format!("{path}?fieldSelector=spec.clusterIP%3DNone"), JSON, "").await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")), "{status}");
    let (code, table) = get(addr, path, TABLE).await;
    assert_eq!((code, table["kind"].as_str()), (200, Some("Table")), "{table}");
    let columns: Vec<&str> =
        table["columnDefinitions"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert!(!columns.contains(&"Cluster-IP"), "{columns:?}");
    assert!(server.resources.remove("example.com", "v1", "services").is_some());
}

async fn runtime_resources(backend: Backend) {
    let server = Server::start(backend).await;
    register_serve_and_remove(&server).await;
    behaviour_is_the_kinds_not_the_plurals(&server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_resources_on_rtcd() {
    runtime_resources(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_resources_on_etcd() {
    runtime_resources(Backend::Etcd).await;
}
