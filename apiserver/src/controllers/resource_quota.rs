//! kube-controller-manager's resource quota controller: every quota's
//! `status.hard` follows its `spec.hard`, and `status.used` is recounted
//! from what its namespace holds, so a new quota starts with its usage and
//! deleted objects give theirs back within seconds (admission only ever
//! adds).
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
use crate::errors::ApiError;
use crate::registry::Resources;
use crate::runtime::meta;

/// How often every quota is recounted (kube resyncs every 5 minutes and
/// follows deletions; a short period does both here).
const PERIOD: Duration = Duration::from_secs(3);
/// How long in-flight writes get to be stored before a count.
const SETTLE: Duration = Duration::from_secs(1);

pub async fn run(resources: Resources) {
    loop {
        if let Err(e) = recount_all(&resources).await {
            tracing::debug!(error = %e, "resource quota recount failed; retrying");
        }
        tokio::time::sleep(PERIOD).await;
    }
}

async fn recount_all(resources: &Resources) -> Result<(), ApiError> {
    let quotas = resources.store("", "resourcequotas")?;
    let read = Objects::list(&quotas, None, false).await?;
    if read.is_empty() {
        return Ok(());
    }
    tokio::time::sleep(SETTLE).await;
    for quota in read {
        let status = match recount(resources, &quota).await {
            Ok(status) => status,
            Err(e) => {
                tracing::debug!(quota = meta::name_of(&quota), error = %e, "cannot recount");
                continue;
            }
        };
        if quota["status"] == status {
            continue;
        }
        let version = meta::resource_version_of(&quota).to_string();
        let replace = |fresh: &Value| -> Result<Value, ApiError> {
            if meta::resource_version_of(fresh) != version {
                // Admission charged it meanwhile: the next pass recounts.
                return Err(crate::errors::modified("resourcequotas", meta::name_of(fresh)));
            }
            let mut new = fresh.clone();
            new["status"] = status.clone();
            Ok(new)
        };
        let name = meta::name_of(&quota).to_string();
        let _ = quotas.update_status(meta::namespace_of(&quota), &name, &replace).await;
    }
    Ok(())
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
