//! kube's object semantics as clients see them, on rtcd and on etcd, with
//! real kubectl and the official Python client: what the server defaults
//! in workloads and Services (node ports included), what a DELETE answers (the deleted object for
//! the kinds kube returns it for, graceful deletion of pods), and the kinds
//! install manifests name beside workloads (networking, storage, node).

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, json, request};

const JSON: &str = "application/json";

fn get(api: &ApiServer, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-o", "json"]);
    json(&api.ok(&args))
}

/// What kube fills into every pod template's spec and container.
fn assert_template_defaults(kind: &str, spec: &Value, pull: &str) {
    assert_eq!(spec["dnsPolicy"], "ClusterFirst", "{kind}: {spec}");
    assert_eq!(spec["schedulerName"], "default-scheduler", "{kind}");
    assert_eq!(spec["securityContext"], json!({}), "{kind}");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30, "{kind}");
    let container = &spec["containers"][0];
    assert_eq!(container["imagePullPolicy"], pull, "{kind}: {container}");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log", "{kind}");
    assert_eq!(container["terminationMessagePolicy"], "File", "{kind}");
    assert!(spec.get("enableServiceLinks").is_none(), "{kind}: a Pod-only default");
}

fn workloads_are_defaulted(api: &ApiServer) {
    api.ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    let deployment = get(api, &["deployment", "web"]);
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    assert_eq!(
        (spec["revisionHistoryLimit"].clone(), spec["progressDeadlineSeconds"].clone()),
        (json!(10), json!(600))
    );
    assert_template_defaults("Deployment", &spec["template"]["spec"], "IfNotPresent");
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");

    // A Job selects its pods by its own uid, as kube generates it.
    api.ok(&["create", "job", "pi", "--image=perl", "--", "perl", "-e", "print 1"]);
    let job = get(api, &["job", "pi"]);
    let uid = job["metadata"]["uid"].as_str().unwrap();
    let spec = &job["spec"];
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
        "{job}"
    );
    let labels = &spec["template"]["metadata"]["labels"];
    for (key, value) in [
        ("batch.kubernetes.io/controller-uid", uid),
        ("controller-uid", uid),
        ("batch.kubernetes.io/job-name", "pi"),
        ("job-name", "pi"),
    ] {
        assert_eq!(labels[key], value, "{labels}");
        assert_eq!(job["metadata"]["labels"][key], value, "the Job carries its template's labels");
    }
    for (field, value) in [
        ("backoffLimit", json!(6)),
        ("completions", json!(1)),
        ("parallelism", json!(1)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("manualSelector", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
    ] {
        assert_eq!(spec[field], value, "Job spec.{field}");
    }
    assert_template_defaults("Job", &spec["template"]["spec"], "Always");

    api.ok(&["create", "cronjob", "tick", "--image=busybox:1.36", "--schedule=*/5 * * * *", "--", "date"]);
    let spec = get(api, &["cronjob", "tick"])["spec"].clone();
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(
        (spec["successfulJobsHistoryLimit"].clone(), spec["failedJobsHistoryLimit"].clone()),
        (json!(3), json!(1))
    );
    assert!(
        spec["jobTemplate"]["spec"].get("backoffLimit").is_none(),
        "a Job's own defaults wait for the Job"
    );
    assert_template_defaults("CronJob", &spec["jobTemplate"]["spec"]["template"]["spec"], "IfNotPresent");

    let manifest = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "pg", "image": "postgres:17"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
    api.ok_stdin(&["create", "-f", "-"], &manifest.to_string());
    let spec = get(api, &["statefulset", "db"])["spec"].clone();
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(spec["updateStrategy"], json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}));
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    let claim = &spec["volumeClaimTemplates"][0];
    assert_eq!(
        (claim["spec"]["volumeMode"].clone(), claim["status"].clone()),
        (json!("Filesystem"), json!({"phase": "Pending"}))
    );

    // A change that drops a defaulted field gets it back, as in kube.
    api.ok(&[
        "patch",
        "deployment",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/revisionHistoryLimit"}]"#,
    ]);
    assert_eq!(get(api, &["deployment", "web"])["spec"]["revisionHistoryLimit"], 10);
}

fn services_are_defaulted(api: &ApiServer) {
    api.ok(&["create", "service", "clusterip", "plain", "--tcp=80:8080"]);
    let service = get(api, &["service", "plain"]);
    let spec = &service["spec"];
    assert_eq!((spec["type"].as_str(), spec["sessionAffinity"].as_str()), (Some("ClusterIP"), Some("None")));
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert!(spec.get("externalTrafficPolicy").is_none(), "only for externally reachable Services: {spec}");
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert_eq!(service["status"], json!({"loadBalancer": {}}));

    let sticky = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "sticky"},
        "spec": {"sessionAffinity": "ClientIP", "externalIPs": ["192.0.2.7"], "ports": [{"port": 443}]}});
    api.ok_stdin(&["create", "-f", "-"], &sticky.to_string());
    let spec = get(api, &["service", "sticky"])["spec"].clone();
    assert_eq!(spec["sessionAffinityConfig"], json!({"clientIP": {"timeoutSeconds": 10800}}));
    assert_eq!(spec["externalTrafficPolicy"], "Cluster", "external IPs make it reachable from outside");
    assert_eq!(spec["ports"][0]["targetPort"], 443);
}

/// NodePort and LoadBalancer Services hold node ports from kube's range,
/// one Service each, given back when the Service goes.
fn services_get_node_ports(api: &ApiServer) {
    api.ok(&["create", "service", "loadbalancer", "lb", "--tcp=80:8080,443:8443"]);
    let spec = get(api, &["service", "lb"])["spec"].clone();
    let ports: Vec<i64> = (0..2).map(|i| spec["ports"][i]["nodePort"].as_i64().unwrap()).collect();
    assert!(ports.iter().all(|p| (30000..=32767).contains(p)) && ports[0] != ports[1], "{spec}");
    assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
    let table = api.ok(&["get", "service", "lb"]);
    assert!(table.contains(&format!("80:{}/TCP", ports[0])) && table.contains("<pending>"), "{table}");

    api.ok(&["create", "service", "nodeport", "fixed", "--tcp=80:8080", "--node-port=30080"]);
    assert_eq!(get(api, &["service", "fixed"])["spec"]["ports"][0]["nodePort"], 30080);
    let (ok, _, stderr) =
        api.kubectl_in(&["create", "service", "nodeport", "again", "--tcp=80:8080", "--node-port=30080"], "");
    assert!(
        !ok && stderr
            .contains("spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"),
        "{stderr}"
    );
    let (ok, _, stderr) =
        api.kubectl_in(&["create", "service", "nodeport", "low", "--tcp=80:8080", "--node-port=8080"], "");
    assert!(
        !ok && stderr.contains("spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767"),
        "{stderr}"
    );
    assert!(!api.kubectl(&["get", "service", "again"]).status.success(), "a refused Service is not stored");
    // A replacing Service that names no node port keeps its own.
    let replacing = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fixed"},
        "spec": {"type": "NodePort", "selector": {"app": "web"}, "ports": [{"name": "80-8080", "port": 80, "targetPort": 8080}]}});
    api.ok_stdin(&["replace", "-f", "-"], &replacing.to_string());
    assert_eq!(get(api, &["service", "fixed"])["spec"]["ports"][0]["nodePort"], 30080);
    // Deleted, its port is free again.
    api.ok(&["delete", "service", "fixed"]);
    api.ok(&["create", "service", "nodeport", "again", "--tcp=80:8080", "--node-port=30080"]);
    // A ClusterIP Service names none.
    let misused = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "misused"},
        "spec": {"ports": [{"port": 80, "nodePort": 30081}]}});
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &misused.to_string());
    assert!(
        !ok && stderr
            .contains("spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"),
        "{stderr}"
    );
}

/// Pods, Services and ServiceAccounts answer a DELETE with the object;
/// ConfigMaps with a Status. A pod bound to a node is left to its kubelet
/// (marked with its grace period) until deleted with a zero period.
async fn deletes_answer_as_kube_does(api: &ApiServer) {
    let addr = api.url.trim_start_matches("http://").to_string();
    let pods = "/api/v1/namespaces/default/pods";
    let pod = |name: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}})
        .to_string()
    };
    assert_eq!(request(&addr, "POST", pods, JSON, &pod("loose", "")).await.0, 201);
    let (code, answer) = request(&addr, "DELETE", &format!("{pods}/loose"), JSON, "").await;
    assert_eq!((code, answer["kind"].as_str()), (200, Some("Pod")), "{answer}");
    assert_eq!(answer["metadata"]["name"], "loose");
    assert_eq!(request(&addr, "GET", &format!("{pods}/loose"), JSON, "").await.0, 404);

    assert_eq!(request(&addr, "POST", pods, JSON, &pod("bound", "node-1")).await.0, 201);
    let (code, answer) = request(&addr, "DELETE", &format!("{pods}/bound"), JSON, "").await;
    assert_eq!((code, answer["kind"].as_str()), (200, Some("Pod")), "{answer}");
    assert_eq!(answer["metadata"]["deletionGracePeriodSeconds"], 30, "{answer}");
    let (code, still) = request(&addr, "GET", &format!("{pods}/bound"), JSON, "").await;
    assert_eq!(code, 200, "a bound pod waits for its kubelet");
    assert!(still["metadata"]["deletionTimestamp"].is_string());
    assert!(api.ok(&["get", "pods"]).contains("Terminating"), "kubectl shows it terminating");
    api.ok(&["delete", "pod", "bound", "--grace-period=0", "--force"]);
    assert_eq!(request(&addr, "GET", &format!("{pods}/bound"), JSON, "").await.0, 404);

    api.ok(&["create", "serviceaccount", "robot"]);
    let (code, answer) =
        request(&addr, "DELETE", "/api/v1/namespaces/default/serviceaccounts/robot", JSON, "").await;
    assert_eq!((code, answer["kind"].as_str()), (200, Some("ServiceAccount")), "{answer}");
    let (code, answer) =
        request(&addr, "DELETE", "/api/v1/namespaces/default/services/plain", JSON, "").await;
    assert_eq!((code, answer["kind"].as_str()), (200, Some("Service")), "{answer}");
    api.ok(&["create", "configmap", "settings"]);
    let (code, answer) =
        request(&addr, "DELETE", "/api/v1/namespaces/default/configmaps/settings", JSON, "").await;
    assert_eq!(
        (code, answer["kind"].as_str(), answer["status"].as_str()),
        (200, Some("Status"), Some("Success"))
    );

    // The official client types a pod delete's answer as a V1Pod.
    let script = r#"
import json
from kubernetes import client, config
config.load_kube_config()
v1 = client.CoreV1Api()
v1.create_namespaced_pod("default", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typed"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
gone = v1.delete_namespaced_pod("typed", "default")
print(json.dumps({"type": type(gone).__name__, "name": gone.metadata.name,
    "pull": gone.spec.containers[0].image_pull_policy}))
"#;
    let out = api.python(script, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result = json(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default());
    assert_eq!(result, json!({"type": "V1Pod", "name": "typed", "pull": "Always"}));
}

/// A manifest of the kinds an install names beside its workloads, applied
/// twice (the second apply patches), listed as kube prints them.
const MANIFEST: &str = r#"
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  ingressClassName: nginx
  tls: [{hosts: [web.example.com], secretName: web-tls}]
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db, namespace: default}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: web}}}]
    ports: [{port: 5432}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: ebs.csi.aws.com
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  hostPath: {path: /srv/pv-1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
---
apiVersion: v1
kind: PodTemplate
metadata: {name: worker, namespace: default}
template:
  metadata: {labels: {app: worker}}
  spec:
    containers: [{name: w, image: busybox:1.36}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: default}
spec:
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: c, image: nginx:1.27}]
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: web-7d9, namespace: default}
data: {spec: {template: {metadata: {labels: {app: web}}}}}
revision: 1
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc12, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{port: 80}]
endpoints: [{addresses: [10.0.0.7]}]
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec: {}
"#;

fn install_kinds_are_served(api: &ApiServer) {
    let first = api.ok_stdin(&["apply", "--server-side", "-f", "-"], MANIFEST);
    for made in [
        "ingressclass.networking.k8s.io/nginx serverside-applied",
        "ingress.networking.k8s.io/web serverside-applied",
        "networkpolicy.networking.k8s.io/db serverside-applied",
        "storageclass.storage.k8s.io/fast serverside-applied",
        "persistentvolume/pv-1 serverside-applied",
        "persistentvolumeclaim/data serverside-applied",
        "runtimeclass.node.k8s.io/gvisor serverside-applied",
        "podtemplate/worker serverside-applied",
        "replicationcontroller/legacy serverside-applied",
        "controllerrevision.apps/web-7d9 serverside-applied",
        "endpointslice.discovery.k8s.io/web-abc12 serverside-applied",
        "csidriver.storage.k8s.io/ebs.csi.aws.com serverside-applied",
    ] {
        assert!(first.contains(made), "{made} in:\n{first}");
    }
    // Client-side apply over it: kubectl's strategic merge patches.
    let changed = MANIFEST.replace("allowVolumeExpansion: true", "allowVolumeExpansion: false");
    api.ok_stdin(&["apply", "-f", "-"], &changed);
    assert_eq!(get(api, &["storageclass", "fast"])["allowVolumeExpansion"], false);

    // Defaults as kube's.
    assert_eq!(get(api, &["storageclass", "fast"])["reclaimPolicy"], "Delete");
    assert_eq!(get(api, &["ingressclass", "nginx"])["spec"]["parameters"]["scope"], "Cluster");
    let policy = get(api, &["networkpolicy", "db"]);
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress"]));
    assert_eq!(policy["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");
    let pv = get(api, &["pv", "pv-1"]);
    assert_eq!(
        (pv["spec"]["persistentVolumeReclaimPolicy"].as_str(), pv["status"]["phase"].as_str()),
        (Some("Retain"), Some("Pending"))
    );
    assert!(pv["status"]["lastPhaseTransitionTime"].is_string(), "{pv}");
    let claim = get(api, &["pvc", "data"]);
    assert_eq!(claim["metadata"]["finalizers"], json!(["kubernetes.io/pvc-protection"]));
    assert_eq!(
        (claim["spec"]["volumeMode"].as_str(), claim["status"]["phase"].as_str()),
        (Some("Filesystem"), Some("Pending"))
    );
    assert_eq!(get(api, &["podtemplate", "worker"])["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    let rc = get(api, &["rc", "legacy"]);
    assert_eq!(
        (rc["spec"]["selector"].clone(), rc["spec"]["replicas"].clone()),
        (json!({"app": "legacy"}), json!(1))
    );
    assert_eq!(
        get(api, &["endpointslice", "web-abc12"])["ports"][0],
        json!({"name": "", "port": 80, "protocol": "TCP"})
    );
    assert_eq!(get(api, &["csidriver", "ebs.csi.aws.com"])["spec"]["attachRequired"], true);
    api.ok(&["scale", "rc", "legacy", "--replicas=3"]);
    let scale =
        json(&api.ok(&["get", "--raw", "/api/v1/namespaces/default/replicationcontrollers/legacy/scale"]));
    assert_eq!(
        (scale["spec"]["replicas"].clone(), scale["status"]["selector"].clone()),
        (json!(3), json!("app=legacy"))
    );

    // Printed as kube prints them.
    let table = api.ok(&[
        "get",
        "ingress,netpol,pvc,podtemplate,rc,controllerrevision,endpointslice",
        "-n",
        "default",
    ]);
    for row in [
        "web.example.com",
        "80, 443",
        "app=db",
        "Pending",
        "fast",
        "app=worker",
        "busybox:1.36",
        "legacy",
        "<none>",
        "10.0.0.7",
    ] {
        assert!(table.contains(row), "{row} in:\n{table}");
    }
    let table = api.ok(&["get", "sc,ingressclass,runtimeclass,pv"]);
    for row in [
        "fast (default)",
        "ebs.csi.aws.com",
        "Immediate",
        "k8s.io/ingress-nginx",
        "IngressParameters.k8s.example.com/external-lb",
        "runsc",
        "RWO",
        "Retain",
    ] {
        assert!(table.contains(row), "{row} in:\n{table}");
    }
    let resources = api.ok(&["api-resources", "--no-headers"]);
    for (name, short) in [
        ("ingresses", "ing"),
        ("networkpolicies", "netpol"),
        ("storageclasses", "sc"),
        ("persistentvolumeclaims", "pvc"),
        ("persistentvolumes", "pv"),
    ] {
        let line = resources
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name}:\n{resources}"));
        assert!(line.split_whitespace().nth(1) == Some(short), "{line}");
    }

    // kube's refusals, and nothing stored.
    let bad = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad}\nspec:\n  rules:\n  - http:\n      paths:\n      - {path: /, backend: {service: {name: web, port: {number: 80}}}}\n";
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], bad);
    assert!(
        !ok && stderr
            .contains("spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"),
        "{stderr}"
    );
    let (ok, _, stderr) = api
        .kubectl_in(&["patch", "storageclass", "fast", "-p", r#"{"provisioner":"other.example.com"}"#], "");
    assert!(
        !ok && stderr.contains("provisioner: Forbidden: updates to provisioner are forbidden."),
        "{stderr}"
    );
    assert_eq!(get(api, &["storageclass", "fast"])["provisioner"], "ebs.csi.aws.com");

    // The official client reads them typed.
    let script = r#"
import json
from kubernetes import client, config
config.load_kube_config()
net = client.NetworkingV1Api()
ingress = net.read_namespaced_ingress("web", "default")
policies = net.list_namespaced_network_policy("default").items
claim = client.CoreV1Api().delete_namespaced_persistent_volume_claim("data", "default")
print(json.dumps({"backend": ingress.spec.rules[0].http.paths[0].backend.service.name,
    "policies": [p.metadata.name for p in policies], "deleted": type(claim).__name__}))
"#;
    let out = api.python(script, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result = json(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or_default());
    assert_eq!(result, json!({"backend": "web", "policies": ["db"], "deleted": "V1PersistentVolumeClaim"}));
    // Its protection finalizer held it only until the controller saw no pod using it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while api.kubectl(&["get", "pvc", "data"]).status.success() {
        assert!(std::time::Instant::now() < deadline, "the unused claim was never released");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// events.k8s.io/v1 Events are the core Events in the newer shape, both ways.
fn events_in_both_apis(api: &ApiServer) {
    let core = "apiVersion: v1\nkind: Event\nmetadata: {name: old.1, namespace: default}\ninvolvedObject: {kind: Pod, name: web, namespace: default}\nreason: Pulled\nmessage: image pulled\ntype: Normal\ncount: 2\nsource: {component: kubelet}\n";
    api.ok_stdin(&["create", "-f", "-"], core);
    let seen = get(api, &["events.v1.events.k8s.io", "old.1"]);
    assert_eq!(seen["apiVersion"], "events.k8s.io/v1");
    assert_eq!(
        (seen["regarding"]["name"].as_str(), seen["note"].as_str(), seen["deprecatedCount"].as_i64()),
        (Some("web"), Some("image pulled"), Some(2)),
        "{seen}"
    );
    assert_eq!(seen["deprecatedSource"]["component"], "kubelet");
    let new = "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: new.1, namespace: default}\neventTime: \"2026-01-02T03:04:05.000000Z\"\nreportingController: example.com/scaler\nreportingInstance: scaler-0\naction: Scaling\nreason: Scaled\ntype: Normal\nnote: scaled to 3\nregarding: {kind: Deployment, name: web, namespace: default}\n";
    api.ok_stdin(&["create", "-f", "-"], new);
    let seen = get(api, &["events", "new.1"]);
    assert_eq!(seen["apiVersion"], "v1");
    assert_eq!(
        (
            seen["involvedObject"]["kind"].as_str(),
            seen["message"].as_str(),
            seen["reportingComponent"].as_str()
        ),
        (Some("Deployment"), Some("scaled to 3"), Some("example.com/scaler")),
        "{seen}"
    );
    let table = api.ok(&["get", "events.v1.events.k8s.io"]);
    assert!(
        table.contains("Scaled") && table.contains("deployment/web") && table.contains("scaled to 3"),
        "{table}"
    );
    let listed = api.ok(&["get", "events.v1.events.k8s.io", "-o", "name"]);
    assert!(listed.contains("old.1") && listed.contains("new.1"), "{listed}");
    // Written through events.k8s.io, an Event must be a new-style one.
    let old_style = "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: bad.1, namespace: default}\nreason: X\ntype: Normal\ndeprecatedCount: 1\n";
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], old_style);
    assert!(!ok, "{stderr}");
    for text in [
        "eventTime: Required value",
        "deprecatedCount: Invalid value: \"\": needs to be unset",
        "reportingController: Required value",
    ] {
        assert!(stderr.contains(text), "{text} in {stderr}");
    }
}

/// HorizontalPodAutoscalers: one object in autoscaling/v2 and v1, kube's defaults and columns.
fn autoscalers_in_both_versions(api: &ApiServer) {
    api.ok(&["create", "deployment", "hpa-web", "--image=nginx"]);
    let out = api.ok(&["autoscale", "deployment", "hpa-web", "--min=2", "--max=5", "--cpu-percent=70"]);
    assert!(out.contains("horizontalpodautoscaler.autoscaling/hpa-web autoscaled"), "{out}");
    let raw = |version: &str, name: &str| {
        json(&api.ok(&[
            "get",
            "--raw",
            &format!("/apis/autoscaling/{version}/namespaces/default/horizontalpodautoscalers/{name}"),
        ]))
    };
    let v1 = raw("v1", "hpa-web");
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(
        (v1["spec"]["targetCPUUtilizationPercentage"].as_i64(), v1["spec"]["minReplicas"].as_i64()),
        (Some(70), Some(2)),
        "{v1}"
    );
    let table = api.ok(&["get", "hpa", "hpa-web"]);
    assert!(table.contains("Deployment/hpa-web") && table.contains("cpu: <unknown>/70%"), "{table}");

    // Written in v1 without a target: v2's default CPU target, in both.
    let old = "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: legacy}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: hpa-web}, maxReplicas: 3}\n";
    api.ok_stdin(&["create", "-f", "-"], old);
    let v2 = raw("v2", "legacy");
    let cpu = json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}});
    assert_eq!(
        (v2["spec"]["metrics"].clone(), v2["spec"]["minReplicas"].clone()),
        (json!([cpu]), json!(1)),
        "{v2}"
    );
    assert_eq!(raw("v1", "legacy")["spec"]["targetCPUUtilizationPercentage"], 80);

    // v2's behavior filled with kube's rules.
    let new = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: tuned}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: hpa-web}\n  maxReplicas: 10\n  metrics: [{type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}}]\n  behavior: {scaleDown: {stabilizationWindowSeconds: 60}}\n";
    api.ok_stdin(&["apply", "--server-side", "-f", "-"], new);
    let tuned = get(api, &["hpa", "tuned"]);
    let behavior = &tuned["spec"]["behavior"];
    assert_eq!(behavior["scaleDown"]["stabilizationWindowSeconds"], 60);
    assert_eq!(behavior["scaleUp"]["policies"][0], json!({"type": "Pods", "value": 4, "periodSeconds": 15}));
    assert!(api.ok(&["get", "hpa", "tuned"]).contains("memory: <unknown>/500Mi"));

    let bad = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: bad}\nspec: {scaleTargetRef: {kind: Deployment, name: hpa-web}, minReplicas: 4, maxReplicas: 2}\n";
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], bad);
    assert!(
        !ok && stderr
            .contains("spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"),
        "{stderr}"
    );
}

/// kube's default admission plugins for the install kinds: classes filled
/// in from the cluster's defaults, claim growth only where the class allows
/// it, a pod's RuntimeClass turned into overhead and scheduling.
fn admission_fills_in_classes(api: &ApiServer) {
    // `fast` (made by the install manifest) is the default StorageClass,
    // `nginx` the default IngressClass.
    let claims = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: unnamed}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: static}\nspec: {storageClassName: \"\", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n";
    api.ok_stdin(&["create", "-f", "-"], claims);
    assert_eq!(get(api, &["pvc", "unnamed"])["spec"]["storageClassName"], "fast");
    assert_eq!(get(api, &["pvc", "static"])["spec"]["storageClassName"], "", "an explicit \"\" stays");
    let ingress = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: classless}\nspec: {defaultBackend: {service: {name: web, port: {number: 80}}}}\n";
    api.ok_stdin(&["create", "-f", "-"], ingress);
    assert_eq!(get(api, &["ingress", "classless"])["spec"]["ingressClassName"], "nginx");

    // A bound claim grows only if its class allows expansion (`fast` no longer does).
    api.ok(&[
        "patch",
        "pvc",
        "unnamed",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Bound"}}"#,
    ]);
    let grow = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
    let (ok, _, stderr) = api.kubectl_in(&["patch", "pvc", "unnamed", "--type=merge", "-p", grow], "");
    assert!(
        !ok && stderr.contains("persistentvolumeclaims \"unnamed\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"),
        "{stderr}"
    );
    api.ok(&["patch", "storageclass", "fast", "--type=merge", "-p", r#"{"allowVolumeExpansion":true}"#]);
    api.ok(&["patch", "pvc", "unnamed", "--type=merge", "-p", grow]);
    assert_eq!(get(api, &["pvc", "unnamed"])["spec"]["resources"]["requests"]["storage"], "2Gi");

    // A RuntimeClass's overhead and scheduling go into its pods.
    let class = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\noverhead: {podFixed: {cpu: 250m, memory: 120Mi}}\nscheduling:\n  nodeSelector: {runtime: kata}\n  tolerations: [{key: kata, operator: Exists, effect: NoSchedule}]\n";
    api.ok_stdin(&["create", "-f", "-"], class);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: sandboxed}\nspec: {runtimeClassName: kata, containers: [{name: c, image: busybox:1.36}]}\n";
    api.ok_stdin(&["create", "-f", "-"], pod);
    let spec = get(api, &["pod", "sandboxed"])["spec"].clone();
    assert_eq!(spec["overhead"], json!({"cpu": "250m", "memory": "120Mi"}), "{spec}");
    assert_eq!(spec["nodeSelector"], json!({"runtime": "kata"}));
    let tolerations = spec["tolerations"].as_array().unwrap();
    assert!(tolerations.iter().any(|t| t["key"] == "kata"), "{spec}");
    let missing = pod.replace("kata", "nope").replace("sandboxed", "nowhere");
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &missing);
    assert!(!ok && stderr.contains("pod rejected: RuntimeClass \"nope\" not found"), "{stderr}");
    let conflict = pod
        .replace("sandboxed", "elsewhere")
        .replace("runtimeClassName: kata,", "runtimeClassName: kata, nodeSelector: {runtime: runc},");
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &conflict);
    assert!(
        !ok && stderr.contains("conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; pod.spec.nodeSelector[runtime] = runc"),
        "{stderr}"
    );
}

/// In-place resize (`kubectl patch --subresource resize`): cpu and memory
/// change, nothing else a resize sends does, and the QoS class stays.
fn pods_resize_in_place(api: &ApiServer) {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: resizable}\nspec:\n  containers:\n  - {name: app, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 128Mi}}}\n";
    api.ok_stdin(&["create", "-f", "-"], pod);
    let before = get(api, &["pod", "resizable"]);
    let bigger = r#"{"spec":{"containers":[{"name":"app","image":"evil:latest","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"300m"}}}]}}"#;
    api.ok(&["patch", "pod", "resizable", "--subresource=resize", "--type=strategic", "-p", bigger]);
    let after = get(api, &["pod", "resizable"]);
    let container = &after["spec"]["containers"][0];
    assert_eq!(
        (
            container["resources"]["requests"]["cpu"].as_str(),
            container["resources"]["limits"]["cpu"].as_str()
        ),
        (Some("150m"), Some("300m")),
        "{after}"
    );
    assert_eq!(container["resources"]["requests"]["memory"], "64Mi");
    assert_eq!(container["image"], "nginx:1.27", "a resize changes nothing but resources");
    assert_eq!(
        after["metadata"]["generation"].as_i64(),
        before["metadata"]["generation"].as_i64().map(|g| g + 1),
        "a resize is a new generation"
    );

    let guaranteed = r#"{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m","memory":"128Mi"}}}]}}"#;
    let (ok, _, stderr) = api.kubectl_in(
        &["patch", "pod", "resizable", "--subresource=resize", "--type=strategic", "-p", guaranteed],
        "",
    );
    assert!(
        !ok && stderr.contains(
            "spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing"
        ),
        "{stderr}"
    );
    let unlimited = r#"[{"op":"remove","path":"/spec/containers/0/resources/limits/memory"}]"#;
    let (ok, _, stderr) = api.kubectl_in(
        &["patch", "pod", "resizable", "--subresource=resize", "--type=json", "-p", unlimited],
        "",
    );
    assert!(!ok && stderr.contains("resource limits cannot be removed"), "{stderr}");
    // Through the pod itself, resources stay as they are.
    let (ok, _, stderr) = api.kubectl_in(
        &["patch", "pod", "resizable", "--type=strategic", "-p", bigger.replace("150m", "160m").as_str()],
        "",
    );
    assert!(!ok && stderr.contains("Forbidden: pod updates may not change fields other than"), "{stderr}");
}

/// StorageVersionMigrations as kube-controller-manager's migrator drives
/// them: a fixed resource, a status that names the version and one outcome.
fn storage_version_migrations(api: &ApiServer) {
    let migration = "apiVersion: storagemigration.k8s.io/v1\nkind: StorageVersionMigration\nmetadata: {name: secrets}\nspec: {resource: {group: \"\", resource: secrets}}\n";
    api.ok_stdin(&["create", "-f", "-"], migration);
    let table = api.ok(&["get", "storageversionmigrations"]);
    assert!(
        table.contains("RESOURCE")
            && table.lines().any(|l| l.starts_with("secrets") && l.contains("secrets.")),
        "{table}"
    );
    let status =
        |conditions: &str| format!(r#"{{"status":{{"resourceVersion":"42","conditions":[{conditions}]}}}}"#);
    let condition = |kind: &str, state: &str| {
        format!(
            r#"{{"type":"{kind}","status":"{state}","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"R","message":"m"}}"#
        )
    };
    let patch_status = |body: &str| {
        let args = [
            "patch",
            "storageversionmigration",
            "secrets",
            "--subresource=status",
            "--type=merge",
            "-p",
            body,
        ];
        api.kubectl_in(&args, "")
    };
    let running = status(&condition("Running", "True"));
    let done = status(&[condition("Running", "False"), condition("Succeeded", "True")].join(","));
    for body in [&running, &done] {
        let (ok, _, stderr) = patch_status(body);
        assert!(ok, "{stderr}");
    }
    let undone = status(&[condition("Running", "False"), condition("Succeeded", "False")].join(","));
    let (ok, _, stderr) = patch_status(&undone);
    assert!(!ok && stderr.contains("Success condition cannot be set to false once it is true"), "{stderr}");
    let (ok, _, stderr) = api.kubectl_in(
        &[
            "patch",
            "storageversionmigration",
            "secrets",
            "--type=merge",
            "-p",
            r#"{"spec":{"resource":{"resource":"configmaps"}}}"#,
        ],
        "",
    );
    assert!(
        !ok && stderr.contains("spec: Invalid value: ") && stderr.contains("field is immutable"),
        "{stderr}"
    );
}

/// Service addresses as kube keeps them: one IPAddress per cluster IP naming
/// its Service, the range as the ready `kubernetes` ServiceCIDR.
fn service_addresses_are_objects(api: &ApiServer) {
    let cidrs = api.ok(&["get", "servicecidrs"]);
    assert!(cidrs.lines().any(|l| l.starts_with("kubernetes") && l.contains("10.0.0.0/24")), "{cidrs}");
    let default = get(api, &["servicecidr", "kubernetes"]);
    let ready = &default["status"]["conditions"][0];
    assert_eq!(
        (ready["type"].as_str(), ready["status"].as_str()),
        (Some("Ready"), Some("True")),
        "{default}"
    );

    api.ok(&["create", "service", "clusterip", "addressed", "--tcp=80:8080"]);
    let service = get(api, &["service", "addressed"]);
    let ip = service["spec"]["clusterIP"].as_str().unwrap().to_string();
    let address = get(api, &["ipaddress", &ip]);
    assert_eq!(
        address["spec"]["parentRef"],
        json!({"group": "", "resource": "services", "namespace": "default", "name": "addressed"}),
        "{address}"
    );
    let listed = api.ok(&["get", "ip"]);
    assert!(
        listed.lines().any(|l| l.starts_with(&ip) && l.contains("services/default/addressed")),
        "{listed}"
    );

    // An address reserved by hand is not handed out.
    let taken: Vec<String> = get(api, &["ipaddresses"])["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    let free = (200..250).map(|n| format!("10.0.0.{n}")).find(|ip| !taken.contains(ip)).unwrap();
    let reserve = format!(
        "apiVersion: networking.k8s.io/v1\nkind: IPAddress\nmetadata: {{name: {free}}}\nspec: {{parentRef: {{group: gateway.networking.k8s.io, resource: gateways, namespace: default, name: edge}}}}\n"
    );
    api.ok_stdin(&["create", "-f", "-"], &reserve);
    let wants = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: wants}}\nspec: {{clusterIP: {free}, ports: [{{port: 80}}]}}\n"
    );
    let (ok, _, stderr) = api.kubectl_in(&["create", "-f", "-"], &wants);
    assert!(!ok && stderr.contains("provided IP is already allocated"), "{stderr}");

    let (ok, _, stderr) = api.kubectl_in(
        &["create", "-f", "-"],
        "apiVersion: networking.k8s.io/v1\nkind: IPAddress\nmetadata: {name: 10.0.0.010}\nspec: {parentRef: {resource: services, name: x}}\n",
    );
    assert!(
        !ok && stderr.contains("metadata.name: Invalid value: \"10.0.0.010\": must not have leading 0s"),
        "{stderr}"
    );
    let (ok, _, stderr) = api.kubectl_in(
        &["create", "-f", "-"],
        "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: two}\nspec: {cidrs: [10.1.0.0/16, 10.2.0.0/16]}\n",
    );
    assert!(!ok && stderr.contains("may specify no more than one IP for each IP family"), "{stderr}");

    api.ok(&["delete", "service", "addressed"]);
    let (ok, _, _) = api.kubectl_in(&["get", "ipaddress", &ip], "");
    assert!(!ok, "the address goes with its Service");
}

async fn object_semantics(backend: Backend) {
    let api = ApiServer::start(backend).await;
    workloads_are_defaulted(&api);
    services_are_defaulted(&api);
    services_get_node_ports(&api);
    deletes_answer_as_kube_does(&api).await;
    install_kinds_are_served(&api);
    admission_fills_in_classes(&api);
    events_in_both_apis(&api);
    autoscalers_in_both_versions(&api);
    service_addresses_are_objects(&api);
    pods_resize_in_place(&api);
    storage_version_migrations(&api);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_semantics_on_rtcd() {
    object_semantics(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_semantics_on_etcd() {
    object_semantics(Backend::Etcd).await;
}
