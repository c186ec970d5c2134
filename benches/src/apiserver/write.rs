//! `apiserver write`: writes to existing ConfigMaps, by server-side apply
//! or by update, throughput and latency, for the same objects and sizes.
//!
//! `--objects` ConfigMaps are made first (untimed); then `--total` writes
//! go round them, each giving its object a new `--val-size` payload: a
//! server-side apply (PATCH `application/apply-patch+yaml`, one field
//! manager, so no conflicts) or an update (PUT of the whole object without
//! a resourceVersion, so no 409s). The summary is of the writes.

use std::sync::Arc;
use std::time::Instant;

use super::http::Api;
use crate::Target;
use crate::load::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Writes, over all clients.
    #[arg(long, default_value_t = 10_000)]
    total: u64,
    /// ConfigMaps written to, made before the measurement.
    #[arg(long, default_value_t = 200)]
    objects: u64,
    /// The namespace of the ConfigMaps (created if missing).
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Bytes of data per ConfigMap.
    #[arg(long, default_value_t = 1024)]
    val_size: usize,
    /// `apply` (server-side apply) or `update` (PUT).
    #[arg(long, default_value = "apply", value_parser = ["apply", "update"])]
    how: String,
}

pub async fn run(api: &Api, target: &Target, args: Args) -> Result<Outcome, String> {
    super::ensure_namespace(api, &args.namespace).await?;
    let prefix: Arc<str> = super::run_id().into();
    let collection = super::configmaps(&args.namespace);
    // The objects, made the way they are then written (an apply by the same
    // manager, or a create), so each write finds one manager of its own kind
    // (and servers without server-side apply can be measured updating).
    let apply = args.how == "apply";
    let setup = {
        let (api, prefix, collection) = (api.clone(), prefix.clone(), collection.clone());
        let val_size = args.val_size;
        super::concurrently(target.clients, args.objects, true, move |n| {
            let (api, name) = (api.clone(), format!("{prefix}-{n}"));
            let path = format!("{collection}/{name}");
            let collection = collection.clone();
            async move {
                let began = Instant::now();
                let body = super::configmap(&name, val_size);
                let reply = if apply {
                    api.apply(&path, "bench", &body).await?
                } else {
                    api.post(&collection, &body).await?
                };
                if reply.status.is_success() {
                    Ok(began.elapsed())
                } else {
                    Err(format!("setup: {}", reply.describe()))
                }
            }
        })
        .await?
    };
    if setup.latencies.len() as u64 != args.objects {
        return Err(format!("only {} of {} ConfigMaps were made", setup.latencies.len(), args.objects));
    }
    let (objects, val_size) = (args.objects.max(1), args.val_size);
    let api2 = api.clone();
    let outcome = super::concurrently(target.clients, args.total, target.quiet, move |n| {
        let api = api2.clone();
        let name = format!("{prefix}-{}", n % objects);
        let path = format!("{collection}/{name}");
        // A fresh payload each time, so every write changes the object.
        let mut body = super::configmap(&name, val_size);
        let stamp = format!("{n:020}");
        body["data"]["payload"] =
            serde_json::json!(format!("{stamp}{}", "v".repeat(val_size.saturating_sub(20))));
        async move {
            let began = Instant::now();
            let reply =
                if apply { api.apply(&path, "bench", &body).await? } else { api.put(&path, &body).await? };
            let latency = began.elapsed();
            if reply.status.as_u16() == 200 {
                Ok(latency)
            } else {
                Err(format!("write: {}", reply.describe()))
            }
        }
    })
    .await?;
    super::say(
        target.quiet,
        &format!(
            "Write ({}): {} of {} writes to {} ConfigMaps ({} B of data each) in namespace {} by {}.",
            args.how,
            outcome.latencies.len(),
            args.total,
            args.objects,
            args.val_size,
            args.namespace,
            super::clients(target.clients),
        ),
    );
    Ok(outcome)
}
