//! The aggregation layer's registry as kubectl meets it: every built-in
//! group version served here has its local APIService with kube's
//! priorities, Available; a CustomResourceDefinition's group version gets
//! one while the CRD serves it; an APIService naming a Service says, in
//! kube's words, why that Service cannot serve it, and its group version
//! answers 503; a bad APIService is refused with kube's texts.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, get_raw};

/// The cells of the row of `name` in a table.
fn row(table: &str, name: &str) -> Option<Vec<String>> {
    let line = table.lines().find(|l| l.split_whitespace().next() == Some(name))?;
    Some(line.split_whitespace().map(String::from).collect())
}

/// The Available cell of `name` (the words between SERVICE and AGE).
fn available(table: &str, name: &str) -> Option<String> {
    let cells = row(table, name)?;
    Some(cells[2..cells.len() - 1].join(" "))
}

async fn scenario(backend: Backend) {
    let api = ApiServer::start(backend).await;
    let table = api
        .eventually(&["get", "apiservices"], |out| {
            ["v1.", "v1.apps", "v2.autoscaling", "v1.flowcontrol.apiserver.k8s.io"]
                .iter()
                .all(|name| available(out, name).as_deref() == Some("True"))
        })
        .await;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    assert_eq!(row(&table, "v1.apps").unwrap()[1], "Local");
    let apps: Value = serde_json::from_str(&api.ok(&["get", "apiservice", "v1.apps", "-o", "json"])).unwrap();
    assert_eq!(
        (&apps["spec"]["groupPriorityMinimum"], &apps["spec"]["versionPriority"]),
        (&json!(17800), &json!(15))
    );
    assert_eq!(apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"], "onstart");
    let condition = &apps["status"]["conditions"][0];
    assert_eq!(
        (&condition["type"], &condition["reason"], &condition["message"]),
        (&json!("Available"), &json!("Local"), &json!("Local APIServices are always available"))
    );

    // A CRD's group version, while the CRD serves it.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    api.ok_stdin(&["create", "-f", "-"], &crd.to_string());
    api.eventually(&["get", "apiservices"], |out| {
        available(out, "v1.example.com").as_deref() == Some("True")
    })
    .await;
    let managed = "jsonpath={.metadata.labels.kube-aggregator\\.kubernetes\\.io/automanaged} {.spec.groupPriorityMinimum} {.spec.versionPriority}";
    assert_eq!(api.ok(&["get", "apiservice", "v1.example.com", "-o", managed]), "true 1000 100");
    api.ok(&["delete", "crd", "widgets.example.com"]);
    api.eventually(&["get", "apiservices"], |out| row(out, "v1.example.com").is_none()).await;

    // An extension server's APIService, its Service missing, then without
    // ready endpoints.
    let metrics = json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.k8s.io"},
        "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100,
            "versionPriority": 100, "insecureSkipTLSVerify": true,
            "service": {"namespace": "kube-system", "name": "metrics-server"}}});
    api.ok_stdin(&["apply", "-f", "-"], &metrics.to_string());
    assert_eq!(
        api.ok(&["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", "jsonpath={.spec.service.port}"]),
        "443"
    );
    // kubectl's client-side apply patches a built-in kind strategically.
    let mut edited = metrics.clone();
    edited["spec"]["versionPriority"] = json!(50);
    api.ok_stdin(&["apply", "-f", "-"], &edited.to_string());
    let priority = "jsonpath={.spec.versionPriority}";
    assert_eq!(api.ok(&["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", priority]), "50");
    let reason = "jsonpath={.status.conditions[0].reason}: {.status.conditions[0].message}";
    api.eventually(&["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", reason], |out| {
        out == "ServiceNotFound: service/metrics-server in \"kube-system\" is not present"
    })
    .await;
    let table = api.ok(&["get", "apiservices"]);
    assert_eq!(row(&table, "v1beta1.metrics.k8s.io").unwrap()[1], "kube-system/metrics-server");
    assert_eq!(available(&table, "v1beta1.metrics.k8s.io").unwrap(), "False (ServiceNotFound)");
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "metrics-server", "namespace": "kube-system"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 4443}]}});
    api.ok_stdin(&["create", "-f", "-"], &service.to_string());
    api.eventually(&["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", reason], |out| {
        out == "EndpointsNotFound: cannot find endpointslices for service/metrics-server in \"kube-system\""
    })
    .await;
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "metrics-server-abcde", "namespace": "kube-system",
            "labels": {"kubernetes.io/service-name": "metrics-server"}},
        "addressType": "IPv4", "ports": [{"name": "https", "port": 4443, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": false}}]});
    api.ok_stdin(&["create", "-f", "-"], &slice.to_string());
    api.eventually(&["get", "apiservice", "v1beta1.metrics.k8s.io", "-o", reason], |out| {
        out == "MissingEndpoints: endpointslices for service/metrics-server in \"kube-system\" have no addresses with port name \"https\""
    })
    .await;

    // Its group version is the extension server's: unavailable, as kube
    // answers while it cannot reach it.
    let addr = api.url.trim_start_matches("http://");
    for path in ["/apis/metrics.k8s.io/v1beta1", "/apis/metrics.k8s.io/v1beta1/nodes"] {
        let (code, _, body) = get_raw(addr, path, &[]).await;
        assert_eq!((code, String::from_utf8_lossy(&body).as_ref()), (503, "service unavailable\n"), "{path}");
    }
    assert_eq!(get_raw(addr, "/apis/nothing.example.com/v1/things", &[]).await.0, 404);
    // As kube-aggregator's metrics say it: unavailable (the local ones
    // not), and the 503s terminated by the aggregator, not counted as
    // requests.
    let (_, _, scraped) = get_raw(addr, "/metrics", &[]).await;
    let scraped = String::from_utf8_lossy(&scraped);
    for line in [
        "aggregator_unavailable_apiservice{name=\"v1beta1.metrics.k8s.io\"} 1",
        "aggregator_unavailable_apiservice{name=\"v1.apps\"} 0",
        "apiserver_request_terminations_total{verb=\"GET\",group=\"\",version=\"\",resource=\"\",subresource=\"/apis/metrics.k8s.io/v1beta1\",scope=\"\",component=\"aggregator\",code=\"503\"} 1",
        "apiserver_request_terminations_total{verb=\"LIST\",group=\"metrics.k8s.io\",version=\"v1beta1\",resource=\"nodes\",subresource=\"\",scope=\"cluster\",component=\"aggregator\",code=\"503\"} 1",
    ] {
        assert!(scraped.lines().any(|l| l == line), "no {line}");
    }
    assert!(!scraped.contains("group=\"metrics.k8s.io\",version=\"v1beta1\",resource=\"nodes\",subresource=\"\",scope=\"cluster\",component=\"apiserver\""));

    // Refused with kube's texts.
    let mut bad = metrics.clone();
    bad["metadata"]["name"] = json!("v1.wrong");
    bad["spec"]["versionPriority"] = json!(0);
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &bad.to_string());
    assert!(!ok);
    assert!(stderr.contains(r#"metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io""#), "{stderr}");
    assert!(
        stderr.contains("spec.versionPriority: Invalid value: 0: must be positive and less than 1000"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apiservices_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apiservices_on_etcd() {
    scenario(Backend::Etcd).await;
}
