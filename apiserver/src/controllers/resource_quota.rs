//! kube-controller-manager's resource quota controller: every quota's
//! `status.hard` follows its `spec.hard`, and `status.used` is recounted
//! from what its namespace holds, so a new quota starts with its usage and
//! deleted objects give theirs back within seconds (admission only ever
//! adds).
//!
//! A quota that is new, or whose limits changed, is counted as soon as its
//! watch event arrives (until then admission refuses what it covers:
//! "status unknown for quota"); every quota is recounted periodically.
//!
//! A recount is written only if the quota has not changed since before
//! the count began, and the count starts a moment after the quota was
//! read: a write admitted just before (charged, not yet stored) is in the
//! count, one admitted during it makes the recount give way.

use std::time::Duration;

use serde_json::Value;

use crate::admission::Objects;
use crate::admission::resource_quota::applies;
use crate::admission::resource_quota::usage::{self, Usage};
use crate::cacher::{Delivery, EventType};
use crate::errors::ApiError;
use crate::registry::Resources;
use crate::registry::Store;
use crate::runtime::meta;

/// How often every quota is recounted (kube resyncs every 5 minutes and
/// follows deletions; a short period does both here).
const PERIOD: Duration = Duration::from_secs(3);
/// How long in-flight writes get to be stored before a count.
const SETTLE: Duration = Duration::from_secs(1);

pub async fn run(resources: Resources) {
    let Ok(quotas) = resources.store("", "resourcequotas") else { return };
    let mut period = tokio::time::interval(PERIOD);
    loop {
        let mut watch = match quotas.follow().await {
            Ok(watch) => watch,
            Err(e) => {
                tracing::debug!(error = %e, "cannot watch resource quotas; retrying");
                tokio::time::sleep(PERIOD).await;
                continue;
            }
        };
        for delivery in std::mem::take(&mut watch.initial) {
            react(&resources, &quotas, &delivery).await;
        }
        loop {
            tokio::select! {
                _ = period.tick() => {
                    if let Err(e) = recount_all(&resources, &quotas).await {
                        tracing::debug!(error = %e, "resource quota recount failed; retrying");
                    }
                }
                delivery = watch.live.recv() => match delivery {
                    Some(delivery) => react(&resources, &quotas, &delivery).await,
                    // The watch ended (its deadline): follow again.
                    None => break,
                },
            }
        }
    }
}

/// A quota added, or whose limits changed, is counted at once.
async fn react(resources: &Resources, quotas: &Store, delivery: &Delivery) {
    let Delivery::Event { kind: EventType::Added | EventType::Modified, object, .. } = delivery else {
        return;
    };
    let quota = &object.value();
    if quota["status"]["hard"] == quota["spec"]["hard"] {
        return;
    }
    // A quota with no status yet has charged nothing: there is no write in
    // flight to wait for.
    if quota["status"]["hard"].is_object() {
        tokio::time::sleep(SETTLE).await;
    }
    recount_one(resources, quotas, quota).await;
}

async fn recount_all(resources: &Resources, quotas: &Store) -> Result<(), ApiError> {
    let read = Objects::list(quotas, None, false).await?;
    if read.is_empty() {
        return Ok(());
    }
    tokio::time::sleep(SETTLE).await;
    for quota in read {
        recount_one(resources, quotas, &quota).await;
    }
    Ok(())
}

/// Recounts one quota read before the count, and writes its status if it
/// changed and the quota did not change meanwhile.
async fn recount_one(resources: &Resources, quotas: &Store, quota: &Value) {
    let status = match recount(resources, quota).await {
        Ok(status) => status,
        Err(e) => {
            tracing::debug!(quota = meta::name_of(quota), error = %e, "cannot recount");
            return;
        }
    };
    if quota["status"] == status {
        return;
    }
    let version = meta::resource_version_of(quota).to_string();
    let replace = |fresh: &Value| -> Result<Value, ApiError> {
        if meta::resource_version_of(fresh) != version {
            // Admission charged it meanwhile: the next pass recounts.
            return Err(crate::errors::modified("resourcequotas", meta::name_of(fresh)));
        }
        let mut new = fresh.clone();
        new["status"] = status.clone();
        Ok(new)
    };
    let name = meta::name_of(quota).to_string();
    let _ = quotas.update_status(meta::namespace_of(quota), &name, &replace).await;
}

/// The status a quota should have: its hard limits, and what its
/// namespace holds of each.
async fn recount(resources: &Resources, quota: &Value) -> Result<Value, ApiError> {
    let namespace = meta::namespace_of(quota).unwrap_or_default();
    let hard = usage::read(&quota["spec"]["hard"]);
    let mut held = Usage::new();
    for (group, plural) in counted(&hard) {
        let Ok(store) = resources.store(&group, &plural) else { continue };
        let is_pod = group.is_empty() && plural == "pods";
        for object in Objects::list(&store, Some(namespace), false).await? {
            if !applies(quota, is_pod, &object) {
                continue;
            }
            for (name, amount) in usage::of(&group, &plural, &object) {
                let total = held.get(&name).map_or(amount, |t| t.add(&amount));
                held.insert(name, total);
            }
        }
    }
    let used: Usage = hard
        .keys()
        .map(|name| {
            (
                name.clone(),
                held.get(name).cloned().unwrap_or_else(|| crate::runtime::quantity::Quantity::from_milli(0)),
            )
        })
        .collect();
    Ok(serde_json::json!({"hard": quota["spec"]["hard"], "used": usage::to_json(&used)}))
}

/// The resources whose objects the quota's limits count, as (group,
/// plural).
fn counted(hard: &Usage) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |group: &str, plural: &str| {
        let pair = (group.to_string(), plural.to_string());
        if !out.contains(&pair) {
            out.push(pair);
        }
    };
    for name in hard.keys() {
        if let Some(resource) = name.strip_prefix("count/") {
            let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
            add(group, plural);
        } else if name.starts_with("services.") {
            add("", "services");
        } else if name.contains('.') || ["cpu", "memory", "ephemeral-storage"].contains(&name.as_str()) {
            add("", "pods");
        } else {
            add("", name);
        }
    }
    out
}
