//! `metav1.LabelSelector` objects (`matchLabels` and `matchExpressions`, as
//! webhook configurations and workloads carry them), matched against an
//! object's labels, and checked as kube's `ValidateLabelSelector` checks them.

use serde_json::{Map, Value};

use super::go_quote;
use super::labels::{label_value_errors, qualified_name_errors};

/// Whether `labels` satisfy `selector`: every `matchLabels` pair and every
/// expression. An empty selector matches everything (kube's
/// `LabelSelectorAsSelector`); callers for which a missing selector means
/// nothing (role aggregation) decide that before asking.
pub fn matches(selector: &Value, labels: Option<&Map<String, Value>>) -> bool {
    let empty = Map::new();
    let labels = labels.unwrap_or(&empty);
    let pairs_hold = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(key, wanted)| labels.get(key) == Some(wanted));
    pairs_hold && expressions(selector).all(|e| expression_holds(e, labels))
}

/// Whether the selector names no label at all.
pub fn is_empty(selector: &Value) -> bool {
    selector["matchLabels"].as_object().is_none_or(Map::is_empty) && expressions(selector).next().is_none()
}

/// The selector as label-selector text (kube's `LabelSelectorAsSelector`
/// printed): requirements sorted by key, `k=v`, `k in (a,b)`, `k notin
/// (a,b)`, `k`, `!k`; values sorted. What a Scale's `status.selector`
/// shows an autoscaler.
pub fn to_text(selector: &Value) -> String {
    let mut requirements: Vec<(&str, String)> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| (key.as_str(), format!("{key}={}", value.as_str().unwrap_or_default())))
        .collect();
    for expression in expressions(selector) {
        let key = expression["key"].as_str().unwrap_or_default();
        let mut values: Vec<&str> =
            expression["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        values.sort_unstable();
        values.dedup();
        let text = match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            // Validation keeps other operators out of stored objects.
            _ => continue,
        };
        requirements.push((key, text));
    }
    requirements.sort_by(|a, b| a.0.cmp(b.0));
    requirements.into_iter().map(|(_, text)| text).collect::<Vec<_>>().join(",")
}

fn expressions(selector: &Value) -> impl Iterator<Item = &Value> {
    selector["matchExpressions"].as_array().into_iter().flatten()
}

fn expression_holds(expression: &Value, labels: &Map<String, Value>) -> bool {
    let key = expression["key"].as_str().unwrap_or_default();
    let values: Vec<&str> =
        expression["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let value = labels.get(key).and_then(Value::as_str);
    match expression["operator"].as_str() {
        Some("In") => value.is_some_and(|v| values.contains(&v)),
        Some("NotIn") => value.is_none_or(|v| !values.contains(&v)),
        Some("Exists") => value.is_some(),
        Some("DoesNotExist") => value.is_none(),
        _ => false,
    }
}

/// kube's `ValidateLabelSelector` under `path`: each problem as
/// `(field, message)` in kube's words.
pub fn problems(selector: &Value, path: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (i, expression) in expressions(selector).enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = expression["values"].as_array().map_or(0, Vec::len);
        match expression["operator"].as_str().unwrap_or_default() {
            "In" | "NotIn" if values == 0 => found.push((
                format!("{at}.values"),
                "Required value: must be specified when `operator` is 'In' or 'NotIn'".to_string(),
            )),
            "Exists" | "DoesNotExist" if values > 0 => found.push((
                format!("{at}.values"),
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'".to_string(),
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => found.push((
                format!("{at}.operator"),
                format!("Invalid value: {}: not a valid selector operator", go_quote(other)),
            )),
        }
        let key = expression["key"].as_str().unwrap_or_default();
        for why in qualified_name_errors(key) {
            found.push((format!("{at}.key"), format!("Invalid value: {}: {why}", go_quote(key))));
        }
        for value in expression["values"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            for why in label_value_errors(value) {
                found.push((format!("{at}.values"), format!("Invalid value: {}: {why}", go_quote(value))));
            }
        }
    }
    for (key, value) in selector["matchLabels"].as_object().into_iter().flatten() {
        for why in qualified_name_errors(key) {
            found.push((format!("{path}.matchLabels"), format!("Invalid value: {}: {why}", go_quote(key))));
        }
        let value = value.as_str().unwrap_or_default();
        for why in label_value_errors(value) {
            found.push((format!("{path}.matchLabels"), format!("Invalid value: {}: {why}", go_quote(value))));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()
    }

    #[test]
    fn pairs_and_every_operator_match_as_kube_and_empty_matches_everything() {
        let web = labels(&[("app", "web"), ("tier", "front")]);
        assert!(matches(&json!({}), Some(&web)));
        assert!(matches(&json!({}), None));
        assert!(matches(&json!({"matchLabels": {"app": "web"}}), Some(&web)));
        assert!(!matches(&json!({"matchLabels": {"app": "db"}}), Some(&web)));
        let expr = |op: &str, values: &[&str]| json!({"matchExpressions": [{"key": "tier", "operator": op, "values": values}]});
        assert!(matches(&expr("In", &["front", "back"]), Some(&web)));
        assert!(!matches(&expr("NotIn", &["front"]), Some(&web)));
        assert!(matches(&expr("NotIn", &["front"]), None));
        assert!(matches(&expr("Exists", &[]), Some(&web)));
        assert!(matches(&expr("DoesNotExist", &[]), None));
        assert!(!matches(&expr("Sideways", &[]), Some(&web)));
        assert!(is_empty(&json!({"matchLabels": {}})));
        assert!(!is_empty(&expr("Exists", &[])));
    }

    #[test]
    fn selectors_print_as_kube_prints_them_sorted_by_key() {
        let selector = json!({"matchLabels": {"tier": "front", "app": "web"}, "matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["b", "a"]},
            {"key": "env", "operator": "NotIn", "values": ["dev"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "owner", "operator": "Exists"},
        ]});
        assert_eq!(to_text(&selector), "app=web,!canary,env notin (dev),owner,tier=front,zone in (a,b)");
        assert_eq!(to_text(&json!({})), "");
        assert_eq!(to_text(&Value::Null), "");
    }

    #[test]
    fn bad_operators_values_and_keys_are_named_with_kubes_texts() {
        let selector = json!({"matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Exists", "values": ["x"]},
            {"key": "c", "operator": "Near"},
        ], "matchLabels": {"bad key!": "v"}});
        let found = problems(&selector, "webhooks[0].namespaceSelector");
        assert_eq!(found[0].0, "webhooks[0].namespaceSelector.matchExpressions[0].values");
        assert_eq!(found[0].1, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
        assert_eq!(
            found[1].1,
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        );
        assert_eq!(found[2].1, "Invalid value: \"Near\": not a valid selector operator");
        assert_eq!(found[3].0, "webhooks[0].namespaceSelector.matchLabels");
        assert!(
            found[3].1.starts_with("Invalid value: \"bad key!\": name part must consist of"),
            "{found:?}"
        );
    }
}
