//! ClusterRole aggregation (kube's clusterrole-aggregation controller): a
//! ClusterRole with an `aggregationRule` has its `rules` kept equal to the
//! rules of every ClusterRole its label selectors match, so that `admin`,
//! `edit` and `view` grow when a role labelled `aggregate-to-view` is added.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use super::index::GROUP;
use crate::cacher::{Delivery, EventType};
use crate::errors::ApiError;
use crate::registry::{Resources, WriteContext};
use crate::runtime::meta;

/// Follows ClusterRoles for ever.
pub async fn run(resources: Resources) {
    loop {
        if let Err(e) = follow(&resources).await {
            tracing::warn!(error = %e, "ClusterRole aggregation's watch failed; retrying");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn follow(resources: &Resources) -> Result<(), ApiError> {
    let mut watch = resources.store(GROUP, "clusterroles")?.follow().await?;
    let mut roles: BTreeMap<String, Value> = BTreeMap::new();
    for delivery in std::mem::take(&mut watch.initial) {
        remember(&mut roles, delivery);
    }
    aggregate_all(resources, &roles).await;
    while let Some(delivery) = watch.live.recv().await {
        remember(&mut roles, delivery);
        aggregate_all(resources, &roles).await;
    }
    Ok(())
}

fn remember(roles: &mut BTreeMap<String, Value>, delivery: Delivery) {
    let Delivery::Event { kind, object, .. } = delivery else { return };
    let role = object.value();
    let name = meta::name_of(&role).to_string();
    if kind == EventType::Deleted {
        roles.remove(&name);
    } else {
        roles.insert(name, role);
    }
}

/// Brings every aggregated role up to date; a write that fails is tried
/// again on the next change (its own update is one).
async fn aggregate_all(resources: &Resources, roles: &BTreeMap<String, Value>) {
    let Ok(store) = resources.store(GROUP, "clusterroles") else { return };
    for (name, role) in roles {
        let Some(selectors) = role["aggregationRule"]["clusterRoleSelectors"].as_array() else { continue };
        let wanted = aggregated_rules(name, selectors, roles);
        if role["rules"].as_array().map(Vec::as_slice).unwrap_or_default() == wanted.as_slice() {
            continue;
        }
        let mut updated = role.clone();
        updated["rules"] = Value::Array(wanted);
        match store.update(&WriteContext::server(), None, name, None, updated).await {
            Ok(_) => tracing::info!(role = name, "aggregated ClusterRole rules"),
            Err(e) => tracing::debug!(role = name, error = %e, "ClusterRole aggregation will retry"),
        }
    }
}

/// The rules of the roles (other than `name`) that any selector matches,
/// in name order, each once.
fn aggregated_rules(name: &str, selectors: &[Value], roles: &BTreeMap<String, Value>) -> Vec<Value> {
    let mut rules: Vec<Value> = Vec::new();
    for (other, role) in roles {
        if other == name {
            continue;
        }
        let labels = role["metadata"]["labels"].as_object();
        if !selectors.iter().any(|s| selector_matches(s, labels)) {
            continue;
        }
        for rule in role["rules"].as_array().into_iter().flatten() {
            if !rules.contains(rule) {
                rules.push(rule.clone());
            }
        }
    }
    rules
}

/// A metav1.LabelSelector against labels; an empty selector matches
/// nothing here, as kube's aggregation skips it.
fn selector_matches(selector: &Value, labels: Option<&Map<String, Value>>) -> bool {
    !crate::selector::object::is_empty(selector) && crate::selector::object::matches(selector, labels)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_aggregated_role_gets_the_rules_of_the_roles_its_selectors_match() {
        let read = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let write = json!({"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]});
        let roles = BTreeMap::from([
            (
                "a-view".to_string(),
                json!({"metadata": {"name": "a-view", "labels": {"agg": "view"}}, "rules": [read]}),
            ),
            (
                "b-edit".to_string(),
                json!({"metadata": {"name": "b-edit", "labels": {"agg": "edit"}}, "rules": [write, read]}),
            ),
            ("c-other".to_string(), json!({"metadata": {"name": "c-other"}, "rules": [{"verbs": ["*"]}]})),
        ]);
        let view = [json!({"matchLabels": {"agg": "view"}})];
        assert_eq!(aggregated_rules("view", &view, &roles), std::slice::from_ref(&read));
        let edit =
            [json!({"matchExpressions": [{"key": "agg", "operator": "In", "values": ["view", "edit"]}]})];
        assert_eq!(aggregated_rules("edit", &edit, &roles), [read, write]);
        assert!(aggregated_rules("none", &[json!({})], &roles).is_empty());
    }
}
