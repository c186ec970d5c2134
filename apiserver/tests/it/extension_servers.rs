//! An extension API server behind the aggregator, end to end with kubectl:
//! a second rtcd-apiserver (its own etcd, trusting the first as its front
//! proxy) serves `wardle.example.com` from a CRD of its own; an APIService
//! on the first hands the group version to it through a Service and an
//! EndpointSlice. Through the first server: discovery and `kubectl
//! explain` show the group, kubectl creates, gets, lists and watches its
//! objects, the caller's identity reaches the extension server (whose
//! RBAC and audit log see it), the APIService turns unavailable with
//! kube's reason when the extension server stops and back when it
//! returns, and one pointing at a server with the wrong certificate fails
//! its check without disturbing anything else.

use std::path::Path;

use base64::Engine;
use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, json as parse};

const ALICE_TOKEN: &str = "alice-token";
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n- level: Metadata\n";
const AVAILABILITY: &str =
    "jsonpath={.status.conditions[0].status} {.status.conditions[0].reason}: {.status.conditions[0].message}";

/// The audit flags (a Metadata policy, `audit.log` in `dir`) and `extra`.
fn write_flags(dir: &Path, extra: &[String]) {
    let policy = dir.join("audit-policy.yaml");
    std::fs::write(&policy, AUDIT_POLICY).unwrap();
    let mut flags = vec![
        format!("--audit-policy-file={}", policy.display()),
        format!("--audit-log-path={}", dir.join("audit.log").display()),
    ];
    flags.extend_from_slice(extra);
    std::fs::write(dir.join("flags"), flags.join("\n")).unwrap();
}

/// The main server: a front-proxy client certificate for the aggregator,
/// endpoints routing (no kube-proxy here), and alice (group `dev`).
async fn start_main(backend: Backend) -> ApiServer {
    ApiServer::start_prepared(backend, true, |dir| {
        use rtcd_apiserver::pki::Authority;
        let mut created = Vec::new();
        let ca = Authority::load_or_create(dir, "front-proxy-ca", "front-proxy-ca", &mut created).unwrap();
        ca.ensure_client(dir, "proxy", "front-proxy-client", &[], &mut created).unwrap();
        let mut tokens = std::fs::read_to_string(dir.join("tokens.csv")).unwrap();
        tokens.push_str(&format!("{ALICE_TOKEN},alice,alice-uid,\"dev\"\n"));
        std::fs::write(dir.join("tokens.csv"), tokens).unwrap();
        let file = |name: &str| dir.join(name).display().to_string();
        write_flags(
            dir,
            &[
                "--authorization-mode=RBAC".to_string(),
                format!("--proxy-client-cert-file={}", file("proxy.crt")),
                format!("--proxy-client-key-file={}", file("proxy.key")),
                "--enable-aggregator-routing=true".to_string(),
                // Published for extension servers that look it up.
                format!("--requestheader-client-ca-file={}", file("front-proxy-ca.crt")),
                "--requestheader-allowed-names=front-proxy-client".to_string(),
                "--requestheader-username-headers=X-Remote-User".to_string(),
                "--requestheader-group-headers=X-Remote-Group".to_string(),
                "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_string(),
            ],
        );
    })
    .await
}

/// The extension server: serving as `ext.default.svc` with a certificate
/// of its own CA, trusting `main`'s front-proxy CA for the caller's
/// identity (from flags).
async fn start_extension(backend: Backend, main: &ApiServer) -> ApiServer {
    let front_proxy_ca = main.dir.path().join("front-proxy-ca.crt");
    start_serving_as_ext(
        backend,
        &[
            format!("--requestheader-client-ca-file={}", front_proxy_ca.display()),
            "--requestheader-allowed-names=front-proxy-client".to_string(),
            "--requestheader-username-headers=X-Remote-User".to_string(),
            "--requestheader-uid-headers=X-Remote-Uid".to_string(),
            "--requestheader-group-headers=X-Remote-Group".to_string(),
            "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_string(),
            "--authorization-mode=RBAC".to_string(),
        ],
    )
    .await
}

/// An extension server with `flags`, serving as `ext.default.svc`.
async fn start_serving_as_ext(backend: Backend, flags: &[String]) -> ApiServer {
    ApiServer::start_prepared(backend, true, |dir| {
        use rtcd_apiserver::pki::Authority;
        let mut created = Vec::new();
        let ca = Authority::load_or_create(dir, "ext-ca", "ext-ca", &mut created).unwrap();
        let names = ["127.0.0.1".to_string(), "ext.default.svc".to_string()];
        ca.ensure_serving(dir, "ext-server", "ext", &names, &mut created).unwrap();
        // The chain, so kubectl (trusting this file) and the aggregator
        // (trusting ext-ca.crt) both verify it.
        let chain = std::fs::read_to_string(dir.join("ext-server.crt")).unwrap()
            + &std::fs::read_to_string(dir.join("ext-ca.crt")).unwrap();
        std::fs::write(dir.join("tls.crt"), chain).unwrap();
        std::fs::copy(dir.join("ext-server.key"), dir.join("tls.key")).unwrap();
        write_flags(dir, flags);
    })
    .await
}

fn port_of(api: &ApiServer) -> u16 {
    api.url.rsplit(':').next().unwrap().parse().unwrap()
}

fn apply(api: &ApiServer, object: &Value) {
    api.ok_stdin(&["apply", "-f", "-"], &object.to_string());
}

/// The APIService `name` for wardle's `version`, trusting `ca_pem`.
fn apiservice(version: &str, ca_pem: &str) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": format!("{version}.wardle.example.com")},
        "spec": {"group": "wardle.example.com", "version": version, "groupPriorityMinimum": 1000,
            "versionPriority": 15, "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem),
            "service": {"namespace": "default", "name": "ext", "port": 443}}})
}

/// The users of `audit.log` in `dir` that asked for `resource`.
fn audited_users(dir: &Path, resource: &str) -> Vec<String> {
    let log = std::fs::read_to_string(dir.join("audit.log")).unwrap_or_default();
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["objectRef"]["resource"] == resource)
        .filter_map(|event| event["user"]["username"].as_str().map(str::to_string))
        .collect()
}

/// The extension server's own API (wardle's Widgets, a CRD there),
/// registered on the main server: a Service, its EndpointSlice, the
/// APIService; waits until it is available.
async fn register(main: &ApiServer, ext: &ApiServer) {
    // The extension server's own API: wardle's Widgets.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.wardle.example.com"},
        "spec": {"group": "wardle.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "integer", "description": "How big the widget is."}}}}}}}]}});
    apply(ext, &crd);
    ext.eventually(&["get", "widgets"], |_| true).await;

    // Registered on the main server.
    apply(
        main,
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext", "namespace": "default"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port_of(ext)}]}}),
    );
    apply(
        main,
        &json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "ext-1", "namespace": "default", "labels": {"kubernetes.io/service-name": "ext"}},
        "addressType": "IPv4", "ports": [{"name": "https", "port": port_of(ext), "protocol": "TCP"}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}]}),
    );
    let ext_ca = std::fs::read_to_string(ext.dir.path().join("ext-ca.crt")).unwrap();
    apply(main, &apiservice("v1alpha1", &ext_ca));
    main.eventually(&["get", "apiservice", "v1alpha1.wardle.example.com", "-o", AVAILABILITY], |out| {
        out == "True Passed: all checks passed"
    })
    .await;
}

async fn scenario(backend: Backend) {
    let main = start_main(backend).await;
    let mut ext = start_extension(backend, &main).await;

    register(&main, &ext).await;

    // Discovery, legacy and aggregated (kubectl's), and OpenAPI v3.
    let groups = parse(&main.ok(&["get", "--raw", "/apis"]));
    let wardle = groups["groups"].as_array().unwrap().iter().find(|g| g["name"] == "wardle.example.com");
    assert_eq!(wardle.unwrap()["preferredVersion"]["groupVersion"], "wardle.example.com/v1alpha1");
    let group = parse(&main.ok(&["get", "--raw", "/apis/wardle.example.com"]));
    assert_eq!(group["versions"][0]["version"], "v1alpha1");
    let resources = main
        .eventually(&["api-resources", "--api-group=wardle.example.com", "--no-headers"], |out| {
            out.contains("widgets")
        })
        .await;
    assert!(resources.contains("wd") && resources.contains("Widget"), "{resources}");
    let explained = main.eventually(&["explain", "widgets.spec"], |out| out.contains("size")).await;
    assert!(explained.contains("How big the widget is."), "{explained}");

    // Its objects through the main server, stored by the extension server.
    apply(
        &main,
        &json!({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": {"size": 3}}),
    );
    assert_eq!(main.ok(&["get", "widget", "w1", "-o", "jsonpath={.spec.size}"]), "3");
    assert_eq!(ext.ok(&["get", "widget", "w1", "-o", "jsonpath={.spec.size}"]), "3");
    assert!(main.ok(&["get", "wd"]).contains("w1"));
    let watch = "/apis/wardle.example.com/v1alpha1/namespaces/default/widgets?watch=1&timeoutSeconds=2";
    let events = main.ok(&["get", "--raw", watch]);
    let first = parse(events.lines().next().unwrap());
    assert_eq!((&first["type"], &first["object"]["metadata"]["name"]), (&json!("ADDED"), &json!("w1")));

    // The caller, as the extension server sees it: refused here first, then
    // by the extension server, then allowed there through alice's group.
    main.add_identity("alice", &format!("{{token: {ALICE_TOKEN}}}"));
    let alice_lists = || main.kubectl_as("alice", &["get", "widgets", "-o", "name"]);
    let refused = alice_lists();
    assert!(!refused.status.success());
    let grant = |api: &ApiServer, subject: Value| {
        apply(
            api,
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "widget-reader"},
            "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}]}),
        );
        apply(
            api,
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "widget-readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "widget-reader"},
            "subjects": [subject]}),
        );
    };
    grant(&main, json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}));
    main.eventually(&["auth", "can-i", "list", "widgets.wardle.example.com", "--as=alice"], |out| {
        out.trim() == "yes"
    })
    .await;
    let refused = alice_lists();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && stderr
                .contains(r#"User "alice" cannot list resource "widgets" in API group "wardle.example.com""#),
        "the extension server's refusal: {stderr}"
    );
    grant(&ext, json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "dev"}));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let listed = alice_lists();
        if listed.status.success() {
            assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "widget.wardle.example.com/w1");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", String::from_utf8_lossy(&listed.stderr));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    for api in [&main, &ext] {
        assert!(
            audited_users(api.dir.path(), "widgets").iter().any(|u| u == "alice"),
            "alice in its audit log"
        );
    }
    assert!(
        !audited_users(ext.dir.path(), "widgets").iter().any(|u| u == "system:anonymous"),
        "every request came with its caller"
    );

    // The extension server stops: unavailable, with kube's reason and 503s;
    // back when it returns.
    ext.stop();
    let down = main
        .eventually(&["get", "apiservice", "v1alpha1.wardle.example.com", "-o", AVAILABILITY], |out| {
            out.starts_with("False FailedDiscoveryCheck: ")
        })
        .await;
    let url = format!("https://127.0.0.1:{}/apis/wardle.example.com/v1alpha1", port_of(&ext));
    assert!(down.contains(&format!("failing or missing response from {url}")), "{down}");
    let out = main.kubectl(&["get", "--raw", "/apis/wardle.example.com/v1alpha1/namespaces/default/widgets"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("ServiceUnavailable"), "{stderr}");
    assert!(main.ok(&["get", "namespaces"]).contains("default"), "the main server is unaffected");
    ext.restart().await;
    main.eventually(&["get", "apiservice", "v1alpha1.wardle.example.com", "-o", AVAILABILITY], |out| {
        out == "True Passed: all checks passed"
    })
    .await;
    assert_eq!(main.ok(&["get", "widget", "w1", "-o", "jsonpath={.spec.size}"]), "3");

    // Pointed at the same server with the wrong CA: its check fails on the
    // certificate; the rest goes on.
    let wrong_ca = std::fs::read_to_string(main.dir.path().join("front-proxy-ca.crt")).unwrap();
    apply(&main, &apiservice("v1beta1", &wrong_ca));
    let failed = main
        .eventually(&["get", "apiservice", "v1beta1.wardle.example.com", "-o", AVAILABILITY], |out| {
            out.starts_with("False FailedDiscoveryCheck: ")
        })
        .await;
    assert!(failed.contains("certificate"), "{failed}");
    assert_eq!(main.ok(&["get", "widget", "w1", "-o", "jsonpath={.spec.size}"]), "3");
}

/// rtcd-apiserver as kube's sample-apiserver runs: authentication and
/// authorization delegated to the main server (TokenReview,
/// SubjectAccessReview), its front proxy and client CAs looked up in the
/// main server's `extension-apiserver-authentication`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_servers_delegate_to_the_main_server() {
    let main = start_main(Backend::Rtcd).await;
    let kubeconfig = main.kubeconfig().display().to_string();
    let ext = start_serving_as_ext(
        Backend::Rtcd,
        &[
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
        ],
    )
    .await;
    register(&main, &ext).await;
    apply(
        &main,
        &json!({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": {"size": 3}}),
    );

    // alice's token, reviewed by the main server: refused there by the main
    // server's RBAC, directly and through the aggregator.
    ext.add_identity("alice", &format!("{{token: {ALICE_TOKEN}}}"));
    main.add_identity("alice", &format!("{{token: {ALICE_TOKEN}}}"));
    let direct = ext.kubectl_as("alice", &["get", "widgets", "-o", "name"]);
    let stderr = String::from_utf8_lossy(&direct.stderr);
    assert!(
        !direct.status.success() && stderr.contains(r#"User "alice" cannot list resource "widgets""#),
        "known by her token, refused: {stderr}"
    );
    // Granted on the main server only: allowed on both, as the main server
    // decides for the extension server too.
    apply(
        &main,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "widget-reader"},
        "rules": [{"apiGroups": ["wardle.example.com"], "resources": ["widgets"], "verbs": ["get", "list"]}]}),
    );
    apply(
        &main,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "widget-readers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "widget-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "dev"}]}),
    );
    // Past the extension server's 10 s memory of the refusal.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    for api in [&ext, &main] {
        loop {
            let listed = api.kubectl_as("alice", &["get", "widgets", "-o", "name"]);
            if listed.status.success() {
                assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "widget.wardle.example.com/w1");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{}", String::from_utf8_lossy(&listed.stderr));
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
    }
    // Through the aggregator, alice came as the front proxy said (the CA
    // looked up), not as anyone else.
    let users = audited_users(ext.dir.path(), "widgets");
    assert!(users.iter().any(|u| u == "alice"), "{users:?}");
    assert!(!users.iter().any(|u| u == "system:anonymous" || u == "front-proxy-client"), "{users:?}");
    // Health needs no one's permission.
    let health = std::process::Command::new("curl")
        .args(["-sS", "--cacert", &ext.ca().unwrap().display().to_string()])
        .arg(format!("{}/readyz", ext.url))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&health.stdout), "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_servers_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_servers_on_etcd() {
    scenario(Backend::Etcd).await;
}

/// Extension servers broken in two ways users meet: one that takes
/// connections and never answers, one that answers garbage. Each fails
/// kube's discovery check with kube's words and its group version answers
/// 503, while the main server serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_extension_servers_fail_alone() {
    let main = start_main(Backend::Rtcd).await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let garbage = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ports =
        [("silent", silent.local_addr().unwrap().port()), ("garbage", garbage.local_addr().unwrap().port())];
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = garbage.accept().await {
            use tokio::io::AsyncWriteExt;
            let _ = socket.write_all(b"garbage\r\n\r\n").await;
        }
    });
    for (name, port) in ports {
        apply(
            &main,
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}}),
        );
        apply(
            &main,
            &json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "namespace": "default", "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4", "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["127.0.0.1"]}]}),
        );
        apply(
            &main,
            &json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": format!("v1.{name}.example.com")},
            "spec": {"group": format!("{name}.example.com"), "version": "v1", "groupPriorityMinimum": 100,
                "versionPriority": 10, "insecureSkipTLSVerify": true,
                "service": {"namespace": "default", "name": name}}}),
        );
    }
    for (name, port) in ports {
        let failed = main
            .eventually(
                &["get", "apiservice", &format!("v1.{name}.example.com"), "-o", AVAILABILITY],
                |out| out.starts_with("False FailedDiscoveryCheck: "),
            )
            .await;
        let url = format!("https://127.0.0.1:{port}/apis/{name}.example.com/v1");
        assert!(
            failed.contains(&format!("failing or missing response from {url}: Get \"{url}\": ")),
            "{failed}"
        );
        if name == "silent" {
            assert!(
                failed
                    .ends_with("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
            );
        }
        let out = main.kubectl(&["get", "--raw", &format!("/apis/{name}.example.com/v1/things")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains("ServiceUnavailable"), "{stderr}");
    }
    let started = std::time::Instant::now();
    assert!(main.ok(&["get", "namespaces"]).contains("default"));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "the main server is not held up");
}
