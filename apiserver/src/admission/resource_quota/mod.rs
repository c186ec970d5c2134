//! ResourceQuota (validating): a write that would take a namespace over
//! one of its quotas is refused with kube's "exceeded quota" text; one that
//! fits is charged to every quota that counts it, in the quota's
//! `status.used`, by compare-and-swap before the object is stored, so
//! concurrent writes never get more than the quota between them. Usage
//! charged for a write that then fails is given back by the quota
//! controller's next recount (kube has the same gap).
//!
//! * `usage`: what an object uses in quota terms.

pub mod usage;

use async_trait::async_trait;
use serde_json::Value;

use self::usage::Usage;
use super::{Attributes, Lookup, Operation, Plugin};
use crate::errors::ApiError;
use crate::runtime::meta;

#[derive(Debug)]
pub struct ResourceQuota {
    quotas: Lookup,
}

impl ResourceQuota {
    pub fn new(quotas: Lookup) -> ResourceQuota {
        ResourceQuota { quotas }
    }
}

#[async_trait]
impl Plugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        // Only new objects are charged here (kube also charges some
        // updates, such as a Service becoming a LoadBalancer).
        let (Operation::Create, None, Some(namespace), Some(object)) =
            (attributes.operation, &attributes.subresource, &attributes.namespace, &attributes.object)
        else {
            return Ok(());
        };
        if attributes.is_namespace() {
            return Ok(());
        }
        let resource = &attributes.resource;
        let added = usage::of(&resource.group, &resource.resource, object);
        if added.is_empty() {
            return Ok(());
        }
        let Ok(objects) = self.quotas.get() else { return Ok(()) };
        // From the watch cache: the charge itself re-reads each quota.
        let mut quotas = objects.list(Some(namespace), true).await?;
        quotas.sort_by(|a, b| meta::name_of(a).cmp(meta::name_of(b)));
        let is_pod = resource.group.is_empty() && resource.resource == "pods";
        for quota in quotas.iter().filter(|q| applies(q, is_pod, object)) {
            let name = meta::name_of(quota).to_string();
            let hard = usage::read(&quota["spec"]["hard"]);
            if is_pod {
                let names: Vec<&str> = hard.keys().map(String::as_str).collect();
                let missing = usage::unstated(&object["spec"], &names);
                if !missing.is_empty() {
                    return Err(attributes
                        .forbidden(format!("failed quota: {name}: must specify {}", missing.join(","))));
                }
            }
            let charged: Usage =
                added.iter().filter(|(k, _)| hard.contains_key(*k)).map(|(k, v)| (k.clone(), *v)).collect();
            if charged.is_empty() {
                continue;
            }
            if attributes.dry_run {
                check(&name, quota, &charged).map_err(|why| attributes.forbidden(why))?;
                continue;
            }
            let charge = |fresh: &Value| -> Result<Value, ApiError> {
                let used = check(&name, fresh, &charged).map_err(|why| attributes.forbidden(why))?;
                let mut new = fresh.clone();
                new["status"]["used"] = usage::to_json(&used);
                Ok(new)
            };
            objects.update_status(Some(namespace), &name, &charge).await?;
        }
        Ok(())
    }
}

/// Whether a quota counts the object: an unscoped quota counts anything;
/// scopes only ever select pods.
pub fn applies(quota: &Value, is_pod: bool, object: &Value) -> bool {
    let scopes: Vec<&str> =
        quota["spec"]["scopes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let selector =
        quota["spec"]["scopeSelector"]["matchExpressions"].as_array().map(Vec::as_slice).unwrap_or_default();
    if scopes.is_empty() && selector.is_empty() {
        return true;
    }
    is_pod
        && scopes.iter().all(|scope| scope_holds(scope, "Exists", &[], object))
        && selector.iter().all(|e| {
            let values: Vec<&str> =
                e["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            scope_holds(
                e["scopeName"].as_str().unwrap_or_default(),
                e["operator"].as_str().unwrap_or_default(),
                &values,
                object,
            )
        })
}

/// One scope of a pod (kube's pod evaluator `MatchingScopes`).
fn scope_holds(scope: &str, operator: &str, values: &[&str], pod: &Value) -> bool {
    let spec = &pod["spec"];
    let best_effort = usage::pod_compute(spec).is_empty();
    let holds = match scope {
        "Terminating" => !spec["activeDeadlineSeconds"].is_null(),
        "NotTerminating" => spec["activeDeadlineSeconds"].is_null(),
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "PriorityClass" => {
            let class = spec["priorityClassName"].as_str().unwrap_or_default();
            match operator {
                "In" => values.contains(&class),
                "NotIn" => !values.contains(&class),
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                _ => false,
            }
        }
        _ => false,
    };
    match (scope, operator) {
        ("PriorityClass", _) => holds,
        (_, "DoesNotExist" | "NotIn") => !holds,
        _ => holds,
    }
}

/// The quota's usage with `charged` added, or why it cannot be: kube's
/// "status unknown" and "exceeded quota" texts.
fn check(name: &str, quota: &Value, charged: &Usage) -> Result<Usage, String> {
    let hard = usage::read(&quota["spec"]["hard"]);
    let mut used = usage::read(&quota["status"]["used"]);
    let unknown: Vec<&str> = charged.keys().filter(|k| !used.contains_key(*k)).map(String::as_str).collect();
    if !unknown.is_empty() {
        return Err(format!("status unknown for quota: {name}, resources: {}", unknown.join(",")));
    }
    let mut exceeded = Vec::new();
    for (resource, amount) in charged {
        let total = used[resource].add(amount);
        if hard.get(resource).is_some_and(|limit| total.cmp_value(limit).is_gt()) {
            exceeded.push(resource.clone());
        }
        used.insert(resource.clone(), total);
    }
    if exceeded.is_empty() {
        return Ok(used);
    }
    let only = |of: &Usage| -> Usage {
        of.iter().filter(|(k, _)| exceeded.contains(k)).map(|(k, v)| (k.clone(), *v)).collect()
    };
    let before = usage::read(&quota["status"]["used"]);
    Err(format!(
        "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
        usage::print(&only(charged)),
        usage::print(&only(&before)),
        usage::print(&only(&hard))
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::runtime::quantity::Quantity;

    #[test]
    fn a_charge_is_refused_with_kubes_texts() {
        let quota = json!({"spec": {"hard": {"count/configmaps": "3", "pods": "2"}}, "status": {"used": {"count/configmaps": "3", "pods": "0"}}});
        let one = |k: &str| Usage::from([(k.to_string(), Quantity::from_milli(1000))]);
        assert_eq!(
            check("q", &quota, &one("count/configmaps")).unwrap_err(),
            "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3"
        );
        assert_eq!(usage::print(&check("q", &quota, &one("pods")).unwrap()), "count/configmaps=3,pods=1");
        let fresh = json!({"spec": {"hard": {"pods": "2"}}});
        assert_eq!(
            check("q", &fresh, &one("pods")).unwrap_err(),
            "status unknown for quota: q, resources: pods"
        );
    }

    #[test]
    fn scopes_select_pods_only() {
        let best_effort = json!({"spec": {"containers": [{}]}});
        let scoped = json!({"spec": {"scopes": ["BestEffort"]}});
        assert!(applies(&scoped, true, &best_effort));
        assert!(!applies(&scoped, false, &best_effort));
        assert!(!applies(&json!({"spec": {"scopes": ["NotBestEffort"]}}), true, &best_effort));
        let high = json!({"spec": {"priorityClassName": "high", "containers": [{}]}});
        let by_class = json!({"spec": {"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}});
        assert!(applies(&by_class, true, &high));
        assert!(!applies(&by_class, true, &best_effort));
        assert!(applies(&json!({"spec": {}}), false, &json!({})));
    }
}
