//! `/openapi/v2` as its clients read it: kubectl's v2 explain (client-go asks for gnostic
//! protobuf and decodes it with Go's protobuf), the JSON document's references all resolving,
//! kube's content negotiation (406) and ETag caching (304).

use serde_json::Value;

use crate::common::{ApiServer, Backend, get_raw as get, header};

const PROTOBUF_ASKED: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const PROTOBUF_ANSWERED: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Every `$ref` in `value`.
fn references<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                out.push(target);
            }
            map.values().for_each(|v| references(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_v2_serves_kubectl_and_json_readers() {
    let api = ApiServer::start(Backend::Rtcd).await;
    let addr = api.url.trim_start_matches("http://");

    // kubectl's v2 explain: discovery, then /openapi/v2 in protobuf, parsed into models.
    let explained = api.ok(&["explain", "deployments.spec.strategy", "--output=plaintext-openapiv2"]);
    for expected in
        ["KIND:     Deployment", "VERSION:  apps/v1", "RESOURCE: strategy <Object>", "rollingUpdate"]
    {
        assert!(explained.contains(expected), "{expected:?} missing:\n{explained}");
    }
    let explained =
        api.ok(&["explain", "pods.spec.containers.resources.limits", "--output=plaintext-openapiv2"]);
    assert!(explained.contains("limits <map[string]"), "{explained}");

    // The JSON document: Swagger 2.0 whose references all resolve within it.
    let (code, head, body) = get(addr, "/openapi/v2", &[("Accept", "application/json")]).await;
    assert_eq!(code, 200, "{head}");
    assert_eq!(header(&head, "content-type"), Some("application/json"));
    let doc: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc["swagger"], "2.0");
    let mut targets = Vec::new();
    references(&doc, &mut targets);
    assert!(targets.len() > 1000, "{} references", targets.len());
    for target in targets {
        let name =
            target.strip_prefix("#/definitions/").unwrap_or_else(|| panic!("not a definition: {target}"));
        assert!(doc["definitions"].get(name).is_some(), "{target} is not defined");
    }
    let create = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["post"];
    let body_parameter = create["parameters"].as_array().unwrap().iter().find(|p| p["in"] == "body").unwrap();
    assert_eq!(body_parameter["schema"]["$ref"], "#/definitions/io.k8s.api.apps.v1.Deployment");
    assert_eq!(create["x-kubernetes-group-version-kind"]["kind"], "Deployment");
    let gvks = &doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"];
    assert_eq!(gvks[0], serde_json::json!({"group": "apps", "kind": "Deployment", "version": "v1"}));

    // Protobuf by either name, answered under the current one, with the JSON's ETag.
    let (code, proto_head, proto) = get(addr, "/openapi/v2", &[("Accept", PROTOBUF_ASKED)]).await;
    assert_eq!((code, header(&proto_head, "content-type")), (200, Some(PROTOBUF_ANSWERED)));
    assert!(!proto.is_empty() && proto != body);
    let etag = header(&head, "etag").unwrap().to_string();
    assert_eq!(header(&proto_head, "etag"), Some(etag.as_str()));
    assert_eq!(header(&head, "vary"), Some("Accept"));

    // Cached copies are confirmed, not sent again; nothing it has is refused with 406.
    let (code, _, unchanged) = get(addr, "/openapi/v2", &[("If-None-Match", &etag)]).await;
    assert_eq!((code, unchanged.len()), (304, 0));
    let (code, _, _) = get(addr, "/openapi/v2", &[("Accept", "text/html")]).await;
    assert_eq!(code, 406);
    let (code, head, _) = get(addr, "/openapi/v2", &[]).await;
    assert_eq!((code, header(&head, "content-type")), (200, Some("application/json")));
}
