//! Real kubectl 1.37 against rtcd-apiserver, on rtcd and on etcd: what a
//! user types, and what they must see.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ApiServer, Backend, venv_bin};

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

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

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
    assert!(!ssa.status.success());
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

async fn kubectl_suite(backend: Backend) {
    let api = ApiServer::start(backend).await;
    version_and_discovery(&api).await;
    apply_get_and_change(&api).await;
    label_annotate_patch_edit(&api).await;
    get_watch_sees_updates(&api).await;
    typed_commands(&api).await;
    delete_wait_and_namespace_cascade(&api).await;
    errors_are_kube_statuses(&api).await;
    explain(&api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_on_rtcd() {
    kubectl_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_on_etcd() {
    kubectl_suite(Backend::Etcd).await;
}
