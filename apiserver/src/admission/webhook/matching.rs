//! Which webhooks (and policies) a write is sent to (kube's predicates): the
//! rules (operation, group, version, resource and subresource, scope),
//! then the namespace selector and the object selector. Writes to the
//! admission configurations themselves are never sent.

use serde_json::{Map, Value};

use crate::admission::{Attributes, Lookup, lookup};
use crate::errors::ApiError;
use crate::selector::object as selector;

/// Writes no webhook sees: they configure admission itself, and a webhook
/// could otherwise lock every administrator out of repairing it.
pub fn excluded(attributes: &Attributes) -> bool {
    attributes.resource.group == "admissionregistration.k8s.io"
        && matches!(
            attributes.resource.resource.as_str(),
            "mutatingwebhookconfigurations"
                | "validatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

/// Whether any of `rules` covers the write (a `resourceNames` list, as
/// policies' rules have, must name the object).
pub fn rules_match(rules: &[Value], attributes: &Attributes) -> bool {
    rules.iter().any(|rule| rule_matches(rule, attributes))
}

fn listed<'a>(rule: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    rule[key].as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn rule_matches(rule: &Value, attributes: &Attributes) -> bool {
    let operation = attributes.operation.as_str();
    let resource = &attributes.resource;
    listed(rule, "operations").any(|op| op == "*" || op == operation)
        && listed(rule, "apiGroups").any(|g| g == "*" || g == resource.group)
        && listed(rule, "apiVersions").any(|v| v == "*" || v == resource.version)
        && listed(rule, "resources")
            .any(|r| resource_matches(r, &resource.resource, attributes.subresource.as_deref()))
        && scope_matches(rule["scope"].as_str().unwrap_or("*"), attributes)
        && names_match(rule, &attributes.name)
}

/// An empty or absent `resourceNames` names every object.
fn names_match(rule: &Value, name: &str) -> bool {
    let mut names = listed(rule, "resourceNames").peekable();
    names.peek().is_none() || names.any(|n| n == name)
}

/// `x`, `x/y`, `x/*` (x and every subresource of it), `*/y`, `*`
/// (every resource, no subresource) and `*/*` (everything): a `*` part
/// matches anything, an absent subresource part only no subresource.
fn resource_matches(pattern: &str, resource: &str, subresource: Option<&str>) -> bool {
    let (want_resource, want_sub) = pattern.split_once('/').unwrap_or((pattern, ""));
    (want_resource == "*" || want_resource == resource)
        && (want_sub == "*" || want_sub == subresource.unwrap_or_default())
}

/// `Cluster`: cluster-scoped objects (Namespaces among them);
/// `Namespaced`: objects in a namespace; `*`: both.
fn scope_matches(scope: &str, attributes: &Attributes) -> bool {
    match scope {
        "Cluster" => attributes.namespace.is_none(),
        "Namespaced" => attributes.namespace.is_some(),
        _ => true,
    }
}

/// kube's namespace predicate: cluster-scoped objects always match; a
/// Namespace is matched on its own labels; anything else on its
/// namespace's (404 when that namespace is not there).
pub async fn namespace_matches(
    wanted: &Value,
    attributes: &Attributes,
    namespaces: &Lookup,
) -> Result<bool, ApiError> {
    if selector::is_empty(wanted) {
        return Ok(true);
    }
    if attributes.is_namespace() {
        let namespace = attributes.object.as_ref().or(attributes.old_object.as_ref());
        return Ok(selector::matches(wanted, namespace.and_then(labels_of)));
    }
    let Some(name) = attributes.namespace.as_deref() else {
        return Ok(true);
    };
    let namespace = namespaces.find(None, name).await?.ok_or_else(|| lookup::namespace_not_found(name))?;
    Ok(selector::matches(wanted, labels_of(&namespace)))
}

/// kube's object predicate: the new object's labels or the old one's.
pub fn object_matches(wanted: &Value, attributes: &Attributes) -> bool {
    if selector::is_empty(wanted) {
        return true;
    }
    [attributes.object.as_ref(), attributes.old_object.as_ref()]
        .into_iter()
        .flatten()
        .any(|object| selector::matches(wanted, labels_of(object)))
}

fn labels_of(object: &Value) -> Option<&Map<String, Value>> {
    object["metadata"]["labels"].as_object()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_patterns_cover_what_kube_says_they_cover() {
        let cases = [
            ("pods", None, "pods", true),
            ("pods", Some("status"), "pods", false),
            ("pods", Some("status"), "pods/status", true),
            ("pods", None, "pods/*", true),
            ("pods", Some("exec"), "pods/*", true),
            ("deployments", Some("scale"), "*/scale", true),
            ("deployments", None, "*", true),
            ("deployments", Some("status"), "*", false),
            ("deployments", Some("status"), "*/*", true),
            ("configmaps", None, "*/*", true),
            ("configmaps", None, "pods", false),
        ];
        for (resource, sub, pattern, expected) in cases {
            assert_eq!(resource_matches(pattern, resource, sub), expected, "{pattern} vs {resource} {sub:?}");
        }
    }
}
