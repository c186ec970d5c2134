//! Mutual TLS to etcd: Debian's etcd serving `https://` with
//! `--client-cert-auth`, as kubeadm sets it up, and rtcd-apiserver reaching
//! it with `--etcd-cafile`, `--etcd-certfile` and `--etcd-keyfile`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ApiServer, EtcdTls, Member, Process, free_port};

/// etcdctl against `member`, with the API server's client certificate
/// when `with_cert`; its output, or None when it failed.
fn etcdctl(member: &Member, with_cert: bool, args: &[&str]) -> Option<String> {
    let tls = member.tls.as_ref().unwrap();
    let mut command = Command::new("etcdctl");
    command.env("ETCDCTL_API", "3").arg(format!("--endpoints={}", member.url));
    command.arg(format!("--cacert={}", tls.file("etcd-ca.crt")));
    if with_cert {
        command.arg(format!("--cert={}", tls.file("apiserver-etcd-client.crt")));
        command.arg(format!("--key={}", tls.file("apiserver-etcd-client.key")));
    }
    let out = command.args(["--command-timeout=3s"]).args(args).output().unwrap();
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_are_stored_in_an_etcd_that_asks_for_client_certificates() {
    let certs = tempfile::tempdir().unwrap();
    let tls = EtcdTls::make(certs.path());
    let member = Member::start_etcd_tls(tls.clone()).await;
    assert!(member.url.starts_with("https://"));
    // etcd really asks for a certificate: without one, etcdctl is refused.
    assert_eq!(etcdctl(&member, false, &["get", "/registry", "--prefix", "--keys-only"]), None);

    let api = ApiServer::start_on(member, false, |_| {}).await;
    api.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"over-tls"},"data":{"a":"b"}}"#,
    );
    assert_eq!(api.ok(&["get", "cm", "over-tls", "-o", "jsonpath={.data.a}"]), "b");
    let keys =
        etcdctl(&api.member, true, &["get", "/registry/configmaps/default/", "--prefix", "--keys-only"]);
    assert_eq!(keys.as_deref().map(str::trim), Some("/registry/configmaps/default/over-tls"));

    // Watches go over the same TLS channel: a delete made in etcd directly
    // reaches kubectl's view through the API server's watch cache.
    etcdctl(&api.member, true, &["del", "/registry/configmaps/default/over-tls"]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while api.kubectl(&["get", "cm", "over-tls"]).status.success() {
        assert!(Instant::now() < deadline, "the watch over TLS never delivered the delete");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A second API server that trusts etcd's CA but has no client
    // certificate is refused by etcd: it stays unready, saying why.
    let port = free_port();
    let log = tempfile::NamedTempFile::new().unwrap();
    let _unready = Process::spawn(
        Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
            .arg(format!("--etcd-servers={}", api.member.url))
            .arg(format!("--etcd-cafile={}", tls.file("etcd-ca.crt")))
            .args(["--plain-http", &format!("--secure-port={port}")])
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap()),
    );
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let readyz = loop {
        if let Ok(answer) = tokio::time::timeout(Duration::from_secs(10), readyz_text(&addr)).await
            && let Some(answer) = answer
        {
            break answer;
        }
        assert!(Instant::now() < deadline, "the second API server never answered /readyz");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(readyz.starts_with("500 [-]etcd failed: "), "{readyz}");
    assert!(readyz.ends_with("readyz check failed"), "{readyz}");
}

/// `/readyz`'s status code and text, or None before the server listens.
async fn readyz_text(addr: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    stream.write_all(format!("GET /readyz HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    Some(format!("{} {}", head.split_whitespace().nth(1)?, body.trim()))
}

/// The flags' mistakes stop the server at once, naming the flag.
#[tokio::test]
async fn wrong_etcd_tls_flags_stop_the_server() {
    let certs = tempfile::tempdir().unwrap();
    let tls = EtcdTls::make(certs.path());
    let run = |args: &[String]| {
        let out = Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
            .args(["--plain-http", &format!("--secure-port={}", free_port())])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let no_ca = run(&["--etcd-servers=https://127.0.0.1:2379".into()]);
    assert!(no_ca.contains("--etcd-cafile must name the CA"), "{no_ca}");
    let key_for_cert = run(&[
        "--etcd-servers=https://127.0.0.1:2379".into(),
        format!("--etcd-cafile={}", tls.file("etcd-ca.crt")),
        format!("--etcd-certfile={}", tls.file("apiserver-etcd-client.key")),
        format!("--etcd-keyfile={}", tls.file("apiserver-etcd-client.key")),
    ]);
    assert!(
        key_for_cert.contains(&format!(
            "cannot use --etcd-certfile {}: no certificate in the file",
            tls.file("apiserver-etcd-client.key")
        )),
        "{key_for_cert}"
    );
}
