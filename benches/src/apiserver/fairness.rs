//! `apiserver fairness`: what a flood by one user costs another.
//!
//! The quiet user (the global `--token`) gets and creates ConfigMaps from
//! `--clients` clients, first on an otherwise idle server, then while the
//! noisy user (`--flood-token`) lists a namespace of `--objects`
//! ConfigMaps whole and opens watches that start with all of them, from
//! `--flood-clients` clients without pause. With API Priority and Fairness
//! the noisy user waits in its own queues; with max-in-flight only, every
//! flood request runs beside the quiet user's. The summary is of the quiet
//! user's requests under the flood; the idle run's p50/p99 and the flood's
//! own counts (including its 429s) are printed before it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use serde_json::json;

use super::http::Api;
use crate::Target;
use crate::load::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The noisy user's bearer token.
    #[arg(long)]
    flood_token: String,
    /// Concurrent clients of the noisy user.
    #[arg(long, default_value_t = 32)]
    flood_clients: usize,
    /// ConfigMaps in the flooded namespace.
    #[arg(long, default_value_t = 500)]
    objects: u64,
    /// Bytes of data per flooded ConfigMap.
    #[arg(long, default_value_t = 1024)]
    val_size: usize,
    /// The quiet user's requests in each run (half gets, half creates).
    #[arg(long, default_value_t = 2_000)]
    total: u64,
    /// Every this many flood requests, one is a watch instead of a list.
    #[arg(long, default_value_t = 4)]
    watch_every: u64,
}

/// The namespaces: the flood's, and the quiet user's.
const FLOODED: &str = "fairness-flood";
const QUIET: &str = "fairness-quiet";

pub async fn run(api: &Api, target: &Target, args: Args) -> Result<Outcome, String> {
    let noisy = api.with_token(&args.flood_token)?;
    for namespace in [FLOODED, QUIET] {
        super::ensure_namespace(api, namespace).await?;
    }
    fill(api, &args, target).await?;
    let run_id = super::run_id();
    super::create::create_many(api, QUIET, 1, 16, 1, true).await?;
    let target_name = first_configmap(api, QUIET).await?;

    let idle = quiet_run(api, target, &args, &format!("{run_id}-idle"), &target_name).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(FloodCounts::default());
    let flood: Vec<_> = (0..args.flood_clients)
        .map(|_| tokio::spawn(flood_client(noisy.clone(), args.watch_every, stop.clone(), counts.clone())))
        .collect();
    // Let the flood fill its queues (and the levels' borrowing settle).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let flooded = quiet_run(api, target, &args, &format!("{run_id}-flood"), &target_name).await;
    stop.store(true, Ordering::Relaxed);
    for client in flood {
        let _ = client.await;
    }
    let flooded = flooded?;
    super::say(
        target.quiet,
        &format!(
            "Fairness: the quiet user's gets and creates by {}; idle server: p50 {:.2} ms, p99 {:.2} ms; \
             under the flood: p50 {:.2} ms, p99 {:.2} ms (p99 {:.1}x idle).",
            super::clients(target.clients),
            super::ms(&idle.latencies, 0.5),
            super::ms(&idle.latencies, 0.99),
            super::ms(&flooded.latencies, 0.5),
            super::ms(&flooded.latencies, 0.99),
            super::ms(&flooded.latencies, 0.99) / super::ms(&idle.latencies, 0.99).max(0.001),
        ),
    );
    super::say(
        target.quiet,
        &format!(
            "Flood: {} clients listing {} ConfigMaps ({} B each) and watching from the start: {} lists and \
             {} watches served, {} refused with 429, {} other errors.",
            args.flood_clients,
            args.objects,
            args.val_size,
            counts.lists.load(Ordering::Relaxed),
            counts.watches.load(Ordering::Relaxed),
            counts.refused.load(Ordering::Relaxed),
            counts.errors.load(Ordering::Relaxed),
        ),
    );
    Ok(flooded)
}

/// Fills the flooded namespace up to `--objects` (not timed).
async fn fill(api: &Api, args: &Args, target: &Target) -> Result<(), String> {
    let reply = api.get(&format!("{}?limit=1", super::configmaps(FLOODED))).await?;
    let body: serde_json::Value = serde_json::from_slice(&reply.body).map_err(|e| e.to_string())?;
    let remaining = body["metadata"]["remainingItemCount"].as_u64().unwrap_or(0);
    let present = remaining + body["items"].as_array().map_or(0, |items| items.len() as u64);
    if present < args.objects {
        // One client: never more writes at once than the smallest
        // max-in-flight limit lets through.
        let fill =
            super::create::create_many(api, FLOODED, args.objects - present, args.val_size, 1, target.quiet)
                .await?;
        if fill.errors > 0 {
            return Err(format!("filling {FLOODED}: {}", fill.error_samples.join("; ")));
        }
    }
    Ok(())
}

async fn first_configmap(api: &Api, namespace: &str) -> Result<String, String> {
    let reply = api.get(&format!("{}?limit=1", super::configmaps(namespace))).await?;
    let body: serde_json::Value = serde_json::from_slice(&reply.body).map_err(|e| e.to_string())?;
    body["items"][0]["metadata"]["name"].as_str().map(str::to_string).ok_or("no ConfigMap to get".into())
}

/// The quiet user's `--total` requests: even ones get `name`, odd ones
/// create a new small ConfigMap.
async fn quiet_run(
    api: &Api,
    target: &Target,
    args: &Args,
    prefix: &str,
    name: &str,
) -> Result<Outcome, String> {
    let (api, prefix) = (api.clone(), Arc::<str>::from(prefix));
    let get_path = Arc::<str>::from(format!("{}/{name}", super::configmaps(QUIET)));
    super::concurrently(target.clients, args.total, target.quiet, move |n| {
        let (api, prefix, get_path) = (api.clone(), prefix.clone(), get_path.clone());
        async move {
            let began = Instant::now();
            let reply = match n % 2 {
                0 => api.get(&get_path).await?,
                _ => {
                    let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("{prefix}-{n}")}, "data": {"n": n.to_string()}});
                    api.post(&super::configmaps(QUIET), &object).await?
                }
            };
            match reply.status.as_u16() {
                200 | 201 => Ok(began.elapsed()),
                _ => Err(reply.describe()),
            }
        }
    })
    .await
}

#[derive(Debug, Default)]
struct FloodCounts {
    lists: AtomicU64,
    watches: AtomicU64,
    refused: AtomicU64,
    errors: AtomicU64,
}

/// Lists and watches the flooded namespace until `stop`.
async fn flood_client(api: Api, watch_every: u64, stop: Arc<AtomicBool>, counts: Arc<FloodCounts>) {
    let path = super::configmaps(FLOODED);
    let mut n: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let watch = watch_every > 0 && n.is_multiple_of(watch_every);
        let status = match watch {
            true => watch_initial_state(&api, &path).await,
            false => api.get(&path).await.map(|reply| reply.status.as_u16()),
        };
        let counter = match status {
            Ok(200) if watch => &counts.watches,
            Ok(200) => &counts.lists,
            Ok(429) => &counts.refused,
            _ => &counts.errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Opens a watch that starts with every object, reads its first 64 KiB of
/// events (or a second's worth), and drops it.
async fn watch_initial_state(api: &Api, path: &str) -> Result<u16, String> {
    let mut response = api.open(&format!("{path}?watch=1&timeoutSeconds=5")).await?;
    let status = response.status().as_u16();
    if status != 200 {
        return Ok(status);
    }
    let read = async {
        let mut bytes = 0;
        while bytes < 64 * 1024 {
            match response.frame().await {
                Some(Ok(frame)) => bytes += frame.data_ref().map_or(0, |d| d.len()),
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), read).await;
    Ok(status)
}
