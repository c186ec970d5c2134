//! TLS with certificates made by openssl, against rtcd and real etcd side
//! by side: etcdctl with `--cacert --cert --key`, clients without a
//! certificate, with an untrusted CA or over http:// to a TLS listener, the
//! certificate's common name as the user when auth is on; certificates
//! replaced while serving; peers over TLS; garbage handshakes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::{Kind, Member, etcdctl, fresh_urls_with, spawn_cluster};

/// A CA and certificates it signed (for 127.0.0.1 and localhost, usable by
/// servers and clients), made with openssl in `dir`.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn openssl(&self, args: &[&str]) {
        let out = Command::new("openssl").current_dir(&self.dir).args(args).output().expect("openssl");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// A self-signed CA `name`.
    fn ca(&self, name: &str) {
        let (key, pem, subject) = (format!("{name}.key"), format!("{name}.pem"), format!("/CN={name}"));
        let args = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &pem];
        self.openssl(&[&args[..], &["-days", "30", "-subj", &subject]].concat());
    }

    /// A certificate with common name `cn` signed by CA `ca`.
    fn cert(&self, name: &str, cn: &str, ca: &str) {
        let (key, csr, pem, ext) =
            (format!("{name}.key"), format!("{name}.csr"), format!("{name}.pem"), format!("{name}.ext"));
        let subject = format!("/CN={cn}");
        self.openssl(&[
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj", &subject,
        ]);
        let mut f = std::fs::File::create(self.dir.join(&ext)).unwrap();
        writeln!(f, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth")
            .unwrap();
        let (ca_pem, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_pem,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &pem,
            "-days",
            "30",
            "-extfile",
            &ext,
        ]);
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    /// etcdctl's flags for the client certificate `name`, trusting `ca`.
    fn client(&self, ca: &str, name: Option<&str>) -> Vec<String> {
        let mut flags = vec!["--cacert".into(), self.path(&format!("{ca}.pem"))];
        if let Some(name) = name {
            flags.extend(["--cert".into(), self.path(&format!("{name}.pem"))]);
            flags.extend(["--key".into(), self.path(&format!("{name}.key"))]);
        }
        flags
    }
}

fn make_pki(dir: &Path) -> Pki {
    let pki = Pki { dir: dir.to_path_buf() };
    pki.ca("ca");
    pki.ca("other-ca");
    pki.cert("server", "server", "ca");
    pki.cert("root", "root", "ca");
    pki.cert("alice", "alice", "ca");
    pki.cert("stranger", "root", "other-ca");
    pki
}

/// Server flags for client TLS with client certificates required.
fn server_flags(pki: &Pki) -> Vec<String> {
    [
        "--cert-file",
        &pki.path("server.pem"),
        "--key-file",
        &pki.path("server.key"),
        "--trusted-ca-file",
        &pki.path("ca.pem"),
        "--client-cert-auth",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn start_tls(kind: Kind, flags: &[String], peer_scheme: &str, size: usize) -> Vec<Member> {
    let urls = (0..size).map(|_| fresh_urls_with("https", peer_scheme)).collect();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    spawn_cluster(kind, urls, &flags)
}

/// etcdctl through `endpoint` with `flags`, as (success, stdout, error line).
fn run(endpoint: &str, flags: &[String], args: &[&str]) -> (bool, String, String) {
    let mut all: Vec<&str> = flags.iter().map(String::as_str).collect();
    all.extend(["--dial-timeout", "2s"]);
    all.extend(args);
    let out = etcdctl(endpoint, &all, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let error = stderr.lines().filter(|l| l.starts_with("Error:")).collect::<Vec<_>>().join("\n");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), error)
}

fn wait_serving(member: &Member, flags: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !run(&member.client_url, flags, &["get", "x"]).0 {
        assert!(Instant::now() < deadline, "{} did not serve over TLS", member.client_url);
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn tls_clients_are_served_and_refused_as_etcd_does() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path());
    let flags = server_flags(&pki);
    let rtcd = start_tls(Kind::Rtcd, &flags, "http", 1).pop().unwrap();
    let etcd = start_tls(Kind::Etcd, &flags, "http", 1).pop().unwrap();
    let root = pki.client("ca", Some("root"));
    let alice = pki.client("ca", Some("alice"));
    let mut sessions = Vec::new();
    for member in [&rtcd, &etcd] {
        wait_serving(member, &root);
        let url = member.client_url.as_str();
        let plain = url.replacen("https://", "http://", 1);
        let host_port = url.trim_start_matches("https://");
        let none: Vec<String> = Vec::new();
        sessions.push(vec![
            run(url, &root, &["put", "k", "v"]),
            run(url, &root, &["get", "k"]),
            // Health is reported on stderr, with the endpoint: only whether.
            (run(host_port, &root, &["endpoint", "health"]).0, String::new(), String::new()),
            // No client certificate where one is required; a server
            // certificate from a CA the client does not trust; a client
            // certificate from a CA the server does not trust; plain text.
            run(url, &pki.client("ca", None), &["get", "k"]),
            run(url, &pki.client("other-ca", Some("root")), &["get", "k"]),
            run(url, &pki.client("ca", Some("stranger")), &["get", "k"]),
            run(&plain, &none, &["get", "k"]),
            // With auth on, the certificate's common name is the user.
            run(url, &root, &["user", "add", "root:pw"]),
            run(url, &root, &["role", "add", "root"]),
            run(url, &root, &["user", "grant-role", "root", "root"]),
            run(url, &root, &["user", "add", "alice:pw"]),
            run(url, &root, &["auth", "enable"]),
            // The JSON gateway refuses a certificate with a common name.
            gateway_range(&pki, url, "root"),
            run(url, &alice, &["get", "k"]),
            run(url, &alice, &["put", "k", "w"]),
            run(url, &root, &["put", "k", "w"]),
            run(url, &root, &["role", "add", "reader"]),
            run(url, &root, &["role", "grant-permission", "reader", "read", "k"]),
            run(url, &root, &["user", "grant-role", "alice", "reader"]),
            run(url, &alice, &["get", "k"]),
            // A token names the user before the certificate does.
            run(url, &alice, &["--user", "root:pw", "put", "k", "x"]),
            run(url, &root, &["auth", "disable"]),
            gateway_range(&pki, url, "root"),
        ]);
    }
    for (i, (ours, theirs)) in sessions[0].iter().zip(&sessions[1]).enumerate() {
        assert_eq!(ours, theirs, "step {i}: rtcd vs etcd");
    }
    assert!(sessions[0][0].0, "a client with a certificate is served");
    assert!(!sessions[0][3].0 && !sessions[0][6].0, "without a certificate or TLS, no");
    let refused = &sessions[0][12];
    assert_eq!(refused.2, "400", "{refused:?}");
    assert!(refused.1.starts_with("CommonName of client"), "{refused:?}");
    assert_eq!(sessions[0].last().unwrap().2, "200", "served once auth is off");
}

/// `POST /v3/kv/range` through the JSON gateway with client certificate
/// `cert`, as (served, the body when refused, the HTTP status).
fn gateway_range(pki: &Pki, url: &str, cert: &str) -> (bool, String, String) {
    let out = Command::new("curl")
        .args(["-sS", "-w", "\n%{http_code}", "--cacert", &pki.path("ca.pem")])
        .args(["--cert", &pki.path(&format!("{cert}.pem")), "--key", &pki.path(&format!("{cert}.key"))])
        .args(["-X", "POST", &format!("{url}/v3/kv/range"), "-d", r#"{"key":"aw=="}"#])
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or_default();
    // No answer at all: curl's word for why, so a failure says it.
    let refused_body = match status {
        "200" => String::new(),
        "000" => String::from_utf8_lossy(&out.stderr).into_owned(),
        _ => body.to_owned(),
    };
    (status == "200", refused_body, status.to_owned())
}

/// A certificate replaced on disk serves new connections at once, as etcd
/// reads its files at each handshake.
#[test]
fn replaced_certificates_serve_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path());
    // The member serves copies, replaced below.
    let (cert, key) = (dir.path().join("live.pem"), dir.path().join("live.key"));
    std::fs::copy(dir.path().join("server.pem"), &cert).unwrap();
    std::fs::copy(dir.path().join("server.key"), &key).unwrap();
    let flags: Vec<String> =
        ["--cert-file", &cert.display().to_string(), "--key-file", &key.display().to_string()]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let rtcd = start_tls(Kind::Rtcd, &flags, "http", 1).pop().unwrap();
    let trusts_ca = pki.client("ca", None);
    let trusts_other = pki.client("other-ca", None);
    wait_serving(&rtcd, &trusts_ca);
    assert!(!run(&rtcd.client_url, &trusts_other, &["get", "x"]).0);

    pki.cert("next", "server", "other-ca");
    std::fs::copy(dir.path().join("next.pem"), &cert).unwrap();
    std::fs::copy(dir.path().join("next.key"), &key).unwrap();
    assert!(run(&rtcd.client_url, &trusts_other, &["put", "x", "1"]).0, "the new certificate serves");
    assert!(!run(&rtcd.client_url, &trusts_ca, &["get", "x"]).0, "the old one is gone");
}

/// Three members whose peer URLs are https:// with peer certificates
/// required and their common name checked: writes replicate; a TLS
/// handshake of garbage is dropped and the member serves on.
#[test]
fn peers_talk_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path());
    pki.cert("peer", "peer", "ca");
    let mut flags = server_flags(&pki);
    flags.extend(
        [
            "--peer-cert-file",
            &pki.path("peer.pem"),
            "--peer-key-file",
            &pki.path("peer.key"),
            "--peer-trusted-ca-file",
            &pki.path("ca.pem"),
            "--peer-client-cert-auth",
            "--peer-cert-allowed-cn",
            "peer",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let cluster = start_tls(Kind::Rtcd, &flags, "https", 3);
    let root = pki.client("ca", Some("root"));
    for member in &cluster {
        wait_serving(member, &root);
    }
    assert!(run(&cluster[0].client_url, &root, &["put", "k", "replicated"]).0);
    for member in &cluster {
        let got = run(&member.client_url, &root, &["get", "k", "--print-value-only"]);
        assert_eq!(got.1.trim(), "replicated", "through {}", member.name);
    }

    // Garbage where a ClientHello belongs, on both kinds of port.
    for url in [&cluster[0].client_url, &cluster[0].peer_url] {
        let addr = url.trim_start_matches("https://");
        let mut socket = std::net::TcpStream::connect(addr).unwrap();
        socket.write_all(&[0x16, 0x03, 0x01, 0xff, 0xff, 0xde, 0xad, 0xbe, 0xef]).unwrap();
        socket.write_all(&vec![0x42; 70_000]).unwrap_or(());
    }
    assert!(run(&cluster[0].client_url, &root, &["put", "k", "after"]).0, "still serving");
}

/// `--auto-tls`: a self-signed certificate made in the data dir; clients
/// that skip verification are served, clients that verify are not, on both.
#[test]
fn auto_tls_serves_a_self_signed_certificate() {
    let flags = vec!["--auto-tls".to_string()];
    let rtcd = start_tls(Kind::Rtcd, &flags, "http", 1).pop().unwrap();
    let etcd = start_tls(Kind::Etcd, &flags, "http", 1).pop().unwrap();
    // etcdctl 3.4 dials without TLS unless told otherwise or given a file.
    let skip = vec!["--insecure-transport=false".to_string(), "--insecure-skip-tls-verify".to_string()];
    let mut answers = Vec::new();
    for member in [&rtcd, &etcd] {
        wait_serving(member, &skip);
        let verify = vec!["--insecure-transport=false".to_string()];
        answers.push((
            run(&member.client_url, &skip, &["put", "k", "v"]),
            run(&member.client_url, &verify, &["get", "k"]),
        ));
    }
    assert_eq!(answers[0], answers[1], "rtcd vs etcd");
    assert!(answers[0].0.0 && !answers[0].1.0, "{answers:?}");
    assert!(rtcd.data_dir().join("fixtures/client/cert.pem").exists());
}

/// `--peer-auto-tls`: members make self-signed peer certificates and talk
/// over TLS without verifying each other's, as etcd's do; writes replicate.
#[test]
fn peer_auto_tls_links_members_with_self_signed_certificates() {
    for kind in [Kind::Rtcd, Kind::Etcd] {
        let urls = (0..3).map(|_| fresh_urls_with("http", "https")).collect();
        let cluster = spawn_cluster(kind, urls, &["--peer-auto-tls"]);
        for member in &cluster {
            crate::harness::wait_healthy(member);
        }
        assert!(run(&cluster[0].client_url, &[], &["put", "k", "over-tls"]).0, "{kind:?}");
        let got = run(&cluster[2].client_url, &[], &["get", "k", "--print-value-only"]);
        assert_eq!(got.1.trim(), "over-tls", "{kind:?}");
        let members = run(&cluster[1].client_url, &[], &["member", "list"]).1;
        assert_eq!(members.matches("https://").count(), 3, "{kind:?}: {members}");
        assert!(cluster[0].data_dir().join("fixtures/peer/cert.pem").exists(), "{kind:?}");
    }
}

/// The cipher suite `openssl s_client` agrees on with `member`, given its
/// own options (`-tls1_2 -cipher ...`); "(NONE)" when the handshake fails.
fn negotiated(member: &Member, ca: &str, options: &[&str]) -> String {
    let addr = member.client_url.trim_start_matches("https://");
    let out = Command::new("openssl")
        .args(["s_client", "-connect", addr, "-CAfile", ca])
        .args(options)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("openssl s_client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let cipher = stdout.lines().find_map(|l| l.split_once("Cipher is ").map(|(_, c)| c.trim().to_owned()));
    cipher.unwrap_or_else(|| "(NONE)".into())
}

/// `--cipher-suites` limits TLS 1.2 to the named suites and leaves TLS 1.3
/// alone, as etcd (Go) does; an unknown name stops the server with etcd's
/// text; rtcd refuses the weak suites rustls does not offer.
#[test]
fn cipher_suites_limit_tls12_as_etcds() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path());
    let mut flags: Vec<String> = server_flags(&pki)[..4].to_vec();
    flags.extend(["--cipher-suites".into(), "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()]);
    let ca = pki.path("ca.pem");
    let mut answers = Vec::new();
    for kind in [Kind::Rtcd, Kind::Etcd] {
        let member = start_tls(kind, &flags, "http", 1).pop().unwrap();
        wait_serving(&member, &pki.client("ca", None));
        answers.push([
            negotiated(&member, &ca, &["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"]),
            negotiated(&member, &ca, &["-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"]),
            negotiated(&member, &ca, &["-tls1_3"]),
        ]);
    }
    // Which TLS 1.3 suite is preferred differs (Go: AES-128 first; ring:
    // AES-256); that one is negotiated is what matters.
    for answer in &mut answers {
        answer[2] = answer[2].starts_with("TLS_").to_string();
    }
    assert_eq!(answers[0], answers[1], "rtcd vs etcd");
    assert_eq!(answers[0], ["ECDHE-RSA-AES128-GCM-SHA256", "(NONE)", "true"]);

    let refused = |suite: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_rtcd"))
            .args(["--data-dir", &dir.path().join("never").display().to_string(), "--cipher-suites", suite])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{suite} accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(refused("TLS_BOGUS").contains("unexpected TLS cipher suite \"TLS_BOGUS\""));
    assert!(refused("TLS_RSA_WITH_AES_128_CBC_SHA").contains("not offered by rustls"));
}

/// `--tls-min-version` and `--tls-max-version` (etcd 3.5's flags; 3.4 has
/// none to compare with): the versions outside are refused at handshake.
#[test]
fn tls_versions_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path());
    let ca = pki.path("ca.pem");
    for (bound, allowed, refused) in
        [("--tls-min-version", "-tls1_3", "-tls1_2"), ("--tls-max-version", "-tls1_2", "-tls1_3")]
    {
        let mut flags: Vec<String> = server_flags(&pki)[..4].to_vec();
        let version = if bound == "--tls-min-version" { "TLS1.3" } else { "TLS1.2" };
        flags.extend([bound.to_string(), version.to_string()]);
        let member = start_tls(Kind::Rtcd, &flags, "http", 1).pop().unwrap();
        wait_serving(&member, &pki.client("ca", None));
        assert_ne!(negotiated(&member, &ca, &[allowed]), "(NONE)", "{bound} {version} with {allowed}");
        assert_eq!(negotiated(&member, &ca, &[refused]), "(NONE)", "{bound} {version} with {refused}");
    }
}
