//! HTTPS with a certificate given by flag: kubectl (HTTP/2 over TLS, as
//! client-go speaks it) trusts it through its kubeconfig.

use crate::common::{ApiServer, Backend, make_ca, make_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_over_https() {
    let api = ApiServer::start_with(Backend::Etcd, true).await;
    assert!(api.url.starts_with("https://"));
    let version = api.ok(&["version", "-o", "json"]);
    assert!(version.contains("\"gitVersion\": \"v1.37."), "{version}");
    api.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tls"},"data":{"a":"b"}}"#,
    );
    assert_eq!(api.ok(&["get", "cm", "tls", "-o", "jsonpath={.data.a}"]), "b");
    // Without the certificate trusted, the client refuses the server.
    let untrusted = api.kubectl(&[
        "get",
        "cm",
        "tls",
        "--certificate-authority=/dev/null",
        "--insecure-skip-tls-verify=false",
    ]);
    assert!(!untrusted.status.success());
}

/// With `--client-ca-file`, the server asks for a client certificate and
/// verifies it: one signed by that CA is accepted, one signed by another CA
/// is refused in the handshake, and a client without one is still served
/// (what it may do is authentication's to decide).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_are_verified_against_the_client_ca() {
    let api = ApiServer::start_prepared(Backend::Etcd, true, |dir| {
        make_ca(dir, "client-ca", "rtcd-client-ca");
        make_client(dir, "client-ca", "alice", "/CN=alice/O=dev");
        make_ca(dir, "other-ca", "someone-else");
        make_client(dir, "other-ca", "mallory", "/CN=mallory/O=system:masters");
    })
    .await;
    let dir = api.dir.path();
    let with_cert = |name: &str| {
        api.kubectl(&[
            "get",
            "namespace",
            "default",
            "-o",
            "name",
            &format!("--client-certificate={}", dir.join(format!("{name}.crt")).display()),
            &format!("--client-key={}", dir.join(format!("{name}.key")).display()),
        ])
    };
    let alice = with_cert("alice");
    assert!(alice.status.success(), "{}", String::from_utf8_lossy(&alice.stderr));
    assert_eq!(String::from_utf8_lossy(&alice.stdout).trim(), "namespace/default");
    let mallory = with_cert("mallory");
    assert!(!mallory.status.success(), "a certificate from another CA was accepted");
    let anonymous = api.kubectl(&["get", "namespace", "default", "-o", "name"]);
    assert!(anonymous.status.success(), "{}", String::from_utf8_lossy(&anonymous.stderr));
}

/// Given no certificate, the server is still HTTPS (secure by default, as
/// kube-apiserver): it makes a CA and a serving certificate in `--cert-dir`
/// once and reuses them after a restart; plain HTTP must be asked for, and
/// only on loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_certificate_the_server_makes_its_own() {
    use std::process::{Command, Stdio};

    use crate::common::{Backend, Member, free_port, venv_bin};

    let member = Member::start(Backend::Etcd).await;
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    let port = free_port();
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
            .arg(format!("--etcd-servers={}", member.url))
            .arg(format!("--secure-port={port}"))
            .arg(format!("--cert-dir={}", certs.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let get_version = || {
        let script = "import ssl, sys, urllib.request\n\
            ctx = ssl.create_default_context(cafile=sys.argv[2])\n\
            print(urllib.request.urlopen(sys.argv[1], context=ctx).status)\n";
        Command::new(venv_bin("python"))
            .args(["-c", script, &format!("https://127.0.0.1:{port}/version")])
            .arg(certs.join("apiserver-ca.crt"))
            .output()
            .unwrap()
    };
    let wait_ok = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let out = get_version();
            if String::from_utf8_lossy(&out.stdout).trim() == "200" {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "{}", String::from_utf8_lossy(&out.stderr));
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    };
    let mut server = start();
    wait_ok();
    let first = std::fs::read(certs.join("apiserver.crt")).unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    let mut server = start();
    wait_ok();
    assert_eq!(std::fs::read(certs.join("apiserver.crt")).unwrap(), first, "the certificate is reused");
    server.kill().unwrap();
    server.wait().unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
        .args(["--plain-http", "--bind-address=0.0.0.0", &format!("--etcd-servers={}", member.url)])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--plain-http is served on loopback only"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
