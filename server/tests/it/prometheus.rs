//! A real Prometheus (Debian's `prometheus`) scrapes a three-member
//! cluster and evaluates etcd's own alerting rules
//! (`docs/monitoring/etcd-alerts.yaml`) against it: every rule evaluates
//! without error over series that exist, and the member-down, quorum and
//! no-leader alerts become active when members are killed and clear when
//! they come back; every panel of etcd's Grafana dashboard
//! (`docs/monitoring/etcd-dashboard.json`) has data. The same run against
//! real etcd is the control.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::ok;
use crate::harness::{Kind, Member, etcdctl, free_port, start_cluster_with, wait_healthy};
use crate::metrics::rule_families;

const RULES_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/monitoring/etcd-alerts.yaml");
const DASHBOARD: &str = include_str!("../../../docs/monitoring/etcd-dashboard.json");

/// Every query of etcd's Grafana dashboard, with its variables set as
/// Grafana would set them for this cluster.
fn dashboard_queries() -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("expr", Value::String(expr)) => out.push(expr.clone()),
                        _ => walk(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut queries = Vec::new();
    walk(&serde_json::from_str(DASHBOARD).unwrap(), &mut queries);
    queries.iter().map(|q| q.replace("$cluster", "etcd").replace("$__rate_interval", "1m")).collect()
}

/// A Prometheus server scraping `targets` every second as job `etcd` (the
/// rules select `job=~".*etcd.*"`) and evaluating the rules every second.
struct Prometheus {
    child: Child,
    address: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(targets: &[String]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        let targets: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let text = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n\
             rule_files: ['{RULES_FILE}']\n\
             scrape_configs:\n- job_name: etcd\n  static_configs:\n  - targets: [{}]\n",
            targets.join(", ")
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
        let prometheus = Prometheus { child, address, _dir: dir };
        prometheus.until("ready", |p| p.get("/-/ready").map(|(code, _)| code == 200).unwrap_or(false));
        prometheus
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("log")).unwrap_or_default()
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

    /// The `data` of an API answer.
    fn api(&self, path: &str) -> Value {
        let (code, body) = self.get(path).unwrap();
        assert_eq!(code, 200, "{path}: {body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["status"], "success", "{path}: {body}");
        answer["data"].clone()
    }

    /// An instant query's result vector.
    fn query(&self, promql: &str) -> Vec<Value> {
        let data = self.api(&format!("/api/v1/query?query={}", encode(promql)));
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// The rules as Prometheus last evaluated them.
    fn rules(&self) -> Vec<Value> {
        let data = self.api("/api/v1/rules");
        let groups = data["groups"].as_array().cloned().unwrap_or_default();
        groups.iter().flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default()).collect()
    }

    /// The names of the alerts now pending or firing.
    fn active_alerts(&self) -> Vec<String> {
        let data = self.api("/api/v1/alerts");
        let alerts = data["alerts"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<String> =
            alerts.iter().filter_map(|a| a["labels"]["alertname"].as_str().map(str::to_string)).collect();
        names.sort();
        names.dedup();
        names
    }

    /// Waits (up to 60 s) until `check` holds.
    fn until(&self, what: &str, check: impl Fn(&Prometheus) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !check(self) {
            assert!(Instant::now() < deadline, "never: {what}\n{}", self.log());
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

fn host_port(member: &Member) -> String {
    member.client_url.trim_start_matches("http://").to_string()
}

/// The number of alerting rules in the rules file.
fn rule_count() -> usize {
    let text = std::fs::read_to_string(Path::new(RULES_FILE)).unwrap();
    text.lines().filter(|line| line.trim_start().starts_with("- alert:")).count()
}

/// Three members under Prometheus: the rules find their series, then two
/// members die (quorum and leader lost) and come back.
fn alerts_follow_the_cluster(kind: Kind) {
    let mut cluster = start_cluster_with(kind, 3, &["--metrics=extensive"]);
    let url = cluster[0].client_url.clone();
    for i in 0..5 {
        ok(etcdctl(&url, &["put", &format!("k{i}"), "v"], None));
    }
    let prometheus = Prometheus::start(&cluster.iter().map(host_port).collect::<Vec<_>>());
    prometheus.until("all three members scraped", |p| {
        p.query("up{job=\"etcd\"} == 1").len() == 3
            && p.rules().iter().all(|r| r["health"] == "ok")
            && p.rules().len() == rule_count()
    });

    // Each family the rules read has series in Prometheus (rtcd exports
    // labelled counters from the start; etcd only once they first count,
    // so on etcd a peer without failures has no series), and every rule
    // evaluates without error (a wrong type or label would show here).
    for family in rule_families().into_iter().filter(|_| kind == Kind::Rtcd) {
        let selector = format!("count({{__name__=~\"{family}|{family}_bucket\",job=\"etcd\"}})");
        assert!(!prometheus.query(&selector).is_empty(), "{kind:?}: no {family} in Prometheus");
    }
    // Every panel of etcd's dashboard has data (on etcd, counters
    // nothing has counted yet have no series).
    if kind == Kind::Rtcd {
        let queries = dashboard_queries();
        assert!(queries.len() >= 15, "{queries:?}");
        prometheus
            .until("every dashboard panel has data", |p| queries.iter().all(|q| !p.query(q).is_empty()));
    }
    for rule in prometheus.rules() {
        assert_eq!(rule["health"], "ok", "{kind:?}: {rule}");
        assert_eq!(rule["state"], "inactive", "{kind:?}: a healthy cluster alerts: {rule}");
    }
    assert!(prometheus.active_alerts().is_empty(), "{kind:?}: {:?}", prometheus.active_alerts());

    // Two of three gone: members down, quorum lost, the survivor leaderless.
    cluster[1].kill();
    cluster[2].kill();
    let expected = ["etcdInsufficientMembers", "etcdMembersDown", "etcdNoLeader"];
    prometheus.until("the three alerts active", |p| {
        let active = p.active_alerts();
        expected.iter().all(|name| active.iter().any(|a| a == name))
    });
    let quorum = prometheus.query("etcd_server_has_leader{job=\"etcd\"} == 0");
    assert_eq!(quorum.len(), 1, "{kind:?}: only the survivor is scraped: {quorum:?}");

    // Back: up and led again, so the quorum and leader alerts clear.
    // (etcdMembersDown also reads the rate of failed peer sends over two
    // minutes, so it stays while the failures are in that window, on etcd
    // as on rtcd.)
    cluster[1].restart();
    cluster[2].restart();
    wait_healthy(&cluster[1]);
    wait_healthy(&cluster[2]);
    prometheus.until("quorum and leader alerts cleared", |p| {
        let active = p.active_alerts();
        p.query("up{job=\"etcd\"} == 1").len() == 3
            && !active.iter().any(|a| a == "etcdNoLeader" || a == "etcdInsufficientMembers")
    });
}

#[test]
fn prometheus_evaluates_etcds_alerts_over_rtcd() {
    alerts_follow_the_cluster(Kind::Rtcd);
}

#[test]
fn prometheus_evaluates_etcds_alerts_over_etcd() {
    alerts_follow_the_cluster(Kind::Etcd);
}
