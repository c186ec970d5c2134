//! `/metrics` as etcd's own alerting rules read it: every series the rules
//! in `docs/monitoring/etcd-alerts.yaml` (etcd's mixin) select is exported
//! with etcd's type (gRPC handling times with `--metrics=extensive`, as
//! etcd); and the values move as the rules expect when members are killed
//! and come back.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::cluster::ok;
use crate::harness::{Kind, Member, etcdctl, etcdctl_command, start_cluster_with, start_with, wait_healthy};
use crate::maintenance::http_get;

const RULES: &str = include_str!("../../../docs/monitoring/etcd-alerts.yaml");
const FAMILIES: &str = include_str!("../../../docs/monitoring/metrics.md");

/// The table of `docs/monitoring/metrics.md`: each family's type, and
/// whether rtcd exports it.
fn documented_families() -> BTreeMap<String, (String, bool)> {
    FAMILIES
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.strip_prefix("| `")?.split(" | ").collect();
            let name = cells.first()?.strip_suffix('`')?;
            let exported = cells.get(2)?.starts_with("exported");
            Some((name.to_string(), (cells.get(1)?.to_string(), exported)))
        })
        .collect()
}

/// The metric families the rules' expressions name (a histogram's
/// `_bucket` series stands for its family).
pub(crate) fn rule_families() -> Vec<String> {
    let mut names: Vec<String> = RULES
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(|line| line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
        .filter(|word| word.starts_with("etcd_") || word.starts_with("grpc_"))
        .filter(|word| !matches!(*word, "grpc_code" | "grpc_method" | "grpc_type"))
        .map(|word| word.strip_suffix("_bucket").unwrap_or(word).to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A member's scrape: each family's type, and each sample's value.
struct Scrape {
    types: BTreeMap<String, String>,
    samples: BTreeMap<String, f64>,
}

fn scrape(member: &Member) -> Scrape {
    let (status, body) = http_get(&member.client_url, "/metrics");
    assert!(status.contains("200"), "{status}");
    let mut scrape = Scrape { types: BTreeMap::new(), samples: BTreeMap::new() };
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            scrape.types.insert(name.to_string(), kind.to_string());
        } else if !line.starts_with('#') && !line.is_empty() {
            let (series, value) = line.rsplit_once(' ').unwrap();
            scrape.samples.insert(series.to_string(), value.parse().unwrap());
        }
    }
    scrape
}

impl Scrape {
    fn value(&self, series: &str) -> f64 {
        *self.samples.get(series).unwrap_or_else(|| panic!("no {series}"))
    }

    /// The samples of a family with labels, by their labels.
    fn labelled(&self, family: &str) -> BTreeMap<String, f64> {
        let prefix = format!("{family}{{");
        (self.samples.iter())
            .filter_map(|(series, value)| {
                Some((series.strip_prefix(&prefix)?.trim_end_matches('}').to_string(), *value))
            })
            .collect()
    }
}

/// Waits (up to 20 s) until `member`'s scrape satisfies `check`.
fn until(member: &Member, what: &str, check: impl Fn(&Scrape) -> bool) -> Scrape {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let scrape = scrape(member);
        if check(&scrape) {
            return scrape;
        }
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn etcds_alerting_rules_find_their_series_and_see_a_lost_leader() {
    let mut cluster = start_cluster_with(Kind::Rtcd, 3, &["--metrics=extensive"]);
    let url = cluster[0].client_url.clone();
    for i in 0..5 {
        ok(etcdctl(&url, &["put", &format!("k{i}"), "v"], None));
    }
    let _ = etcdctl(&url, &["get", "k", "--rev=100000"], None);
    ok(etcdctl(&url, &["get", "k0"], None));
    let lease = ok(etcdctl(&url, &["lease", "grant", "60"], None));
    let lease_id = lease.split_whitespace().nth(1).expect("lease ID");
    ok(etcdctl(&url, &["put", "leased", "v", &format!("--lease={lease_id}")], None));
    ok(etcdctl(&url, &["txn"], Some("\nput t1 a\nget k0\n\n\n")));
    let _ = http_get(&url, "/health");

    let first = scrape(&cluster[0]);
    let families = rule_families();
    assert!(families.len() >= 10, "the rules name the series: {families:?}");
    for family in &families {
        assert!(first.types.contains_key(family.as_str()), "{family} is not exported");
    }
    let kinds = [
        ("etcd_server_has_leader", "gauge"),
        ("etcd_server_leader_changes_seen_total", "counter"),
        ("etcd_server_proposals_failed_total", "counter"),
        ("grpc_server_handled_total", "counter"),
        ("etcd_disk_wal_fsync_duration_seconds", "histogram"),
        ("etcd_disk_backend_commit_duration_seconds", "histogram"),
        ("etcd_mvcc_db_total_size_in_bytes", "gauge"),
        ("etcd_server_quota_backend_bytes", "gauge"),
        ("etcd_network_peer_sent_failures_total", "counter"),
        ("etcd_network_peer_round_trip_time_seconds", "histogram"),
        ("grpc_server_handling_seconds", "histogram"),
    ];
    for (family, kind) in kinds {
        assert_eq!(first.types.get(family).map(String::as_str), Some(kind), "{family}");
    }

    // What the rules compute from is there: a leader, the puts counted by
    // method and code, fsyncs and commits observed, a quota above the size.
    assert_eq!(first.value("etcd_server_has_leader"), 1.0);
    assert!(first.value("etcd_server_leader_changes_seen_total") >= 1.0);
    let put = "grpc_method=\"Put\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"";
    assert_eq!(first.value(&format!("grpc_server_handled_total{{grpc_code=\"OK\",{put}}}")), 6.0);
    let range = "grpc_method=\"Range\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"";
    assert_eq!(first.value(&format!("grpc_server_handled_total{{grpc_code=\"OutOfRange\",{range}}}")), 1.0);
    assert!(first.value("etcd_disk_wal_fsync_duration_seconds_count") >= 5.0);
    assert!(first.value("etcd_disk_backend_commit_duration_seconds_count") >= 5.0);
    let inf = first.value("etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"}");
    assert_eq!(inf, first.value("etcd_disk_wal_fsync_duration_seconds_count"));
    assert!(first.value("etcd_server_quota_backend_bytes") > first.value("etcd_mvcc_db_total_size_in_bytes"));
    assert!(first.value("etcd_server_proposals_committed_total") >= 5.0);
    assert_eq!(first.value(&format!("grpc_server_handling_seconds_count{{{put}}}")), 6.0);
    // Messages each way, and their bytes (each PutRequest here is 7 bytes).
    assert_eq!(first.value(&format!("grpc_server_msg_received_total{{{put}}}")), 6.0);
    assert_eq!(first.value(&format!("grpc_server_msg_sent_total{{{put}}}")), 6.0);
    // A refused call sends no message (health checks also read through Range).
    let ranges_ok = first.value(&format!("grpc_server_handled_total{{grpc_code=\"OK\",{range}}}"));
    assert_eq!(first.value(&format!("grpc_server_msg_sent_total{{{range}}}")), ranges_ok);
    assert_eq!(first.value(&format!("grpc_server_msg_received_total{{{range}}}")), ranges_ok + 1.0);
    assert!(first.value("etcd_network_client_grpc_received_bytes_total") >= 35.0);
    assert!(first.value("etcd_network_client_grpc_sent_bytes_total") > 0.0);

    // Store operations as etcd counts them (the txn's put and get too), on
    // every member for writes, where served for ranges; leases; health.
    for member in &cluster {
        let s = until(member, "every write applied", |s| s.value("etcd_mvcc_txn_total") == 1.0);
        assert_eq!(s.value("etcd_mvcc_put_total"), 7.0, "{}", member.name);
        assert_eq!(s.value("etcd_debugging_lease_granted_total"), 1.0);
        assert_eq!(s.value("etcd_debugging_lease_ttl_total_bucket{le=\"64\"}"), 1.0);
        assert_eq!(s.value("etcd_debugging_lease_ttl_total_bucket{le=\"32\"}"), 0.0);
        assert_eq!(s.value("etcd_cluster_version{cluster_version=\"3.5\"}"), 1.0);
        assert_eq!(s.value("etcd_server_is_learner"), 0.0);
        assert!(s.value("process_cpu_seconds_total") > 0.0);
        assert!(s.value("process_open_fds") > 0.0 && s.value("os_fd_limit") >= s.value("os_fd_used"));
    }
    assert_eq!(first.value("etcd_mvcc_range_total"), ranges_ok + 1.0, "Range calls and the txn's get");
    assert_eq!(first.value("etcd_mvcc_delete_total"), 0.0);
    assert_eq!(first.value("etcd_server_health_success"), 1.0);

    // Each peer by its ID: traffic sent, and round trips probed
    // (etcdMemberCommunicationSlow reads their 99th percentile).
    let leader =
        (cluster.iter().map(scrape)).find(|s| s.value("etcd_server_is_leader") == 1.0).expect("a leader");
    let sent = leader.labelled("etcd_network_peer_sent_bytes_total");
    assert_eq!(sent.len(), 2, "two peers: {sent:?}");
    assert!(sent.values().all(|bytes| *bytes > 0.0), "{sent:?}");
    // What the leader sent, each follower received from it.
    let leader_id = leader.labelled("etcd_server_id").into_keys().next().expect("an ID");
    let leader_id = leader_id.trim_start_matches("server_id=\"").trim_end_matches('"').to_string();
    for follower in cluster.iter().map(scrape).filter(|s| s.value("etcd_server_is_leader") == 0.0) {
        let received = follower.labelled("etcd_network_peer_received_bytes_total");
        let from_leader = received.get(&format!("From=\"{leader_id}\"")).copied().unwrap_or(0.0);
        assert!(from_leader > 0.0, "{received:?}");
    }
    let probed = until(&cluster[0], "a round trip to each peer", |s| {
        let counts = s.labelled("etcd_network_peer_round_trip_time_seconds_count");
        counts.len() == 2 && counts.values().all(|n| *n >= 1.0)
    });
    let buckets = probed.labelled("etcd_network_peer_round_trip_time_seconds_bucket");
    for to in probed.labelled("etcd_network_peer_round_trip_time_seconds_count").keys() {
        // The cumulative count at the largest bound up to 0.2 s.
        let within = (buckets.iter())
            .filter_map(|(labels, n)| {
                let le = labels.strip_prefix(&format!("{to},le=\""))?.trim_end_matches('"');
                le.parse::<f64>().ok().filter(|le| *le <= 0.2).map(|_| *n)
            })
            .fold(0.0, f64::max);
        assert!(within >= 1.0, "a probe on loopback takes well under 0.2 s: {to} {buckets:?}");
    }
    // A watcher: counted while its stream lives, with the events it got.
    let mut watch = etcdctl_command(&url).args(["watch", "w"]).stdout(Stdio::null()).spawn().unwrap();
    until(&cluster[0], "one stream with one watcher", |s| {
        s.value("etcd_debugging_mvcc_watch_stream_total") == 1.0
            && s.value("etcd_debugging_mvcc_watcher_total") == 1.0
    });
    ok(etcdctl(&url, &["put", "w", "1"], None));
    until(&cluster[0], "the event sent", |s| s.value("etcd_debugging_mvcc_events_total") == 1.0);
    watch.kill().unwrap();
    watch.wait().unwrap();
    until(&cluster[0], "the stream and its watcher gone", |s| {
        s.value("etcd_debugging_mvcc_watch_stream_total") == 0.0
            && s.value("etcd_debugging_mvcc_watcher_total") == 0.0
    });

    let failures = |s: &Scrape| s.labelled("etcd_network_peer_sent_failures_total").values().sum::<f64>();
    let failed_before = failures(&probed);

    // Two of three members gone: the last one has no leader (etcdNoLeader).
    let changes = first.value("etcd_server_leader_changes_seen_total");
    cluster[1].kill();
    cluster[2].kill();
    until(&cluster[0], "the lone member reports no leader", |s| s.value("etcd_server_has_leader") == 0.0);
    until(&cluster[0], "sends to the dead peers failing", |s| failures(s) > failed_before);
    let sum = |s: &Scrape, family: &str| s.labelled(family).values().sum::<f64>();
    until(&cluster[0], "both peers inactive, each counted lost", |s| {
        sum(s, "etcd_network_active_peers") == 0.0 && sum(s, "etcd_network_disconnected_peers_total") >= 2.0
    });
    // Back: a leader again, and the change counted.
    cluster[1].restart();
    cluster[2].restart();
    wait_healthy(&cluster[1]);
    wait_healthy(&cluster[2]);
    until(&cluster[0], "a leader again, one more change seen", |s| {
        s.value("etcd_server_has_leader") == 1.0 && s.value("etcd_server_leader_changes_seen_total") > changes
    });
    until(&cluster[0], "both peers active again", |s| sum(s, "etcd_network_active_peers") == 2.0);
}

#[test]
fn the_documented_families_are_the_exported_ones() {
    // Every apply counts as slow over a nanosecond.
    let member = start_with(
        Kind::Rtcd,
        "families",
        &["--metrics=extensive", "--experimental-warning-apply-duration=1ns"],
    );
    ok(etcdctl(&member.client_url, &["put", "k", "v"], None));
    // A compaction that removes the first value; each maintenance call
    // timed once.
    ok(etcdctl(&member.client_url, &["put", "k", "v2"], None));
    ok(etcdctl(&member.client_url, &["compaction", "--physical", "3"], None));
    ok(etcdctl(&member.client_url, &["defrag"], None));
    ok(etcdctl(&member.client_url, &["endpoint", "hashkv"], None));
    let saved = member.dir.path().join("saved.db");
    ok(etcdctl(&member.client_url, &["snapshot", "save", saved.to_str().unwrap()], None));
    let scrape = scrape(&member);
    for timed in [
        "etcd_disk_backend_defrag_duration_seconds",
        "etcd_mvcc_hash_rev_duration_seconds",
        "etcd_disk_backend_snapshot_duration_seconds",
    ] {
        assert_eq!(scrape.value(&format!("{timed}_count")), 1.0, "{timed}");
    }
    assert_eq!(scrape.value("etcd_disk_defrag_inflight"), 0.0);
    assert_eq!(scrape.value("etcd_debugging_mvcc_db_compaction_keys_total"), 1.0);
    assert_eq!(scrape.value("etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count"), 1.0);
    assert_eq!(scrape.value("etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds_count"), 1.0);
    assert!(scrape.value("etcd_debugging_mvcc_db_compaction_last") > 1.7e9);
    assert!(scrape.value("etcd_disk_wal_write_duration_seconds_count") >= 3.0, "each write reached the log");
    assert!(scrape.value("etcd_disk_wal_write_bytes_total") > 0.0);
    let put = "op=\"Put\",success=\"true\",version=\"v3\"";
    assert_eq!(scrape.value(&format!("etcd_server_apply_duration_seconds_count{{{put}}}")), 2.0);
    assert!(scrape.value("etcd_server_slow_apply_total") >= 1.0);
    let versions = scrape.labelled("etcd_server_client_requests_total");
    assert!(
        versions.iter().any(|(labels, n)| labels.ends_with("type=\"unary\"") && *n >= 1.0),
        "{versions:?}"
    );
    assert_eq!(scrape.value("etcd_debugging_mvcc_keys_total"), 1.0);
    assert_eq!(scrape.value("promhttp_metric_handler_requests_in_flight"), 1.0, "this scrape");
    let documented = documented_families();
    assert!(documented.len() > 100, "etcd 3.5's families are listed: {}", documented.len());
    for (family, (kind, exported)) in &documented {
        match exported {
            true => assert_eq!(scrape.types.get(family), Some(kind), "{family} is documented as exported"),
            false => {
                assert!(!scrape.types.contains_key(family), "{family} is exported but documented as not")
            }
        }
    }
    let ours = ["etcd_", "grpc_", "os_", "process_"];
    for family in scrape.types.keys().filter(|f| ours.iter().any(|p| f.starts_with(p))) {
        assert!(documented.get(family).is_some_and(|(_, exported)| *exported), "{family} is not documented");
    }
}
