//! A real Prometheus (Debian's `prometheus`) scrapes rtcd-apiserver's
//! `/metrics` over HTTPS with a client certificate (the scrape is
//! authenticated and authorized as kube-apiserver's is), and what the
//! kubernetes-mixin's apiserver rules and alerts compute from evaluates
//! over it: request rates by verb, SLI latency quantiles and the
//! threshold buckets of the SLOs, object counts, client certificate
//! lifetimes, the build and the process.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{ApiServer, Backend, free_port, make_ca, make_client};

/// A Prometheus scraping one target every second as job `kube-apiserver`
/// (the mixin's selector).
struct Prometheus {
    child: Child,
    address: String,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scraping `target` over HTTPS: the server's certificate trusted from
    /// `tls.crt`, presenting `prometheus.crt` (both in `certs`).
    fn start(target: &str, certs: &Path) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        let file = |name: &str| certs.join(name).display().to_string();
        let text = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
             scrape_configs:\n- job_name: kube-apiserver\n  scheme: https\n  tls_config:\n    ca_file: {}\n    cert_file: {}\n    key_file: {}\n  static_configs:\n  - targets: ['{target}']\n",
            file("tls.crt"),
            file("prometheus.crt"),
            file("prometheus.key"),
        );
        std::fs::write(&config, text).unwrap();
        let address = format!("127.0.0.1:{}", free_port());
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address={address}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("log")).unwrap())
            .spawn()
            .expect("prometheus (Debian's package, scripts/install-deps.sh)");
        let prometheus = Prometheus { child, address, dir };
        prometheus.until("ready", |p| p.get("/-/ready").is_ok_and(|(code, _)| code == 200));
        prometheus
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// One HTTP/1.0 GET (so the body comes unchunked): status and body.
    fn get(&self, path: &str) -> std::io::Result<(u16, String)> {
        let mut conn = std::net::TcpStream::connect(&self.address)?;
        write!(conn, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.address)?;
        let mut response = String::new();
        conn.read_to_string(&mut response)?;
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let code = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        Ok((code, body.to_string()))
    }

    /// An instant query's result vector.
    fn query(&self, promql: &str) -> Vec<Value> {
        let path = format!("/api/v1/query?query={}", encode(promql));
        let (code, body) = self.get(&path).unwrap();
        assert_eq!(code, 200, "{promql}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["status"], "success", "{promql}: {body}");
        answer["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The numbers an instant query gives (NaN for a 0/0).
    fn numbers(&self, promql: &str) -> Vec<f64> {
        let number =
            |v: &Value| v["value"][1].as_str().and_then(|n| n.parse::<f64>().ok()).unwrap_or(f64::NAN);
        self.query(promql).iter().map(number).collect()
    }

    /// The scrape target's health and last error.
    fn target(&self) -> String {
        let (_, body) = self.get("/api/v1/targets").unwrap_or_default();
        body
    }

    /// Waits (up to 40 s) until `check` holds.
    fn until(&self, what: &str, check: impl Fn(&Prometheus) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(40);
        while !check(self) {
            assert!(Instant::now() < deadline, "never: {what}\n{}\n{}", self.target(), self.log());
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encoding for a query parameter.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The mixin's non-streaming selector, with its job.
const JOB: &str = r#"job="kube-apiserver",subresource!~"proxy|attach|log|exec|portforward""#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_computes_the_mixins_apiserver_series() {
    let api = ApiServer::start_prepared(Backend::Rtcd, true, |dir| {
        make_ca(dir, "client-ca", "client-ca");
        make_client(dir, "client-ca", "prometheus", "/CN=prometheus/O=system:masters");
    })
    .await;
    let target = api.url.trim_start_matches("https://").to_string();
    let prometheus = Prometheus::start(&target, api.dir.path());

    // Reads and writes go on while Prometheus scrapes, so rates move.
    let stop = Arc::new(AtomicBool::new(false));
    let traffic = {
        let (stop, kubeconfig, cache) =
            (stop.clone(), api.kubeconfig(), api.dir.path().join("kube-cache").display().to_string());
        std::thread::spawn(move || {
            let kubectl = crate::common::venv_bin("kubectl");
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("scraped-{n}");
                for args in [
                    vec!["create", "configmap", name.as_str()],
                    vec!["get", "configmap", name.as_str()],
                    vec!["get", "configmaps"],
                ] {
                    let _ = Command::new(&kubectl)
                        .arg(format!("--kubeconfig={}", kubeconfig.display()))
                        .arg(format!("--cache-dir={cache}"))
                        .args(args)
                        .output();
                }
                n += 1;
            }
        })
    };
    let start = Instant::now();
    prometheus.until("the apiserver scraped", |p| p.query(r#"up{job="kube-apiserver"} == 1"#).len() == 1);

    // What the mixin's recording rules read, from raw series.
    let read = r#"verb=~"LIST|GET""#;
    let write = r#"verb=~"POST|PUT|PATCH|DELETE""#;
    let rates = format!("sum by (verb) (rate(apiserver_request_total{{{JOB}}}[1m]))");
    let p99 = format!(
        "histogram_quantile(0.99, sum by (le, verb) (rate(apiserver_request_sli_duration_seconds_bucket{{{JOB},{read}}}[1m])))"
    );
    // The write SLO: requests slower than its 1s threshold, per second.
    let slow_writes = format!(
        "sum(rate(apiserver_request_sli_duration_seconds_count{{{JOB},{write}}}[1m])) - \
         sum(rate(apiserver_request_sli_duration_seconds_bucket{{{JOB},{write},le=~\"1(\\\\.0)?\"}}[1m]))"
    );
    prometheus.until("request rates, read quantiles and write SLO terms", |p| {
        let verbs: Vec<String> =
            p.query(&rates).iter().filter_map(|r| r["metric"]["verb"].as_str().map(str::to_string)).collect();
        ["LIST", "GET", "POST"].iter().all(|v| verbs.iter().any(|got| got == v))
            && p.numbers(&p99).iter().any(|q| q.is_finite() && *q > 0.0)
            && p.numbers(&slow_writes).iter().any(|n| n.is_finite())
    });
    for quantile in prometheus.numbers(&p99).into_iter().filter(|q| q.is_finite()) {
        assert!(quantile <= 60.0, "{quantile}");
    }
    // Each scope's SLO threshold bucket exists, as the mixin matches it.
    for (scope, le) in [("resource|", "1(\\\\.0)?"), ("namespace", "5(\\\\.0)?")] {
        let bucket = format!(
            "apiserver_request_sli_duration_seconds_bucket{{{JOB},{read},scope=~\"{scope}\",le=~\"{le}\"}}"
        );
        assert!(!prometheus.query(&bucket).is_empty(), "{bucket}");
    }
    let configmaps =
        prometheus.numbers(r#"apiserver_resource_objects{job="kube-apiserver",resource="configmaps"}"#);
    assert!(configmaps.first().is_some_and(|n| *n >= 1.0), "{configmaps:?}");
    // KubeClientCertificateExpiration's terms: Prometheus's own
    // certificate, valid for a day.
    let certificates = r#"apiserver_client_certificate_expiration_seconds_count{job="kube-apiserver"} > 0"#;
    assert_eq!(prometheus.query(certificates).len(), 1);
    let lifetime = prometheus.numbers(
        r#"histogram_quantile(0.01, sum without (namespace, service, endpoint) (rate(apiserver_client_certificate_expiration_seconds_bucket{job="kube-apiserver"}[1m])))"#,
    );
    assert!(lifetime.first().is_some_and(|s| (0.0..=86400.0).contains(s)), "{lifetime:?}");
    // KubeVersionMismatch reads the build; the dashboard, the process.
    let build = prometheus.query(r#"kubernetes_build_info{job="kube-apiserver"}"#);
    assert!(
        build
            .first()
            .and_then(|b| b["metric"]["git_version"].as_str())
            .is_some_and(|v| v.starts_with("v1.37."))
    );
    assert!(!prometheus.query(r#"rate(process_cpu_seconds_total{job="kube-apiserver"}[1m])"#).is_empty());
    assert!(
        prometheus.numbers(r#"process_resident_memory_bytes{job="kube-apiserver"}"#).iter().all(|b| *b > 0.0)
    );
    // KubeAPITerminatedRequests evaluates (to nothing: none terminated).
    let terminated = r#"sum(rate(apiserver_request_terminations_total{job="kube-apiserver"}[10m])) / (sum(rate(apiserver_request_total{job="kube-apiserver"}[10m])) + sum(rate(apiserver_request_terminations_total{job="kube-apiserver"}[10m]))) > 0.20"#;
    assert!(prometheus.query(terminated).is_empty());
    stop.store(true, Ordering::Relaxed);
    traffic.join().unwrap();
    assert!(start.elapsed() < Duration::from_secs(40), "took {:?}", start.elapsed());
}
