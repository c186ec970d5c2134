//! `/metrics`: every family with etcd's names, types, labels and help
//! texts (so etcd's alerting rules and dashboards read rtcd as they read
//! etcd), in Prometheus text format. What is counted as it happens lives in
//! `metrics`; what is a state of the member (leader, sizes, revisions) is
//! read here at each scrape. `docs/monitoring/metrics.md` lists the
//! families against etcd 3.5's.

use std::sync::Arc;

use rtcd_metrics::text;
use rtcd_raft::peer_stats::{PeerCounters, Transfers};

use crate::node::Node;
use crate::version::ETCD_COMPAT_VERSION;

/// The cluster version rtcd reports (`/version`'s `etcdcluster`, major and
/// minor only, as etcd labels it).
const CLUSTER_VERSION: &str = "3.5";

pub fn render(node: &Node) -> String {
    let mut out = String::new();
    server(&mut out, node);
    disk(&mut out, node);
    network(&mut out, node);
    mvcc(&mut out, node);
    node.metrics().lease.render(&mut out);
    node.metrics().watch.render(&mut out);
    node.metrics().grpc.render(&mut out);
    process(&mut out, node);
    out
}

fn gauge(out: &mut String, name: &str, help: &str, value: f64) {
    text::single(out, name, "gauge", help, value)
}

fn counter(out: &mut String, name: &str, help: &str, value: f64) {
    text::single(out, name, "counter", help, value)
}

/// A gauge that is 1 for the one value its label carries.
fn labelled_one(out: &mut String, name: &str, help: &str, label: &str, value: &str) {
    text::family(out, name, "gauge", help, [(format!("{label}=\"{value}\""), 1.0)]);
}

/// Leadership, identity, proposals, quota and health checks.
fn server(out: &mut String, node: &Node) {
    let counted = node.metrics();
    let has_leader = f64::from(u8::from(node.raft().leader().is_some()));
    gauge(
        out,
        "etcd_server_has_leader",
        "Whether or not a leader exists. 1 is existence, 0 is not.",
        has_leader,
    );
    let is_leader = f64::from(u8::from(node.is_leader()));
    gauge(
        out,
        "etcd_server_is_leader",
        "Whether or not this member is a leader. 1 if is, 0 otherwise.",
        is_leader,
    );
    let is_learner = f64::from(u8::from(node.raft().is_learner()));
    let help = "Whether or not this member is a learner. 1 if is, 0 otherwise.";
    gauge(out, "etcd_server_is_learner", help, is_learner);
    let changes = counted.leader_changes() as f64;
    counter(out, "etcd_server_leader_changes_seen_total", "The number of leader changes seen.", changes);
    let help = "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.";
    labelled_one(out, "etcd_server_id", help, "server_id", &format!("{:x}", node.member_id()));
    let help = "Which version is running. 1 for 'server_version' label with current version.";
    labelled_one(out, "etcd_server_version", help, "server_version", ETCD_COMPAT_VERSION);
    let help = "Which version is running. 1 for 'cluster_version' label with current cluster version";
    labelled_one(out, "etcd_cluster_version", help, "cluster_version", CLUSTER_VERSION);

    let (applied, committed) = node.raft().indexes();
    let help = "The total number of consensus proposals committed.";
    gauge(out, "etcd_server_proposals_committed_total", help, committed as f64);
    let help = "The total number of consensus proposals applied.";
    gauge(out, "etcd_server_proposals_applied_total", help, applied as f64);
    let pending = counted.proposals_pending() as f64;
    gauge(
        out,
        "etcd_server_proposals_pending",
        "The current number of pending proposals to commit.",
        pending,
    );
    let failed = counted.proposals_failed() as f64;
    counter(out, "etcd_server_proposals_failed_total", "The total number of failed proposals seen.", failed);
    let quota = node.settings().quota_backend_bytes as f64;
    gauge(out, "etcd_server_quota_backend_bytes", "Current backend storage quota size in bytes.", quota);

    let failed = counted.read_indexes_failed() as f64;
    let help = "The total number of failed read indexes seen.";
    counter(out, "etcd_server_read_indexes_failed_total", help, failed);
    let slow = node.store().apply_times().slow() as f64;
    let help = "The total number of slow apply requests (likely overloaded from slow disk).";
    counter(out, "etcd_server_slow_apply_total", help, slow);
    let times = node.store().apply_times().histograms();
    let applies: Vec<(String, &rtcd_metrics::Histogram)> = (times.iter())
        .map(|(op, succeeded, h)| (format!("op=\"{op}\",success=\"{succeeded}\",version=\"v3\""), &**h))
        .collect();
    let help = "The latency distributions of v2 apply called by backend.";
    text::histogram(out, "etcd_server_apply_duration_seconds", help, &applies);

    let installing = node.raft().snapshots_installing() as f64;
    let help = "1 if the server is applying the incoming snapshot. 0 if none.";
    gauge(out, "etcd_server_snapshot_apply_in_progress_total", help, installing);

    let (healthy, unhealthy) = counted.health_checks();
    counter(
        out,
        "etcd_server_health_success",
        "The total number of successful health checks",
        healthy as f64,
    );
    counter(out, "etcd_server_health_failures", "The total number of failed health checks", unhealthy as f64);
    if let Ok(auth) = node.store().auth() {
        let help = "The current revision of auth store.";
        gauge(out, "etcd_debugging_auth_revision", help, auth.revision() as f64);
    }
}

/// The Raft log's syncs and the store's commits.
fn disk(out: &mut String, node: &Node) {
    let wal = node.raft().wal_stats();
    let fsyncs = [(String::new(), wal.fsync_durations())];
    let help = "The latency distributions of fsync called by WAL.";
    text::histogram(out, "etcd_disk_wal_fsync_duration_seconds", help, &fsyncs);
    let writes = [(String::new(), wal.write_durations())];
    let help = "The latency distributions of write called by WAL.";
    text::histogram(out, "etcd_disk_wal_write_duration_seconds", help, &writes);
    gauge(
        out,
        "etcd_disk_wal_write_bytes_total",
        "Total number of bytes written in WAL.",
        wal.written_bytes() as f64,
    );
    let commits = [(String::new(), node.store().commit_durations())];
    let help = "The latency distributions of commit called by backend.";
    text::histogram(out, "etcd_disk_backend_commit_duration_seconds", help, &commits);
    node.metrics().maintenance.render(out);
}

/// Snapshots received, and what the peer transport counted per peer (`To`
/// and `From` are the peer's ID in hexadecimal, as etcd labels them).
fn network(out: &mut String, node: &Node) {
    let peers = node.raft().peer_stats();
    snapshots(out, &peers);
    let per_peer = |label: &str, value: fn(&PeerCounters) -> u64| -> Vec<(String, f64)> {
        peers.iter().map(|(id, c)| (format!("{label}=\"{id:x}\""), value(c) as f64)).collect()
    };
    let help = "The total number of bytes sent to peers.";
    let sent = per_peer("To", PeerCounters::sent_bytes);
    text::family(out, "etcd_network_peer_sent_bytes_total", "counter", help, sent);
    let help = "The total number of bytes received from peers.";
    let received = per_peer("From", PeerCounters::received_bytes);
    text::family(out, "etcd_network_peer_received_bytes_total", "counter", help, received);
    let help = "The total number of send failures from peers.";
    let failures = per_peer("To", PeerCounters::sent_failures);
    text::family(out, "etcd_network_peer_sent_failures_total", "counter", help, failures);
    let local = node.member_id();
    let pair = |id: &u64| format!("Local=\"{local:x}\",Remote=\"{id:x}\"");
    let active = peers.iter().map(|(id, c)| (pair(id), f64::from(u8::from(c.active()))));
    let help = "The current number of active peer connections.";
    text::family(out, "etcd_network_active_peers", "gauge", help, active);
    let lost = peers.iter().map(|(id, c)| (pair(id), c.disconnections() as f64));
    let help = "The total number of disconnected peers.";
    text::family(out, "etcd_network_disconnected_peers_total", "counter", help, lost);
    let round_trips: Vec<(String, &rtcd_metrics::Histogram)> =
        peers.iter().map(|(id, c)| (format!("To=\"{id:x}\""), c.round_trips())).collect();
    let help = "Round-Trip-Time histogram between peers";
    text::histogram(out, "etcd_network_peer_round_trip_time_seconds", help, &round_trips);
}

/// Snapshots sent to each peer (`To`) and received from each (`From`).
fn snapshots(out: &mut String, peers: &[(u64, Arc<PeerCounters>)]) {
    type Way = fn(&PeerCounters) -> &Transfers;
    let ways: [(&str, &str, &str, Way); 2] = [
        ("send", "sends", "To", |p| &p.snapshot_sends),
        ("receive", "receives", "From", |p| &p.snapshot_receives),
    ];
    for (way, ways_noun, label, of) in ways {
        let series = |value: fn(&Transfers) -> f64| -> Vec<(String, f64)> {
            peers.iter().map(|(id, c)| (format!("{label}=\"{id:x}\""), value(of(c)))).collect()
        };
        let name = format!("etcd_network_snapshot_{way}_success");
        let help = format!("Total number of successful snapshot {ways_noun}");
        text::family(out, &name, "counter", &help, series(|t| t.succeeded() as f64));
        let name = format!("etcd_network_snapshot_{way}_failures");
        let help = format!("Total number of snapshot {way} failures");
        text::family(out, &name, "counter", &help, series(|t| t.failed() as f64));
        let name = format!("etcd_network_snapshot_{way}_inflights_total");
        let help = format!("Total number of inflight snapshot {ways_noun}");
        text::family(out, &name, "gauge", &help, series(|t| t.in_flight() as f64));
        let durations: Vec<(String, &rtcd_metrics::Histogram)> =
            peers.iter().map(|(id, c)| (format!("{label}=\"{id:x}\""), of(c).durations())).collect();
        let name = format!("etcd_network_snapshot_{way}_total_duration_seconds");
        let help = format!("Total latency distributions of v3 snapshot {ways_noun}");
        text::histogram(out, &name, &help, &durations);
    }
}

/// The store's size and revisions, and its operations.
fn mvcc(out: &mut String, node: &Node) {
    let store = node.store();
    let help = "Total size of the underlying database physically allocated in bytes.";
    gauge(out, "etcd_mvcc_db_total_size_in_bytes", help, store.size_bytes() as f64);
    let help = "Total size of the underlying database logically in use in bytes.";
    gauge(out, "etcd_mvcc_db_total_size_in_use_in_bytes", help, store.size_in_use_bytes() as f64);
    let rev = store.revision().unwrap_or(0) as f64;
    gauge(out, "etcd_debugging_mvcc_current_revision", "The current revision of store.", rev);
    let compacted = store.compacted_revision().unwrap_or(0) as f64;
    let help = "The revision of the last compaction in store.";
    gauge(out, "etcd_debugging_mvcc_compact_revision", help, compacted);
    compactions(out, store.compaction_stats());
    let keys = store.key_count() as f64;
    gauge(out, "etcd_debugging_mvcc_keys_total", "Total number of keys.", keys);
    node.metrics().mvcc.render(out);
}

/// What compactions cost (etcd's debugging families, in milliseconds).
fn compactions(out: &mut String, stats: &rtcd_store::CompactionStats) {
    let one = |h| [(String::new(), h)];
    let help = "Bucketed histogram of index compaction pause duration.";
    let name = "etcd_debugging_mvcc_index_compaction_pause_duration_milliseconds";
    text::histogram(out, name, help, &one(stats.index_pauses()));
    let help = "Bucketed histogram of db compaction pause duration.";
    let name = "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds";
    text::histogram(out, name, help, &one(stats.db_pauses()));
    let help = "Bucketed histogram of db compaction total duration.";
    let name = "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds";
    text::histogram(out, name, help, &one(stats.totals()));
    let help = "The unix time of the last db compaction. Resets to 0 on start.";
    gauge(out, "etcd_debugging_mvcc_db_compaction_last", help, stats.last_finished() as f64);
    let help = "Total number of db keys compacted.";
    counter(out, "etcd_debugging_mvcc_db_compaction_keys_total", help, stats.records_deleted() as f64);
}

/// The process families, etcd's own file descriptor gauges, and the scrape
/// handler's counts (Prometheus's Go handler adds them to every page; the
/// codes it can answer are there from the start).
fn process(out: &mut String, node: &Node) {
    let (served, in_flight) = node.metrics().scrapes();
    let codes = [("200", served as f64), ("500", 0.0), ("503", 0.0)];
    let help = "Total number of scrapes by HTTP status code.";
    let by_code = codes.map(|(code, n)| (format!("code=\"{code}\""), n));
    text::family(out, "promhttp_metric_handler_requests_total", "counter", help, by_code);
    gauge(
        out,
        "promhttp_metric_handler_requests_in_flight",
        "Current number of scrapes being served.",
        in_flight as f64,
    );
    rtcd_metrics::process::render(out);
    if let Some((used, limit)) = rtcd_metrics::process::file_descriptors() {
        gauge(out, "os_fd_used", "The number of used file descriptors.", used as f64);
        gauge(out, "os_fd_limit", "The file descriptor limit.", limit);
    }
}
