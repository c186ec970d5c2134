//! kube's API Priority and Fairness housekeeping: the config producer,
//! which creates kube's mandatory and suggested FlowSchemas and priority
//! levels and keeps their specs up to date, and the FlowSchema status
//! controller, which marks a schema `Dangling` while the priority level it
//! names does not exist.
//!
//! A suggested object is kept up to date while its
//! `apf.kubernetes.io/autoupdate-spec` annotation is `true`; one without
//! the annotation gets `true` if it was never changed (generation 1), else
//! `false`, and is left alone from then on. Mandatory objects always
//! follow kube's spec.
//!
//! What it reads each time also becomes the configuration requests are
//! classified by (`flowcontrol::FlowControl`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::admission::Objects;
use crate::cacher::{ListOptions, ReadAt};
use crate::errors::ApiError;
use crate::flowcontrol::FlowControl;
use crate::registry::kinds::flowcontrol::{GROUP, bootstrap};
use crate::registry::{Resources, Store, WriteContext};
use crate::runtime::meta;

/// How often both look again.
const PERIOD: Duration = Duration::from_secs(2);

pub async fn run(resources: Resources, flow_control: Option<Arc<FlowControl>>) {
    let (Ok(levels), Ok(schemas)) =
        (resources.store(GROUP, "prioritylevelconfigurations"), resources.store(GROUP, "flowschemas"))
    else {
        return;
    };
    let mut period = tokio::time::interval(PERIOD);
    loop {
        period.tick().await;
        if let Err(e) = produce(&levels, &schemas).await {
            tracing::debug!(error = %e, "keeping the APF bootstrap configuration; retrying");
        }
        match read(&levels, &schemas).await {
            Ok((levels_read, schemas_read)) => {
                if let Some(flow_control) = &flow_control {
                    flow_control.configure(&schemas_read, &levels_read);
                }
                mark_dangling(&schemas, &schemas_read, &levels_read).await;
            }
            Err(e) => tracing::debug!(error = %e, "reading the APF configuration; retrying"),
        }
    }
}

/// Whether an object is one kube requires or one it suggests.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Mandatory,
    Suggested,
}

async fn produce(levels: &Store, schemas: &Store) -> Result<(), ApiError> {
    let sets = [
        (levels, bootstrap::mandatory_priority_levels(), Class::Mandatory),
        (levels, bootstrap::suggested_priority_levels(), Class::Suggested),
        (schemas, bootstrap::mandatory_flow_schemas(), Class::Mandatory),
        (schemas, bootstrap::suggested_flow_schemas(), Class::Suggested),
    ];
    for (store, objects, class) in sets {
        for wanted in objects {
            keep(store, wanted, class).await?;
        }
    }
    Ok(())
}

/// Creates `wanted` if missing; else brings its spec and annotation to
/// what `class` says.
async fn keep(store: &Store, mut wanted: Value, class: Class) -> Result<(), ApiError> {
    store.strategy().set_defaults(&mut wanted);
    let name = meta::name_of(&wanted).to_string();
    let ctx = WriteContext::server();
    let current = match store.get(None, &name, &ReadAt::default()).await {
        Ok(current) => current,
        Err(ApiError::NotFound { .. }) => {
            wanted["metadata"]["annotations"] = json!({bootstrap::AUTO_UPDATE: "true"});
            return match store.create(&ctx, None, wanted).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
                Err(e) => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let annotation = current["metadata"]["annotations"][bootstrap::AUTO_UPDATE].as_str();
    let auto_update = match (class, annotation) {
        (Class::Mandatory, _) => true,
        (Class::Suggested, Some(value)) => value == "true",
        // Never changed since it was made: kube's own, kept up to date.
        (Class::Suggested, None) => current["metadata"]["generation"].as_i64() == Some(1),
    };
    let marked = if auto_update { "true" } else { "false" };
    let stale_spec = auto_update && current["spec"] != wanted["spec"];
    if !stale_spec && annotation == Some(marked) {
        return Ok(());
    }
    let mut new = current.clone();
    if stale_spec {
        new["spec"] = wanted["spec"].take();
    }
    if !new["metadata"]["annotations"].is_object() {
        new["metadata"]["annotations"] = json!({});
    }
    new["metadata"]["annotations"][bootstrap::AUTO_UPDATE] = json!(marked);
    match store.update(&ctx, None, &name, None, new).await {
        // Someone else changed it meanwhile: the next pass looks again.
        Ok(_) | Err(ApiError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The stored priority levels and FlowSchemas.
async fn read(levels: &Store, schemas: &Store) -> Result<(Vec<Value>, Vec<Value>), ApiError> {
    let all = ListOptions::default();
    Ok((levels.list(&all).await?.items, schemas.list(&all).await?.items))
}

/// Sets every FlowSchema's `Dangling` condition: whether the priority
/// level it names is missing.
async fn mark_dangling(store: &Store, schemas: &[Value], levels: &[Value]) {
    let existing: HashSet<&str> = levels.iter().map(meta::name_of).collect();
    for schema in schemas {
        let level = schema["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap_or_default();
        let wanted = dangling_condition(level, !existing.contains(level));
        let conditions = schema["status"]["conditions"].as_array().map(Vec::as_slice).unwrap_or_default();
        let current = conditions.iter().find(|c| c["type"] == "Dangling");
        let same = |c: &&Value| ["status", "reason", "message"].iter().all(|key| c[*key] == wanted[*key]);
        if current.is_some_and(|c| same(&c)) {
            continue;
        }
        let change = |fresh: &Value| -> Result<Value, ApiError> {
            let mut new = fresh.clone();
            let mut kept: Vec<Value> = fresh["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["type"] != "Dangling")
                .cloned()
                .collect();
            kept.push(wanted.clone());
            new["status"]["conditions"] = Value::Array(kept);
            Ok(new)
        };
        let name = meta::name_of(schema).to_string();
        if let Err(e) = store.update_status(None, &name, &change).await {
            tracing::debug!(schema = name, error = %e, "cannot set the Dangling condition");
        }
    }
}

/// kube's `Dangling` condition for a schema naming `level`.
fn dangling_condition(level: &str, dangling: bool) -> Value {
    let (status, reason, message) = if dangling {
        (
            "True",
            "NotFound",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named \"{level}\" but there is no such object"
            ),
        )
    } else {
        (
            "False",
            "Found",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named \"{level}\" and it exists"
            ),
        )
    };
    json!({"type": "Dangling", "status": status, "lastTransitionTime": meta::now(),
        "reason": reason, "message": message})
}
