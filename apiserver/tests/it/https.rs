//! HTTPS with a certificate given by flag: kubectl (HTTP/2 over TLS, as
//! client-go speaks it) trusts it through its kubeconfig.

use crate::common::{ApiServer, Backend};

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
