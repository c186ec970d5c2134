//! admissionregistration.k8s.io/v1: what configures admission. Webhook
//! configurations (`webhooks`) and ValidatingAdmissionPolicies with their
//! bindings (`policies`); here the field checks both share, in kube's words.

pub mod mutating_policies;
pub mod policies;
pub mod webhooks;

use serde_json::{Value, json};

use crate::errors::Cause;
use crate::selector::go_quote;

pub use super::field::{cause, invalid, not_supported, required};

/// One of `allowed`, when set.
pub fn one_of(object: &Value, key: &str, at: &str, allowed: &[&str]) -> Option<Cause> {
    let value = object[key].as_str()?;
    (!allowed.contains(&value)).then(|| not_supported(&format!("{at}.{key}"), value, allowed))
}

pub const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];

pub fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// kube's `validateRuleWithOperations` (subresources allowed).
pub fn rule_causes(rule: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let operations = strings(&rule["operations"]);
    if operations.is_empty() {
        causes.push(required(&format!("{at}.operations"), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        causes.push(invalid(
            &format!("{at}.operations"),
            &rule["operations"],
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in operations.iter().enumerate().filter(|(_, op)| !OPERATIONS.contains(op)) {
        causes.push(not_supported(&format!("{at}.operations[{i}]"), op, &OPERATIONS));
    }
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(&rule[key]);
        if values.is_empty() {
            causes.push(required(&format!("{at}.{key}"), ""));
        }
        if values.len() > 1 && values.contains(&"*") {
            causes.push(invalid(
                &format!("{at}.{key}"),
                &rule[key],
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
    }
    for (i, _) in strings(&rule["apiVersions"]).iter().enumerate().filter(|(_, v)| v.is_empty()) {
        causes.push(required(&format!("{at}.apiVersions[{i}]"), ""));
    }
    causes.extend(resources_causes(&rule["resources"], &format!("{at}.resources")));
    if let Some(scope) = rule["scope"].as_str().filter(|s| !["*", "Cluster", "Namespaced"].contains(s)) {
        causes.push(not_supported(&format!("{at}.scope"), scope, &["*", "Cluster", "Namespaced"]));
    }
    causes
}

/// kube's `validateResources`: `x`, `x/y`, `x/*`, `*/y`, `*`, `*/*`, and
/// no entry another one already covers.
pub fn resources_causes(value: &Value, at: &str) -> Vec<Cause> {
    let resources = strings(value);
    let mut causes = Vec::new();
    if resources.is_empty() {
        causes.push(required(at, ""));
    }
    let (mut any_sub_of, mut sub_of_any) = (Vec::new(), Vec::new());
    let mut plain = false;
    for (i, entry) in resources.iter().enumerate() {
        if entry.is_empty() {
            causes.push(required(&format!("{at}[{i}]"), ""));
            continue;
        }
        let Some((resource, sub)) = entry.split_once('/') else {
            plain = *entry != "*";
            continue;
        };
        if any_sub_of.contains(&resource) {
            causes.push(invalid(
                &format!("{at}[{i}]"),
                &json!(entry),
                &format!("if '{resource}/*' is present, must not specify {entry}"),
            ));
        }
        if sub_of_any.contains(&sub) {
            causes.push(invalid(
                &format!("{at}[{i}]"),
                &json!(entry),
                &format!("if '*/{sub}' is present, must not specify {entry}"),
            ));
        }
        if sub == "*" {
            any_sub_of.push(resource);
        }
        if resource == "*" {
            sub_of_any.push(sub);
        }
    }
    if resources.len() > 1 && resources.contains(&"*/*") {
        causes.push(invalid(at, value, "if '*/*' is present, must not specify other resources"));
    }
    if resources.contains(&"*") && plain {
        causes.push(invalid(
            at,
            value,
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    causes
}

/// Names present, unique and qualified; at most 64; expressions present
/// and compiling (checked by the plugin's CEL environment).
pub fn match_condition_causes(value: &Value, at: &str) -> Vec<Cause> {
    let conditions = value.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut causes = Vec::new();
    if conditions.len() > 64 {
        causes.push(cause(
            "FieldValueTooMany",
            at,
            format!("Too many: {}: must have at most 64 items", conditions.len()),
        ));
    }
    let mut seen = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let name = condition["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            causes.push(required(&format!("{here}.name"), ""));
        } else if seen.contains(&name) {
            causes.push(cause(
                "FieldValueDuplicate",
                &format!("{here}.name"),
                format!("Duplicate value: {}", go_quote(name)),
            ));
        } else {
            for why in crate::selector::validation::qualified_name_errors(name) {
                causes.push(invalid(&format!("{here}.name"), &json!(name), &why));
            }
        }
        seen.push(name);
        let expression = condition["expression"].as_str().unwrap_or_default();
        if expression.trim().is_empty() {
            causes.push(required(&format!("{here}.expression"), ""));
        } else if let Err(why) = crate::admission::cel::compile(expression) {
            causes.push(invalid(
                &format!("{here}.expression"),
                &json!(expression),
                &format!("compilation failed: {why}"),
            ));
        }
    }
    causes
}

/// kube's `ValidateLabelSelector` as causes.
pub fn selector_causes(selector: &Value, at: &str) -> Vec<Cause> {
    crate::selector::object::problems(selector, at)
        .into_iter()
        .map(|(field, message)| {
            let reason = match message.split(':').next() {
                Some("Required value") => "FieldValueRequired",
                Some("Forbidden") => "FieldValueForbidden",
                _ => "FieldValueInvalid",
            };
            cause(reason, &field, message)
        })
        .collect()
}
