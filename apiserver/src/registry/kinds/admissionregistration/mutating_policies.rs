//! MutatingAdmissionPolicies (CEL mutations, as apply configurations or
//! JSON patches, of the objects their match constraints select) and
//! MutatingAdmissionPolicyBindings (which put a policy in force, with its
//! parameters). Cluster-scoped, no status; kube's defaults (failurePolicy
//! Fail; a MatchResources as the validating kinds default it) and kube's
//! validation: only CREATE and UPDATE can be mutated, reinvocationPolicy is
//! required, every expression must compile.

use k8s_openapi::api::admissionregistration::v1 as registration;
use serde_json::{Value, json};

use super::super::Kind;
use super::policies::{
    self, expression_causes, match_resources_causes, param_kind_causes, param_ref_causes, refuse,
    variable_causes,
};
use super::{invalid, match_condition_causes, not_supported, one_of, required};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const GROUP: &str = "admissionregistration.k8s.io";

pub fn policy() -> Kind {
    Kind::typed::<registration::MutatingAdmissionPolicy>(
        Resource::new(GROUP, "MutatingAdmissionPolicy", "mutatingadmissionpolicies")
            .cluster_scoped()
            .in_api_extensions(),
        PolicyStrategy,
    )
}

pub fn binding() -> Kind {
    Kind::typed::<registration::MutatingAdmissionPolicyBinding>(
        Resource::new(GROUP, "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings")
            .cluster_scoped()
            .in_api_extensions(),
        BindingStrategy,
    )
}

#[derive(Debug)]
struct PolicyStrategy;

#[derive(Debug)]
struct BindingStrategy;

impl Strategy for PolicyStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::ADMISSIONREGISTRATION_V1_MUTATING_ADMISSION_POLICY)
    }

    fn set_defaults(&self, object: &mut Value) {
        policies::default_policy(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        refuse("MutatingAdmissionPolicy", object, policy_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &POLICY_PRINTER
    }
}

impl Strategy for BindingStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::ADMISSIONREGISTRATION_V1_MUTATING_ADMISSION_POLICY_BINDING)
    }

    fn set_defaults(&self, object: &mut Value) {
        policies::default_binding(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        refuse("MutatingAdmissionPolicyBinding", object, binding_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &policies::BINDING_PRINTER
    }
}

/// The operations a mutation can be for (kube's `supportedMutatingOperations`).
const MUTATING_OPERATIONS: [&str; 3] = ["*", "CREATE", "UPDATE"];
const PATCH_TYPES: [&str; 2] = ["ApplyConfiguration", "JSONPatch"];
const REINVOCATION_POLICIES: [&str; 2] = ["IfNeeded", "Never"];

/// kube's `validateMutatingAdmissionPolicySpec`.
fn policy_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match spec["failurePolicy"].as_str() {
        None => causes.push(required("spec.failurePolicy", "")),
        Some(_) => causes.extend(one_of(spec, "failurePolicy", "spec", &["Fail", "Ignore"])),
    }
    if spec["paramKind"].is_object() {
        causes.extend(param_kind_causes(&spec["paramKind"]));
    }
    let constraints = &spec["matchConstraints"];
    if constraints.is_object() {
        causes.extend(match_resources_causes(constraints, "spec.matchConstraints"));
        if constraints["resourceRules"].as_array().is_none_or(Vec::is_empty) {
            causes.push(required("spec.matchConstraints.resourceRules", ""));
        }
        causes.extend(mutating_operation_causes(constraints, "spec.matchConstraints"));
    } else {
        causes.push(required("spec.matchConstraints", ""));
    }
    causes.extend(match_condition_causes(&spec["matchConditions"], "spec.matchConditions"));
    causes.extend(variable_causes(&spec["variables"]));
    match spec["mutations"].as_array().filter(|m| !m.is_empty()) {
        None => causes.push(required("spec.mutations", "mutations must contain at least one item")),
        Some(mutations) => {
            for (i, mutation) in mutations.iter().enumerate() {
                causes.extend(mutation_causes(mutation, &format!("spec.mutations[{i}]")));
            }
        }
    }
    match spec["reinvocationPolicy"].as_str().filter(|p| !p.is_empty()) {
        None => causes.push(required("spec.reinvocationPolicy", "")),
        Some(policy) if !REINVOCATION_POLICIES.contains(&policy) => {
            causes.push(not_supported("spec.reinvocationPolicy", policy, &REINVOCATION_POLICIES));
        }
        Some(_) => {}
    }
    causes
}

/// Only CREATE and UPDATE can be mutated: any other operation a rule names
/// is refused (under the path kube reports, without the rule's index).
fn mutating_operation_causes(resources: &Value, at: &str) -> Vec<Cause> {
    let rules = resources["resourceRules"].as_array().into_iter().flatten();
    rules
        .flat_map(|rule| rule["operations"].as_array().into_iter().flatten().filter_map(Value::as_str))
        .filter(|op| !MUTATING_OPERATIONS.contains(op))
        .map(|op| not_supported(&format!("{at}.resourceRules.operations"), op, &MUTATING_OPERATIONS))
        .collect()
}

/// kube's `validateMutation`: the patch type, and exactly its expression.
fn mutation_causes(mutation: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let (apply, patch) = (&mutation["applyConfiguration"], &mutation["jsonPatch"]);
    match mutation["patchType"].as_str().filter(|t| !t.is_empty()) {
        None => causes.push(required(&format!("{at}.patchType"), "")),
        Some("JSONPatch") => {
            causes.extend(patch_expression_causes(patch, &format!("{at}.jsonPatch"), "JSONPatch"));
            if apply.is_object() {
                causes.push(invalid(
                    &format!("{at}.applyConfiguration"),
                    &json!("{applyConfiguration}"),
                    "must not be specified when patchType is JSONPatch",
                ));
            }
        }
        Some("ApplyConfiguration") => {
            causes.extend(patch_expression_causes(
                apply,
                &format!("{at}.applyConfiguration"),
                "ApplyConfiguration",
            ));
            if patch.is_object() {
                causes.push(invalid(
                    &format!("{at}.jsonPatch"),
                    &json!("{jsonPatch}"),
                    "must not be specified when patchType is ApplyConfiguration",
                ));
            }
        }
        Some(other) => causes.push(not_supported(&format!("{at}.patchType"), other, &PATCH_TYPES)),
    }
    causes
}

fn patch_expression_causes(holder: &Value, at: &str, patch_type: &str) -> Vec<Cause> {
    if !holder.is_object() {
        return vec![required(at, &format!("must be specified when patchType is {patch_type}"))];
    }
    let trimmed = holder["expression"].as_str().unwrap_or_default().trim();
    expression_causes(&json!(trimmed), &format!("{at}.expression"), "")
}

/// kube's `validateMutatingAdmissionPolicyBindingSpec`.
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
    let resources = &spec["matchResources"];
    if resources.is_object() {
        causes.extend(match_resources_causes(resources, "spec.matchResources"));
        causes.extend(mutating_operation_causes(resources, "spec.matchResources"));
    }
    causes
}

/// kube's printer: name, how many mutations, the param kind, age.
static POLICY_PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col(
            "Mutations",
            "integer",
            "Mutation indicates the number of mutations rules defined in this configuration",
        ),
        policies::PARAM_KIND_COLUMN,
        table::AGE,
    ],
    cells: |o, now| {
        let mutations = o["spec"]["mutations"].as_array().map_or(0, Vec::len);
        vec![table::name(o), json!(mutations), policies::param_kind_cell(o), table::age(o, now)]
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": "p"}, "spec": spec});
        PolicyStrategy.set_defaults(&mut object);
        object
    }

    fn messages(result: Result<(), ApiError>) -> Vec<String> {
        match result {
            Err(ApiError::Invalid { causes, .. }) => {
                causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    fn rule(operations: Value) -> Value {
        json!({"apiGroups": [""], "apiVersions": ["v1"], "operations": operations, "resources": ["configmaps"]})
    }

    #[test]
    fn a_complete_policy_is_accepted_with_kubes_defaults() {
        let object = policy(json!({
            "matchConstraints": {"resourceRules": [rule(json!(["CREATE"]))]},
            "mutations": [{"patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}}],
            "reinvocationPolicy": "Never",
        }));
        assert_eq!(object["spec"]["failurePolicy"], "Fail");
        assert_eq!(object["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
        assert_eq!(object["spec"]["matchConstraints"]["resourceRules"][0]["scope"], "*");
        PolicyStrategy.validate(&object).unwrap();
    }

    #[test]
    fn refusals_carry_kubes_paths_and_texts() {
        let object = policy(json!({
            "matchConstraints": {"resourceRules": [rule(json!(["DELETE"]))]},
            "mutations": [
                {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
                {"patchType": "Merge"},
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{"}},
            ],
        }));
        let found = messages(PolicyStrategy.validate(&object));
        assert_eq!(
            found[0],
            "spec.matchConstraints.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CREATE\", \"UPDATE\""
        );
        assert_eq!(
            found[1],
            "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch"
        );
        assert_eq!(
            found[2],
            "spec.mutations[0].applyConfiguration: Invalid value: \"{applyConfiguration}\": must not be specified when patchType is JSONPatch"
        );
        assert_eq!(
            found[3],
            "spec.mutations[1].patchType: Unsupported value: \"Merge\": supported values: \"ApplyConfiguration\", \"JSONPatch\""
        );
        assert!(found[4].starts_with("spec.mutations[2].applyConfiguration.expression: Invalid value: \"Object{\": compilation failed"), "{found:?}");
        assert_eq!(found[5], "spec.reinvocationPolicy: Required value");
        assert_eq!(found.len(), 6);

        let empty = policy(
            json!({"matchConstraints": {"resourceRules": [rule(json!(["*"]))]}, "reinvocationPolicy": "Sometimes"}),
        );
        assert_eq!(
            messages(PolicyStrategy.validate(&empty)),
            [
                "spec.mutations: Required value: mutations must contain at least one item",
                "spec.reinvocationPolicy: Unsupported value: \"Sometimes\": supported values: \"IfNeeded\", \"Never\"",
            ]
        );
    }

    #[test]
    fn a_binding_may_not_select_deletes() {
        let mut object = json!({"metadata": {"name": "b"}, "spec": {"policyName": "p",
            "matchResources": {"resourceRules": [rule(json!(["CREATE", "DELETE"]))]}}});
        BindingStrategy.set_defaults(&mut object);
        assert_eq!(
            messages(BindingStrategy.validate(&object)),
            [
                "spec.matchResources.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CREATE\", \"UPDATE\""
            ]
        );
        let fine = json!({"metadata": {"name": "b"}, "spec": {"policyName": "p"}});
        BindingStrategy.validate(&fine).unwrap();
    }
}
