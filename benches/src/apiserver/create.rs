//! `apiserver create`: POST throughput and latency.

use std::sync::Arc;
use std::time::Instant;

use super::http::Api;
use crate::Target;
use crate::load::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// ConfigMaps to create, over all clients.
    #[arg(long, default_value_t = 10_000)]
    total: u64,
    /// The namespace to create them in (created if missing).
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Bytes of data per ConfigMap.
    #[arg(long, default_value_t = 1024)]
    val_size: usize,
    /// What to create: `configmap`, `pod` (one container; what
    /// admission plugins and injecting webhooks act on), or `widget` (a
    /// custom resource carrying the same data as the ConfigMaps, its
    /// CustomResourceDefinition installed first; what schema pruning,
    /// defaulting and validation cost).
    #[arg(long, default_value = "configmap", value_parser = ["configmap", "pod", "widget"])]
    kind: String,
}

pub async fn run(api: &Api, target: &Target, args: Args) -> Result<Outcome, String> {
    super::ensure_namespace(api, &args.namespace).await?;
    let (outcome, what) = if args.kind == "pod" {
        let outcome = create_pods(api, &args.namespace, args.total, target.clients, target.quiet).await?;
        (outcome, "Pods".to_string())
    } else if args.kind == "widget" {
        super::crd::install_widgets(api).await?;
        let (path, size) = (super::crd::widgets(&args.namespace), args.val_size);
        let widget = move |name: &str| super::crd::widget(name, size);
        let outcome = post_each(api, path, args.total, target.clients, target.quiet, widget).await?;
        (outcome, format!("Widgets ({} B of data each)", args.val_size))
    } else {
        let outcome =
            create_many(api, &args.namespace, args.total, args.val_size, target.clients, target.quiet)
                .await?;
        (outcome, format!("ConfigMaps ({} B of data each)", args.val_size))
    };
    super::say(
        target.quiet,
        &format!(
            "Create: {} of {} {what} created in namespace {} by {}.",
            outcome.latencies.len(),
            args.total,
            args.namespace,
            super::clients(target.clients),
        ),
    );
    Ok(outcome)
}

/// POSTs `total` new one-container Pods into `namespace` from `clients`
/// concurrent clients; each must be answered 201 Created.
async fn create_pods(
    api: &Api,
    namespace: &str,
    total: u64,
    clients: usize,
    quiet: bool,
) -> Result<Outcome, String> {
    let path = format!("/api/v1/namespaces/{namespace}/pods");
    post_each(api, path, total, clients, quiet, |name| {
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 8080}]}]},
        })
    })
    .await
}

/// POSTs `total` new ConfigMaps (names of this run's own) into `namespace`
/// from `clients` concurrent clients; each must be answered 201 Created.
pub async fn create_many(
    api: &Api,
    namespace: &str,
    total: u64,
    val_size: usize,
    clients: usize,
    quiet: bool,
) -> Result<Outcome, String> {
    let path = super::configmaps(namespace);
    post_each(api, path, total, clients, quiet, move |name| super::configmap(name, val_size)).await
}

/// POSTs `total` bodies made by `body` (given each a name of this run's
/// own) to `path` from `clients` concurrent clients; each must be answered
/// 201 Created.
async fn post_each(
    api: &Api,
    path: String,
    total: u64,
    clients: usize,
    quiet: bool,
    body: impl Fn(&str) -> serde_json::Value + Send + Sync + 'static,
) -> Result<Outcome, String> {
    let path: Arc<str> = path.into();
    let prefix: Arc<str> = super::run_id().into();
    let api = api.clone();
    super::concurrently(clients, total, quiet, move |n| {
        let (api, path) = (api.clone(), path.clone());
        let body = body(&format!("{prefix}-{n}"));
        async move {
            let began = Instant::now();
            let reply = api.post(&path, &body).await?;
            let latency = began.elapsed();
            if reply.status.as_u16() == 201 {
                Ok(latency)
            } else {
                Err(format!("create: {}", reply.describe()))
            }
        }
    })
    .await
}
