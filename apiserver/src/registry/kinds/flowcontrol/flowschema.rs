//! flowcontrol.apiserver.k8s.io/v1 FlowSchemas: which requests (by
//! subject, resource or non-resource rules) go to which priority level,
//! the schema of lowest `matchingPrecedence` winning. Stored, defaulted,
//! validated and printed as kube does; the mandatory schemas' specs are
//! fixed.

use k8s_openapi::api::flowcontrol::v1 as flowcontrol;
use serde_json::{Value, json};

use super::{bootstrap, conditions_causes, fixed_spec_cause, has_wildcard, only_wildcard};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::TypeNode;
use crate::registry::kinds::Kind;
use crate::registry::kinds::field::{cause, forbidden, invalid, not_supported, required};
use crate::registry::metadata::{dns_label_errors, dns_subdomain_errors};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::table::{self, Printer};

/// kube's bounds on `matchingPrecedence`, and its default.
const MAX_PRECEDENCE: i64 = 10_000;
const DEFAULT_PRECEDENCE: i64 = 1000;
/// The one schema that may have precedence 1.
const EXEMPT: &str = "exempt";
const DISTINGUISHERS: [&str; 2] = ["ByNamespace", "ByUser"];
const SUBJECT_KINDS: [&str; 3] = ["Group", "ServiceAccount", "User"];
const VERBS: [&str; 9] =
    ["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"];
const NAMESPACE_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

pub fn kind() -> Kind {
    Kind::typed::<flowcontrol::FlowSchema>(
        Resource::new(super::GROUP, "FlowSchema", "flowschemas").cluster_scoped().with_status(),
        FlowSchemaStrategy,
    )
}

#[derive(Debug)]
struct FlowSchemaStrategy;

impl Strategy for FlowSchemaStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        super::patch_schema("FlowSchema")
    }

    fn set_defaults(&self, object: &mut Value) {
        let spec = &mut object["spec"];
        if spec.is_object() && spec["matchingPrecedence"].as_i64().unwrap_or(0) == 0 {
            spec["matchingPrecedence"] = json!(DEFAULT_PRECEDENCE);
        }
    }

    /// A new schema's status is the controller's to write.
    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({});
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let name = meta::name_of(object);
        let mut causes = spec_causes(name, &object["spec"]);
        let mandatory = bootstrap::mandatory_flow_schemas();
        causes.extend(fixed_spec_cause(object, mandatory, |fixed| self.set_defaults(fixed)));
        causes.extend(conditions_causes(&object["status"]));
        refuse(object, causes)
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Result<(), ApiError> {
        refuse(new, conditions_causes(&new["status"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

fn refuse(object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    super::super::field::refuse("FlowSchema.flowcontrol.apiserver.k8s.io", object, causes)
}

fn spec_causes(name: &str, spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let precedence = spec["matchingPrecedence"].as_i64().unwrap_or(0);
    let at = "spec.matchingPrecedence";
    if precedence <= 0 {
        causes.push(invalid(at, &json!(precedence), "must be a positive value"));
    }
    if precedence > MAX_PRECEDENCE {
        causes.push(invalid(at, &json!(precedence), &format!("must not be greater than {MAX_PRECEDENCE}")));
    }
    if precedence == 1 && name != EXEMPT {
        causes.push(invalid(
            at,
            &json!(precedence),
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    let method = &spec["distinguisherMethod"];
    if method.is_object() && !DISTINGUISHERS.contains(&method["type"].as_str().unwrap_or_default()) {
        // kube shows the whole method as the value.
        causes.push(unsupported("spec.distinguisherMethod.type", method, &DISTINGUISHERS));
    }
    let level = spec["priorityLevelConfiguration"]["name"].as_str().unwrap_or_default();
    if level.is_empty() {
        causes.push(required("spec.priorityLevelConfiguration.name", "must reference a priority level"));
    }
    for why in dns_subdomain_errors(level).iter().filter(|_| !level.is_empty()) {
        causes.push(invalid("spec.priorityLevelConfiguration.name", &json!(level), why));
    }
    for (i, rule) in spec["rules"].as_array().into_iter().flatten().enumerate() {
        causes.extend(rule_causes(rule, &format!("spec.rules[{i}]")));
    }
    causes
}

fn rule_causes(rule: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let subjects = rule["subjects"].as_array().map(Vec::as_slice).unwrap_or_default();
    if subjects.is_empty() {
        causes.push(required(&format!("{at}.subjects"), "subjects must contain at least one value"));
    }
    for (i, subject) in subjects.iter().enumerate() {
        causes.extend(subject_causes(subject, &format!("{at}.subjects[{i}]")));
    }
    let list = |key: &str| rule[key].as_array().map(Vec::as_slice).unwrap_or_default();
    if list("resourceRules").is_empty() && list("nonResourceRules").is_empty() {
        causes.push(required(at, "at least one of resourceRules and nonResourceRules has to be non-empty"));
    }
    for (i, resource) in list("resourceRules").iter().enumerate() {
        causes.extend(resource_rule_causes(resource, &format!("{at}.resourceRules[{i}]")));
    }
    for (i, non_resource) in list("nonResourceRules").iter().enumerate() {
        causes.extend(non_resource_rule_causes(non_resource, &format!("{at}.nonResourceRules[{i}]")));
    }
    causes
}

/// A subject names exactly the one of user, group or service account its
/// kind says.
fn subject_causes(subject: &Value, at: &str) -> Vec<Cause> {
    let kind = subject["kind"].as_str().unwrap_or_default();
    let own = match kind {
        "ServiceAccount" => "serviceAccount",
        "User" => "user",
        "Group" => "group",
        _ => return vec![not_supported(&format!("{at}.kind"), kind, &SUBJECT_KINDS)],
    };
    let mut causes = Vec::new();
    let block = &subject[own];
    if block.is_null() {
        let article = format!("{own} is required when subject kind is '{kind}'");
        causes.push(required(&format!("{at}.{own}"), &article));
    } else {
        causes.extend(subject_name_causes(kind, block, &format!("{at}.{own}")));
    }
    for (other, other_kind) in [("serviceAccount", "ServiceAccount"), ("user", "User"), ("group", "Group")] {
        if other != own && !subject[other].is_null() {
            let why = format!("{other} is forbidden when subject kind is not '{other_kind}'");
            causes.push(forbidden(&format!("{at}.{other}"), &why));
        }
    }
    causes
}

fn subject_name_causes(kind: &str, block: &Value, at: &str) -> Vec<Cause> {
    let name = block["name"].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(required(&format!("{at}.name"), ""));
    } else if kind == "ServiceAccount" && name != "*" {
        causes.extend(
            dns_subdomain_errors(name).iter().map(|why| invalid(&format!("{at}.name"), &json!(name), why)),
        );
    }
    if kind == "ServiceAccount" {
        let namespace = block["namespace"].as_str().unwrap_or_default();
        if namespace.is_empty() {
            causes.push(required(&format!("{at}.namespace"), "must specify namespace for service account"));
        }
        let errors = if namespace.is_empty() { Vec::new() } else { dns_label_errors(namespace) };
        causes.extend(errors.iter().map(|why| invalid(&format!("{at}.namespace"), &json!(namespace), why)));
    }
    causes
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

fn verb_causes(rule: &Value, at: &str) -> Vec<Cause> {
    let verbs = strings(&rule["verbs"]);
    if verbs.is_empty() {
        return vec![required(&format!("{at}.verbs"), "verbs must contain at least one value")];
    }
    if has_wildcard(&verbs) {
        return only_wildcard(&rule["verbs"], &verbs, &format!("{at}.verbs"), "verbs");
    }
    match verbs.iter().find(|v| !VERBS.contains(v)) {
        // kube shows the whole list as the value.
        Some(_) => vec![unsupported(&format!("{at}.verbs"), &rule["verbs"], &VERBS)],
        None => Vec::new(),
    }
}

/// `field.NotSupported` of a value that is not a string (shown as JSON).
fn unsupported(field: &str, value: &Value, supported: &[&str]) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    let message = format!("Unsupported value: {value}: supported values: {}", supported.join(", "));
    cause("FieldValueNotSupported", field, message)
}

fn resource_rule_causes(rule: &Value, at: &str) -> Vec<Cause> {
    let mut causes = verb_causes(rule, at);
    for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
        let items = strings(&rule[key]);
        if items.is_empty() {
            let why = format!("resource rules must supply at least one {what}");
            causes.push(required(&format!("{at}.{key}"), &why));
        } else if items.len() > 1 && has_wildcard(&items) {
            let why = format!("if '*' is present, must not specify other {what}s");
            causes.push(invalid(&format!("{at}.{key}"), &rule[key], &why));
        }
    }
    let namespaces = strings(&rule["namespaces"]);
    if namespaces.is_empty() && rule["clusterScope"] != json!(true) {
        let why = "resource rules that are not cluster scoped must supply at least one namespace";
        causes.push(required(&format!("{at}.namespaces"), why));
    } else if has_wildcard(&namespaces) {
        causes.extend(only_wildcard(
            &rule["namespaces"],
            &namespaces,
            &format!("{at}.namespaces"),
            "namespaces",
        ));
    } else {
        for (i, namespace) in namespaces.iter().enumerate() {
            for why in dns_label_errors(namespace) {
                let field = format!("{at}.namespaces[{i}]");
                causes.push(invalid(&field, &json!(namespace), &format!("{NAMESPACE_INTRO}{why}")));
            }
        }
    }
    causes
}

fn non_resource_rule_causes(rule: &Value, at: &str) -> Vec<Cause> {
    let mut causes = verb_causes(rule, at);
    let urls = strings(&rule["nonResourceURLs"]);
    let field = format!("{at}.nonResourceURLs");
    if urls.is_empty() {
        causes.push(required(&field, "nonResourceURLs must contain at least one value"));
    } else if has_wildcard(&urls) {
        causes.extend(only_wildcard(&rule["nonResourceURLs"], &urls, &field, "non-resource URLs"));
    } else {
        for (i, url) in urls.iter().enumerate() {
            if let Some(why) = url_path_error(url) {
                causes.push(invalid(&format!("{field}[{i}]"), &json!(url), why));
            }
        }
    }
    causes
}

/// kube's rules for a non-resource URL: absolute, no spaces or `//`, a
/// wildcard only as a final `/*`.
fn url_path_error(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = path.matches('*').count();
    (wildcards > 1 || (wildcards == 1 && !path.ends_with("/*")))
        .then_some("wildcard can only do suffix matching")
}

/// kube's printer: the level, precedence and distinguisher, and whether
/// the level the schema names is missing (its `Dangling` condition).
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("PriorityLevel", "string", "The priority level requests matching this schema go to."),
        table::col("MatchingPrecedence", "string", "Lower values match first."),
        table::col("DistinguisherMethod", "string", "How requests are told apart into flows."),
        table::AGE,
        table::col("MissingPL", "string", "Whether the priority level named does not exist."),
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let spec = &object["spec"];
    let distinguisher = spec["distinguisherMethod"]["type"].as_str().unwrap_or("<none>");
    let conditions = object["status"]["conditions"].as_array().into_iter().flatten();
    let dangling =
        conditions.filter(|c| c["type"] == "Dangling").filter_map(|c| c["status"].as_str()).next_back();
    vec![
        table::name(object),
        table::s(table::str_at(object, &["spec", "priorityLevelConfiguration", "name"])),
        table::n(table::int_at(object, &["spec", "matchingPrecedence"])),
        table::s(distinguisher),
        table::age(object, now),
        table::s(dangling.unwrap_or("?")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(name: &str, spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": name}, "spec": spec});
        FlowSchemaStrategy.set_defaults(&mut object);
        object
    }

    fn causes(object: &Value) -> Vec<String> {
        match FlowSchemaStrategy.validate(object) {
            Ok(()) => Vec::new(),
            Err(ApiError::Invalid { causes, .. }) => {
                causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
            }
            Err(other) => panic!("{other}"),
        }
    }

    fn rule(subject: Value, resource: Value) -> Value {
        json!({"subjects": [subject], "resourceRules": [resource]})
    }

    #[test]
    fn a_schema_gets_kubes_default_precedence_and_passes() {
        let object = schema(
            "mine",
            json!({"priorityLevelConfiguration": {"name": "workload-low"},
            "rules": [rule(json!({"kind": "User", "user": {"name": "alice"}}),
                json!({"verbs": ["get", "list"], "apiGroups": ["*"], "resources": ["*"], "namespaces": ["*"]}))]}),
        );
        assert_eq!(object["spec"]["matchingPrecedence"], json!(1000));
        assert_eq!(causes(&object), Vec::<String>::new());
    }

    #[test]
    fn bad_rules_and_subjects_are_refused_with_kubes_texts() {
        let object = schema(
            "mine",
            json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": ""},
            "distinguisherMethod": {"type": "ByColor"},
            "rules": [
                rule(json!({"kind": "User", "group": {"name": "g"}}),
                    json!({"verbs": ["get", "fly"], "apiGroups": [], "resources": ["*", "pods"], "namespaces": ["Bad_NS"]})),
                {"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": "*"}}],
                    "nonResourceURLs": [], "nonResourceRules": [{"verbs": ["*", "get"], "nonResourceURLs": ["healthz", "/a/*/b"]}]},
            ]}),
        );
        assert_eq!(
            causes(&object),
            [
                "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
                "spec.distinguisherMethod.type: Unsupported value: {\"type\":\"ByColor\"}: supported values: \"ByNamespace\", \"ByUser\"",
                "spec.priorityLevelConfiguration.name: Required value: must reference a priority level",
                "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'",
                "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
                "spec.rules[0].resourceRules[0].verbs: Unsupported value: [\"get\",\"fly\"]: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
                "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "spec.rules[0].resourceRules[0].resources: Invalid value: [\"*\",\"pods\"]: if '*' is present, must not specify other resources",
                "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"Bad_NS\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[1].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account",
                "spec.rules[1].nonResourceRules[0].verbs: Invalid value: [\"*\",\"get\"]: if '*' is present, must not specify other verbs",
                "spec.rules[1].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash",
                "spec.rules[1].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a/*/b\": wildcard can only do suffix matching",
            ]
        );
    }

    #[test]
    fn schemas_print_as_kube_prints_them() {
        let object = json!({"metadata": {"name": "probes"}, "spec": {"matchingPrecedence": 2,
            "priorityLevelConfiguration": {"name": "exempt"}},
            "status": {"conditions": [{"type": "Dangling", "status": "False"}]}});
        assert_eq!(
            PRINTER.cells(&object, 0)[..4],
            [json!("probes"), json!("exempt"), json!(2), json!("<none>")]
        );
        assert_eq!(PRINTER.cells(&object, 0)[5], json!("False"));
    }
}
