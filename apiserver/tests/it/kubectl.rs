//! Real kubectl 1.37 against rtcd-apiserver, on rtcd and on etcd: what a
//! user types, and what they must see.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, json, venv_bin};

const MANIFEST: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  labels: {app: web}
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
stringData:
  password: hunter2
---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 8080
      - name: sidecar
        image: busybox:1.36
        args: [sleep, infinity]
"#;

async fn version_and_discovery(api: &ApiServer) {
    let version = json(&api.ok(&["version", "-o", "json"]));
    assert!(version["serverVersion"]["gitVersion"].as_str().unwrap().starts_with("v1.37."), "{version}");

    let resources = api.ok(&["api-resources", "--no-headers"]);
    for (name, short, version, kind) in [
        ("configmaps", "cm", "v1", "ConfigMap"),
        ("deployments", "deploy", "apps/v1", "Deployment"),
        ("cronjobs", "cj", "batch/v1", "CronJob"),
        ("leases", "", "coordination.k8s.io/v1", "Lease"),
    ] {
        let line =
            resources.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| {
                panic!("api-resources lacks {name}:\n{resources}");
            });
        assert!(line.contains(version) && line.contains(kind), "{line}");
        if !short.is_empty() {
            assert!(line.split_whitespace().any(|w| w == short), "{line}");
        }
    }
}

async fn apply_get_and_change(api: &ApiServer) {
    // A typed-client command: kubectl sends it as protobuf.
    api.ok(&["create", "namespace", "shop"]);
    let ns = json(&api.ok(&["get", "namespace", "shop", "-o", "json"]));
    assert_eq!(ns["status"]["phase"], "Active");

    let applied = api.kubectl_with(&["apply", "-n", "shop", "-f", "-"], Some(MANIFEST), &[]);
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    let out = String::from_utf8_lossy(&applied.stdout);
    for line in [
        "configmap/web-config created",
        "secret/web-secret created",
        "service/web created",
        "deployment.apps/web created",
    ] {
        assert!(out.contains(line), "{out}");
    }

    // Server-set metadata; the Secret's stringData is stored in data.
    let deploy = json(&api.ok(&["get", "deploy", "web", "-n", "shop", "-o", "json"]));
    assert_eq!(deploy["metadata"]["generation"], 1);
    assert_eq!(deploy["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert!(
        deploy["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string()
    );
    let secret = json(&api.ok(&["get", "secret", "web-secret", "-n", "shop", "-o", "json"]));
    assert_eq!(secret["data"]["password"], "aHVudGVyMg==");
    assert!(secret.get("stringData").is_none());

    // Apply a change: one container's image; the other container stays.
    let changed = MANIFEST.replace("nginx:1.27", "nginx:1.28");
    let applied = api.kubectl_with(&["apply", "-n", "shop", "-f", "-"], Some(&changed), &[]);
    assert!(applied.status.success(), "{}", String::from_utf8_lossy(&applied.stderr));
    let out = String::from_utf8_lossy(&applied.stdout);
    assert!(
        out.contains("deployment.apps/web configured") && out.contains("configmap/web-config unchanged"),
        "{out}"
    );
    let deploy = json(&api.ok(&["get", "deploy", "web", "-n", "shop", "-o", "json"]));
    let containers = deploy["spec"]["template"]["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0]["image"], "nginx:1.28");
    assert_eq!(containers[1]["name"], "sidecar");
    assert_eq!(deploy["metadata"]["generation"], 2);

    // Output formats.
    let yaml = api.ok(&["get", "cm", "web-config", "-n", "shop", "-o", "yaml"]);
    assert!(yaml.contains("greeting: hello") && yaml.contains("kind: ConfigMap"), "{yaml}");
    let table = api.ok(&["get", "deploy", "-n", "shop"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert!(table.lines().nth(1).unwrap().starts_with("web "), "{table}");
    let wide = api.ok(&["get", "deploy", "-n", "shop", "-o", "wide"]);
    assert!(wide.contains("CONTAINERS") && wide.contains("nginx:1.28,busybox:1.36"), "{wide}");
    let svc = api.ok(&["get", "svc", "web", "-n", "shop"]);
    assert!(svc.contains("80/TCP"), "{svc}");
    // Services get a cluster IP of their own from the service range;
    // default/kubernetes holds the first.
    let ip = api.ok(&["get", "svc", "web", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}"]);
    assert!(ip.starts_with("10.0.0.") && ip != "10.0.0.1", "{ip}");
    let kubernetes =
        api.ok(&["get", "svc", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP}"]);
    assert_eq!(kubernetes, "10.0.0.1");

    // Selectors.
    let by_label = api.ok(&["get", "cm,svc,deploy", "-n", "shop", "-l", "app=web", "-o", "name"]);
    let mut names: Vec<&str> = by_label.lines().collect();
    names.sort();
    assert_eq!(names, ["configmap/web-config", "deployment.apps/web", "service/web"]);
    let by_field =
        api.ok(&["get", "cm", "-n", "shop", "--field-selector", "metadata.name=web-config", "-o", "name"]);
    assert_eq!(by_field.trim(), "configmap/web-config");
    let none = api.ok(&["get", "cm", "-n", "shop", "-l", "app!=web", "-o", "name"]);
    assert!(!none.contains("web-config"), "{none}");
    let bad = api.kubectl(&["get", "cm", "-n", "shop", "--field-selector", "spec.bogus=1"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("\"spec.bogus\" is not a known field selector"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

async fn label_annotate_patch_edit(api: &ApiServer) {
    api.ok(&["label", "cm", "web-config", "-n", "shop", "tier=frontend"]);
    api.ok(&["annotate", "cm", "web-config", "-n", "shop", "owner=team-a"]);
    let cm = json(&api.ok(&["get", "cm", "web-config", "-n", "shop", "-o", "json"]));
    assert_eq!(cm["metadata"]["labels"]["tier"], "frontend");
    assert_eq!(cm["metadata"]["annotations"]["owner"], "team-a");
    api.ok(&["label", "cm", "web-config", "-n", "shop", "tier-"]);
    let cm = json(&api.ok(&["get", "cm", "web-config", "-n", "shop", "-o", "json"]));
    assert!(cm["metadata"]["labels"].get("tier").is_none());

    api.ok(&[
        "patch",
        "cm",
        "web-config",
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"color":"blue"}}"#,
    ]);
    api.ok(&[
        "patch",
        "cm",
        "web-config",
        "-n",
        "shop",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/data/greeting","value":"hi"}]"#,
    ]);
    let cm = json(&api.ok(&["get", "cm", "web-config", "-n", "shop", "-o", "json"]));
    assert_eq!((cm["data"]["color"].as_str(), cm["data"]["greeting"].as_str()), (Some("blue"), Some("hi")));

    // Strategic: the container named sidecar is merged by name, not replaced.
    api.ok(&[
        "patch",
        "deploy",
        "web",
        "-n",
        "shop",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"}]}}}}"#,
    ]);
    let deploy = json(&api.ok(&["get", "deploy", "web", "-n", "shop", "-o", "json"]));
    let containers = deploy["spec"]["template"]["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 2, "{containers:?}");
    assert_eq!(containers[1]["image"], "busybox:1.37");

    // A failing JSON patch changes nothing and says why.
    let bad = api.kubectl(&[
        "patch",
        "cm",
        "web-config",
        "-n",
        "shop",
        "--type",
        "json",
        "-p",
        r#"[{"op":"remove","path":"/data/nope"}]"#,
    ]);
    assert!(!bad.status.success());

    // kubectl edit with a scripted editor.
    let editor = api.dir.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/color: blue/color: green/' \"$1\"\n").unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let edited = api.kubectl_with(
        &["edit", "cm", "web-config", "-n", "shop"],
        None,
        &[("KUBE_EDITOR", editor.to_str().unwrap())],
    );
    assert!(edited.status.success(), "{}", String::from_utf8_lossy(&edited.stderr));
    assert!(String::from_utf8_lossy(&edited.stdout).contains("configmap/web-config edited"));
    let cm = json(&api.ok(&["get", "cm", "web-config", "-n", "shop", "-o", "json"]));
    assert_eq!(cm["data"]["color"], "green");
}

async fn get_watch_sees_updates(api: &ApiServer) {
    let mut watch = Command::new(venv_bin("kubectl"))
        .arg(format!("--kubeconfig={}", api.kubeconfig().display()))
        .arg(format!("--cache-dir={}", api.dir.path().join("kube-cache").display()))
        .args([
            "get",
            "cm",
            "-n",
            "shop",
            "-w",
            "-o",
            "custom-columns=NAME:.metadata.name,V:.data.v",
            "--no-headers",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    // The initial list shows up first; then our changes, in order.
    let first = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(first.starts_with("web-config"), "{first}");
    api.ok(&["create", "cm", "watched", "-n", "shop", "--from-literal=v=1"]);
    api.ok(&["patch", "cm", "watched", "-n", "shop", "--type", "merge", "-p", r#"{"data":{"v":"2"}}"#]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while !seen.contains(&"watched 2".to_string()) {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx.recv_timeout(left).unwrap_or_else(|_| panic!("watch saw only {seen:?}"));
        seen.push(line.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let at = |s: &str| seen.iter().position(|l| l == s);
    assert!(at("watched 1") < at("watched 2"), "{seen:?}");
    let _ = watch.kill();
    let _ = watch.wait();
}

async fn delete_wait_and_namespace_cascade(api: &ApiServer) {
    let out = api.ok(&["delete", "cm", "watched", "-n", "shop", "--wait"]);
    assert!(out.contains("configmap \"watched\" deleted"), "{out}");
    let gone = api.kubectl(&["get", "cm", "watched", "-n", "shop"]);
    assert!(String::from_utf8_lossy(&gone.stderr).contains("configmaps \"watched\" not found"));

    // Finalizers hold an object until they are cleared.
    api.ok(&["create", "cm", "held", "-n", "shop"]);
    api.ok(&[
        "patch",
        "cm",
        "held",
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    api.ok(&["delete", "cm", "held", "-n", "shop", "--wait=false"]);
    let held = json(&api.ok(&["get", "cm", "held", "-n", "shop", "-o", "json"]));
    assert!(held["metadata"]["deletionTimestamp"].is_string());
    api.ok(&[
        "patch",
        "cm",
        "held",
        "-n",
        "shop",
        "--type",
        "json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    assert!(!api.kubectl(&["get", "cm", "held", "-n", "shop"]).status.success());

    // Deleting the namespace deletes what is in it, then the namespace;
    // kubectl waits for the namespace, so its contents must be gone first.
    let many: String = (0..40)
        .map(|i| {
            format!(
                "{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"filler-{i}\"}}}}\n"
            )
        })
        .collect();
    api.ok_stdin(&["apply", "-n", "shop", "-f", "-"], &many);
    let out = api.ok(&["delete", "namespace", "shop", "--timeout=60s"]);
    assert!(out.contains("namespace \"shop\" deleted"), "{out}");
    let left = api.kubectl(&["get", "deploy,cm,svc,secret", "-n", "shop", "-o", "name"]);
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "{}\n{}",
        String::from_utf8_lossy(&left.stdout),
        api.log()
    );
    assert!(!api.kubectl(&["get", "namespace", "shop"]).status.success());
}

/// `kubectl get cs`: the storage probed healthy, a scheduler that is not running reported as
/// kube reports it, with kube's deprecation warning.
async fn component_statuses(api: &ApiServer) {
    let out = api.kubectl(&["get", "componentstatuses"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"), "{stderr}");
    let row = |name: &str| stdout.lines().find(|l| l.starts_with(name)).unwrap_or_default().to_string();
    let etcd: Vec<String> = row("etcd-0").split_whitespace().map(str::to_string).collect();
    assert_eq!(etcd, ["etcd-0", "Healthy", "ok"], "{stdout}");
    let scheduler = row("scheduler");
    assert!(scheduler.contains("Unhealthy"), "{stdout}");
    assert!(
        scheduler.contains(
            "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused"
        ),
        "{stdout}"
    );
    let etcd = json(&api.ok(&["get", "cs", "etcd-0", "-o", "json"]));
    assert_eq!(
        etcd["conditions"][0],
        json!({"type": "Healthy", "status": "True", "message": "ok", "error": ""})
    );
    let missing = api.kubectl(&["get", "cs", "nope"]);
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("componentstatus \"nope\" not found"), "{stderr}");
}

async fn explain(api: &ApiServer) {
    let out = api.ok(&["explain", "deployment.spec.replicas"]);
    assert!(out.contains("KIND:") && out.contains("Deployment") && out.contains("replicas"), "{out}");
}

async fn errors_are_kube_statuses(api: &ApiServer) {
    let dup = api.kubectl(&["create", "namespace", "default"]);
    assert!(String::from_utf8_lossy(&dup.stderr).contains("namespaces \"default\" already exists"));
    let missing = api.kubectl(&["get", "deploy", "nope"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("deployments.apps \"nope\" not found"));
    let strict = api.kubectl_with(
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict}\ndata: {a: b}\nbogus: 1\n"),
        &[],
    );
    assert!(!strict.status.success());
    let err = String::from_utf8_lossy(&strict.stderr);
    assert!(err.contains("unknown field \"bogus\""), "{err}");
    assert!(!api.kubectl(&["get", "cm", "strict"]).status.success(), "a refused object must not be written");
    let ssa = api.kubectl_with(
        &["apply", "--server-side", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\n"),
        &[],
    );
    assert_eq!(String::from_utf8_lossy(&ssa.stdout).trim(), "configmap/ssa serverside-applied");
}

/// kubectl's generators use typed clients, which send protobuf.
async fn typed_commands(api: &ApiServer) {
    api.ok(&["create", "namespace", "typed"]);
    api.ok(&[
        "create",
        "deployment",
        "api",
        "--image=nginx:1.27",
        "--replicas=2",
        "--port=80",
        "-n",
        "typed",
    ]);
    api.ok(&["create", "secret", "generic", "creds", "--from-literal=token=abc", "-n", "typed"]);
    api.ok(&["create", "configmap", "settings", "--from-literal=mode=fast", "-n", "typed"]);
    api.ok(&["create", "service", "clusterip", "api", "--tcp=80:8080", "-n", "typed"]);
    api.ok(&["create", "job", "once", "--image=busybox", "-n", "typed"]);
    api.ok(&["create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *", "-n", "typed"]);
    api.ok(&["create", "serviceaccount", "robot", "-n", "typed"]);
    let deploy = json(&api.ok(&["get", "deploy", "api", "-n", "typed", "-o", "json"]));
    assert_eq!(deploy["spec"]["replicas"], 2);
    assert_eq!(deploy["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
    let secret = json(&api.ok(&["get", "secret", "creds", "-n", "typed", "-o", "json"]));
    assert_eq!(secret["data"]["token"], "YWJj");
    let svc = json(&api.ok(&["get", "svc", "api", "-n", "typed", "-o", "json"]));
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080);
    // The scale subresource.
    api.ok(&["scale", "deploy", "api", "--replicas=5", "-n", "typed"]);
    assert_eq!(api.ok(&["get", "deploy", "api", "-n", "typed", "-o", "jsonpath={.spec.replicas}"]), "5");
    let all = api.ok(&["get", "all", "-n", "typed", "-o", "name"]);
    for name in ["deployment.apps/api", "service/api", "job.batch/once", "cronjob.batch/nightly"] {
        assert!(all.lines().any(|l| l == name), "{name} missing from get all:\n{all}");
    }
    api.ok(&["delete", "namespace", "typed", "--timeout=60s"]);
}

/// A Deployment `name` in namespace `gc` and a ReplicaSet it owns
/// (blocking its deletion, as the deployment controller makes them), which
/// owns a ConfigMap; the ReplicaSet's name.
fn owned_tree(api: &ApiServer, name: &str) -> String {
    api.ok(&["create", "deployment", name, "--image=nginx:1.27", "-n", "gc"]);
    let uid = |kind: &str, object: &str| {
        json(&api.ok(&["get", kind, object, "-n", "gc", "-o", "json"]))["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let rs = format!("{name}-rs");
    let owner_ref = |kind: &str, api_version: &str, owner: &str, uid: String| {
        format!(
            r#"[{{"apiVersion":"{api_version}","kind":"{kind}","name":"{owner}","uid":"{uid}","controller":true,"blockOwnerDeletion":true}}]"#
        )
    };
    let replica_set = format!(
        r#"{{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{{"name":"{rs}","ownerReferences":{}}},"spec":{{"replicas":0,"selector":{{"matchLabels":{{"app":"{name}"}}}},"template":{{"metadata":{{"labels":{{"app":"{name}"}}}},"spec":{{"containers":[{{"name":"app","image":"nginx:1.27"}}]}}}}}}}}"#,
        owner_ref("Deployment", "apps/v1", name, uid("deployment", name))
    );
    api.ok_stdin(&["apply", "-n", "gc", "-f", "-"], &replica_set);
    let config = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{rs}-cfg","ownerReferences":{}}}}}"#,
        owner_ref("ReplicaSet", "apps/v1", &rs, uid("rs", &rs))
    );
    api.ok_stdin(&["apply", "-n", "gc", "-f", "-"], &config);
    rs
}

/// The names of `kind` in namespace `gc`, waiting up to 30 s for them to
/// become `expected`.
fn names_become(api: &ApiServer, kind: &str, expected: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = api.ok(&["get", kind, "-n", "gc", "-o", "jsonpath={.items[*].metadata.name}"]);
        let names: Vec<String> = out.split_whitespace().map(str::to_string).collect();
        if names == expected || Instant::now() > deadline {
            return names;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits up to 30 s for `kind/name` in namespace `gc` to be gone.
fn gone_within(api: &ApiServer, kind: &str, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.kubectl(&["get", kind, name, "-n", "gc"]).status.success() {
        assert!(Instant::now() < deadline, "{kind}/{name} still there\n{}", api.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `kubectl delete` with each `--cascade`: the garbage collector follows
/// ownerReferences as kube-controller-manager's does.
async fn cascading_deletes(api: &ApiServer) {
    api.ok(&["create", "namespace", "gc"]);
    // Background (kubectl's default): the Deployment goes, then what it owns.
    owned_tree(api, "web");
    api.ok(&["delete", "deployment", "web", "-n", "gc"]);
    assert_eq!(names_become(api, "rs", &[]), Vec::<String>::new(), "{}", api.log());
    gone_within(api, "cm", "web-rs-cfg");

    // Foreground: kubectl waits for the Deployment, which waits for the
    // ReplicaSet, which waits for its ConfigMap.
    let rs = owned_tree(api, "fg");
    let out = api.ok(&["delete", "deployment", "fg", "-n", "gc", "--cascade=foreground", "--timeout=60s"]);
    assert!(out.contains(r#"deployment.apps "fg" deleted"#), "{out}");
    assert!(!api.kubectl(&["get", "rs", &rs, "-n", "gc"]).status.success(), "dependents go first");
    assert!(!api.kubectl(&["get", "cm", &format!("{rs}-cfg"), "-n", "gc"]).status.success());

    // Orphan: the Deployment goes, the ReplicaSet stays without its owner.
    let rs = owned_tree(api, "or");
    api.ok(&["delete", "deployment", "or", "-n", "gc", "--cascade=orphan"]);
    assert!(!api.kubectl(&["get", "deployment", "or", "-n", "gc"]).status.success());
    let kept = json(&api.ok(&["get", "rs", &rs, "-n", "gc", "-o", "json"]));
    assert!(kept["metadata"].get("ownerReferences").is_none(), "{kept}");
    // Its own dependent still has it.
    assert!(api.kubectl(&["get", "cm", &format!("{rs}-cfg"), "-n", "gc"]).status.success());

    // A policy kube does not know is refused as kube refuses it.
    let path = format!("/api/v1/namespaces/gc/configmaps/{rs}-cfg?propagationPolicy=Sideways");
    let refused = api.kubectl(&["delete", "--raw", &path]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains(r#"Unsupported value: \"Sideways\""#)
            || stderr.contains(r#"Unsupported value: "Sideways""#),
        "{stderr}"
    );
    api.ok(&["delete", "namespace", "gc", "--timeout=60s"]);
}

async fn kubectl_suite(backend: Backend) {
    kubectl_suite_on(&ApiServer::start(backend).await).await;
}

async fn kubectl_suite_on(api: &ApiServer) {
    version_and_discovery(api).await;
    apply_get_and_change(api).await;
    label_annotate_patch_edit(api).await;
    get_watch_sees_updates(api).await;
    typed_commands(api).await;
    delete_wait_and_namespace_cascade(api).await;
    errors_are_kube_statuses(api).await;
    explain(api).await;
    component_statuses(api).await;
    pod_disruption_budgets(api).await;
    cascading_deletes(api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_on_rtcd() {
    kubectl_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_on_etcd() {
    kubectl_suite(Backend::Etcd).await;
}

/// rtcd-combined serves kubectl as the separate processes do, and what it
/// stores is in its member, where etcd clients see it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_on_a_combined_member() {
    let api = ApiServer::start_combined().await;
    kubectl_suite_on(&api).await;
    api.ok(&["create", "configmap", "seen-by-etcd", "--from-literal=k=v"]);
    let rv = api.ok(&["get", "configmap", "seen-by-etcd", "-o", "jsonpath={.metadata.resourceVersion}"]);
    let store = rtcd_apiserver::storage::Etcd3Store::new(api.member.channel());
    let stored =
        store.get("/registry/configmaps/default/seen-by-etcd").await.unwrap().expect("in the member");
    assert_eq!(stored.resource_version.to_string(), rv, "the object kubectl created, at its resourceVersion");
    let object: Value = serde_json::from_slice(&stored.value).unwrap();
    assert_eq!(object["data"]["k"], "v");
}

const PDB: &str = r#"
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: api-budget
  labels: {app: api}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: api}
"#;

/// The columns of a `kubectl get` table (headers hold spaces, so cells are
/// split on runs of two or more).
fn columns(line: &str) -> Vec<&str> {
    line.split("  ").map(str::trim).filter(|cell| !cell.is_empty()).collect()
}

/// policy/v1 PodDisruptionBudgets as a user drives them.
async fn pod_disruption_budgets(api: &ApiServer) {
    let resources = api.ok(&["api-resources", "--no-headers"]);
    let line = resources
        .lines()
        .find(|l| l.split_whitespace().next() == Some("poddisruptionbudgets"))
        .unwrap_or_else(|| panic!("api-resources lacks poddisruptionbudgets:\n{resources}"));
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>(),
        ["poddisruptionbudgets", "pdb", "policy/v1", "true", "PodDisruptionBudget"]
    );

    // A typed-client command: sent as protobuf.
    let out = api.ok(&["create", "poddisruptionbudget", "web", "--selector=app=web", "--min-available=2"]);
    assert_eq!(out.trim(), "poddisruptionbudget.policy/web created");
    let table = api.ok(&["get", "pdb"]);
    let mut lines = table.lines();
    assert_eq!(
        columns(lines.next().unwrap()),
        ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"]
    );
    let row = columns(lines.next().unwrap());
    assert_eq!(row[..4], ["web", "2", "N/A", "0"], "{table}");

    let pdb = json(&api.ok(&["get", "pdb", "web", "-o", "json"]));
    assert_eq!(
        (pdb["apiVersion"].as_str(), pdb["kind"].as_str()),
        (Some("policy/v1"), Some("PodDisruptionBudget"))
    );
    assert_eq!(pdb["spec"]["minAvailable"], 2, "{pdb}");
    assert!(pdb["spec"].get("maxUnavailable").is_none(), "{pdb}");
    assert_eq!(pdb["spec"]["selector"], serde_json::json!({"matchLabels": {"app": "web"}}), "{pdb}");
    assert_eq!(
        (pdb["metadata"]["namespace"].as_str(), pdb["metadata"]["generation"].as_i64()),
        (Some("default"), Some(1))
    );
    // What -o json printed goes back in unchanged.
    let replaced = api.ok_stdin(&["replace", "-f", "-"], &pdb.to_string());
    assert!(replaced.contains("poddisruptionbudget.policy/web replaced"), "{replaced}");
    let again = json(&api.ok(&["get", "pdb", "web", "-o", "json"]));
    assert_eq!(
        (&again["spec"], &again["metadata"]["generation"]),
        (&pdb["spec"], &pdb["metadata"]["generation"])
    );

    // Client-side apply: create, then changes sent as strategic merge patches.
    let out = api.ok_stdin(&["apply", "-f", "-"], PDB);
    assert!(out.contains("poddisruptionbudget.policy/api-budget created"), "{out}");
    let budget = json(&api.ok(&["get", "pdb", "api-budget", "-o", "json"]));
    assert_eq!(budget["spec"]["maxUnavailable"], 1, "{budget}");
    let changed = PDB
        .replace("maxUnavailable: 1", "maxUnavailable: 50%")
        .replace("{app: api}\nspec", "{app: api, tier: backend}\nspec");
    let out = api.ok_stdin(&["apply", "-f", "-"], &changed);
    assert!(out.contains("poddisruptionbudget.policy/api-budget configured"), "{out}");
    let budget = json(&api.ok(&["get", "pdb", "api-budget", "-o", "json"]));
    assert_eq!(budget["spec"]["maxUnavailable"], "50%", "{budget}");
    assert_eq!(budget["metadata"]["labels"]["tier"], "backend", "{budget}");
    assert_eq!(budget["metadata"]["generation"], 2, "{budget}");
    // From one budget to the other: the patch removes maxUnavailable as it
    // sets minAvailable, so the result is valid.
    let switched = PDB.replace("maxUnavailable: 1", "minAvailable: 1");
    let out = api.ok_stdin(&["apply", "-f", "-"], &switched);
    assert!(out.contains("poddisruptionbudget.policy/api-budget configured"), "{out}");
    let budget = json(&api.ok(&["get", "pdb", "api-budget", "-o", "json"]));
    assert_eq!(budget["spec"]["minAvailable"], 1, "{budget}");
    assert!(budget["spec"].get("maxUnavailable").is_none(), "{budget}");
    assert!(budget["metadata"]["labels"].get("tier").is_none(), "{budget}");
    // Applied again: kubectl still sends the selector (its patchStrategy is
    // replace, so the patch is never empty and kubectl says "configured",
    // as with kube-apiserver), and the server writes nothing.
    let out = api.ok_stdin(&["apply", "-f", "-"], &switched);
    assert!(out.contains("poddisruptionbudget.policy/api-budget configured"), "{out}");
    let same = json(&api.ok(&["get", "pdb", "api-budget", "-o", "json"]));
    assert_eq!(same["metadata"]["resourceVersion"], budget["metadata"]["resourceVersion"], "{same}");
    assert_eq!(same["metadata"]["generation"], 3, "{same}");

    api.ok(&["patch", "pdb", "web", "--type=merge", "-p", r#"{"spec":{"minAvailable":"50%"}}"#]);
    let row = columns(api.ok(&["get", "pdb", "web", "--no-headers"]).lines().next().unwrap()).join(" ");
    assert!(row.starts_with("web 50% N/A 0 "), "{row}");

    // Both budgets at once: refused with kube's message, nothing written.
    let both = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: both}\nspec: {minAvailable: 1, maxUnavailable: 1}\n";
    let refused = api.kubectl_with(&["create", "-f", "-"], Some(both), &[]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("minAvailable and maxUnavailable cannot be both set"), "{err}");
    assert!(!api.kubectl(&["get", "pdb", "both"]).status.success(), "a refused object must not be written");
    let refused =
        api.kubectl(&["patch", "pdb", "web", "--type=merge", "-p", r#"{"spec":{"maxUnavailable":1}}"#]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("minAvailable and maxUnavailable cannot be both set"), "{err}");
    let addr = api.url.trim_start_matches("http://");
    let body = serde_json::to_string(&serde_json::json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "both"},
        "spec": {"minAvailable": 1, "maxUnavailable": 1}
    }))
    .unwrap();
    let path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
    let (code, status) = crate::common::request(addr, "POST", path, "application/json", &body).await;
    assert_eq!((code, status["reason"].as_str()), (422, Some("Invalid")), "{status}");
    assert!(
        status["message"].as_str().unwrap().contains("minAvailable and maxUnavailable cannot be both set"),
        "{status}"
    );

    let explained = api.ok(&["explain", "pdb.spec"]);
    for word in ["policy", "PodDisruptionBudget", "minAvailable", "maxUnavailable", "selector"] {
        assert!(explained.contains(word), "{word} missing:\n{explained}");
    }

    let out = api.ok(&["delete", "pdb", "web", "api-budget"]);
    assert!(out.contains("poddisruptionbudget.policy \"web\" deleted"), "{out}");
    let gone = api.kubectl(&["get", "pdb", "web"]);
    let err = String::from_utf8_lossy(&gone.stderr);
    assert!(err.contains("poddisruptionbudgets.policy \"web\" not found"), "{err}");
    assert!(api.ok(&["get", "pdb", "-o", "name"]).trim().is_empty());
}
