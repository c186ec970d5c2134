//! Evicting a pod, what `kubectl drain` and the cluster autoscaler post:
//! `POST .../pods/<name>/eviction` with an `Eviction` {metadata.name: the pod, deleteOptions}.
//!
//! As kube's EvictionREST: a pod that is not running (Pending, Succeeded, Failed) or already
//! being deleted is deleted at once. Otherwise the one PodDisruptionBudget selecting it decides:
//! while its status is behind its spec (observedGeneration), or it allows no disruption, the
//! answer is kube's 429 "Cannot evict pod as it would violate the pod's disruption budget." with
//! the budget's cause, and nothing changes; when it allows one, its `disruptionsAllowed` is
//! decremented and the pod recorded in `disruptedPods` (one status write, so two evictions never
//! spend the same disruption), then the pod gets the `DisruptionTarget` condition and is deleted
//! with the eviction's options. More than one budget is kube's 500. The budgets' status is the
//! disruption controller's (kube-controller-manager), which rtcd does not run.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::App;
use super::handlers::{BodyType, body_json};
use super::negotiate::Encoding;
use super::query::{self, Params};
use super::respond;
use crate::cacher::{Filter, ListOptions, ReadAt};
use crate::errors::ApiError;
use crate::registry::{DeleteOptions, Store, WriteContext};
use crate::request::{ResourceRequest, UserInfo};
use crate::runtime::conditions;
use crate::runtime::meta;
use crate::selector::object as label_selector;

const VIOLATES: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

pub async fn serve(
    app: &App,
    info: &ResourceRequest,
    user: &std::sync::Arc<UserInfo>,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
    encoding: Encoding,
) -> Result<Response, ApiError> {
    let (Some(namespace), Some(name)) = (info.namespace.as_deref(), info.name.as_deref()) else {
        return Err(ApiError::NoSuchPath);
    };
    let into = BodyType { kind: "Eviction", max_yaml_json_bytes: app.max_request_body_bytes };
    let eviction = body_json(headers, body, into)?;
    if !eviction.is_object() {
        return Err(ApiError::BadRequest("the body of the request was in an unknown format".into()));
    }
    if meta::name_of(&eviction) != name {
        return Err(ApiError::BadRequest("name in URL does not match name in Eviction object".into()));
    }
    let options = delete_options(&eviction, params)?;
    let pods = app.resources.store("", "pods")?;
    let pod = pods.get(Some(namespace), name, &ReadAt::default()).await?;
    let ctx = WriteContext::new(user.clone(), options.1);
    let mut delete = options.0;
    if !can_ignore_budget(&pod) {
        let budgets = app.resources.store("policy", "poddisruptionbudgets")?;
        let mut matching = budgets_of(&budgets, &pod).await?;
        if matching.len() > 1 {
            return Err(ApiError::Denied {
                code: 500,
                reason: String::new(),
                message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
                details: None,
            });
        }
        if let Some(budget) = matching.pop()
            && !unhealthy_may_go(&pod, &budget)
        {
            spend_disruption(&budgets, &budget, name, options.1).await?;
        }
    }
    // A live pod must not have become ready since it was read (kube's
    // shouldEnforceResourceVersion).
    if is_live(&pod) && delete.preconditions.resource_version.is_none() {
        delete.preconditions.resource_version = meta::resource_version_of(&pod).parse().ok();
    }
    if !options.1 {
        let condition = json!({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"});
        let marked = pods
            .guaranteed_update(Some(namespace), name, false, |current| {
                check_unchanged(&delete, current)?;
                let mut pod = current.clone();
                conditions::set_on_pod(&mut pod, condition.clone(), &meta::now());
                Ok(pod)
            })
            .await?;
        if delete.preconditions.resource_version.is_some() {
            delete.preconditions.resource_version = meta::resource_version_of(&marked).parse().ok();
        }
    }
    pods.delete(&ctx, Some(namespace), name, &delete).await?;
    let status =
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    Ok(respond::answer(StatusCode::CREATED, &status, encoding))
}

/// The eviction's deleteOptions (its dryRun, or the request's), and whether it is a dry run.
fn delete_options(eviction: &Value, params: &Params) -> Result<(DeleteOptions, bool), ApiError> {
    let body = match eviction.get("deleteOptions") {
        Some(options) if options.is_object() => serde_json::to_vec(options).unwrap_or_default(),
        _ => Vec::new(),
    };
    let parsed = query::delete_body(&body, params)?;
    let dry_run = parsed.dry_run || params.dry_run()?;
    let options = DeleteOptions {
        preconditions: parsed.preconditions,
        propagation: parsed.propagation,
        grace_period_seconds: parsed.grace_period_seconds,
    };
    Ok((options, dry_run))
}

/// kube's canIgnorePDB: a pod that is not running, or already going, disrupts nothing more.
fn can_ignore_budget(pod: &Value) -> bool {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    matches!(phase, "Succeeded" | "Failed" | "Pending" | "")
        || pod["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// Neither terminated nor being deleted.
fn is_live(pod: &Value) -> bool {
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    !matches!(phase, "Succeeded" | "Failed")
        && pod["metadata"].get("deletionTimestamp").is_none_or(Value::is_null)
}

/// An unready pod goes without spending a disruption when its budget says unhealthy pods may
/// always go, or when the budget is met without it.
fn unhealthy_may_go(pod: &Value, budget: &Value) -> bool {
    let ready = pod["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    if ready {
        return false;
    }
    let status = &budget["status"];
    let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
    budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
        || (status["currentHealthy"].as_i64().unwrap_or(0) >= desired && desired > 0)
}

/// The PodDisruptionBudgets of the pod's namespace whose selector selects it (a budget without
/// a selector selects nothing).
async fn budgets_of(budgets: &Store, pod: &Value) -> Result<Vec<Value>, ApiError> {
    let namespace = pod["metadata"]["namespace"].as_str().map(str::to_owned);
    let opts = ListOptions { filter: Filter { namespace, ..Filter::default() }, ..ListOptions::default() };
    let labels = pod["metadata"]["labels"].as_object();
    let all = budgets.list_from_storage(&opts).await?.items;
    Ok(all
        .into_iter()
        .filter(|b| {
            b["spec"]["selector"].is_object() && label_selector::matches(&b["spec"]["selector"], labels)
        })
        .collect())
}

/// kube's checkAndDecrement, re-run on the latest budget until its status write wins.
async fn spend_disruption(budgets: &Store, budget: &Value, pod: &str, dry_run: bool) -> Result<(), ApiError> {
    let namespace = budget["metadata"]["namespace"].as_str();
    let name = meta::name_of(budget).to_owned();
    budgets
        .guaranteed_update(namespace, &name, dry_run, |current| {
            let status = &current["status"];
            let generation = current["metadata"]["generation"].as_i64().unwrap_or(0);
            if status["observedGeneration"].as_i64().unwrap_or(0) < generation {
                return Err(too_many_requests(
                    format!("The disruption budget {name} is still being processed by the server."),
                    10,
                ));
            }
            let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
            if allowed < 0 {
                return Err(forbidden(&name, "pdb disruptions allowed is negative"));
            }
            if status["disruptedPods"].as_object().is_some_and(|p| p.len() > MAX_DISRUPTED_PODS) {
                return Err(forbidden(
                    &name,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
                ));
            }
            if allowed == 0 {
                let (desired, healthy) =
                    (status["desiredHealthy"].as_i64().unwrap_or(0), status["currentHealthy"].as_i64().unwrap_or(0));
                return Err(too_many_requests(
                    format!("The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"),
                    0,
                ));
            }
            let mut spent = current.clone();
            spent["status"]["disruptionsAllowed"] = json!(allowed - 1);
            if allowed - 1 == 0 {
                insufficient_pods(&mut spent);
            }
            if !spent["status"]["disruptedPods"].is_object() {
                spent["status"]["disruptedPods"] = json!({});
            }
            spent["status"]["disruptedPods"][pod] = json!(meta::now());
            Ok(spent)
        })
        .await
        .map(drop)
}

/// kube's bound on the evictions a budget has not yet seen confirmed.
const MAX_DISRUPTED_PODS: usize = 2000;

/// The budget's DisruptionAllowed condition once it has no disruption left (kube's
/// UpdateDisruptionAllowedCondition).
fn insufficient_pods(budget: &mut Value) {
    let observed = budget["status"]["observedGeneration"].clone();
    let condition = json!({
        "type": "DisruptionAllowed",
        "status": "False",
        "reason": "InsufficientPods",
        "message": "",
        "observedGeneration": observed,
    });
    conditions::set(budget, condition, &meta::now());
}

/// kube's NewTooManyRequests with the DisruptionBudget cause.
fn too_many_requests(cause: String, retry_after_seconds: u32) -> ApiError {
    let mut details = json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]});
    if retry_after_seconds > 0 {
        details["retryAfterSeconds"] = json!(retry_after_seconds);
    }
    ApiError::Denied {
        code: 429,
        reason: "TooManyRequests".into(),
        message: VIOLATES.into(),
        details: Some(details),
    }
}

fn forbidden(budget: &str, why: &str) -> ApiError {
    ApiError::ForbiddenFor {
        qualified: "poddisruptionbudget.policy".into(),
        name: budget.into(),
        why: why.into(),
        causes: Vec::new(),
    }
}

/// The eviction's own preconditions, checked on the pod it is about to mark.
fn check_unchanged(delete: &DeleteOptions, pod: &Value) -> Result<(), ApiError> {
    let name = meta::name_of(pod);
    let conflict = |why: String| ApiError::Conflict { qualified: "Pod".into(), name: name.into(), why };
    if let Some(uid) = &delete.preconditions.uid
        && meta::uid_of(pod) != uid
    {
        return Err(conflict(format!(
            "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
            meta::uid_of(pod)
        )));
    }
    if let Some(rv) = delete.preconditions.resource_version
        && meta::resource_version_of(pod) != rv.to_string()
    {
        return Err(conflict(format!(
            "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
            meta::resource_version_of(pod)
        )));
    }
    Ok(())
}
