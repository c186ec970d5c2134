//! `/metrics` as kube-apiserver writes it: real requests (HTTP and
//! kubectl) and the exact series kube would count them in, by kube's
//! verbs, scopes and labels; histograms that Prometheus can read
//! (cumulative buckets, `+Inf` equal to the count); object counts that
//! follow creates and deletes; etcd calls timed by operation.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::common::{ApiServer, Backend, get_raw, next_event, open_watch, request};

type Labels = BTreeMap<String, String>;

/// One sample: its name, labels and value.
#[derive(Debug, Clone)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of the text format (HELP and TYPE lines skipped).
fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).map(parse_line).collect()
}

fn parse_line(line: &str) -> Sample {
    let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().unwrap_or_else(|_| panic!("not a number: {line}")),
    };
    let Some((name, rest)) = series.split_once('{') else {
        return Sample { name: series.to_string(), labels: BTreeMap::new(), value };
    };
    let mut labels = BTreeMap::new();
    let mut chars = rest.strip_suffix('}').unwrap_or_else(|| panic!("unclosed: {line}")).chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        assert_eq!(chars.next(), Some('"'), "{line}");
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(other) => value.push(other),
                    None => panic!("{line}"),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        labels.insert(key, value);
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    Sample { name: name.to_string(), labels, value }
}

/// The value of the series with exactly these labels.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    samples.iter().find(|s| s.name == name && s.labels == want).map(|s| s.value)
}

/// kube's request labels for a configmaps request in `default`.
fn configmaps<'a>(verb: &'a str, dry_run: &'a str, scope: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("verb", verb),
        ("dry_run", dry_run),
        ("group", ""),
        ("version", "v1"),
        ("resource", "configmaps"),
        ("subresource", ""),
        ("scope", scope),
        ("component", "apiserver"),
    ]
}

fn with<'a>(mut labels: Vec<(&'a str, &'a str)>, extra: (&'a str, &'a str)) -> Vec<(&'a str, &'a str)> {
    labels.push(extra);
    labels
}

fn without_dry_run<'a>(labels: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    labels.into_iter().filter(|(k, _)| *k != "dry_run").collect()
}

async fn scrape(addr: &str) -> (String, Vec<Sample>) {
    let (code, _, body) = get_raw(addr, "/metrics", &[]).await;
    let text = String::from_utf8(body).unwrap();
    assert_eq!(code, 200, "{text}");
    let samples = parse(&text);
    (text, samples)
}

/// Scrapes until `check` holds (20 s at most); the last scrape.
async fn scrape_until(addr: &str, what: &str, check: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (text, samples) = scrape(addr).await;
        if check(&samples) {
            return samples;
        }
        assert!(Instant::now() < deadline, "never: {what}\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every histogram: buckets cumulative in `le` order, `+Inf` equal to
/// `_count`, a `_sum` beside.
fn assert_histograms_are_sound(samples: &[Sample]) {
    let mut series: BTreeMap<(String, Labels), Vec<(f64, f64)>> = BTreeMap::new();
    for sample in samples.iter().filter(|s| s.name.ends_with("_bucket")) {
        let family = sample.name.trim_end_matches("_bucket").to_string();
        let mut labels = sample.labels.clone();
        let le = labels.remove("le").unwrap_or_else(|| panic!("no le: {sample:?}"));
        let le = if le == "+Inf" { f64::INFINITY } else { le.parse().unwrap() };
        series.entry((family, labels)).or_default().push((le, sample.value));
    }
    assert!(series.len() > 10, "histograms: {}", series.len());
    for ((family, labels), mut buckets) in series {
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(
            buckets.windows(2).all(|w| w[0].1 <= w[1].1),
            "{family} {labels:?} not cumulative: {buckets:?}"
        );
        let (last_le, inf) = *buckets.last().unwrap();
        assert_eq!(last_le, f64::INFINITY, "{family} {labels:?}: no +Inf");
        let pairs: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let count = value(samples, &format!("{family}_count"), &pairs);
        assert_eq!(count, Some(inf), "{family} {labels:?}: +Inf is not the count");
        assert!(value(samples, &format!("{family}_sum"), &pairs).is_some(), "{family} {labels:?}: no sum");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_storage_and_watches_as_kube_does() {
    let api = ApiServer::start(Backend::Rtcd).await;
    let addr = api.url.trim_start_matches("http://").to_string();
    // Counted from the start: the server's own configmap
    // (kube-system/extension-apiserver-authentication), published soon.
    let objects = [("group", ""), ("resource", "configmaps")];
    let before = scrape_until(&addr, "the server's configmap", |s| {
        value(s, "apiserver_resource_objects", &objects).is_some_and(|n| n >= 1.0)
    })
    .await;
    let configmaps_before = value(&before, "apiserver_resource_objects", &objects).unwrap_or_default();
    let (text, _) = scrape(&addr).await;
    for (family, kind, help) in [
        (
            "apiserver_request_total",
            "counter",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
        ),
        (
            "apiserver_request_duration_seconds",
            "histogram",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
        ),
        (
            "etcd_request_duration_seconds",
            "histogram",
            "[ALPHA] Etcd request latency in seconds for each operation and object type.",
        ),
        (
            "apiserver_resource_objects",
            "gauge",
            "[ALPHA] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
        ),
    ] {
        assert!(
            text.contains(&format!("# HELP {family} {help}\n# TYPE {family} {kind}\n")),
            "{family}:\n{text}"
        );
    }

    // The requests, over plain HTTP: each counted once, by kube's labels.
    let path = "/api/v1/namespaces/default/configmaps";
    let object = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"metrics-a"},"data":{"k":"v"}}"#;
    assert_eq!(request(&addr, "POST", path, "application/json", object).await.0, 201);
    let dry = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"metrics-dry"}}"#;
    let dry_run = format!("{path}?dryRun=All");
    assert_eq!(request(&addr, "POST", &dry_run, "application/json", dry).await.0, 201);
    assert_eq!(request(&addr, "GET", &format!("{path}/metrics-a"), "", "").await.0, 200);
    assert_eq!(request(&addr, "GET", &format!("{path}/missing"), "", "").await.0, 404);
    assert_eq!(request(&addr, "GET", path, "", "").await.0, 200);
    let apply = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"metrics-a"},"data":{"k":"w"}}"#;
    let apply_path = format!("{path}/metrics-a?fieldManager=metrics-test&force=true");
    let applied = request(&addr, "PATCH", &apply_path, "application/apply-patch+yaml", apply).await;
    assert_eq!(applied.0, 200, "{}", applied.1);
    // Not served: kube's router answers, no route counts it.
    assert_eq!(request(&addr, "GET", "/api/v1/namespaces/default/widgets", "", "").await.0, 404);
    assert_eq!(request(&addr, "GET", "/healthz", "", "").await.0, 200);
    // kubectl's server-side apply of a new object: APPLY, created.
    api.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"metrics-kubectl"}}"#,
    );
    let samples = scrape_until(&addr, "two more configmaps", |s| {
        value(s, "apiserver_resource_objects", &objects) == Some(configmaps_before + 2.0)
    })
    .await;
    let total = |verb, dry_run, scope, code| {
        value(&samples, "apiserver_request_total", &with(configmaps(verb, dry_run, scope), ("code", code)))
    };
    assert_eq!(total("POST", "", "resource", "201"), Some(1.0));
    assert_eq!(total("POST", "All", "resource", "201"), Some(1.0), "the dry run");
    assert_eq!(total("GET", "", "resource", "200"), Some(1.0));
    assert_eq!(total("GET", "", "resource", "404"), Some(1.0));
    assert_eq!(total("LIST", "", "namespace", "200"), Some(1.0));
    assert_eq!(total("APPLY", "", "resource", "200"), Some(1.0));
    assert_eq!(total("APPLY", "", "resource", "201"), Some(1.0), "kubectl's");
    assert_eq!(total("PATCH", "", "resource", "200"), None, "an apply is no PATCH");
    assert!(
        samples.iter().all(|s| s.labels.get("resource").is_none_or(|r| r != "widgets")),
        "an unknown resource is not counted"
    );
    let healthz = [
        ("verb", "GET"),
        ("dry_run", ""),
        ("group", ""),
        ("version", ""),
        ("resource", ""),
        ("subresource", "/healthz"),
        ("scope", ""),
        ("component", ""),
        ("code", "200"),
    ];
    assert_eq!(value(&samples, "apiserver_request_total", &healthz), Some(1.0));
    // kubectl reads aggregated discovery, which kube instruments too.
    let discovery = samples.iter().any(|s| {
        s.name == "apiserver_request_total"
            && s.labels["subresource"] == "apis"
            && s.labels["component"] == "apiserver"
            && s.labels["verb"] == "GET"
    });
    assert!(discovery, "aggregated discovery not counted");
    // Latency: every request timed; the SLI leaves the dry run out.
    let count = |family: &str, labels: Vec<(&str, &str)>| value(&samples, family, &labels);
    let duration = "apiserver_request_duration_seconds_count";
    assert_eq!(count(duration, configmaps("POST", "", "resource")), Some(1.0));
    assert_eq!(count(duration, configmaps("POST", "All", "resource")), Some(1.0));
    assert_eq!(count(duration, configmaps("GET", "", "resource")), Some(2.0), "the 200 and the 404");
    let sli = "apiserver_request_sli_duration_seconds_count";
    assert_eq!(count(sli, without_dry_run(configmaps("POST", "", "resource"))), Some(1.0));
    // Sizes of read answers only.
    let sizes = "apiserver_response_sizes_count";
    assert_eq!(count(sizes, without_dry_run(configmaps("GET", "", "resource"))), Some(2.0));
    assert_eq!(count(sizes, without_dry_run(configmaps("LIST", "", "namespace"))), Some(1.0));
    assert_eq!(count(sizes, without_dry_run(configmaps("POST", "", "resource"))), None);
    // etcd: the writes and reads, by kube's operation names.
    for operation in ["create", "get", "update", "list"] {
        let labels = vec![("operation", operation), ("group", ""), ("resource", "configmaps")];
        let calls = count("etcd_request_duration_seconds_count", labels.clone());
        assert!(calls.is_some_and(|n| n >= 1.0), "{operation}: {calls:?}");
        assert_eq!(count("etcd_requests_total", labels), calls, "{operation}");
    }
    assert!(
        value(&samples, "apiserver_watch_cache_events_received_total", &objects).is_some_and(|n| n >= 3.0)
    );
    assert!(
        value(&samples, "apiserver_watch_cache_initializations_total", &objects).is_some_and(|n| n >= 1.0)
    );
    let git_version =
        samples.iter().find(|s| s.name == "kubernetes_build_info").map(|s| s.labels["git_version"].clone());
    assert!(git_version.is_some_and(|v| v.starts_with("v1.37.0")));
    let database = value(&samples, "apiserver_storage_size_bytes", &[("storage_cluster_id", "etcd-0")]);
    assert!(database.is_some_and(|bytes| bytes > 0.0), "etcd's database: {database:?}");
    for family in ["process_resident_memory_bytes", "process_start_time_seconds", "process_open_fds"] {
        assert!(value(&samples, family, &[]).is_some_and(|v| v > 0.0), "{family}");
    }
    assert!(value(&samples, "authentication_attempts", &[("result", "success")]).is_some_and(|n| n >= 8.0));

    // A watch: live while it streams, counted once it ends.
    let watch_path = format!("{path}?watch=true&timeoutSeconds=2");
    let mut watch = open_watch(&addr, &watch_path).await;
    let added = next_event(&mut watch).await;
    assert_eq!(added["type"], "ADDED");
    let live = without_dry_run(configmaps("WATCH", "", "namespace"));
    let streaming = scrape_until(&addr, "the watch live", |s| {
        value(s, "apiserver_longrunning_requests", &live) == Some(1.0)
    })
    .await;
    assert_eq!(
        value(
            &streaming,
            "apiserver_request_total",
            &with(configmaps("WATCH", "", "namespace"), ("code", "200"))
        ),
        None
    );
    let mut rest = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut watch, &mut rest).await.unwrap();
    assert_eq!(request(&addr, "DELETE", &format!("{path}/metrics-a"), "", "").await.0, 200);
    let samples = scrape_until(&addr, "the watch ended and the object gone", |s| {
        value(s, "apiserver_longrunning_requests", &live) == Some(0.0)
            && value(s, "apiserver_resource_objects", &objects) == Some(configmaps_before + 1.0)
    })
    .await;
    let watch_total = with(configmaps("WATCH", "", "namespace"), ("code", "200"));
    assert_eq!(value(&samples, "apiserver_request_total", &watch_total), Some(1.0));
    let watched =
        value(&samples, "apiserver_request_duration_seconds_sum", &configmaps("WATCH", "", "namespace"));
    assert!(watched.is_some_and(|s| s >= 1.5), "its whole life: {watched:?}");
    assert_eq!(value(&samples, "apiserver_response_sizes_count", &live), Some(1.0), "kube's LIST route");
    let delete = with(configmaps("DELETE", "", "resource"), ("code", "200"));
    assert_eq!(value(&samples, "apiserver_request_total", &delete), Some(1.0));
    let sent = [("group", ""), ("version", "v1"), ("resource", "configmaps")];
    let events = value(&samples, "apiserver_watch_events_total", &sent);
    assert!(events.is_some_and(|n| n >= 2.0), "the initial events: {events:?}");
    assert_eq!(value(&samples, "apiserver_watch_events_sizes_count", &sent), events);
    let deletes = [("operation", "delete"), ("group", ""), ("resource", "configmaps")];
    assert_eq!(value(&samples, "etcd_requests_total", &deletes), Some(1.0));
    assert_histograms_are_sound(&samples);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_metrics_are_shown_for_the_previous_minor_version_only() {
    let api = ApiServer::start_prepared(Backend::Rtcd, false, |dir| {
        std::fs::write(dir.join("flags"), "--show-hidden-metrics-for-version=1.36\n").unwrap();
    })
    .await;
    let addr = api.url.trim_start_matches("http://").to_string();
    let (text, samples) = scrape(&addr).await;
    let help = "# HELP apiserver_storage_objects [STABLE] (Deprecated since 1.34.0) [DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects";
    assert!(text.contains(help), "{text}");
    let namespaces = value(&samples, "apiserver_storage_objects", &[("resource", "namespaces")]);
    assert!(
        namespaces.is_some_and(|n| n >= 4.0),
        "default, kube-system, kube-public, kube-node-lease: {namespaces:?}"
    );
    let roles = value(
        &samples,
        "apiserver_storage_objects",
        &[("resource", "clusterroles.rbac.authorization.k8s.io")],
    );
    assert!(roles.is_some(), "a group's resource is qualified as kube's GroupResource.String()");

    // Any other version is refused at startup, with kube's words.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_rtcd-apiserver"))
        .args([&format!("--etcd-servers={}", api.member.url), "--plain-http", "--secure-port=1"])
        .arg("--show-hidden-metrics-for-version=1.35")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--show-hidden-metrics-for-version must be omitted or have the value '1.36'; only the previous minor version is allowed"),
        "{stderr}"
    );
}
