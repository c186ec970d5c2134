//! resource.k8s.io/v1 (dynamic resource allocation) as a driver, a user,
//! kube-scheduler and the official Python client use it, on rtcd and on
//! etcd: a driver publishes a ResourceSlice, a user makes a DeviceClass, a
//! claim template and a claim (defaulted as kube defaults them, refused with
//! kube's texts), the scheduler allocates and reserves the claim through its
//! status, and kubectl prints each kind with kube's columns.

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend};

const MANIFEST: &str = r#"
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: A100}, gpu.example.com/numa: {int: 0}}
    capacity: {memory: {value: 40Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: training, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        tolerations: [{key: flaky, value: "yes", effect: NoSchedule}]
"#;

fn get(api: &ApiServer, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json"]);
    crate::common::json(&api.ok(&args))
}

/// What `kubectl` printed on stderr for a command that must fail.
fn refused(api: &ApiServer, args: &[&str], stdin: &str) -> String {
    let (ok, _, stderr) = api.kubectl_in(args, stdin);
    assert!(!ok, "{args:?} was not refused");
    stderr
}

fn publish_and_claim(api: &ApiServer) {
    let out = api.ok_stdin(&["apply", "--server-side", "-f", "-"], MANIFEST);
    assert!(out.contains("resourceclaim.resource.k8s.io/training serverside-applied"), "{out}");

    // kube's defaults: one device of the class, tolerations by equality.
    let claim = get(api, &["resourceclaim", "training"]);
    let exactly = &claim["spec"]["devices"]["requests"][0]["exactly"];
    assert_eq!(
        (exactly["allocationMode"].as_str(), exactly["count"].as_i64()),
        (Some("ExactCount"), Some(1))
    );
    assert_eq!(exactly["tolerations"][0]["operator"], "Equal");
    let template = get(api, &["resourceclaimtemplate", "one-gpu"]);
    assert_eq!(template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"], 1);

    // kubectl's columns.
    let claims = api.ok(&["get", "resourceclaims"]);
    assert!(claims.starts_with("NAME") && claims.contains("STATE"), "{claims}");
    assert!(claims.lines().any(|l| l.starts_with("training") && l.contains("pending")), "{claims}");
    let slices = api.ok(&["get", "resourceslices"]);
    let header: Vec<&str> = slices.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(header, ["NAME", "NODE", "DRIVER", "POOL", "AGE"], "{slices}");
    assert!(slices.contains("node-1-gpu") && slices.contains("gpu.example.com"), "{slices}");

    // The kubelet's and drivers' field selectors; others refused as kube's conversion refuses them.
    let on_node =
        api.ok(&["get", "resourceslices", "--field-selector", "spec.nodeName=node-1", "-o", "name"]);
    assert_eq!(on_node.trim(), "resourceslice.resource.k8s.io/node-1-gpu");
    let elsewhere =
        api.ok(&["get", "resourceslices", "--field-selector", "spec.driver=other.example.com", "-o", "name"]);
    assert_eq!(elsewhere.trim(), "");
    let stderr = refused(api, &["get", "resourceslices", "--field-selector", "spec.devices=x"], "");
    assert!(
        stderr.contains("field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.devices"),
        "{stderr}"
    );
}

fn refusals(api: &ApiServer) {
    let both = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: both}\nspec:\n  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: gpu.example.com}\n      firstAvailable: [{name: any, deviceClassName: gpu.example.com}]\n";
    let stderr = refused(api, &["create", "-f", "-"], both);
    assert!(
        stderr.contains("spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"),
        "{stderr}"
    );
    let stderr = refused(api, &["get", "resourceclaim", "both"], "");
    assert!(stderr.contains("NotFound") || stderr.contains("not found"), "nothing was stored: {stderr}");

    let stderr = refused(
        api,
        &[
            "patch",
            "resourceclaim",
            "training",
            "--type=merge",
            "-p",
            r#"{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com","count":2}}]}}}"#,
        ],
        "",
    );
    assert!(stderr.contains("spec: Invalid value: ") && stderr.contains("field is immutable"), "{stderr}");

    let two_nodes = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: everywhere}\nspec: {driver: gpu.example.com, nodeName: node-1, allNodes: true, pool: {name: p, generation: 0, resourceSliceCount: 1}}\n";
    let stderr = refused(api, &["create", "-f", "-"], two_nodes);
    assert!(
        stderr.contains("exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"),
        "{stderr}"
    );
    let stderr = refused(
        api,
        &[
            "patch",
            "resourceslice",
            "node-1-gpu",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/nodeName","value":"node-2"}]"#,
        ],
        "",
    );
    assert!(stderr.contains("spec.nodeName: Invalid value: \"node-2\": field is immutable"), "{stderr}");

    // Admin access to devices only where the namespace's admin allowed it.
    let admin = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: monitor}\nspec:\n  devices:\n    requests: [{name: all, exactly: {deviceClassName: gpu.example.com, allocationMode: All, adminAccess: true}}]\n";
    let stderr = refused(api, &["create", "-f", "-"], admin);
    assert!(
        stderr.contains("spec.devices.requests[0].adminAccess: Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"),
        "{stderr}"
    );
    api.ok(&["label", "namespace", "default", "resource.kubernetes.io/admin-access=true"]);
    api.ok_stdin(&["create", "-f", "-"], admin);
    api.ok(&["delete", "resourceclaim", "monitor"]);

    let bad_cel = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: broken}\nspec: {selectors: [{cel: {expression: 'device.driver =='}}]}\n";
    let stderr = refused(api, &["create", "-f", "-"], bad_cel);
    assert!(
        stderr.contains(
            "spec.selectors[0].cel.expression: Invalid value: \"device.driver ==\": compilation failed"
        ),
        "{stderr}"
    );
}

/// What kube-scheduler writes: an allocation, then a reservation for the pod.
fn scheduler_allocates(api: &ApiServer) {
    let early = r#"{"status":{"reservedFor":[{"resource":"pods","name":"trainer","uid":"uid-1"}]}}"#;
    let stderr = refused(
        api,
        &["patch", "resourceclaim", "training", "--subresource=status", "--type=merge", "-p", early],
        "",
    );
    assert!(
        stderr.contains("status.reservedFor: Forbidden: may not be specified when `allocated` is not set"),
        "{stderr}"
    );

    let allocation = json!({"status": {
        "allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
        ]}},
        "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "uid-1"}]
    }});
    api.ok(&[
        "patch",
        "resourceclaim",
        "training",
        "--subresource=status",
        "--type=merge",
        "-p",
        &allocation.to_string(),
    ]);
    let claims = api.ok(&["get", "resourceclaims"]);
    assert!(
        claims.lines().any(|l| l.starts_with("training") && l.contains("allocated,reserved")),
        "{claims}"
    );

    let moved = r#"[{"op":"replace","path":"/status/allocation/devices/results/0/device","value":"gpu-1"}]"#;
    let stderr = refused(
        api,
        &["patch", "resourceclaim", "training", "--subresource=status", "--type=json", "-p", moved],
        "",
    );
    assert!(
        stderr.contains("status.allocation: Invalid value: ") && stderr.contains("field is immutable"),
        "{stderr}"
    );

    // A status write cannot change the spec; a spec write cannot change the status.
    let claim = get(api, &["resourceclaim", "training"]);
    assert_eq!(claim["status"]["allocation"]["devices"]["results"][0]["device"], "gpu-0");
    api.ok(&["label", "resourceclaim", "training", "team=ml"]);
    let claim = get(api, &["resourceclaim", "training"]);
    assert_eq!(claim["status"]["reservedFor"][0]["uid"], "uid-1", "{claim}");
}

/// The official Python client's typed API reads and deletes them.
fn python_client(api: &ApiServer) {
    let script = r#"
import json
from kubernetes import client, config
config.load_kube_config()
api = client.ResourceV1Api()
claim = api.read_namespaced_resource_claim("training", "default")
slices = api.list_resource_slice(field_selector="spec.nodeName=node-1")
classes = api.list_device_class()
gone = api.delete_namespaced_resource_claim_template("one-gpu", "default")
print(json.dumps({
    "device": claim.status.allocation.devices.results[0].device,
    "count": claim.spec.devices.requests[0].exactly.count,
    "slices": [s.metadata.name for s in slices.items],
    "classes": [c.metadata.name for c in classes.items],
    "deleted": type(gone).__name__,
}))
"#;
    let out = api.python(script, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result = crate::common::json(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default());
    assert_eq!(
        result,
        json!({"device": "gpu-0", "count": 1, "slices": ["node-1-gpu"], "classes": ["gpu.example.com"],
               "deleted": "V1ResourceClaimTemplate"})
    );
}

async fn resource_allocation(backend: Backend) {
    let api = ApiServer::start(backend).await;
    publish_and_claim(&api);
    refusals(&api);
    scheduler_allocates(&api);
    python_client(&api);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_allocation_on_rtcd() {
    resource_allocation(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_allocation_on_etcd() {
    resource_allocation(Backend::Etcd).await;
}
