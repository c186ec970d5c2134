//! CustomResourceDefinitions as a user meets them, with real kubectl, on
//! rtcd and on etcd: a CRD installed by `kubectl apply` becomes
//! Established and served; its objects are defaulted, pruned (with kube's
//! warning), refused with kube's 422 texts, printed with the CRD's columns,
//! listed by `kubectl get all`, explained, watched, updated through the
//! status subresource and scaled through the scale subresource (`kubectl
//! scale`, at the paths the CRD names); a CRD whose names clash is not served; a CRD that
//! is not structural is refused; versions that differ are converted by
//! the CRD's conversion webhook (a real HTTPS one); a restarted server serves what was
//! established; deleting a CRD deletes its objects first.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ApiServer, Backend, json, next_event, open_watch};
use crate::webhook_server::WebhookServer;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          metadata: {type: object}
          spec:
            type: object
            required: [color]
            x-kubernetes-validations:
            - {rule: "self.color != 'green' || self.replicas <= 5", message: green widgets come in fives at most}
            properties:
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1, description: How many widgets.}
              color: {type: string, enum: [red, green]}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
"#;

fn crd(api: &ApiServer, name: &str) -> Value {
    json(&api.ok(&["get", "crd", name, "-o", "json"]))
}

fn condition<'a>(crd: &'a Value, type_: &str) -> &'a Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"] == type_))
        .unwrap_or_else(|| panic!("no {type_} condition: {crd}"))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

async fn install(api: &ApiServer) {
    let (ok, out, err) = api.kubectl_in(&["apply", "-f", "-"], CRD);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created");
    api.ok(&["wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s"]);
    let installed = crd(api, "widgets.example.com");
    let names = condition(&installed, "NamesAccepted");
    assert_eq!(
        (&names["status"], &names["reason"], &names["message"]),
        (&"True".into(), &"NoConflicts".into(), &"no conflicts found".into())
    );
    let established = condition(&installed, "Established");
    assert_eq!(
        (&established["reason"], &established["message"]),
        (&"InitialNamesAccepted".into(), &"the initial names have been accepted".into())
    );
    assert_eq!(installed["status"]["storedVersions"], serde_json::json!(["v1"]));
    assert_eq!(installed["status"]["acceptedNames"]["listKind"], "WidgetList");
    assert_eq!(installed["spec"]["names"]["singular"], "widget", "defaulted from the kind");
    let resources = api.ok(&["api-resources", "--api-group=example.com", "--no-headers"]);
    let line = resources.lines().find(|l| l.starts_with("widgets ")).unwrap_or_else(|| panic!("{resources}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words, ["widgets", "wd", "example.com/v1", "true", "Widget"]);
}

async fn objects(api: &ApiServer) {
    // An unknown field is pruned, with kube's warning.
    let w1 =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {color: red, extra: gone}\n";
    let (ok, out, err) = api.kubectl_in(&["apply", "--validate=warn", "-f", "-"], w1);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "widget.example.com/w1 created");
    assert!(err.contains(r#"Warning: unknown field "spec.extra""#), "{err}");
    let stored = json(&api.ok(&["get", "wd", "w1", "-o", "json"]));
    assert_eq!(stored["spec"], serde_json::json!({"color": "red", "replicas": 1}), "pruned and defaulted");
    assert_eq!(stored["metadata"]["generation"], 1);
    // With kubectl's default (strict) validation, the unknown field is refused.
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &w1.replace("w1", "w-strict"));
    assert!(!ok);
    assert!(err.contains(r#"strict decoding error: unknown field "spec.extra""#), "{err}");

    // Invalid objects: kube's 422, nothing stored.
    let bad =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {color: blue, replicas: 20}\n";
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], bad);
    assert!(!ok);
    assert!(err.contains(r#"The Widget "w2" is invalid: "#), "{err}");
    assert!(
        err.contains(r#"* spec.color: Unsupported value: "blue": supported values: "red", "green""#),
        "{err}"
    );
    assert!(
        err.contains(
            "* spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10"
        ),
        "{err}"
    );
    let missing = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w3}\nspec: {replicas: 2}\n";
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], missing);
    assert!(!ok);
    // A missing field keeps the CEL rules from running, and kube says so.
    assert!(err.contains("The Widget \"w3\" is invalid: \n* spec.color: Required value\n* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"), "{err}");
    assert!(!api.kubectl(&["get", "wd", "w2"]).status.success());
    // The CRD's CEL rule.
    let green =
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w4}\nspec: {color: green, replicas: 7}\n";
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], green);
    assert!(!ok);
    assert!(
        err.contains(
            r#"The Widget "w4" is invalid: spec: Invalid value: green widgets come in fives at most"#
        ),
        "{err}"
    );

    // The CRD's columns, and the `all` category.
    let table = api.ok(&["get", "widgets"]);
    let rows: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0], ["NAME", "REPLICAS", "COLOR", "READY"]);
    // A column with nothing to show is left blank, as kubectl prints a null cell.
    assert_eq!(rows[1], ["w1", "1", "red"]);
    let all = api.ok(&["get", "all", "-o", "name"]);
    assert!(all.lines().any(|l| l == "widget.example.com/w1"), "{all}");

    // Status only through its subresource; generation counts the spec.
    api.ok(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3},"status":{"conditions":[{"type":"Ready","status":"False"}]}}"#,
    ]);
    let patched = json(&api.ok(&["get", "wd", "w1", "-o", "json"]));
    assert_eq!(
        (patched["spec"]["replicas"].as_i64(), patched["metadata"]["generation"].as_i64()),
        (Some(3), Some(2))
    );
    assert!(patched.get("status").is_none(), "status is the subresource's: {patched}");
    api.ok(&[
        "patch",
        "wd",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]},"spec":{"replicas":9}}"#,
    ]);
    let table = api.ok(&["get", "wd", "w1", "--no-headers"]);
    assert_eq!(table.split_whitespace().collect::<Vec<_>>()[..4], ["w1", "3", "red", "True"]);
    let after = json(&api.ok(&["get", "wd", "w1", "-o", "json"]));
    assert_eq!(after["metadata"]["generation"], 2, "a status change is not a new generation");
    let out = api.kubectl(&[
        "patch",
        "wd",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":"no"}}"#,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(r#"status.conditions: Invalid value: "string": status.conditions in body must be of type array: "string""#), "{err}");

    // A controller applies status server-side through the subresource: its
    // manager owns the conditions (atomic: the schema names no list type)
    // and nothing of the spec.
    let status_apply = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\n\
                        spec: {replicas: 5}\nstatus:\n  conditions: [{type: Ready, status: 'False'}]\n";
    let controller = ["apply", "--server-side", "--subresource=status", "--field-manager=widget-controller"];
    let (ok, _, err) =
        api.kubectl_in(&[&controller[..], &["--force-conflicts", "-f", "-"]].concat(), status_apply);
    assert!(ok, "{err}");
    let applied = json(&api.ok(&["get", "wd", "w1", "-o", "json", "--show-managed-fields"]));
    assert_eq!(applied["status"]["conditions"][0]["status"], "False");
    assert_eq!(applied["spec"]["replicas"], 3, "status applies leave the spec be");
    let entry = applied["metadata"]["managedFields"]
        .as_array()
        .and_then(|all| all.iter().find(|e| e["manager"] == "widget-controller"))
        .unwrap_or_else(|| panic!("no widget-controller entry: {applied}"));
    assert_eq!(
        (&entry["operation"], &entry["subresource"]),
        (&serde_json::json!("Apply"), &serde_json::json!("status"))
    );
    assert_eq!(entry["fieldsV1"], serde_json::json!({"f:status": {"f:conditions": {}}}));

    // No strategic merge patch for custom resources (kubectl's default).
    let out = api.kubectl(&["patch", "wd", "w1", "-p", r#"{"spec":{"replicas":4}}"#]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"), "{err}");

    let explained = api.ok(&["explain", "widgets.spec.replicas"]);
    assert!(
        explained.contains("FIELD: replicas <integer>") && explained.contains("How many widgets."),
        "{explained}"
    );
    // `/openapi/v2` (protobuf to kubectl) carries the new kind too.
    let explained = api.ok(&["explain", "widgets.spec.replicas", "--output=plaintext-openapiv2"]);
    assert!(
        explained.contains("FIELD:    replicas <integer>") && explained.contains("How many widgets."),
        "{explained}"
    );
}

/// The scale subresource at the CRD's paths: what `kubectl scale` and an
/// autoscaler read and write, checked by the CRD's schema.
async fn scaled(api: &ApiServer) {
    let scale_url = "/apis/example.com/v1/namespaces/default/widgets/w1/scale";
    // A controller reports replicas and its selector through status.
    api.ok(&[
        "patch",
        "wd",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":2,"selector":"app=w1,tier in (front)"}}"#,
    ]);
    assert_eq!(api.ok(&["scale", "wd", "w1", "--replicas=4"]).trim(), "widget.example.com/w1 scaled");
    let scale = json(&api.ok(&["get", "--raw", scale_url]));
    assert_eq!((&scale["kind"], &scale["apiVersion"]), (&"Scale".into(), &"autoscaling/v1".into()));
    assert_eq!(
        (&scale["spec"], &scale["status"]),
        (
            &serde_json::json!({"replicas": 4}),
            &serde_json::json!({"replicas": 2, "selector": "app=w1,tier in (front)"})
        )
    );
    let widget = json(&api.ok(&["get", "wd", "w1", "-o", "json", "--show-managed-fields"]));
    assert_eq!(
        (widget["spec"]["replicas"].as_i64(), widget["metadata"]["generation"].as_i64()),
        (Some(4), Some(3))
    );
    assert_eq!(scale["metadata"]["resourceVersion"], widget["metadata"]["resourceVersion"]);
    // The scaler owns the replicas, recorded against the subresource.
    let scaler = widget["metadata"]["managedFields"]
        .as_array()
        .and_then(|all| all.iter().find(|e| e["subresource"] == "scale"))
        .unwrap_or_else(|| panic!("no scale entry: {widget}"));
    assert_eq!(scaler["fieldsV1"], serde_json::json!({"f:spec": {"f:replicas": {}}}));
    // The CRD's schema holds for replicas set through the Scale: kube's
    // 422 texts, nothing changed.
    let out = api.kubectl(&["scale", "wd", "w1", "--replicas=11"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        ),
        "{err}"
    );
    let negative = serde_json::json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": {"replicas": -1}});
    let (ok, _, err) = api.kubectl_in(&["replace", "--raw", scale_url, "-f", "-"], &negative.to_string());
    assert!(!ok);
    assert!(err.contains(".spec.replicas: Invalid value: -1: should be a non-negative integer"), "{err}");
    assert!(err.contains("spec.replicas in body should be greater than or equal to 1"), "{err}");
    // A Scale naming an older resourceVersion is a conflict.
    let stale = serde_json::json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "w1", "namespace": "default", "resourceVersion": "1"}, "spec": {"replicas": 5}});
    let (ok, _, err) = api.kubectl_in(&["replace", "--raw", scale_url, "-f", "-"], &stale.to_string());
    assert!(!ok);
    assert!(err.contains("the object has been modified"), "{err}");
    assert_eq!(json(&api.ok(&["get", "wd", "w1", "-o", "json"]))["spec"]["replicas"], 4);
    // Discovery names the subresource and its kind, as autoscalers look it up.
    let listed = json(&api.ok(&["get", "--raw", "/apis/example.com/v1"]));
    let entry = listed["resources"]
        .as_array()
        .and_then(|all| all.iter().find(|r| r["name"] == "widgets/scale"))
        .unwrap_or_else(|| panic!("no widgets/scale: {listed}"));
    assert_eq!(
        (&entry["kind"], &entry["group"], &entry["version"]),
        (&"Scale".into(), &"autoscaling".into(), &"v1".into())
    );
    // Back to what the suite expects further on.
    api.ok(&["scale", "wd", "w1", "--replicas=3"]);
}

async fn watched(api: &ApiServer) {
    let addr = api.url.trim_start_matches("http://");
    let mut watch = open_watch(addr, "/apis/example.com/v1/namespaces/default/widgets?watch=1").await;
    let first = next_event(&mut watch).await;
    assert_eq!(
        (first["type"].as_str(), first["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("w1"))
    );
    api.ok(&["patch", "wd", "w1", "--type=merge", "-p", r#"{"spec":{"color":"green"}}"#]);
    let changed = next_event(&mut watch).await;
    assert_eq!(
        (changed["type"].as_str(), changed["object"]["spec"]["color"].as_str()),
        (Some("MODIFIED"), Some("green"))
    );
}

/// Two versions (conversion None): objects are stored in the storage
/// version and read in the version asked for; a default added to the
/// schema shows on objects stored before it.
const THINGS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}MODE}}}}}
"#;

async fn versions(api: &ApiServer) {
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &THINGS.replace("MODE", ""));
    assert!(ok, "{err}");
    api.ok(&["wait", "--for=condition=Established", "crd/things.example.com", "--timeout=30s"]);
    let thing = "apiVersion: example.com/v1beta1\nkind: Thing\nmetadata: {name: t1}\nspec: {size: 2}\n";
    let (ok, out, err) = api.kubectl_in(&["create", "-f", "-", "-o", "json"], thing);
    assert!(ok, "{err}");
    assert_eq!(json(&out)["apiVersion"], "example.com/v1beta1", "answered in the version written");
    let read =
        |version: &str| json(&api.ok(&["get", &format!("things.{version}.example.com"), "t1", "-o", "json"]));
    assert_eq!(
        (read("v1")["apiVersion"].as_str(), read("v1")["spec"]["size"].as_i64()),
        (Some("example.com/v1"), Some(2))
    );
    assert_eq!(read("v1beta1")["apiVersion"], "example.com/v1beta1");
    // A label through v1beta1 is not a new generation (the version read
    // through is not a change).
    api.ok(&["label", "things.v1beta1.example.com", "t1", "a=b"]);
    assert_eq!(read("v1")["metadata"]["generation"], 1);
    let listed = json(&api.ok(&["get", "things.v1beta1.example.com", "-o", "json"]));
    assert_eq!(listed["items"][0]["apiVersion"], "example.com/v1beta1");
    assert_eq!(crd(api, "things.example.com")["status"]["storedVersions"], serde_json::json!(["v1"]));

    let with_mode = THINGS.replace("MODE", ", mode: {type: string, default: auto}");
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &with_mode);
    assert!(ok, "{err}");
    wait_until("the new default shows on the stored object", || read("v1")["spec"]["mode"] == "auto");
    assert!(read("v1beta1")["spec"].get("mode").is_none(), "v1beta1's schema has no such default");
    api.ok(&["delete", "crd", "things.example.com"]);
}

/// A CRD whose versions differ (`spec.size` in v1beta1 is `spec.count`
/// in v1) converted by its webhook: objects written through either version
/// are stored in v1 and read in the version asked for; a webhook that
/// fails fails the reads that need it, with kube's text.
const SPROCKETS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sprockets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: sprockets, kind: Sprocket}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "URL", caBundle: CA}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {count: {type: integer}}}}}}
"#;

async fn converted(api: &ApiServer) {
    let webhook = WebhookServer::start().await;
    let crd = |path: &str| SPROCKETS.replace("URL", &webhook.url(path)).replace("CA", &webhook.ca_bundle());
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &crd("/convert"));
    assert!(ok, "{err}");
    api.ok(&["wait", "--for=condition=Established", "crd/sprockets.example.com", "--timeout=30s"]);
    let read = |version: &str, name: &str| {
        json(&api.ok(&["get", &format!("sprockets.{version}.example.com"), name, "-o", "json"]))
    };

    // Written through v1beta1: stored in v1 (converted), answered in v1beta1
    // (converted back).
    let old_style =
        "apiVersion: example.com/v1beta1\nkind: Sprocket\nmetadata: {name: s1}\nspec: {size: 3}\n";
    let (ok, out, err) = api.kubectl_in(&["create", "-f", "-", "-o", "json"], old_style);
    assert!(ok, "{err}");
    let created = json(&out);
    assert_eq!(
        (&created["apiVersion"], &created["spec"]),
        (&"example.com/v1beta1".into(), &serde_json::json!({"size": 3}))
    );
    assert!(webhook.calls.load(std::sync::atomic::Ordering::SeqCst) >= 2, "to v1 and back");
    let in_v1 = read("v1", "s1");
    assert_eq!(
        (&in_v1["apiVersion"], &in_v1["spec"]),
        (&"example.com/v1".into(), &serde_json::json!({"count": 3}))
    );
    assert_eq!(in_v1["metadata"]["labels"]["converted-to"], "v1", "labels set by the webhook are kept");
    // Written through v1, read through both; lists convert every item.
    let new_style = "apiVersion: example.com/v1\nkind: Sprocket\nmetadata: {name: s2}\nspec: {count: 5}\n";
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], new_style);
    assert!(ok, "{err}");
    assert_eq!(read("v1beta1", "s2")["spec"], serde_json::json!({"size": 5}));
    let listed = json(&api.ok(&["get", "sprockets.v1beta1.example.com", "-o", "json"]));
    let sizes: Vec<&Value> = listed["items"].as_array().unwrap().iter().map(|i| &i["spec"]["size"]).collect();
    assert_eq!(sizes, [&serde_json::json!(3), &serde_json::json!(5)]);
    // Watchers of v1beta1 see changes made through v1 converted.
    let addr = api.url.trim_start_matches("http://");
    let mut watch = open_watch(
        addr,
        "/apis/example.com/v1beta1/namespaces/default/sprockets?watch=1&fieldSelector=metadata.name%3Ds2",
    )
    .await;
    assert_eq!(next_event(&mut watch).await["object"]["spec"], serde_json::json!({"size": 5}));
    api.ok(&["patch", "sprockets.v1.example.com", "s2", "--type=merge", "-p", r#"{"spec":{"count":6}}"#]);
    let changed = next_event(&mut watch).await;
    assert_eq!(
        (&changed["type"], &changed["object"]["spec"]),
        (&"MODIFIED".into(), &serde_json::json!({"size": 6}))
    );
    // An update through v1beta1 goes through the webhook both ways.
    api.ok(&["patch", "sprockets.v1beta1.example.com", "s1", "--type=merge", "-p", r#"{"spec":{"size":4}}"#]);
    assert_eq!(read("v1", "s1")["spec"], serde_json::json!({"count": 4}));

    // A webhook that answers other objects: refused, nothing changed.
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &crd("/convert-rename"));
    assert!(ok, "{err}");
    wait_until("the renaming webhook is in use", || {
        let out = api.kubectl(&["get", "sprockets.v1beta1.example.com", "s1"]);
        String::from_utf8_lossy(&out.stderr).contains("must have the same name: s1 != someone-else")
    });
    let out = api.kubectl(&["get", "sprockets.v1beta1.example.com", "s1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("conversion webhook for example.com/v1, Kind=Sprocket returned invalid object: must have the same name: s1 != someone-else"),
        "{err}"
    );
    // A webhook that refuses: reads needing it fail with its message, reads
    // in the stored version need no webhook.
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &crd("/convert-fail"));
    assert!(ok, "{err}");
    wait_until("the failing webhook is in use", || {
        !api.kubectl(&["get", "sprockets.v1beta1.example.com", "s1"]).status.success()
            && String::from_utf8_lossy(&api.kubectl(&["get", "sprockets.v1beta1.example.com", "s1"]).stderr)
                .contains("today")
    });
    let out = api.kubectl(&["get", "sprockets.v1beta1.example.com", "-o", "json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "conversion webhook for example.com/v1, Kind=Sprocket failed: sprockets cannot be converted today"
        ),
        "{err}"
    );
    let refused = api.kubectl_in(&["create", "-f", "-"], &old_style.replace("s1", "s3"));
    assert!(!refused.0);
    assert!(refused.2.contains("sprockets cannot be converted today"), "{}", refused.2);
    assert_eq!(read("v1", "s1")["spec"]["count"], 4);
    assert!(!api.kubectl(&["get", "sprockets.v1.example.com", "s3"]).status.success(), "nothing stored");
    api.ok(&["delete", "crd", "sprockets.example.com"]);
}

async fn refusals(api: &ApiServer) {
    // Names in use by another CRD of the group: stored, not served.
    let clash = CRD.replace("widgets", "gadgets").replace("kind: Widget", "kind: Gadget");
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], &clash);
    assert!(ok, "{err}");
    wait_until("the clash is reported", || {
        let gadgets = crd(api, "gadgets.example.com");
        gadgets["status"]["conditions"].as_array().is_some_and(|c| c.len() == 2)
    });
    let gadgets = crd(api, "gadgets.example.com");
    let names = condition(&gadgets, "NamesAccepted");
    assert_eq!(
        (&names["status"], &names["reason"], &names["message"]),
        (&"False".into(), &"ShortNamesConflict".into(), &r#""wd" is already in use"#.into())
    );
    assert_eq!(condition(&gadgets, "Established")["reason"], "NotAccepted");
    assert!(!api.kubectl(&["get", "gadgets"]).status.success());
    api.ok(&["delete", "crd", "gadgets.example.com"]);
    // A CRD kept waiting for a name gets it once its holder is gone.
    let holder =
        CRD.replace("widgets", "sprockets").replace("kind: Widget", "kind: Sprocket").replace("[wd]", "[sp]");
    let waiting = CRD.replace("widgets", "cogs").replace("kind: Widget", "kind: Cog").replace("[wd]", "[sp]");
    for crd_yaml in [&holder, &waiting] {
        let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], crd_yaml);
        assert!(ok, "{err}");
    }
    wait_until("cogs wait for their short name", || {
        crd(api, "cogs.example.com")["status"]["conditions"].as_array().is_some_and(|c| c.len() == 2)
    });
    assert_eq!(condition(&crd(api, "cogs.example.com"), "NamesAccepted")["reason"], "ShortNamesConflict");
    api.ok(&["delete", "crd", "sprockets.example.com"]);
    api.ok(&["wait", "--for=condition=Established", "crd/cogs.example.com", "--timeout=30s"]);
    api.ok(&["delete", "crd", "cogs.example.com"]);

    // Not structural, and names that do not fit: kube's 422, nothing stored.
    let bad = CRD
        .replace("name: widgets.example.com", "name: things.example.com")
        .replace("scope: Namespaced", "scope: Global")
        .replace("            type: object\n            required: [color]", "            required: [color]")
        .replace("self.color != 'green'", "self.color !=");
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], &bad);
    assert!(!ok);
    for wanted in [
        r#"metadata.name: Invalid value: "things.example.com": must be spec.names.plural+"."+spec.group"#,
        r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
        "spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
        r#"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.color != || self.replicas <= 5","Message":"green widgets come in fives at most","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: "#,
    ] {
        assert!(err.contains(wanted), "{wanted}\n{err}");
    }
    assert!(!api.kubectl(&["get", "crd", "things.example.com"]).status.success());
}

/// Deleting the CRD: its objects go first (one held by a finalizer keeps
/// the CRD Terminating), then the CRD and its resource.
async fn deletion(api: &ApiServer) {
    api.ok(&[
        "patch",
        "wd",
        "w1",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    api.ok(&["delete", "crd", "widgets.example.com", "--wait=false"]);
    wait_until("the deletion is under way", || {
        let widgets = crd(api, "widgets.example.com");
        widgets["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["reason"] == "InstanceDeletionInProgress"))
    });
    let widgets = crd(api, "widgets.example.com");
    assert_eq!(
        widgets["metadata"]["finalizers"],
        serde_json::json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let w1 = json(&api.ok(&["get", "wd", "w1", "-o", "json"]));
    assert!(w1["metadata"]["deletionTimestamp"].is_string(), "{w1}");
    // No new objects while it goes.
    let late = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: late}\nspec: {color: red}\n";
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], late);
    assert!(!ok);
    assert!(
        err.contains(r#"widgets.example.com "late" is forbidden: create not allowed while custom resource definition is terminating"#),
        "{err}"
    );
    api.ok(&["patch", "wd", "w1", "--type=merge", "-p", r#"{"metadata":{"finalizers":null}}"#]);
    wait_until("the CRD is gone", || !api.kubectl(&["get", "crd", "widgets.example.com"]).status.success());
    let out = api.kubectl(&["get", "widgets"]);
    assert!(!out.status.success());
    // Made again, it starts empty.
    install(api).await;
    assert_eq!(api.ok(&["get", "wd", "-o", "name"]).trim(), "");
}

async fn crd_suite(backend: Backend) {
    let mut api = ApiServer::start(backend).await;
    install(&api).await;
    objects(&api).await;
    scaled(&api).await;
    watched(&api).await;
    versions(&api).await;
    converted(&api).await;
    refusals(&api).await;
    // A restarted server serves what was established, from storage.
    api.restart().await;
    wait_until("widgets are served again", || api.kubectl(&["get", "wd", "w1"]).status.success());
    deletion(&api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_on_rtcd() {
    crd_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_on_etcd() {
    crd_suite(Backend::Etcd).await;
}

/// An operator written with kopf (from PyPI), with its own CRD: it sees a
/// Gizmo made, makes it a ConfigMap it owns and records that in the
/// Gizmo's status; when the Gizmo is deleted its finalizer lets it go and
/// the garbage collector takes the ConfigMap (a v1alpha1 owner: the
/// collector finds resources in whatever version they are served).
const GIZMO_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, kind: Gizmo}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

const OPERATOR: &str = r#"
import kopf
import kubernetes

@kopf.on.create('example.com', 'v1alpha1', 'gizmos')
def make_config(spec, name, namespace, **_):
    config = {'apiVersion': 'v1', 'kind': 'ConfigMap',
              'metadata': {'name': name + '-config'},
              'data': {'size': str(spec.get('size'))}}
    kopf.adopt(config)
    kubernetes.config.load_kube_config()
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, config)
    return {'configmap': name + '-config'}

@kopf.on.delete('example.com', 'v1alpha1', 'gizmos')
def goodbye(name, logger, **_):
    logger.info(f'{name} is going')
"#;

async fn kopf_suite(backend: Backend) {
    let api = ApiServer::start(backend).await;
    let (ok, _, err) = api.kubectl_in(&["apply", "-f", "-"], GIZMO_CRD);
    assert!(ok, "{err}");
    api.ok(&["wait", "--for=condition=Established", "crd/gizmos.example.com", "--timeout=30s"]);
    let operator = api.dir.path().join("operator.py");
    std::fs::write(&operator, OPERATOR).unwrap();
    let log = std::fs::File::create(api.dir.path().join("kopf.log")).unwrap();
    let _kopf = crate::common::Process::spawn(
        std::process::Command::new(crate::common::venv_bin("kopf"))
            .args(["run", "--standalone", "--namespace=default"])
            .arg(&operator)
            .env("KUBECONFIG", api.kubeconfig())
            .stdout(log.try_clone().unwrap())
            .stderr(log),
    );
    let kopf_log = || std::fs::read_to_string(api.dir.path().join("kopf.log")).unwrap_or_default();

    let gizmo = "apiVersion: example.com/v1alpha1\nkind: Gizmo\nmetadata: {name: g1}\nspec: {size: 3}\n";
    let (ok, _, err) = api.kubectl_in(&["create", "-f", "-"], gizmo);
    assert!(ok, "{err}");
    let deadline = Instant::now() + Duration::from_secs(90);
    let made = loop {
        let out = api.kubectl(&["get", "configmap", "g1-config", "-o", "json"]);
        if out.status.success() {
            break json(&String::from_utf8_lossy(&out.stdout));
        }
        assert!(Instant::now() < deadline, "kopf never made the ConfigMap:\n{}", kopf_log());
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(made["data"]["size"], "3");
    let owner = &made["metadata"]["ownerReferences"][0];
    assert_eq!((owner["kind"].as_str(), owner["name"].as_str()), (Some("Gizmo"), Some("g1")), "{made}");
    wait_until("kopf records its work in the status", || {
        let g1 = json(&api.ok(&["get", "gizmo", "g1", "-o", "json"]));
        g1["status"]["make_config"]["configmap"] == "g1-config"
    });
    let g1 = json(&api.ok(&["get", "gizmo", "g1", "-o", "json"]));
    assert!(
        g1["metadata"]["finalizers"].as_array().is_some_and(|f| f
            .iter()
            .any(|f| f.as_str().is_some_and(|f| f.starts_with("kopf.zalando.org/")))),
        "kopf holds the Gizmo for its delete handler: {g1}"
    );

    api.ok(&["delete", "gizmo", "g1", "--wait=false"]);
    wait_until("kopf lets the Gizmo go", || !api.kubectl(&["get", "gizmo", "g1"]).status.success());
    wait_until("the collector deletes the ConfigMap", || {
        !api.kubectl(&["get", "configmap", "g1-config"]).status.success()
    });
    assert!(kopf_log().contains("g1 is going"), "{}", kopf_log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kopf_operator_on_rtcd() {
    kopf_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kopf_operator_on_etcd() {
    kopf_suite(Backend::Etcd).await;
}
