//! The sample proxy injector (`rtcd-sample-injector`) as a user meets it:
//! installed with `install | kubectl apply -f -`, serving on this machine
//! behind its Service's endpoints, it injects exactly the pods whose
//! namespace (or themselves) ask for it, through kubectl and the Python
//! client; the audit log shows the mutation; with the injector down, pods
//! are still created (failurePolicy Ignore), uninjected.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, Process, free_port};

const INJECTOR: &str = env!("CARGO_BIN_EXE_rtcd-sample-injector");

fn containers(api: &ApiServer, namespace: &str, pod: &str, field: &str) -> Vec<String> {
    let pod: Value =
        serde_json::from_str(&api.ok(&["get", "pod", pod, "-n", namespace, "-o", "json"])).unwrap();
    pod["spec"][field]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn run_pod(api: &ApiServer, namespace: &str, name: &str, overrides: Option<Value>) {
    let mut args = vec!["run", name, "-n", namespace, "--image=nginx:1.27", "--port=8080"];
    let overrides = overrides.map(|o| o.to_string());
    if let Some(overrides) = &overrides {
        args.extend(["--overrides", overrides]);
    }
    api.ok(&args);
}

async fn scenario(backend: Backend) {
    // Plain HTTP: the harness's HTTPS certificate is its own CA, which
    // rustls (unlike Go) refuses as a server's; the README's walkthrough
    // runs the injector over TLS against scripts/up.sh's cluster CA.
    let api = ApiServer::start_prepared(backend, false, |dir| {
        let policy = dir.join("audit-policy.yaml");
        let rules = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Request\n  resources: [{group: \"\", resources: [pods]}]\n";
        std::fs::write(&policy, rules).unwrap();
        let flags = [
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", dir.join("audit.log").display()),
        ];
        std::fs::write(dir.join("flags"), flags.join("\n")).unwrap();
    })
    .await;
    let port = free_port();
    let certs = api.dir.path().join("injector");
    let install = Command::new(INJECTOR)
        .args(["install", "--dir", certs.to_str().unwrap(), "--port", &port.to_string()])
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    api.ok_stdin(&["apply", "-f", "-"], &String::from_utf8_lossy(&install.stdout));
    let serve = || {
        Process::spawn(
            Command::new(INJECTOR)
                .args([
                    "serve",
                    "--port",
                    &port.to_string(),
                    "--kubeconfig",
                    api.kubeconfig().to_str().unwrap(),
                ])
                .arg(format!("--cert-file={}", certs.join("tls.crt").display()))
                .arg(format!("--key-file={}", certs.join("tls.key").display()))
                .stderr(std::fs::File::create(api.dir.path().join("injector.log")).unwrap()),
        )
    };
    let injector = serve();
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    api.ok(&["create", "namespace", "meshed"]);
    api.ok(&["annotate", "namespace", "meshed", "rtcd.dev/inject=enabled"]);
    api.ok(&["create", "namespace", "plain"]);
    run_pod(&api, "meshed", "web", None);
    let log = || std::fs::read_to_string(api.dir.path().join("injector.log")).unwrap_or_default();
    assert_eq!(containers(&api, "meshed", "web", "containers"), ["web", "rtcd-proxy"], "{}", log());
    assert_eq!(containers(&api, "meshed", "web", "initContainers"), ["rtcd-init"]);
    let pod: Value =
        serde_json::from_str(&api.ok(&["get", "pod", "web", "-n", "meshed", "-o", "json"])).unwrap();
    let proxy = &pod["spec"]["containers"][1];
    let ports: Vec<(&str, i64)> = proxy["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["containerPort"].as_i64().unwrap()))
        .collect();
    assert_eq!(ports, [("proxy", 4143), ("admin", 4191)]);
    assert_eq!(
        proxy["env"],
        json!([{"name": "RTCD_PROXY_LOG_LEVEL", "value": "info"}, {"name": "RTCD_PROXY_INBOUND_PORTS", "value": "8080"}])
    );
    assert_eq!(pod["metadata"]["annotations"]["rtcd.dev/injected-by"], "rtcd-sample-injector");
    assert!(pod["spec"]["volumes"].as_array().unwrap().iter().any(|v| v["name"] == "rtcd-proxy-config"));

    // The pod's own annotation wins over its namespace's.
    let disabled = json!({"metadata": {"annotations": {"rtcd.dev/inject": "disabled"}}});
    run_pod(&api, "meshed", "opted-out", Some(disabled));
    assert_eq!(containers(&api, "meshed", "opted-out", "containers"), ["opted-out"]);
    run_pod(&api, "plain", "untouched", None);
    assert_eq!(containers(&api, "plain", "untouched", "containers"), ["untouched"]);
    let enabled = json!({"metadata": {"annotations": {"rtcd.dev/inject": "enabled", "config.rtcd.dev/proxy-log-level": "debug"}},
        "spec": {"initContainers": [{"name": "setup", "image": "busybox"}], "volumes": [{"name": "data", "emptyDir": {}}],
            "containers": [{"name": "opted-in", "image": "nginx:1.27", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}});
    run_pod(&api, "plain", "opted-in", Some(enabled));
    assert_eq!(containers(&api, "plain", "opted-in", "initContainers"), ["setup", "rtcd-init"]);
    // Its own volume first, the ServiceAccount token's (added before
    // webhooks run), then the proxy's.
    let volumes = containers(&api, "plain", "opted-in", "volumes");
    assert_eq!(
        (volumes.first().unwrap().as_str(), volumes.last().unwrap().as_str()),
        ("data", "rtcd-proxy-config")
    );
    assert!(volumes[1].starts_with("kube-api-access-"), "{volumes:?}");
    let level = api.ok(&[
        "get",
        "pod",
        "opted-in",
        "-n",
        "plain",
        "-o",
        "jsonpath={.spec.containers[1].env[0].value}",
    ]);
    assert_eq!(level, "debug");

    // The Python client's pods are injected the same way.
    let script = "import sys\nfrom kubernetes import client, config\nconfig.load_kube_config()\n\
        pod = client.V1Pod(metadata=client.V1ObjectMeta(name='from-python'), spec=client.V1PodSpec(containers=[client.V1Container(name='app', image='nginx')]))\n\
        made = client.CoreV1Api().create_namespaced_pod('meshed', pod)\nprint(','.join(c.name for c in made.spec.containers))\n";
    let out = api.python(script, &[]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "app,rtcd-proxy\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The mutation is in the audit log.
    let audit = std::fs::read_to_string(api.dir.path().join("audit.log")).unwrap();
    let event: Value = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["verb"] == "create" && e["objectRef"]["name"] == "web")
        .unwrap_or_else(|| panic!("no create of web in {audit}"));
    let annotations = &event["annotations"];
    assert_eq!(annotations["rtcd-sample-injector.rtcd.dev/injected"], "true");
    let mutation: Value = serde_json::from_str(
        annotations["mutation.webhook.admission.k8s.io/round_0_index_0"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(mutation["mutated"], true);
    assert!(
        annotations["patch.webhook.admission.k8s.io/round_0_index_0"]
            .as_str()
            .unwrap()
            .contains("rtcd-proxy")
    );

    // Down, the injector blocks nothing: pods are made, uninjected.
    drop(injector);
    run_pod(&api, "meshed", "while-down", None);
    assert_eq!(containers(&api, "meshed", "while-down", "containers"), ["while-down"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injector_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injector_on_etcd() {
    scenario(Backend::Etcd).await;
}
