//! Stored ValidatingAdmissionPolicies and their bindings, read once per
//! change into what evaluation needs: every CEL expression compiled.

use serde_json::Value;

use crate::admission::cel::{self, Program};
use crate::admission::webhook::conditions::Conditions;
use crate::runtime::meta;

/// A compiled expression, or why it does not compile.
pub type Compiled = Result<Program, String>;

#[derive(Debug)]
pub struct Policy {
    pub name: String,
    /// `(apiVersion, kind)` of its params.
    pub param_kind: Option<(String, String)>,
    pub constraints: Match,
    pub conditions: Conditions,
    pub variables: Vec<(String, Compiled)>,
    pub validations: Vec<Validation>,
    pub audit_annotations: Vec<(String, Compiled)>,
    pub fail_open: bool,
}

#[derive(Debug)]
pub struct Validation {
    pub source: String,
    pub expression: Compiled,
    pub message: String,
    pub message_expression: Option<Compiled>,
    /// `Invalid` unless the policy says otherwise.
    pub reason: String,
}

/// What a policy or binding selects (a MatchResources).
#[derive(Debug, Default)]
pub struct Match {
    pub rules: Vec<Value>,
    pub exclude: Vec<Value>,
    pub namespace_selector: Value,
    pub object_selector: Value,
}

#[derive(Debug)]
pub struct Binding {
    pub name: String,
    pub policy: String,
    pub param_ref: Option<ParamRef>,
    pub resources: Option<Match>,
    pub deny: bool,
    pub warn: bool,
    pub audit: bool,
}

#[derive(Debug)]
pub struct ParamRef {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub selector: Option<Value>,
    pub deny_when_missing: bool,
}

fn compile(value: &Value) -> Compiled {
    cel::compile(value.as_str().unwrap_or_default())
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn read_match(value: &Value) -> Match {
    let selector =
        |key: &str| if value[key].is_object() { value[key].clone() } else { serde_json::json!({}) };
    Match {
        rules: list(&value["resourceRules"]).to_vec(),
        exclude: list(&value["excludeResourceRules"]).to_vec(),
        namespace_selector: selector("namespaceSelector"),
        object_selector: selector("objectSelector"),
    }
}

pub fn read_policy(object: &Value) -> Vec<Policy> {
    let spec = &object["spec"];
    let param_kind = spec["paramKind"].as_object().map(|k| {
        (text(k.get("apiVersion").unwrap_or(&Value::Null)), text(k.get("kind").unwrap_or(&Value::Null)))
    });
    let validations = list(&spec["validations"])
        .iter()
        .map(|v| Validation {
            source: text(&v["expression"]),
            expression: compile(&v["expression"]),
            message: text(&v["message"]).trim().to_string(),
            message_expression: v["messageExpression"]
                .as_str()
                .filter(|m| !m.trim().is_empty())
                .map(cel::compile),
            reason: v["reason"].as_str().unwrap_or("Invalid").to_string(),
        })
        .collect();
    vec![Policy {
        name: meta::name_of(object).to_string(),
        param_kind,
        constraints: read_match(&spec["matchConstraints"]),
        conditions: Conditions::compile(list(&spec["matchConditions"])),
        variables: list(&spec["variables"])
            .iter()
            .map(|v| (text(&v["name"]), compile(&v["expression"])))
            .collect(),
        validations,
        audit_annotations: list(&spec["auditAnnotations"])
            .iter()
            .map(|a| (text(&a["key"]), compile(&a["valueExpression"])))
            .collect(),
        fail_open: spec["failurePolicy"].as_str() == Some("Ignore"),
    }]
}

pub fn read_binding(object: &Value) -> Vec<Binding> {
    let spec = &object["spec"];
    let actions: Vec<&str> = list(&spec["validationActions"]).iter().filter_map(Value::as_str).collect();
    let param_ref = spec["paramRef"].as_object().map(|r| ParamRef {
        name: r.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).map(str::to_string),
        namespace: r.get("namespace").and_then(Value::as_str).filter(|n| !n.is_empty()).map(str::to_string),
        selector: r.get("selector").filter(|s| s.is_object()).cloned(),
        deny_when_missing: r.get("parameterNotFoundAction").and_then(Value::as_str) == Some("Deny"),
    });
    vec![Binding {
        name: meta::name_of(object).to_string(),
        policy: text(&spec["policyName"]),
        param_ref,
        resources: spec["matchResources"].is_object().then(|| read_match(&spec["matchResources"])),
        deny: actions.contains(&"Deny"),
        warn: actions.contains(&"Warn"),
        audit: actions.contains(&"Audit"),
    }]
}
