//! The HTTP endpoints etcd serves on its client port beside gRPC: `/health`,
//! `/version` and `/metrics` (Prometheus text, etcd's metric names), and
//! etcd's answer for paths nothing serves.

use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use rtcd_metrics::text;
use rtcd_proto::etcdserverpb::RangeRequest;
use rtcd_raft::peer_stats::PeerCounters;

use crate::node::Node;
use crate::version::ETCD_COMPAT_VERSION;

pub fn routes(node: Arc<Node>) -> Router {
    let (h, m) = (node.clone(), node);
    Router::new()
        .route("/health", get(move || health(h.clone())))
        .route("/version", get(version))
        .route("/metrics", get(move || metrics(m.clone())))
}

/// What a path nothing serves gets, as etcd answers it: a gRPC client gets
/// gRPC's Unimplemented; under the gateway's prefixes, grpc-gateway's 404
/// (`Not Found`); anywhere else, Go's (`404 page not found`).
pub async fn not_found(request: axum::extract::Request) -> axum::response::Response {
    let grpc = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| t.starts_with("application/grpc"));
    if grpc {
        let (parts, ()) = tonic::Status::unimplemented("").into_http::<()>().into_parts();
        return axum::response::Response::from_parts(parts, axum::body::Body::empty());
    }
    let path = request.uri().path();
    let text = match path.starts_with("/v3/") || path.starts_with("/v3beta/") {
        true => "Not Found\n",
        false => "404 page not found\n",
    };
    let headers =
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::X_CONTENT_TYPE_OPTIONS, "nosniff")];
    (StatusCode::NOT_FOUND, headers, text).into_response()
}

fn json(status: StatusCode, body: String) -> impl IntoResponse {
    (status, [(header::CONTENT_TYPE, "application/json")], body)
}

/// Healthy when a read of the store succeeds, as etcd's check does a read.
async fn health(node: Arc<Node>) -> impl IntoResponse {
    let probe = RangeRequest { key: Bytes::from_static(b"health"), ..Default::default() };
    match node.store().range(&probe) {
        Ok(_) => json(StatusCode::OK, r#"{"health":"true","reason":""}"#.to_string()),
        Err(e) => json(StatusCode::SERVICE_UNAVAILABLE, format!(r#"{{"health":"false","reason":"{e}"}}"#)),
    }
}

async fn version() -> impl IntoResponse {
    json(StatusCode::OK, format!(r#"{{"etcdserver":"{ETCD_COMPAT_VERSION}","etcdcluster":"3.5.0"}}"#))
}

async fn metrics(node: Arc<Node>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], metrics_text(&node))
}

/// Every family of `/metrics`, with etcd's names, types, labels and help
/// texts (so etcd's alerting rules and dashboards read rtcd as they read
/// etcd), in Prometheus text format.
fn metrics_text(node: &Node) -> String {
    let mut out = String::new();
    let counted = node.metrics();
    let store = node.store();
    let (applied, committed) = node.raft().indexes();
    let gauge =
        |out: &mut String, name: &str, help: &str, value: f64| text::single(out, name, "gauge", help, value);
    let counter = |out: &mut String, name: &str, help: &str, value: f64| {
        text::single(out, name, "counter", help, value)
    };

    let has_leader = f64::from(u8::from(node.raft().leader().is_some()));
    gauge(
        &mut out,
        "etcd_server_has_leader",
        "Whether or not a leader exists. 1 is existence, 0 is not.",
        has_leader,
    );
    let is_leader = f64::from(u8::from(node.is_leader()));
    gauge(
        &mut out,
        "etcd_server_is_leader",
        "Whether or not this member is a leader. 1 if is, 0 otherwise.",
        is_leader,
    );
    let changes = counted.leader_changes() as f64;
    counter(&mut out, "etcd_server_leader_changes_seen_total", "The number of leader changes seen.", changes);
    let id = format!("server_id=\"{:x}\"", node.member_id());
    text::family(
        &mut out,
        "etcd_server_id",
        "gauge",
        "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
        [(id, 1.0)],
    );
    let version = format!("server_version=\"{ETCD_COMPAT_VERSION}\"");
    text::family(
        &mut out,
        "etcd_server_version",
        "gauge",
        "Which version is running. 1 for 'server_version' label with current version.",
        [(version, 1.0)],
    );
    counter(
        &mut out,
        "etcd_server_proposals_committed_total",
        "The total number of consensus proposals committed.",
        committed as f64,
    );
    counter(
        &mut out,
        "etcd_server_proposals_applied_total",
        "The total number of consensus proposals applied.",
        applied as f64,
    );
    let pending = counted.proposals_pending() as f64;
    gauge(
        &mut out,
        "etcd_server_proposals_pending",
        "The current number of pending proposals to commit.",
        pending,
    );
    let failed = counted.proposals_failed() as f64;
    counter(
        &mut out,
        "etcd_server_proposals_failed_total",
        "The total number of failed proposals seen.",
        failed,
    );
    let quota = node.settings().quota_backend_bytes as f64;
    gauge(&mut out, "etcd_server_quota_backend_bytes", "Current backend storage quota size in bytes.", quota);

    let installed = node.raft().snapshots_installed() as f64;
    counter(
        &mut out,
        "etcd_network_snapshot_receive_success",
        "Total number of successful snapshot receives",
        installed,
    );
    let size = store.size_bytes() as f64;
    gauge(
        &mut out,
        "etcd_mvcc_db_total_size_in_bytes",
        "Total size of the underlying database physically allocated in bytes.",
        size,
    );
    let in_use = store.size_in_use_bytes() as f64;
    gauge(
        &mut out,
        "etcd_mvcc_db_total_size_in_use_in_bytes",
        "Total size of the underlying database logically in use in bytes.",
        in_use,
    );
    let rev = store.revision().unwrap_or(0) as f64;
    gauge(&mut out, "etcd_debugging_mvcc_current_revision", "The current revision of store.", rev);
    let compacted = store.compacted_revision().unwrap_or(0) as f64;
    gauge(
        &mut out,
        "etcd_debugging_mvcc_compact_revision",
        "The revision of the last compaction in store.",
        compacted,
    );
    let fsyncs = [(String::new(), node.raft().fsync_durations())];
    text::histogram(
        &mut out,
        "etcd_disk_wal_fsync_duration_seconds",
        "The latency distributions of fsync called by WAL.",
        &fsyncs,
    );
    let commits = [(String::new(), store.commit_durations())];
    text::histogram(
        &mut out,
        "etcd_disk_backend_commit_duration_seconds",
        "The latency distributions of commit called by backend.",
        &commits,
    );
    peer_metrics(&mut out, &node.raft().peer_stats());
    counted.grpc.render(&mut out);
    if let Some(rss) = resident_memory_bytes() {
        gauge(&mut out, "process_resident_memory_bytes", "Resident memory size in bytes.", rss as f64);
    }
    out
}

/// What the peer transport counted, per peer (`To` is the peer's ID in
/// hexadecimal, as etcd labels it).
fn peer_metrics(out: &mut String, peers: &[(u64, Arc<PeerCounters>)]) {
    let to = |id: &u64| format!("To=\"{id:x}\"");
    text::family(
        out,
        "etcd_network_peer_sent_bytes_total",
        "counter",
        "The total number of bytes sent to peers.",
        peers.iter().map(|(id, c)| (to(id), c.sent_bytes() as f64)),
    );
    text::family(
        out,
        "etcd_network_peer_sent_failures_total",
        "counter",
        "The total number of send failures from peers.",
        peers.iter().map(|(id, c)| (to(id), c.sent_failures() as f64)),
    );
    let round_trips: Vec<_> = peers.iter().map(|(id, c)| (to(id), c.round_trips())).collect();
    text::histogram(
        out,
        "etcd_network_peer_round_trip_time_seconds",
        "Round-Trip-Time histogram between peers",
        &round_trips,
    );
}

/// From /proc (Linux); other systems simply do not report it.
fn resident_memory_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
