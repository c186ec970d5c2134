//! Stored admission policies (validating and mutating) and their bindings,
//! read once per change into what evaluation needs: every CEL expression
//! compiled.

use std::sync::Arc;

use serde_json::Value;

use crate::admission::cel::{self, Program};
use crate::admission::webhook::conditions::Conditions;
use crate::runtime::meta;

/// A compiled expression, or why it does not compile.
pub type Compiled = Result<Program, String>;

/// What every policy has, whatever it does to the writes it selects.
#[derive(Debug)]
pub struct Common {
    pub name: String,
    /// `(apiVersion, kind)` of its params.
    pub param_kind: Option<(String, String)>,
    pub constraints: Match,
    pub conditions: Conditions,
    pub variables: Vec<(String, Compiled)>,
    pub fail_open: bool,
}

/// A ValidatingAdmissionPolicy.
#[derive(Debug)]
pub struct Policy {
    pub common: Common,
    pub validations: Vec<Validation>,
    pub audit_annotations: Vec<(String, Compiled)>,
}

/// A MutatingAdmissionPolicy.
pub struct MutatingPolicy {
    pub common: Common,
    pub mutations: Vec<Mutation>,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke_if_needed: bool,
    /// Where its expressions are evaluated: with the struct literals they
    /// name.
    pub env: Arc<::cel::Env>,
}

impl std::fmt::Debug for MutatingPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutatingPolicy").field("common", &self.common).finish_non_exhaustive()
    }
}

impl AsRef<Common> for Policy {
    fn as_ref(&self) -> &Common {
        &self.common
    }
}

impl AsRef<Common> for MutatingPolicy {
    fn as_ref(&self) -> &Common {
        &self.common
    }
}

#[derive(Debug)]
pub struct Mutation {
    /// `JSONPatch` (else `ApplyConfiguration`).
    pub json_patch: bool,
    pub source: String,
    pub expression: Compiled,
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

fn read_common(object: &Value) -> Common {
    let spec = &object["spec"];
    let param_kind = spec["paramKind"].as_object().map(|k| {
        (text(k.get("apiVersion").unwrap_or(&Value::Null)), text(k.get("kind").unwrap_or(&Value::Null)))
    });
    Common {
        name: meta::name_of(object).to_string(),
        param_kind,
        constraints: read_match(&spec["matchConstraints"]),
        conditions: Conditions::compile(list(&spec["matchConditions"])),
        variables: list(&spec["variables"])
            .iter()
            .map(|v| (text(&v["name"]), compile(&v["expression"])))
            .collect(),
        fail_open: spec["failurePolicy"].as_str() == Some("Ignore"),
    }
}

pub fn read_policy(object: &Value) -> Vec<Policy> {
    let spec = &object["spec"];
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
        common: read_common(object),
        validations,
        audit_annotations: list(&spec["auditAnnotations"])
            .iter()
            .map(|a| (text(&a["key"]), compile(&a["valueExpression"])))
            .collect(),
    }]
}

pub fn read_mutating_policy(object: &Value) -> Vec<MutatingPolicy> {
    let spec = &object["spec"];
    let source = |m: &Value| {
        let holder = if m["patchType"] == "JSONPatch" { &m["jsonPatch"] } else { &m["applyConfiguration"] };
        holder["expression"].as_str().unwrap_or_default().trim().to_string()
    };
    let mutations: Vec<(bool, String)> =
        list(&spec["mutations"]).iter().map(|m| (m["patchType"] == "JSONPatch", source(m))).collect();
    let variables = list(&spec["variables"]).iter().filter_map(|v| v["expression"].as_str());
    let env = cel::literal_env(mutations.iter().map(|(_, s)| s.as_str()).chain(variables));
    vec![MutatingPolicy {
        common: read_common(object),
        mutations: mutations
            .iter()
            .map(|(json_patch, source)| Mutation {
                json_patch: *json_patch,
                source: source.clone(),
                expression: cel::compile(source),
            })
            .collect(),
        reinvoke_if_needed: spec["reinvocationPolicy"] == "IfNeeded",
        env,
    }]
}

/// A binding of either kind (a mutating one has no actions).
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
