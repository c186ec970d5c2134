//! Resource limits an attacker on the network meets: request bodies, patch
//! amplification, slow headers and connection counts, answered as kube-apiserver
//! answers them.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{Backend, Member, free_port, make_certificate};

/// kube-apiserver's `MaxRequestBodyBytes` and `JSONPatchMaxCopyBytes`.
const THREE_MIB: usize = 3 * 1024 * 1024;

/// How long a test waits for the server to close a connection it should
/// close: far longer than the 2s header timeout the servers here get, far
/// shorter than forever (what happens without the timeout).
const CLOSE_WITHIN: Duration = Duration::from_secs(20);

/// rtcd-apiserver with extra flags on its own etcd member, killed when
/// dropped (the common `ApiServer` takes no flags).
struct Server {
    child: Child,
    addr: String,
    dir: tempfile::TempDir,
    _member: Member,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    async fn start(backend: Backend, tls: bool, flags: &[&str]) -> Server {
        let member = Member::start(backend).await;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"));
        command
            .arg(format!("--etcd-servers={}", member.url))
            .arg(format!("--secure-port={port}"))
            .args(flags);
        if tls {
            make_certificate(dir.path());
            command.arg(format!("--tls-cert-file={}", dir.path().join("tls.crt").display()));
            command.arg(format!("--tls-private-key-file={}", dir.path().join("tls.key").display()));
        } else {
            command.arg("--plain-http");
        }
        let log = std::fs::File::create(dir.path().join("apiserver.log")).unwrap();
        let child = command.stdout(Stdio::null()).stderr(log).spawn().unwrap();
        let server = Server { child, addr: format!("127.0.0.1:{port}"), dir, _member: member };
        server.wait_listening().await;
        server
    }

    /// Waits until the port accepts (plain servers: until /readyz is 200).
    async fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(mut stream) = TcpStream::connect(&self.addr).await {
                // Over TLS, listening is all the tests here need.
                if self.dir.path().join("tls.crt").exists() {
                    return;
                }
                let ready = b"GET /readyz HTTP/1.0\r\n\r\n";
                if stream.write_all(ready).await.is_ok() {
                    let mut answer = Vec::new();
                    let _ = stream.read_to_end(&mut answer).await;
                    if answer.starts_with(b"HTTP/1.0 200") {
                        return;
                    }
                }
            }
            assert!(Instant::now() < deadline, "apiserver never became ready: {}", self.log());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("apiserver.log")).unwrap_or_default()
    }

    /// One HTTP/1.1 request (the connection closed after it): its status
    /// code and JSON body, within a bound: none of these may take long.
    async fn request(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
        parse_response(self.send_request(method, path, content_type, body).await.as_bytes())
    }

    /// One request; the whole answer as it came, head and body.
    async fn send_request(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> String {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        String::from_utf8_lossy(&self.send_raw(&request).await).into_owned()
    }

    /// As `send_raw`; the status code and JSON body.
    async fn send(&self, raw: &[u8]) -> (u16, Value) {
        parse_response(&self.send_raw(raw).await)
    }

    /// Sends `raw` while reading the answer (the server may answer and
    /// close before it has read all of it); the answer's bytes.
    async fn send_raw(&self, raw: &[u8]) -> Vec<u8> {
        let stream = TcpStream::connect(&self.addr).await.unwrap();
        let (mut reader, mut writer) = stream.into_split();
        let raw = raw.to_vec();
        let writing = tokio::spawn(async move {
            let _ = writer.write_all(&raw).await;
            writer
        });
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(60), async {
            let mut buf = vec![0; 64 * 1024];
            // A reset after the answer still leaves the answer read.
            while let Ok(n @ 1..) = reader.read(&mut buf).await {
                answer.extend_from_slice(&buf[..n]);
            }
        })
        .await;
        assert!(read.is_ok(), "no answer within a minute: {}", String::from_utf8_lossy(&answer));
        drop(writing);
        answer
    }
}

/// The status code and JSON body of a raw HTTP/1.1 response.
fn parse_response(answer: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no response: {text:?}"));
    let code =
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("{head}"));
    // Chunked bodies: the JSON is the first chunk's data.
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        body.split_once("\r\n").map(|(_, rest)| rest).unwrap_or_default()
    } else {
        body
    };
    let json = serde_json::Deserializer::from_str(body).into_iter::<Value>().next();
    (code, json.and_then(Result::ok).unwrap_or(Value::Null))
}

/// Whether the server closes `stream` within `within`, while `trickle`
/// (if any) is sent a byte at a time, as a slowloris client sends it.
async fn closed_by_server(stream: &mut TcpStream, trickle: &[u8], within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    let mut next = trickle.iter().cycle();
    let mut buf = [0u8; 4096];
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            },
            () = tokio::time::sleep(Duration::from_millis(300)) => {
                if let Some(byte) = next.next()
                    && stream.write_all(&[*byte]).await.is_err()
                {
                    return true;
                }
            }
            () = tokio::time::sleep_until(deadline) => return false,
        }
    }
}

fn assert_status(answer: &(u16, Value), code: u16, reason: &str, message: &str) {
    let (got, status) = answer;
    assert_eq!(*got, code, "{status}");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["code"], code, "{status}");
    assert_eq!(status["reason"], reason, "{status}");
    assert_eq!(status["message"], message, "{status}");
}

/// A client that opens a connection and then sends its request slowly, or
/// never, or only the start of an HTTP/2 preface, is disconnected after
/// the header timeout (kube: 32s, here 2s by flag); the server goes on
/// serving others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_disconnected_after_the_header_timeout() {
    let server = Server::start(Backend::Etcd, false, &["--read-header-timeout=2s"]).await;
    let cases: [(&str, &[u8], &[u8]); 4] = [
        ("headers one byte at a time", b"GET /api HTTP/1.1\r\nHost: x\r\n", b"X-Slow: y\r\n"),
        ("nothing at all", b"", b""),
        ("half an HTTP/2 preface", b"PRI * HTTP/2.0\r\n", b""),
        // The whole preface and SETTINGS, then never a request.
        (
            "an HTTP/2 connection without a request",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0",
            b"",
        ),
    ];
    let mut held = Vec::new();
    for (what, start, trickle) in cases {
        let mut stream = TcpStream::connect(&server.addr).await.unwrap();
        stream.write_all(start).await.unwrap();
        held.push(tokio::spawn(
            async move { (what, closed_by_server(&mut stream, trickle, CLOSE_WITHIN).await) },
        ));
    }
    for handle in held {
        let (what, closed) = handle.await.unwrap();
        assert!(closed, "a client sending {what} was still connected after {CLOSE_WITHIN:?}");
    }
    let answer = server.request("GET", "/api/v1/namespaces/default", "application/json", b"").await;
    assert_eq!(answer.0, 200, "{}", answer.1);
}

/// Over HTTPS the TLS handshake counts against the header timeout: a
/// client that connects and never says hello is disconnected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_handshake_that_never_comes_is_disconnected() {
    let server = Server::start(Backend::Etcd, true, &["--read-header-timeout=2s"]).await;
    let mut silent = TcpStream::connect(&server.addr).await.unwrap();
    assert!(
        closed_by_server(&mut silent, b"", CLOSE_WITHIN).await,
        "a client without a TLS handshake was still connected after {CLOSE_WITHIN:?}"
    );
}

/// `--max-connections` bounds the connections open at once: one more is
/// closed as soon as it is accepted, and once the others go the server
/// takes new ones again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_limit_are_closed() {
    let server = Server::start(Backend::Etcd, false, &["--max-connections=3"]).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        // Each is the server's (it answered on it, keeping it open) before
        // the fourth comes, however slow the machine.
        let mut stream = TcpStream::connect(&server.addr).await.unwrap();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: rtcd\r\n\r\n").await.unwrap();
        let mut answer = [0u8; 12];
        tokio::time::timeout(Duration::from_secs(30), stream.read_exact(&mut answer)).await.unwrap().unwrap();
        assert_eq!(&answer, b"HTTP/1.1 200");
        held.push(stream);
    }
    let mut extra = TcpStream::connect(&server.addr).await.unwrap();
    assert!(
        closed_by_server(&mut extra, b"", Duration::from_secs(10)).await,
        "a fourth connection was kept open with --max-connections=3"
    );
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stream = TcpStream::connect(&server.addr).await.unwrap();
        let (mut reader, mut writer) = stream.into_split();
        let _ = writer.write_all(b"GET /healthz HTTP/1.0\r\n\r\n").await;
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut answer)).await;
        if answer.starts_with(b"HTTP/1.0 200") {
            break;
        }
        assert!(Instant::now() < deadline, "connections were not taken again once the others closed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Bodies over 3 MiB are refused with kube's 413, whether their length is
/// declared or streamed; JSON patches that copy more than 3 MiB, or have
/// more than 10,000 operations, are refused as kube refuses them instead of
/// growing the object without bound; and an object patched past what etcd
/// stores is refused by etcd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_and_patches_are_bounded_as_kube_bounds_them() {
    let server = Server::start(Backend::Rtcd, false, &[]).await;
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let too_large = "Request entity too large: limit is 3145728";

    // A declared length over the limit: refused before the body is read.
    let head = format!(
        "POST {configmaps} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        THREE_MIB + 1
    );
    assert_status(&server.send(head.as_bytes()).await, 413, "RequestEntityTooLarge", too_large);
    // Streamed in chunks with no length: refused once past the limit.
    let mut chunked =
        format!("POST {configmaps} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            .into_bytes();
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..(THREE_MIB / chunk.len() + 1) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(&chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    assert_status(&server.send(&chunked).await, 413, "RequestEntityTooLarge", too_large);

    let cm =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "amp"}, "data": {"a": "b"}});
    let created = server.request("POST", configmaps, "application/json", cm.to_string().as_bytes()).await;
    assert_eq!(created.0, 201, "{}", created.1);
    let amp = format!("{configmaps}/amp");

    // The probe's patch: 1 KiB added, then copied into itself 19 times
    // (2,000 bytes that would grow the object to half a gigabyte).
    let mut ops = vec![json!({"op": "add", "path": "/x", "value": {"v": "a".repeat(1024)}})];
    ops.extend((0..19).map(|i| json!({"op": "copy", "from": "/x", "path": format!("/x/c{i}")})));
    let patch = serde_json::to_vec(&ops).unwrap();
    assert!(patch.len() < 2100);
    let answer = server.request("PATCH", &amp, "application/json-patch+json", &patch).await;
    assert_status(&answer, 422, "Invalid", "the server rejected our request due to an error in our request");

    let many: Vec<Value> =
        (0..10_001).map(|_| json!({"op": "test", "path": "/data/a", "value": "b"})).collect();
    let answer = server
        .request("PATCH", &amp, "application/json-patch+json", &serde_json::to_vec(&many).unwrap())
        .await;
    assert_status(
        &answer,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    );

    // A merge patch under the body limit whose result is over etcd's
    // request limit (1.5 MiB, and under the 2 MiB its gRPC server takes):
    // etcd refuses the write, and so the request.
    let big = json!({"data": {"big": "x".repeat(1_800_000)}});
    let (code, status) =
        server.request("PATCH", &amp, "application/merge-patch+json", big.to_string().as_bytes()).await;
    assert_eq!(code, 500, "{status}");
    assert!(
        status["message"].as_str().unwrap_or_default().contains("etcdserver: request is too large"),
        "{status}"
    );

    // The object is as it was, and the server still serves.
    let (code, object) = server.request("GET", &amp, "application/json", b"").await;
    assert_eq!(code, 200, "{object}");
    assert_eq!(object["data"], json!({"a": "b"}));
    assert!(object.get("x").is_none());
}

/// YAML bodies are accepted on create and update as kube accepts them;
/// malformed YAML and alias bombs are refused with kube's 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yaml_bodies_are_decoded_and_bounded() {
    let server = Server::start(Backend::Etcd, false, &[]).await;
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\n  labels:\n    app: web\ndata:\n  greeting: hello\n  count: \"3\"\n";
    let (code, created) = server.request("POST", configmaps, "application/yaml", yaml.as_bytes()).await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["data"], json!({"greeting": "hello", "count": "3"}));
    assert_eq!(created["metadata"]["labels"]["app"], "web");

    let rv = created["metadata"]["resourceVersion"].as_str().unwrap();
    let update = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\n  resourceVersion: \"{rv}\"\ndata:\n  greeting: bye\n"
    );
    let path = format!("{configmaps}/from-yaml");
    let (code, updated) =
        server.request("PUT", &path, "application/yaml; charset=utf-8", update.as_bytes()).await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["data"], json!({"greeting": "bye"}));

    let (code, status) =
        server.request("POST", configmaps, "application/yaml", b"metadata: {name: [x\n").await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")), "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the object provided is unrecognized (must be of type ConfigMap): yaml: "),
        "{message}"
    );

    // Billion laughs: under a kilobyte, 9^9 strings if expanded.
    let mut bomb = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nl0: &l0 lol\n");
    for level in 1..10 {
        bomb.push_str(&format!("l{level}: &l{level} [{}]\n", vec![format!("*l{}", level - 1); 9].join(", ")));
    }
    assert!(bomb.len() < 1024);
    let (code, status) = server.request("POST", configmaps, "application/yaml", bomb.as_bytes()).await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")), "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains("yaml: document contains excessive aliasing"), "{message}");

    // Server-side apply bodies are YAML too, bounded the same way.
    let apply = format!("{path}?fieldManager=limits");
    let (code, status) =
        server.request("PATCH", &apply, "application/apply-patch+yaml", bomb.as_bytes()).await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")), "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.ends_with("yaml: document contains excessive aliasing"), "{message}");
    let (code, applied) =
        server.request("PATCH", &apply, "application/apply-patch+yaml", update.as_bytes()).await;
    assert_eq!(code, 409, "the resourceVersion applied is a precondition: {applied}");
}

/// kube's request timeout: a write held up by a webhook that never answers is answered 504 with
/// kube's body once `--request-timeout` passes, sooner when the request's `timeout` asks; a
/// `timeout` that is not a Go duration is a 400; the server serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_their_deadline_get_kubes_504() {
    let server = Server::start(Backend::Rtcd, false, &["--request-timeout=3s"]).await;
    // A webhook that accepts connections and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let hook = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "silent"},
        "webhooks": [{"name": "silent.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
            "timeoutSeconds": 30, "failurePolicy": "Fail",
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/")},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]}]});
    let hooks = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let created = server.request("POST", hooks, "application/json", hook.to_string().as_bytes()).await;
    assert_eq!(created.0, 201, "{}", created.1);

    let configmaps = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held"}}).to_string();
    let started = std::time::Instant::now();
    let raw = server.send_request("POST", configmaps, "application/json", cm.as_bytes()).await;
    let took = started.elapsed();
    assert!(raw.starts_with("HTTP/1.1 504 Gateway Timeout\r\n"), "{raw}");
    assert!(raw.ends_with("\r\n\r\n{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n"), "{raw}");
    assert!(
        took >= std::time::Duration::from_secs(3) && took < std::time::Duration::from_secs(10),
        "{took:?}"
    );

    let started = std::time::Instant::now();
    let raw = server
        .send_request("POST", &format!("{configmaps}?timeout=1s"), "application/json", cm.as_bytes())
        .await;
    assert!(raw.starts_with("HTTP/1.1 504 "), "{raw}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "{:?}", started.elapsed());

    let answer = server.request("GET", &format!("{configmaps}?timeout=5"), "application/json", b"").await;
    assert_eq!(answer.0, 400, "{}", answer.1);
    assert!(
        answer.1["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("invalid timeout specified in the request URL - "),
        "{}",
        answer.1
    );
    let listed = server.request("GET", configmaps, "application/json", b"").await;
    assert_eq!(listed.0, 200, "{}", listed.1);
    drop(silent);
}

/// Issue 44: a custom resource nested 126 deep, applied through `apply-patch+yaml`, was stored,
/// then GET and DELETE failed on it (`recursion limit exceeded`) and LIST left it out. Now what
/// nests too deep to be read back is refused before the store, whichever way it was written; what
/// is stored reads back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_stored_that_reads_then_fail_on() {
    let server = Server::start(Backend::Rtcd, false, &[]).await;
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "nests.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "nests", "singular": "nest", "kind": "Nest", "listKind": "NestList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let created = server.request("POST", crds, "application/json", crd.to_string().as_bytes()).await;
    assert_eq!(created.0, 201, "{}", created.1);
    let nested = |depth: usize| {
        let mut value = json!(1);
        for _ in 0..depth {
            value = json!({"a": value});
        }
        json!({"apiVersion": "example.com/v1", "kind": "Nest", "spec": value})
    };
    let nests = "/apis/example.com/v1/namespaces/default/nests";
    let apply = |name: &str| format!("{nests}/{name}?fieldManager=probe");
    // (The resource is served once the CRD is established.)
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut shallow = nested(40);
    shallow["metadata"] = json!({"name": "shallow"});
    loop {
        let answer = server
            .request(
                "PATCH",
                &apply("shallow"),
                "application/apply-patch+yaml",
                shallow.to_string().as_bytes(),
            )
            .await;
        if answer.0 == 201 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", answer.1);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (code, read) = server.request("GET", &format!("{nests}/shallow"), "application/json", b"").await;
    assert_eq!(code, 200, "{read}");

    let mut deep = nested(110);
    deep["metadata"] = json!({"name": "deep"});
    let (code, status) = server
        .request("PATCH", &apply("deep"), "application/apply-patch+yaml", deep.to_string().as_bytes())
        .await;
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains("levels deep: at most 100 can be stored and read back"), "{message}");
    // The probe's depth, deeper than JSON bodies may be but taken as YAML.
    let mut deeper = nested(126);
    deeper["metadata"] = json!({"name": "deep"});
    let (code, status) = server
        .request("PATCH", &apply("deep"), "application/apply-patch+yaml", deeper.to_string().as_bytes())
        .await;
    assert_eq!(code, 422, "{status}");
    let (code, _) = server.request("GET", &format!("{nests}/deep"), "application/json", b"").await;
    assert_eq!(code, 404);
    let (code, list) = server.request("GET", nests, "application/json", b"").await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    let (code, _) = server.request("DELETE", &format!("{nests}/shallow"), "application/json", b"").await;
    assert_eq!(code, 200);
}

/// A field given twice in one object is a strict decoding error, as kube's decoder reports it:
/// the request is refused under `fieldValidation=Strict` (with the unknown fields), warned about
/// under the default `Warn`, and the last value is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_fields_are_reported_as_kube_reports_them() {
    let server = Server::start(Backend::Rtcd, false, &[]).await;
    let configmaps = "/api/v1/namespaces/default/configmaps";
    // (kube lists strict errors in the order it meets them; rtcd lists the
    // duplicates first, so this body meets them first.)
    let twice = br#"{"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "a": "2"},
        "metadata": {"name": "twice", "bogus": 1}}"#;
    let (code, status) = server
        .request("POST", &format!("{configmaps}?fieldValidation=Strict"), "application/json", twice)
        .await;
    assert_status(
        &(code, status),
        400,
        "BadRequest",
        "strict decoding error: duplicate field \"data.a\", unknown field \"metadata.bogus\"",
    );
    let raw = server.send_request("POST", configmaps, "application/json", twice).await;
    assert!(raw.starts_with("HTTP/1.1 201 "), "{raw}");
    assert!(raw.contains("warning: 299 - \"duplicate field \\\"data.a\\\"\"\r\n"), "{raw}");
    let (_, stored) = server.request("GET", &format!("{configmaps}/twice"), "application/json", b"").await;
    assert_eq!(stored["data"], json!({"a": "2"}));
}

/// Errors that would repeat a request many times over are answered within a mebibyte: a
/// thousand values outside a 50,000-value enum (kube: a 1.3 GB answer), and an apply
/// conflicting on 40,000 fields (kube: one cause and one message line each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_answers_stay_under_a_mebibyte() {
    let server = Server::start(Backend::Rtcd, false, &[]).await;
    let allowed: Vec<String> = (0..50_000).map(|i| format!("value-{i}")).collect();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "choices.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "choices", "singular": "choice", "kind": "Choice", "listKind": "ChoiceList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "picks": {"type": "array", "items": {"type": "string", "enum": allowed}}}}}}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let created = server.request("POST", crds, "application/json", crd.to_string().as_bytes()).await;
    assert_eq!(created.0, 201, "{}", created.1);
    let choice = json!({"apiVersion": "example.com/v1", "kind": "Choice", "metadata": {"name": "c"},
        "spec": {"picks": vec!["outside"; 1000]}});
    let choices = "/apis/example.com/v1/namespaces/default/choices";
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let answer = loop {
        let answer =
            server.send_request("POST", choices, "application/json", choice.to_string().as_bytes()).await;
        if answer.starts_with("HTTP/1.1 422") || std::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert!(answer.len() < 1 << 20, "{} bytes", answer.len());
    let (code, status) = parse_response(answer.as_bytes());
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "Choice.example.com \"c\" is invalid: [spec.picks[0]: Unsupported value: \"outside\": \
             supported values: \"value-0\", \"value-1\""
        ),
        "{}",
        &message[..message.len().min(300)]
    );
    let causes = status["details"]["causes"].as_array().cloned().unwrap_or_default();
    assert_eq!(causes[1]["field"], "spec.picks[1]");
    assert!(causes.last().unwrap()["message"].as_str().unwrap().ends_with("more causes not shown"));

    let data: serde_json::Map<String, Value> =
        (0..40_000).map(|i| (format!("key-{i}"), json!("a"))).collect();
    let config_map =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held"}, "data": data})
            .to_string();
    let path = |manager: &str| format!("/api/v1/namespaces/default/configmaps/held?fieldManager={manager}");
    let (code, _) =
        server.request("PATCH", &path("first"), "application/apply-patch+yaml", config_map.as_bytes()).await;
    assert_eq!(code, 201);
    let changed = config_map.replace("\"a\"", "\"b\"");
    let answer = server
        .send_request("PATCH", &path("second"), "application/apply-patch+yaml", changed.as_bytes())
        .await;
    assert!(answer.len() < 1 << 20, "{} bytes", answer.len());
    let (code, status) = parse_response(answer.as_bytes());
    assert_eq!(code, 409, "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Apply failed with 40000 conflicts: conflicts with \"first\""),
        "{}",
        &message[..200]
    );
    assert!(message.contains(" bytes not shown) ..."), "{}", &message[message.len() - 100..]);
    assert!(message.ends_with(".data.key-9999"), "{}", &message[message.len() - 100..]);
}

/// The watch caches' windows are bounded in bytes (`--watch-cache-window-bytes`), not only by
/// count: past the bound the busy resource drops its oldest events, and a watch resuming from
/// before them gets kube's 410 to relist; recent revisions still resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_cache_windows_are_bounded_in_bytes() {
    let server = Server::start(Backend::Rtcd, false, &["--watch-cache-window-bytes=1048576"]).await;
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let big = "x".repeat(100 * 1024);
    let body = json!({"metadata": {"name": "big"}, "data": {"a": big}}).to_string();
    let (code, created) = server.request("POST", configmaps, "application/json", body.as_bytes()).await;
    assert_eq!(code, 201, "{created}");
    let first = created["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string();
    let mut last = String::new();
    for i in 0..20 {
        let patch = json!({"data": {"a": format!("{}{i:04}", &big[4..])}}).to_string();
        let path = format!("{configmaps}/big");
        let (code, patched) =
            server.request("PATCH", &path, "application/merge-patch+json", patch.as_bytes()).await;
        assert_eq!(code, 200, "{patched}");
        last = patched["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string();
    }
    // (The cache sees the last patch a moment after it is answered.)
    tokio::time::sleep(Duration::from_secs(1)).await;
    let watch = |rv: &str| format!("{configmaps}?watch=true&resourceVersion={rv}&timeoutSeconds=1");
    let answer = server.send_request("GET", &watch(&first), "application/json", b"").await;
    assert!(answer.contains("too old resource version"), "{}", &answer[..answer.len().min(400)]);
    assert!(answer.contains("\"code\":410"), "{}", &answer[..answer.len().min(400)]);
    let answer = server.send_request("GET", &watch(&last), "application/json", b"").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", &answer[..answer.len().min(400)]);
    assert!(!answer.contains("too old resource version"));
}

/// An object etcd finds too large (over its 1.5 MiB `--max-request-bytes`) is written again
/// without its managedFields, as kube's create, update and patch handlers do; a server-side
/// apply, which is about its managers, is not, and gets etcd's words in a 500 with no reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_too_large_for_etcd_lose_their_managed_fields_as_in_kube() {
    let server = Server::start(Backend::Rtcd, false, &[]).await;
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "bulks.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "bulks", "singular": "bulk", "kind": "Bulk", "listKind": "BulkList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let created = server.request("POST", crds, "application/json", crd.to_string().as_bytes()).await;
    assert_eq!(created.0, 201, "{}", created.1);
    // 70,000 fields: 0.8 MB of spec and 0.9 MB of managedFields.
    let spec: serde_json::Map<String, Value> = (0..70_000).map(|i| (format!("k{i:05}"), json!(1))).collect();
    let bulk = |name: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Bulk", "metadata": {"name": name}, "spec": spec})
            .to_string()
    };
    let bulks = "/apis/example.com/v1/namespaces/default/bulks";
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let (code, stored) = loop {
        let answer = server
            .request("POST", &format!("{bulks}?fieldManager=maker"), "application/json", bulk("a").as_bytes())
            .await;
        if answer.0 != 404 || std::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(code, 201, "{}", &stored.to_string()[..stored.to_string().len().min(300)]);
    assert!(stored["metadata"].get("managedFields").is_none(), "stored with its managers");
    assert_eq!(stored["spec"]["k69999"], 1);
    // A replacement by another manager would own every field again: dropped likewise.
    let mut replaced = stored.clone();
    replaced["metadata"]["labels"] = json!({"by": "putter"});
    let put = format!("{bulks}/a?fieldManager=putter");
    let (code, updated) =
        server.request("PUT", &put, "application/json", replaced.to_string().as_bytes()).await;
    assert_eq!(code, 200, "{}", &updated.to_string()[..updated.to_string().len().min(300)]);
    assert_eq!(updated["metadata"]["labels"]["by"], "putter");
    assert!(updated["metadata"].get("managedFields").is_none(), "updated with its managers");

    let apply = format!("{bulks}/b?fieldManager=applier");
    let (code, status) =
        server.request("PATCH", &apply, "application/apply-patch+yaml", bulk("b").as_bytes()).await;
    assert_eq!(code, 500, "{status}");
    assert_eq!(status["message"], "etcdserver: request is too large");
    assert!(status.get("reason").is_none(), "{status}");
    let (code, _) = server.request("GET", &format!("{bulks}/b"), "application/json", b"").await;
    assert_eq!(code, 404);
}
