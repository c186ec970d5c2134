//! `apiserver list`: latency of listing a whole namespace of ConfigMaps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::http::{Api, encode_query};
use crate::Target;
use crate::load::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// ConfigMaps the namespace must hold; missing ones are created before
    /// the clock starts.
    #[arg(long, default_value_t = 10_000)]
    objects: u64,
    /// Whole traversals of the namespace, over all clients.
    #[arg(long, default_value_t = 20)]
    total: u64,
    /// Items per page, following `continue` to the end (client-go's and
    /// kubectl's chunking is 500); 0 lists everything in one response.
    #[arg(long, default_value_t = 0)]
    limit: u64,
    /// The namespace listed (created if missing).
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Bytes of data per ConfigMap created to fill the namespace.
    #[arg(long, default_value_t = 1024)]
    val_size: usize,
    /// Concurrent clients that fill the namespace.
    #[arg(long, default_value_t = 50)]
    fill_clients: usize,
}

/// What a list response says, as far as counting goes: the items are
/// skipped over, not decoded.
#[derive(Debug, Deserialize)]
struct ListBody {
    #[serde(default)]
    metadata: ListMeta,
    #[serde(default)]
    items: Vec<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
struct ListMeta {
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

/// One whole traversal.
#[derive(Debug, Clone, Copy)]
struct Traversal {
    items: u64,
    pages: u64,
    bytes: u64,
    /// The pages' request → last byte times, summed: the client's decoding
    /// of each page is left out.
    http: Duration,
}

pub async fn run(api: &Api, target: &Target, args: Args) -> Result<Outcome, String> {
    super::ensure_namespace(api, &args.namespace).await?;
    let path: Arc<str> = super::configmaps(&args.namespace).into();
    let present = traverse(api, &path, 500).await?.items;
    if present < args.objects {
        let missing = args.objects - present;
        eprintln!("list: creating {missing} ConfigMaps in {} (not timed)", args.namespace);
        let fill = super::create::create_many(
            api,
            &args.namespace,
            missing,
            args.val_size,
            args.fill_clients,
            target.quiet,
        )
        .await?;
        if fill.errors > 0 {
            return Err(format!(
                "filling namespace {}: {} creates failed: {}",
                args.namespace,
                fill.errors,
                fill.error_samples.join("; ")
            ));
        }
    }
    // One untimed traversal, which also says how many items to expect.
    let warm = traverse(api, &path, args.limit).await?;
    let expected = warm.items;
    if expected < args.objects {
        return Err(format!(
            "namespace {} lists {expected} ConfigMaps, not {}",
            args.namespace, args.objects
        ));
    }
    let (api, limit, run_path) = (api.clone(), args.limit, path.clone());
    let outcome = super::concurrently(target.clients, args.total, target.quiet, move |_| {
        let (api, path) = (api.clone(), run_path.clone());
        async move {
            let t = traverse(&api, &path, limit).await?;
            if t.items != expected {
                return Err(format!("a list returned {} items, {expected} expected", t.items));
            }
            Ok(t.http)
        }
    })
    .await?;
    let how = if args.limit == 0 {
        "whole, in one response".to_string()
    } else {
        format!("in {} pages of up to {}", warm.pages, args.limit)
    };
    super::say(
        target.quiet,
        &format!(
            "List: {} traversals of {path} ({expected} items, {how}, {:.1} MiB) by {}; \
             latency is request to last byte, summed over pages.",
            args.total,
            warm.bytes as f64 / (1024.0 * 1024.0),
            super::clients(target.clients),
        ),
    );
    Ok(outcome)
}

/// Lists `path` to the end, `limit` items a page (0: one response).
async fn traverse(api: &Api, path: &str, limit: u64) -> Result<Traversal, String> {
    let mut t = Traversal { items: 0, pages: 0, bytes: 0, http: Duration::ZERO };
    let mut token: Option<String> = None;
    loop {
        let url = match (&token, limit) {
            (_, 0) => path.to_string(),
            (None, limit) => format!("{path}?limit={limit}"),
            (Some(token), limit) => format!("{path}?limit={limit}&continue={}", encode_query(token)),
        };
        let began = Instant::now();
        let reply = api.get(&url).await?;
        t.http += began.elapsed();
        if reply.status.as_u16() != 200 {
            return Err(format!("list (page {}): {}", t.pages + 1, reply.describe()));
        }
        let body: ListBody = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("list (page {}): not a list: {e}", t.pages + 1))?;
        t.pages += 1;
        t.items += body.items.len() as u64;
        t.bytes += reply.body.len() as u64;
        token = body.metadata.continue_token.filter(|c| !c.is_empty());
        if token.is_none() {
            return Ok(t);
        }
        if limit == 0 {
            return Err("a list without a limit came back with a continue token".into());
        }
    }
}
