//! `apiserver`: a Kubernetes-style API server (rtcd-apiserver, or
//! kube-apiserver) measured over its REST API, as clients see it, so the
//! same server can be compared on rtcd and on etcd.
//!
//! * `create`: POSTs ConfigMaps (`--val-size` bytes of data each) from
//!   `--clients` concurrent clients, or Pods, or Widgets (a custom resource
//!   with the same data); the summary is of the POSTs.
//! * `list`: fills a namespace up to `--objects` ConfigMaps (untimed), then
//!   lists it all `--total` times, whole (`--limit 0`, served from the watch
//!   cache) or in `--limit` pages following `continue` as client-go does
//!   (served from etcd); the summary is of whole traversals.
//! * `watch`: `--watchers` watch connections on the ConfigMaps of a
//!   namespace, then `--updates` merge patches of one ConfigMap, each
//!   carrying its send time; the summary is of every watcher's every event
//!   (send → receive), and a watcher that misses an event, or gets one out of
//!   order, counts as errors.
//! * `write`: writes new data into existing ConfigMaps by server-side apply
//!   (`--how apply`) or by PUT (`--how update`), for the same objects; the
//!   summary is of the writes.
//! * `fairness`: one user's gets and creates timed on an idle server, then
//!   while another user (`--flood-token`) floods lists and watches; the
//!   summary is of the quiet user's requests under the flood.
//!
//! The global `--clients` is the concurrency; `--endpoints` and `--conns`
//! (gRPC) do not apply, the server is `--server`.

mod crd;
mod create;
mod fairness;
mod http;
mod list;
mod watch;
mod write;

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::Target;
use crate::load::Outcome;
use http::Api;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The API server's URL (plain HTTP).
    #[arg(long, default_value = "http://127.0.0.1:6443")]
    server: String,
    /// A bearer token sent with every request (a user of the server's
    /// `--token-auth-file`), to measure with authentication and RBAC on.
    #[arg(long)]
    token: Option<String>,
    #[command(subcommand)]
    measure: Measure,
}

#[derive(Debug, clap::Subcommand)]
enum Measure {
    /// POSTs new ConfigMaps.
    Create(create::Args),
    /// Lists a namespace of ConfigMaps, whole or in pages.
    List(list::Args),
    /// Watch event latency and completeness over many watchers.
    Watch(watch::Args),
    /// Writes to existing ConfigMaps: server-side apply or update.
    Write(write::Args),
    /// One user's gets and creates, idle and under another user's flood
    /// of lists and watches (API Priority and Fairness on or off).
    Fairness(fairness::Args),
}

pub async fn run(target: &Target, args: Args) -> Result<Outcome, String> {
    let api = Api::new(&args.server, args.token.as_deref())?;
    match args.measure {
        Measure::Create(create) => create::run(&api, target, create).await,
        Measure::List(list) => list::run(&api, target, list).await,
        Measure::Watch(watch) => watch::run(&api, target, watch).await,
        Measure::Write(write) => write::run(&api, target, write).await,
        Measure::Fairness(fairness) => fairness::run(&api, target, fairness).await,
    }
}

/// The collection path of ConfigMaps in `namespace`.
fn configmaps(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/configmaps")
}

/// Creates `namespace` unless it exists (objects go only into namespaces
/// that exist).
async fn ensure_namespace(api: &Api, namespace: &str) -> Result<(), String> {
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    let reply = api.post("/api/v1/namespaces", &body).await?;
    match reply.status.as_u16() {
        201 | 409 => Ok(()),
        _ => Err(format!("creating namespace {namespace}: {}", reply.describe())),
    }
}

/// A ConfigMap named `name` whose data is `val_size` bytes of payload.
fn configmap(name: &str, val_size: usize) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"payload": "v".repeat(val_size)},
    })
}

/// Nanoseconds since the Unix epoch (0 if the clock is before it).
fn unix_nanos() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// A name prefix of this run's own, so reruns against the same server never
/// collide with earlier objects.
fn run_id() -> String {
    format!("b{:x}", unix_nanos() / 1000)
}

/// A side note to the summary: on stdout before it, or on stderr with
/// `--json` (stdout then holds exactly the one JSON object). Progress bars
/// here end their own lines.
fn say(quiet: bool, text: &str) {
    if quiet {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// "1 client", "50 clients".
fn clients(n: usize) -> String {
    if n == 1 { "1 client".into() } else { format!("{n} clients") }
}

/// Milliseconds at quantile `q` of a microsecond histogram.
fn ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

/// Runs `op(n)` for n in 0..total from `clients` concurrent tasks; each
/// successful op returns the latency to record (so an op can leave out its
/// own client-side work), each failed one why. A progress bar on stderr
/// unless `quiet`.
async fn concurrently<F, Fut>(clients: usize, total: u64, quiet: bool, op: F) -> Result<Outcome, String>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<std::time::Duration, String>> + Send,
{
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    let tally = Arc::new(crate::load::Tally::new().map_err(|e| e.to_string())?);
    let next = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let op = Arc::new(op);
    let ticker = crate::load::Ticker::start(done.clone(), crate::progress(total, quiet));
    let began = std::time::Instant::now();
    let tasks: Vec<_> = (0..clients.max(1))
        .map(|_| {
            let (tally, next, done, op) = (tally.clone(), next.clone(), done.clone(), op.clone());
            tokio::spawn(async move {
                let mut local = tally.histogram();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        break;
                    }
                    match op(n).await {
                        Ok(latency) => {
                            let _ = local.record(crate::load::micros(latency));
                        }
                        Err(e) => tally.error(e),
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
                local
            })
        })
        .collect();
    let mut latencies = tally.histogram();
    for task in tasks {
        match task.await {
            Ok(local) => {
                let _ = latencies.add(local);
            }
            Err(e) => tally.error(format!("a client task failed: {e}")),
        }
    }
    let elapsed = began.elapsed();
    drop(ticker);
    if !quiet {
        eprintln!();
    }
    Ok(tally.outcome(elapsed, &latencies))
}
