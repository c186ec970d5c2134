//! Real processes for the tests: one etcd member (rtcd from this build, or
//! Debian's etcd), rtcd-apiserver on top, and real kubectl and Python
//! clients from the project's venv (scripts/install-deps.sh).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rtcd_apiserver::storage::Etcd3Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Rtcd,
    Etcd,
}

/// A child process killed when dropped.
pub struct Process(Child);

impl Process {
    pub fn spawn(command: &mut Command) -> Process {
        Process(command.spawn().unwrap())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Ports handed out by this test process, never twice: a port freed by
/// one test's member must not be taken by another's while still in use.
static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());

pub fn free_port() -> u16 {
    loop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut given = GIVEN.lock().unwrap();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The directory of this build's binaries (target/debug).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// One etcd member serving clients on loopback.
pub struct Member {
    _process: Process,
    _dir: tempfile::TempDir,
    pub url: String,
    /// The TLS files of a member serving `https://`.
    pub tls: Option<EtcdTls>,
}

/// An etcd CA and the certificates signed by it, made by rtcd's pki with
/// kubeadm's names: `etcd-ca.crt`, `etcd-server.{crt,key}` (for
/// 127.0.0.1) and the API server's `apiserver-etcd-client.{crt,key}`.
#[derive(Debug, Clone)]
pub struct EtcdTls {
    pub dir: PathBuf,
}

impl EtcdTls {
    pub fn make(dir: &Path) -> EtcdTls {
        use rtcd_apiserver::pki::Authority;
        let mut created = Vec::new();
        let ca = Authority::load_or_create(dir, "etcd-ca", "etcd-ca", &mut created).unwrap();
        ca.ensure_serving(dir, "etcd-server", "etcd", &["127.0.0.1".into()], &mut created).unwrap();
        ca.ensure_client(dir, "apiserver-etcd-client", "kube-apiserver-etcd-client", &[], &mut created)
            .unwrap();
        EtcdTls { dir: dir.to_path_buf() }
    }

    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// rtcd-apiserver's flags for a member with these files.
    pub fn apiserver_flags(&self) -> Vec<String> {
        vec![
            format!("--etcd-cafile={}", self.file("etcd-ca.crt")),
            format!("--etcd-certfile={}", self.file("apiserver-etcd-client.crt")),
            format!("--etcd-keyfile={}", self.file("apiserver-etcd-client.key")),
        ]
    }
}

impl Member {
    pub async fn start(backend: Backend) -> Member {
        let program = match backend {
            Backend::Rtcd => {
                let bin = bin_dir().join("rtcd");
                assert!(
                    bin.exists(),
                    "{} missing: build the workspace (cargo test --workspace)",
                    bin.display()
                );
                bin
            }
            Backend::Etcd => PathBuf::from("etcd"),
        };
        Self::spawn(program, None).await
    }

    /// Debian's etcd serving clients over TLS and asking each for a
    /// certificate signed by `tls`'s CA (`--client-cert-auth`).
    pub async fn start_etcd_tls(tls: EtcdTls) -> Member {
        Self::spawn(PathBuf::from("etcd"), Some(tls)).await
    }

    async fn spawn(program: PathBuf, tls: Option<EtcdTls>) -> Member {
        Self::spawn_with(program, tls, &[], Stdio::null()).await
    }

    /// As `spawn`, with `extra` arguments after the member's flags and its
    /// standard error to `stderr`.
    async fn spawn_with(program: PathBuf, tls: Option<EtcdTls>, extra: &[String], stderr: Stdio) -> Member {
        let dir = tempfile::tempdir().unwrap();
        let (client, peer) = (free_port(), free_port());
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let mut command = Command::new(&program);
        command
            .args(["--name", "s", "--data-dir"])
            .arg(dir.path())
            .args(["--listen-client-urls", &url, "--advertise-client-urls", &url])
            .args(["--listen-peer-urls", &peer_url, "--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("s={peer_url}")]);
        if let Some(tls) = &tls {
            command
                .args([
                    "--cert-file",
                    &tls.file("etcd-server.crt"),
                    "--key-file",
                    &tls.file("etcd-server.key"),
                ])
                .args(["--client-cert-auth", "--trusted-ca-file", &tls.file("etcd-ca.crt")]);
        }
        let child = command
            .args(extra)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("{program:?} (scripts/install-deps.sh installs etcd): {e}"));
        let member = Member { _process: Process(child), _dir: dir, url, tls };
        let store = Etcd3Store::new(member.channel());
        let deadline = Instant::now() + Duration::from_secs(30);
        while store.get("/health").await.is_err() {
            assert!(Instant::now() < deadline, "{program:?} never answered");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        member
    }

    /// A channel to this member, as the API server makes it from its flags.
    pub fn channel(&self) -> rtcd_apiserver::storage::Endpoints {
        let mut args = vec!["rtcd-apiserver".to_string(), format!("--etcd-servers={}", self.url)];
        args.extend(self.tls.iter().flat_map(EtcdTls::apiserver_flags));
        let options = <rtcd_apiserver::options::Options as clap::Parser>::try_parse_from(args).unwrap();
        rtcd_apiserver::server::etcd::channel(&options.etcd).unwrap()
    }
}

/// The bearer token of the administrator the HTTPS servers know.
pub const ADMIN_TOKEN: &str = "rtcd-test-admin-token";

/// rtcd-apiserver on a member, with a kubeconfig for the clients.
pub struct ApiServer {
    pub member: Member,
    process: Option<Process>,
    pub url: String,
    pub dir: tempfile::TempDir,
}

impl ApiServer {
    pub async fn start(backend: Backend) -> ApiServer {
        Self::start_with(backend, false).await
    }

    /// With `tls`, HTTPS with a fresh self-signed certificate for
    /// 127.0.0.1 (made with openssl), which the kubeconfig trusts.
    pub async fn start_with(backend: Backend, tls: bool) -> ApiServer {
        Self::start_prepared(backend, tls, |_| {}).await
    }

    /// As `start_with`, with `prepare` run on the server's directory before
    /// it starts (a `client-ca.crt` there is given as `--client-ca-file`,
    /// a `tokens.csv` as `--token-auth-file`, and the lines of a `flags`
    /// file as further flags).
    pub async fn start_prepared(backend: Backend, tls: bool, prepare: impl FnOnce(&Path)) -> ApiServer {
        Self::start_on(Member::start(backend).await, tls, prepare).await
    }

    /// As `start_prepared`, on a member already started.
    pub async fn start_on(member: Member, tls: bool, prepare: impl FnOnce(&Path)) -> ApiServer {
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        if tls {
            make_certificate(dir.path());
            // The kubeconfig's token: an administrator (kubectl asks for a
            // password when it has no credentials for an HTTPS server).
            std::fs::write(
                dir.path().join("tokens.csv"),
                format!("{ADMIN_TOKEN},admin,admin-uid,system:masters\n"),
            )
            .unwrap();
        }
        prepare(dir.path());
        let process = spawn_apiserver(&member, port, dir.path());
        let scheme = if tls { "https" } else { "http" };
        let url = format!("{scheme}://127.0.0.1:{port}");
        let server = ApiServer { member, process: Some(process), url, dir };
        server.write_kubeconfig();
        server.wait_ready().await;
        server
    }

    /// rtcd-combined: a member with the API server in its process (plain
    /// HTTP); `member` is then that process, and there is no other.
    pub async fn start_combined() -> ApiServer {
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("apiserver.log")).unwrap();
        let apiserver = ["--".to_string(), format!("--secure-port={port}"), "--plain-http".to_string()];
        let program = bin_dir().join("rtcd-combined");
        assert!(
            program.exists(),
            "{} missing: build the workspace (cargo test --workspace)",
            program.display()
        );
        let member = Member::spawn_with(program, None, &apiserver, Stdio::from(log)).await;
        let url = format!("http://127.0.0.1:{port}");
        let server = ApiServer { member, process: None, url, dir };
        server.write_kubeconfig();
        server.wait_ready().await;
        server
    }

    /// Stops the apiserver (its etcd member goes on); `restart` starts it
    /// again.
    pub fn stop(&mut self) {
        self.process = None;
    }

    /// Stops the apiserver and starts a new one on the same port and etcd:
    /// its caches start from etcd's current state.
    pub async fn restart(&mut self) {
        let port: u16 = self.url.rsplit(':').next().unwrap().parse().unwrap();
        self.process = None;
        self.process = Some(spawn_apiserver(&self.member, port, self.dir.path()));
        self.wait_ready().await;
    }

    fn write_kubeconfig(&self) {
        let config = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: rtcd\n  cluster:\n    server: {}\n{}users:\n- name: admin\n  user: {}\ncontexts:\n- name: rtcd\n  context:\n    cluster: rtcd\n    user: admin\n    namespace: default\ncurrent-context: rtcd\n",
            self.url,
            self.ca().map(|ca| format!("    certificate-authority: {}\n", ca.display())).unwrap_or_default(),
            if self.ca().is_some() { format!("{{token: {ADMIN_TOKEN}}}") } else { "{}".to_string() },
        );
        std::fs::write(self.kubeconfig(), config).unwrap();
    }

    /// The certificate the server serves, when it serves HTTPS.
    pub fn ca(&self) -> Option<PathBuf> {
        Some(self.dir.path().join("tls.crt")).filter(|p| p.exists())
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// Waits until the server answers, the default namespace exists and `/readyz` says ready
    /// (the bootstrap RBAC policy is in).
    async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let namespace = self.kubectl(&["get", "namespace", "default", "-o", "name"]);
            if namespace.status.success() && self.kubectl(&["get", "--raw", "/readyz"]).status.success() {
                return;
            }
            assert!(Instant::now() < deadline, "apiserver never became ready: {}", self.log());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("apiserver.log")).unwrap_or_default()
    }

    /// Runs the venv's kubectl against this server.
    /// Waits (30 s at most) until `check` holds for what `kubectl args`
    /// prints, and answers it.
    pub async fn eventually(&self, args: &[&str], check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = self.kubectl(args);
            let printed = String::from_utf8_lossy(&out.stdout).into_owned();
            if out.status.success() && check(&printed) {
                return printed;
            }
            assert!(Instant::now() < deadline, "kubectl {args:?} never as awaited: {printed}");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_with(args, None, &[])
    }

    /// kubectl with `stdin` and extra environment variables.
    pub fn kubectl_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
        self.kubectl_config(&self.kubeconfig(), args, stdin, env)
    }

    /// Writes `<who>.kubeconfig`: this server, trusted, with `user` (the
    /// kubeconfig `user:` fields, as YAML flow) as the credentials.
    pub fn add_identity(&self, who: &str, user: &str) {
        let config = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: rtcd\n  cluster:\n    server: {}\n{}users:\n- name: {who}\n  user: {user}\ncontexts:\n- name: rtcd\n  context:\n    cluster: rtcd\n    user: {who}\n    namespace: default\ncurrent-context: rtcd\n",
            self.url,
            self.ca().map(|ca| format!("    certificate-authority: {}\n", ca.display())).unwrap_or_default(),
        );
        std::fs::write(self.dir.path().join(format!("{who}.kubeconfig")), config).unwrap();
    }

    /// kubectl as an identity written by `add_identity`.
    pub fn kubectl_as(&self, who: &str, args: &[&str]) -> Output {
        self.kubectl_config(&self.dir.path().join(format!("{who}.kubeconfig")), args, None, &[])
    }

    fn kubectl_config(
        &self,
        config: &Path,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> Output {
        let mut command = Command::new(venv_bin("kubectl"));
        command
            .arg(format!("--kubeconfig={}", config.display()))
            .arg(format!("--cache-dir={}", self.dir.path().join("kube-cache").display()))
            .args(args)
            .envs(env.iter().copied())
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("kubectl (scripts/install-deps.sh installs it in the venv)");
        if let Some(input) = stdin {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        }
        child.wait_with_output().unwrap()
    }

    /// kubectl that must succeed; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs a Python script with the official client, KUBECONFIG set.
    pub fn python(&self, script: &str, args: &[&str]) -> Output {
        Command::new(venv_bin("python"))
            .arg("-c")
            .arg(script)
            .args(args)
            .env("KUBECONFIG", self.kubeconfig())
            .output()
            .unwrap()
    }
}

fn spawn_apiserver(member: &Member, port: u16, dir: &Path) -> Process {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("apiserver.log")).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"));
    command.arg(format!("--etcd-servers={}", member.url)).arg(format!("--secure-port={port}"));
    command.args(member.tls.iter().flat_map(EtcdTls::apiserver_flags));
    if dir.join("tls.crt").exists() {
        command.arg(format!("--tls-cert-file={}", dir.join("tls.crt").display()));
        command.arg(format!("--tls-private-key-file={}", dir.join("tls.key").display()));
    } else {
        command.arg("--plain-http");
    }
    if dir.join("client-ca.crt").exists() {
        command.arg(format!("--client-ca-file={}", dir.join("client-ca.crt").display()));
    }
    if dir.join("tokens.csv").exists() {
        command.arg(format!("--token-auth-file={}", dir.join("tokens.csv").display()));
    }
    if let Ok(extra) = std::fs::read_to_string(dir.join("flags")) {
        command.args(extra.lines().filter(|l| !l.is_empty()));
    }
    let child = command.stdout(Stdio::null()).stderr(log).spawn().unwrap();
    Process(child)
}

/// A self-signed certificate for 127.0.0.1 in `dir` (tls.crt, tls.key).
pub fn make_certificate(dir: &Path) {
    let (key, crt) = (dir.join("tls.key"), dir.join("tls.crt"));
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=rtcd-apiserver",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        &key.display().to_string(),
        "-out",
        &crt.display().to_string(),
    ]);
}

/// A CA (`<name>.crt`, `<name>.key`) in `dir`.
pub fn make_ca(dir: &Path, name: &str, cn: &str) {
    let key = dir.join(format!("{name}.key"));
    let crt = dir.join(format!("{name}.crt"));
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "1",
        "-subj",
        &format!("/CN={cn}"),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout",
        &key.display().to_string(),
        "-out",
        &crt.display().to_string(),
    ]);
}

/// A client certificate (`<name>.crt`, `<name>.key`) signed by CA `ca`.
pub fn make_client(dir: &Path, ca: &str, name: &str, subject: &str) {
    let path = |file: String| dir.join(file).display().to_string();
    openssl(&[
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        subject,
        "-keyout",
        &path(format!("{name}.key")),
        "-out",
        &path(format!("{name}.csr")),
    ]);
    let extensions = dir.join(format!("{name}.ext"));
    std::fs::write(&extensions, "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        &path(format!("{name}.csr")),
        "-CA",
        &path(format!("{ca}.crt")),
        "-CAkey",
        &path(format!("{ca}.key")),
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        &extensions.display().to_string(),
        "-out",
        &path(format!("{name}.crt")),
    ]);
}

/// Runs openssl (scripts/install-deps.sh installs it); it must succeed.
pub fn openssl(args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl (scripts/install-deps.sh installs it)");
    assert!(status.success(), "openssl {args:?} failed");
}

/// A program from the project's venv (~/.cache/rtcd/venv, or $RTCD_VENV).
pub fn venv_bin(name: &str) -> PathBuf {
    let venv = std::env::var_os("RTCD_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/rtcd/venv")
    });
    venv.join("bin").join(name)
}

/// `text` as JSON, or a failed test saying what it was.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

impl ApiServer {
    /// kubectl with `stdin`: (success, stdout, stderr).
    pub fn kubectl_in(&self, args: &[&str], stdin: &str) -> (bool, String, String) {
        let out = self.kubectl_with(args, Some(stdin), &[]);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }

    /// kubectl with `stdin` that must succeed; its stdout.
    pub fn ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_with(args, Some(stdin), &[]);
        assert!(out.status.success(), "kubectl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Opens a watch over plain HTTP/1.0 (the body is then the raw event
/// stream, one JSON event per line) and returns its line reader once the
/// server has answered with 200.
pub async fn open_watch(addr: &str, path: &str) -> tokio::io::BufReader<tokio::net::TcpStream> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reader = tokio::io::BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if line.starts_with("HTTP/") {
            assert!(line.contains(" 200 "), "{path}: {line}");
        }
    }
    reader
}

/// The next event of a watch opened with [`open_watch`].
pub async fn next_event(reader: &mut tokio::io::BufReader<tokio::net::TcpStream>) -> serde_json::Value {
    use tokio::io::AsyncBufReadExt;
    let mut line = String::new();
    let read = tokio::time::timeout(Duration::from_secs(20), reader.read_line(&mut line)).await;
    assert!(matches!(read, Ok(Ok(n)) if n > 0), "the watch ended or stalled");
    serde_json::from_str(&line).unwrap()
}

/// One HTTP/1.0 request; the status code and the JSON body.
pub async fn request(
    addr: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, serde_json::from_str(body).unwrap_or(serde_json::Value::Null))
}

/// An HTTP/1.0 GET with an `Accept` header: the status code, the Content-Type and the body's
/// bytes.
pub async fn get_bytes(addr: &str, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    let (code, head, body) = get_raw(addr, path, &[("Accept", accept)]).await;
    let content_type = header(&head, "content-type").unwrap_or_default().to_owned();
    (code, content_type, body)
}

/// An HTTP/1.0 GET with these header lines: the status code, the response's head and its
/// body's bytes.
pub async fn get_raw(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut head = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("a response head");
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, head, response[split + 4..].to_vec())
}

/// A header's value in a response head (names compared without case, as HTTP does).
pub fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}
