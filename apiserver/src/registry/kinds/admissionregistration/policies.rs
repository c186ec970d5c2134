//! ValidatingAdmissionPolicies (CEL validations over the objects their
//! match constraints select) and ValidatingAdmissionPolicyBindings (which
//! put a policy in force, with its parameters and actions). Cluster-scoped;
//! kube's defaults (failurePolicy Fail, matchPolicy Equivalent, empty
//! selectors, rule scope `*`) and kube's validation, texts included; CEL
//! expressions must compile.

use k8s_openapi::api::admissionregistration::v1 as registration;
use serde_json::{Value, json};

use super::super::Kind;
use super::{
    cause, invalid, match_condition_causes, not_supported, one_of, required, rule_causes, selector_causes,
};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::selector::go_quote;
use crate::table::{self, Printer};

const GROUP: &str = "admissionregistration.k8s.io";

pub fn policy() -> Kind {
    Kind::typed::<registration::ValidatingAdmissionPolicy>(
        Resource::new(GROUP, "ValidatingAdmissionPolicy", "validatingadmissionpolicies")
            .cluster_scoped()
            .in_api_extensions()
            .with_status(),
        PolicyStrategy,
    )
}

pub fn binding() -> Kind {
    Kind::typed::<registration::ValidatingAdmissionPolicyBinding>(
        Resource::new(GROUP, "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings")
            .cluster_scoped()
            .in_api_extensions(),
        BindingStrategy,
    )
}

#[derive(Debug)]
struct PolicyStrategy;

#[derive(Debug)]
struct BindingStrategy;

pub(super) fn refuse(kind: &str, object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid { kind: format!("{kind}.{GROUP}"), name: meta::name_of(object).into(), causes })
}

impl Strategy for PolicyStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::ADMISSIONREGISTRATION_V1_VALIDATING_ADMISSION_POLICY)
    }

    fn set_defaults(&self, object: &mut Value) {
        default_policy(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        refuse("ValidatingAdmissionPolicy", object, policy_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &POLICY_PRINTER
    }
}

impl Strategy for BindingStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::ADMISSIONREGISTRATION_V1_VALIDATING_ADMISSION_POLICY_BINDING)
    }

    fn set_defaults(&self, object: &mut Value) {
        default_binding(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        refuse("ValidatingAdmissionPolicyBinding", object, binding_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &BINDING_PRINTER
    }
}

/// kube's v1 defaults of a policy, validating or mutating: failurePolicy
/// Fail, and its match constraints'.
pub(super) fn default_policy(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else { return };
    if spec["failurePolicy"].is_null() {
        spec["failurePolicy"] = json!("Fail");
    }
    if let Some(constraints) = spec.get_mut("matchConstraints").filter(|c| c.is_object()) {
        default_match_resources(constraints);
    }
}

/// kube's v1 defaults of a binding: its match resources'.
pub(super) fn default_binding(object: &mut Value) {
    let resources =
        object.get_mut("spec").and_then(|s| s.get_mut("matchResources")).filter(|m| m.is_object());
    if let Some(resources) = resources {
        default_match_resources(resources);
    }
}

/// kube's v1 defaults of a MatchResources.
pub(super) fn default_match_resources(resources: &mut Value) {
    for (key, value) in [
        ("matchPolicy", json!("Equivalent")),
        ("namespaceSelector", json!({})),
        ("objectSelector", json!({})),
    ] {
        if resources[key].is_null() {
            resources[key] = value;
        }
    }
    for list in ["resourceRules", "excludeResourceRules"] {
        for rule in resources[list].as_array_mut().into_iter().flatten() {
            if rule.is_object() && rule["scope"].is_null() {
                rule["scope"] = json!("*");
            }
        }
    }
}

const REASONS: [&str; 3] = ["Forbidden", "Invalid", "RequestEntityTooLarge"];

/// kube's `validateValidatingAdmissionPolicySpec`.
fn policy_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match spec["failurePolicy"].as_str() {
        None => causes.push(required("spec.failurePolicy", "")),
        Some(_) => causes.extend(one_of(spec, "failurePolicy", "spec", &["Fail", "Ignore"])),
    }
    if spec["paramKind"].is_object() {
        causes.extend(param_kind_causes(&spec["paramKind"]));
    }
    if spec["matchConstraints"].is_object() {
        causes.extend(match_resources_causes(&spec["matchConstraints"], "spec.matchConstraints"));
        if spec["matchConstraints"]["resourceRules"].as_array().is_none_or(Vec::is_empty) {
            causes.push(required("spec.matchConstraints.resourceRules", ""));
        }
    } else {
        causes.push(required("spec.matchConstraints", ""));
    }
    causes.extend(match_condition_causes(&spec["matchConditions"], "spec.matchConditions"));
    causes.extend(variable_causes(&spec["variables"]));
    let validations = spec["validations"].as_array().map(Vec::as_slice).unwrap_or_default();
    let annotations = spec["auditAnnotations"].as_array().map(Vec::as_slice).unwrap_or_default();
    if validations.is_empty() && annotations.is_empty() {
        let why = "validations or auditAnnotations must contain at least one item";
        causes.push(required("spec.validations", why));
        causes.push(required("spec.auditAnnotations", why));
    }
    for (i, validation) in validations.iter().enumerate() {
        causes.extend(validation_causes(validation, &format!("spec.validations[{i}]")));
    }
    let mut keys = Vec::new();
    for (i, annotation) in annotations.iter().enumerate() {
        let at = format!("spec.auditAnnotations[{i}]");
        let key = annotation["key"].as_str().unwrap_or_default();
        if keys.contains(&key) {
            causes.push(cause(
                "FieldValueDuplicate",
                &format!("{at}.key"),
                format!("Duplicate value: {}", go_quote(key)),
            ));
        }
        keys.push(key);
        causes.extend(expression_causes(
            &annotation["valueExpression"],
            &format!("{at}.valueExpression"),
            "valueExpression is not specified",
        ));
    }
    causes
}

/// kube's `validateVariable`, for each of `spec.variables`.
pub(super) fn variable_causes(variables: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, variable) in variables.as_array().into_iter().flatten().enumerate() {
        let at = format!("spec.variables[{i}]");
        let name = variable["name"].as_str().unwrap_or_default();
        if name.trim().is_empty() {
            causes.push(required(&format!("{at}.name"), "name is not specified"));
        } else if !is_cel_identifier(name) {
            causes.push(invalid(&format!("{at}.name"), &json!(name), "name is not a valid CEL identifier"));
        }
        causes.extend(expression_causes(
            &variable["expression"],
            &format!("{at}.expression"),
            "expression is not specified",
        ));
    }
    causes
}

fn validation_causes(validation: &Value, at: &str) -> Vec<Cause> {
    let mut causes = expression_causes(
        &validation["expression"],
        &format!("{at}.expression"),
        "expression is not specified",
    );
    if let Some(message_expression) = validation["messageExpression"].as_str() {
        if message_expression.trim().is_empty() {
            if !message_expression.is_empty() {
                causes.push(invalid(
                    &format!("{at}.messageExpression"),
                    &json!(message_expression),
                    "must be non-empty if specified",
                ));
            }
        } else {
            causes.extend(expression_causes(
                &validation["messageExpression"],
                &format!("{at}.messageExpression"),
                "",
            ));
        }
    }
    let message = validation["message"].as_str().unwrap_or_default();
    if !message.is_empty() && message.trim().is_empty() {
        causes.push(invalid(
            &format!("{at}.message"),
            &json!(message),
            "message must be non-empty if specified",
        ));
    } else if message.trim().contains(['\n', '\r']) {
        causes.push(invalid(
            &format!("{at}.message"),
            &json!(message),
            "message must not contain line breaks",
        ));
    }
    if let Some(reason) = validation["reason"].as_str().filter(|r| !REASONS.contains(r)) {
        causes.push(not_supported(&format!("{at}.reason"), reason, &REASONS));
    }
    causes
}

/// Present and compiling.
pub(super) fn expression_causes(value: &Value, at: &str, missing: &str) -> Vec<Cause> {
    let expression = value.as_str().unwrap_or_default();
    if expression.trim().is_empty() {
        return vec![required(at, missing)];
    }
    match crate::admission::cel::compile(expression) {
        Ok(_) => Vec::new(),
        Err(why) => vec![invalid(at, &json!(expression), &format!("compilation failed: {why}"))],
    }
}

/// kube's `validateParamKind`.
pub(super) fn param_kind_causes(kind: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let api_version = kind["apiVersion"].as_str().unwrap_or_default();
    if api_version.is_empty() {
        causes.push(required("spec.paramKind.apiVersion", ""));
    } else if api_version.matches('/').count() > 1 {
        causes.push(invalid(
            "spec.paramKind.apiVersion",
            &json!(api_version),
            &format!("unexpected GroupVersion string: {api_version}"),
        ));
    } else if api_version.rsplit('/').next().is_none_or(str::is_empty) {
        causes.push(invalid("spec.paramKind.apiVersion", &json!(api_version), "version must be specified"));
    }
    if kind["kind"].as_str().is_none_or(str::is_empty) {
        causes.push(required("spec.paramKind.kind", ""));
    }
    causes
}

/// kube's `validateMatchResources` under `at` (defaults already set).
pub(super) fn match_resources_causes(resources: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    match resources["matchPolicy"].as_str() {
        None => causes.push(required(&format!("{at}.matchPolicy"), "")),
        Some(_) => causes.extend(one_of(resources, "matchPolicy", at, &["Equivalent", "Exact"])),
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        match resources[selector].is_object() {
            true => causes.extend(selector_causes(&resources[selector], &format!("{at}.{selector}"))),
            false => causes.push(required(&format!("{at}.{selector}"), "")),
        }
    }
    for list in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in resources[list].as_array().into_iter().flatten().enumerate() {
            let here = format!("{at}.{list}[{i}]");
            let mut names = Vec::new();
            for (j, name) in
                rule["resourceNames"].as_array().into_iter().flatten().filter_map(Value::as_str).enumerate()
            {
                if names.contains(&name) {
                    causes.push(cause(
                        "FieldValueDuplicate",
                        &format!("{here}.resourceNames[{j}]"),
                        format!("Duplicate value: {}", go_quote(name)),
                    ));
                }
                names.push(name);
            }
            causes.extend(rule_causes(rule, &here));
        }
    }
    causes
}

const ACTIONS: [&str; 3] = ["Audit", "Deny", "Warn"];

/// kube's `validateValidatingAdmissionPolicyBindingSpec` (its
/// `matchResouces` field path spelled as kube spells it).
fn binding_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let policy = spec["policyName"].as_str().unwrap_or_default();
    if policy.is_empty() {
        causes.push(required("spec.policyName", ""));
    } else {
        for problem in crate::registry::metadata::name_causes(crate::registry::NameRule::Subdomain, policy) {
            causes.push(Cause { field: "spec.policyName".into(), ..problem });
        }
    }
    if spec["paramRef"].is_object() {
        causes.extend(param_ref_causes(&spec["paramRef"]));
    }
    if spec["matchResources"].is_object() {
        causes.extend(match_resources_causes(&spec["matchResources"], "spec.matchResouces"));
    }
    let actions: Vec<&str> =
        spec["validationActions"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    for (i, action) in actions.iter().enumerate() {
        if !ACTIONS.contains(action) {
            causes.push(not_supported(&format!("spec.validationActions[{i}]"), action, &ACTIONS));
        }
        if actions[..i].contains(action) {
            causes.push(cause(
                "FieldValueDuplicate",
                &format!("spec.validationActions[{i}]"),
                format!("Duplicate value: {}", go_quote(action)),
            ));
        }
    }
    if actions.contains(&"Deny") && actions.contains(&"Warn") {
        causes.push(invalid("spec.validationActions", &spec["validationActions"], "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"));
    }
    if actions.is_empty() {
        causes.push(required("spec.validationActions", "at least one validation action is required"));
    }
    causes
}

pub(super) fn param_ref_causes(reference: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let named = reference["name"].as_str().is_some_and(|n| !n.is_empty());
    let selected = reference["selector"].is_object();
    if named && selected {
        for field in ["spec.paramRef.name", "spec.paramRef.selector"] {
            causes.push(cause(
                "FieldValueForbidden",
                field,
                "Forbidden: name and selector are mutually exclusive".into(),
            ));
        }
    }
    if selected {
        causes.extend(selector_causes(&reference["selector"], "spec.paramRef.selector"));
    }
    if !named && !selected {
        causes.push(required("spec.paramRef", "one of name or selector must be specified"));
    }
    match reference["parameterNotFoundAction"].as_str().filter(|a| !a.is_empty()) {
        None => causes.push(required("spec.paramRef.parameterNotFoundAction", "")),
        Some(action) if !["Deny", "Allow"].contains(&action) => {
            causes.push(not_supported("spec.paramRef.parameterNotFoundAction", action, &["Deny", "Allow"]));
        }
        Some(_) => {}
    }
    causes
}

/// `[_a-zA-Z][_a-zA-Z0-9]*`, not a CEL reserved word.
pub(super) fn is_cel_identifier(name: &str) -> bool {
    const RESERVED: [&str; 21] = [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !RESERVED.contains(&name)
}

/// kube's printers: policies with how many validations they hold and
/// their param kind; bindings with their policy and parameter reference.
static POLICY_PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col(
            "Validations",
            "integer",
            "Validations indicates the number of validation rules defined in this configuration",
        ),
        PARAM_KIND_COLUMN,
        table::AGE,
    ],
    cells: |o, now| {
        let validations = o["spec"]["validations"].as_array().map_or(0, Vec::len);
        vec![table::name(o), json!(validations), param_kind_cell(o), table::age(o, now)]
    },
};

pub(super) const PARAM_KIND_COLUMN: table::Col = table::col(
    "ParamKind",
    "string",
    "ParamKind specifies the kind of resources used to parameterize this policy",
);

/// `<apiVersion>/<kind>` of a policy's params, or `<unset>`.
pub(super) fn param_kind_cell(policy: &Value) -> Value {
    let kind = &policy["spec"]["paramKind"];
    match kind.is_object() {
        true => json!(format!(
            "{}/{}",
            kind["apiVersion"].as_str().unwrap_or_default(),
            kind["kind"].as_str().unwrap_or_default()
        )),
        false => json!("<unset>"),
    }
}

pub(super) static BINDING_PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col(
            "PolicyName",
            "string",
            "PolicyName indicates the policy definition which the policy binding binded to",
        ),
        table::col(
            "ParamRef",
            "string",
            "ParamRef indicates the param resource which sets the configuration param",
        ),
        table::AGE,
    ],
    cells: binding_cells,
};

fn binding_cells(object: &Value, now: i64) -> Vec<Value> {
    let reference = &object["spec"]["paramRef"];
    let name = reference["name"].as_str().unwrap_or_default();
    let namespace = reference["namespace"].as_str().unwrap_or_default();
    let param = match (reference.is_object(), name, namespace) {
        (false, _, _) => "<unset>".to_string(),
        (true, "", _) if reference["selector"].is_object() => go_selector_string(&reference["selector"]),
        (true, "", _) => "<unset>".to_string(),
        (true, name, "") => format!("*/{name}"),
        (true, name, namespace) => format!("{namespace}/{name}"),
    };
    vec![
        table::name(object),
        json!(object["spec"]["policyName"].as_str().unwrap_or_default()),
        json!(param),
        table::age(object, now),
    ]
}

/// A LabelSelector as Go's generated `String()` prints it (what kube's
/// printer shows for a binding that selects its params).
fn go_selector_string(selector: &Value) -> String {
    let mut labels: Vec<(&String, &Value)> =
        selector["matchLabels"].as_object().into_iter().flatten().collect();
    labels.sort_by(|a, b| a.0.cmp(b.0));
    let labels: String =
        labels.iter().map(|(k, v)| format!("{k}: {},", v.as_str().unwrap_or_default())).collect();
    let expressions: String = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let values: Vec<&str> =
                e["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e["key"].as_str().unwrap_or_default(),
                e["operator"].as_str().unwrap_or_default(),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selecting_binding_prints_its_selector_as_go_does() {
        let selector = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["x", "y"]}]});
        assert_eq!(
            go_selector_string(&selector),
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:env,Operator:In,Values:[x y],},},}"
        );
        let binding =
            json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "paramRef": {"selector": {}}}});
        assert_eq!(
            binding_cells(&binding, 0)[2],
            json!(
                "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"
            )
        );
    }
}
