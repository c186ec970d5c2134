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
