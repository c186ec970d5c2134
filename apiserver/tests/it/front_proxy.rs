//! Front-proxy authentication (`--requestheader-*`), as the aggregator and
//! authenticating proxies use it: a client certificate from the front-proxy
//! CA with an allowed name makes the request the user its headers name;
//! another name, or the front-proxy certificate without headers, is
//! refused; a user's own certificate from the client CA still works and
//! cannot pass on headers. `kube-system/extension-apiserver-authentication`
//! publishes the trust for extension servers.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ApiServer, Backend, make_ca, make_client};

/// A SelfSubjectReview over curl with `cert` and `headers`: the status
/// code and the body.
fn who_am_i(api: &ApiServer, cert: &str, headers: &[&str]) -> (u16, Value) {
    let dir = api.dir.path();
    let file = |name: String| dir.join(name).display().to_string();
    let mut command = Command::new("curl");
    command
        .args(["-sS", "-w", "\n%{http_code}", "--cacert", &file("tls.crt".into())])
        .args(["--cert", &file(format!("{cert}.crt")), "--key", &file(format!("{cert}.key"))])
        .args(["-H", "Content-Type: application/json", "-X", "POST"])
        .args(["-d", r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#]);
    for header in headers {
        command.args(["-H", header]);
    }
    let out = command
        .arg(format!("{}/apis/authentication.k8s.io/v1/selfsubjectreviews", api.url))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or_default();
    // Not JSON (or no answer at all): the text and curl's word for why, so
    // a failure says it.
    let as_text = || Value::String(format!("{body}{}", String::from_utf8_lossy(&out.stderr)));
    (code.parse().unwrap_or(0), serde_json::from_str(body).unwrap_or_else(|_| as_text()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn front_proxies_say_who_the_request_is_for() {
    let api = ApiServer::start_prepared(Backend::Rtcd, true, |dir| {
        make_ca(dir, "client-ca", "rtcd-client-ca");
        make_client(dir, "client-ca", "bob", "/CN=bob/O=dev");
        make_ca(dir, "front-proxy-ca", "front-proxy-ca");
        make_client(dir, "front-proxy-ca", "proxy", "/CN=front-proxy-client");
        make_client(dir, "front-proxy-ca", "stranger", "/CN=someone-else");
        let flags = [
            format!("--requestheader-client-ca-file={}", dir.join("front-proxy-ca.crt").display()),
            "--requestheader-allowed-names=front-proxy-client".into(),
            "--requestheader-username-headers=X-Remote-User".into(),
            "--requestheader-group-headers=X-Remote-Group".into(),
            "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
            "--requestheader-uid-headers=X-Remote-Uid".into(),
        ];
        std::fs::write(dir.join("flags"), flags.join("\n")).unwrap();
    })
    .await;
    let alice =
        ["X-Remote-User: alice", "X-Remote-Group: ops", "X-Remote-Uid: a-1", "X-Remote-Extra-Scopes: view"];
    let (code, review) = who_am_i(&api, "proxy", &alice);
    assert_eq!(code, 201, "{review}");
    let user = &review["status"]["userInfo"];
    assert_eq!(user["username"], "alice");
    assert_eq!(user["uid"], "a-1");
    assert_eq!(user["groups"], serde_json::json!(["ops", "system:authenticated"]));
    assert_eq!(user["extra"]["scopes"], serde_json::json!(["view"]));

    // A name not allowed, or the proxy's certificate naming no one: 401.
    let (code, body) = who_am_i(&api, "stranger", &alice);
    assert_eq!(code, 401, "{body}");
    let (code, body) = who_am_i(&api, "proxy", &[]);
    assert_eq!(code, 401, "{body}");
    // A user's own certificate is the user, whatever headers it sends.
    let (code, review) = who_am_i(&api, "bob", &alice);
    assert_eq!(code, 201, "{review}");
    assert_eq!(review["status"]["userInfo"]["username"], "bob");

    // Published for extension servers.
    let deadline = Instant::now() + Duration::from_secs(30);
    let data = loop {
        let out = api.kubectl(&[
            "get",
            "cm",
            "-n",
            "kube-system",
            "extension-apiserver-authentication",
            "-o",
            "json",
        ]);
        if out.status.success() {
            let object: Value = serde_json::from_slice(&out.stdout).unwrap();
            break object["data"].clone();
        }
        assert!(Instant::now() < deadline, "never published");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let read = |file: &str| std::fs::read_to_string(api.dir.path().join(file)).unwrap();
    assert_eq!(data["client-ca-file"].as_str().unwrap().trim(), read("client-ca.crt").trim());
    assert_eq!(
        data["requestheader-client-ca-file"].as_str().unwrap().trim(),
        read("front-proxy-ca.crt").trim()
    );
    assert_eq!(data["requestheader-allowed-names"], r#"["front-proxy-client"]"#);
    assert_eq!(data["requestheader-username-headers"], r#"["X-Remote-User"]"#);
    assert_eq!(data["requestheader-extra-headers-prefix"], r#"["X-Remote-Extra-"]"#);
}
