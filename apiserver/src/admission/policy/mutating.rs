//! MutatingAdmissionPolicy: CEL mutations, kept in MutatingAdmissionPolicies
//! and put in force by their bindings, applied to the creates and updates
//! both select, before the mutating webhooks. A mutation is an apply
//! configuration (`Object{spec: Object.spec{...}}`, merged as server-side
//! apply merges, never replacing an atomic list, map or struct whole) or a
//! JSON patch (`[JSONPatch{op: "add", path: ..., value: ...}]`; a failed
//! `test` leaves the object as it was). Each mutation sees the object as
//! the one before left it, and the result is decoded and defaulted again.
//! A policy that cannot be applied (its configuration, an expression that
//! fails) denies the write unless its failurePolicy is Ignore. Policies
//! with `reinvocationPolicy: IfNeeded` take part in kube's reinvocation,
//! as IfNeeded webhooks do.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::compiled::{self, Binding, MutatingPolicy, Mutation};
use super::{Selection, set_variables};
use crate::admission::cel::Variables;
use crate::admission::lookup::Parsed;
use crate::admission::webhook::conditions::Decision;
use crate::admission::webhook::matching;
use crate::admission::{Attributes, Lookups, Operation, Plugin};
use crate::errors::ApiError;
use crate::runtime::meta;

#[derive(Debug)]
pub struct MutatingAdmissionPolicy {
    policies: Parsed<MutatingPolicy>,
    bindings: Parsed<Binding>,
    selection: Selection,
}

impl MutatingAdmissionPolicy {
    pub fn new(lookups: &Lookups) -> MutatingAdmissionPolicy {
        MutatingAdmissionPolicy {
            policies: Parsed::new(lookups.mutating_policies.clone()),
            bindings: Parsed::new(lookups.mutating_policy_bindings.clone()),
            selection: Selection { namespaces: lookups.namespaces.clone(), kinds: lookups.kinds.clone() },
        }
    }
}

/// Why one policy under one binding could not do its work.
struct Failure {
    message: String,
    /// `Invalid` for an expression or a mutation that failed; `Forbidden`
    /// for a configuration that cannot work.
    reason: &'static str,
}

#[async_trait]
impl Plugin for MutatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "MutatingAdmissionPolicy"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        // Only what is written can be mutated: not a delete, not a connect.
        if matching::excluded(attributes)
            || attributes.object.is_none()
            || !matches!(attributes.operation, Operation::Create | Operation::Update)
        {
            return Ok(());
        }
        let bindings = self.bindings.get(compiled::read_binding).await?;
        if bindings.is_empty() {
            return Ok(());
        }
        let policies = self.policies.get(compiled::read_mutating_policy).await?;
        let selected = self.selection.selected(&policies, &bindings, attributes).await?;
        if attributes.reinvocation.round == 1 && attributes.reinvocation.last_output != attributes.object {
            // Something changed the object since the last policy or webhook
            // ran: every IfNeeded one invoked so far may see the change.
            attributes.reinvocation.marked = attributes.reinvocation.called.clone();
        }
        let mut failures = Vec::new();
        for (policy, binding) in selected {
            for failure in self.invoke(policy, binding, attributes).await? {
                if !policy.common.fail_open {
                    let message = format!(
                        "policy '{}' with binding '{}' denied request: {}",
                        policy.common.name, binding.name, failure.message
                    );
                    failures.push(Failure { message, ..failure });
                }
            }
        }
        match failures.is_empty() {
            true => Ok(()),
            false => Err(denial(attributes, &failures)),
        }
    }
}

impl MutatingAdmissionPolicy {
    /// The policy under the binding, once per param: match conditions, then
    /// every mutation in order. What failed is returned; what succeeded
    /// stays applied.
    async fn invoke(
        &self,
        policy: &MutatingPolicy,
        binding: &Binding,
        attributes: &mut Attributes,
    ) -> Result<Vec<Failure>, ApiError> {
        let common = &policy.common;
        let params = match self.selection.params(common, binding, attributes).await {
            Ok(Some(params)) => params,
            Ok(None) => return Ok(Vec::new()),
            Err(why) => {
                let message = match why.starts_with("failed to configure") {
                    true => why,
                    false => format!("failed to configure binding: {why}"),
                };
                return Ok(vec![Failure { message, reason: "Forbidden" }]);
            }
        };
        let namespace = self.selection.namespace_object(attributes).await?;
        let mut failures = Vec::new();
        for param in &params {
            let key = invocation_key(policy, binding, param);
            if attributes.reinvocation.round == 1 && !attributes.reinvocation.marked.contains(&key) {
                continue;
            }
            let variables = |attributes: &Attributes| {
                set_variables(Variables::with_env(policy.env.clone()), common, attributes, param, &namespace)
            };
            let decision = match variables(attributes) {
                Ok(variables) => common.conditions.decide(&variables),
                Err(why) => Decision::Error(why),
            };
            match decision {
                Decision::Call => {}
                Decision::Skip => continue,
                Decision::Error(message) => {
                    failures.push(Failure { message, reason: "Invalid" });
                    continue;
                }
            }
            let before = attributes.object.clone();
            for mutation in &policy.mutations {
                let outcome = variables(attributes).and_then(|v| mutated(mutation, &v, attributes));
                match outcome {
                    Ok(Some(object)) => attributes.object = Some(normalized(attributes, object)?),
                    Ok(None) => {}
                    Err(message) => failures.push(Failure { message, reason: "Invalid" }),
                }
            }
            let memory = &mut attributes.reinvocation;
            if attributes.object != before && memory.round == 0 {
                // Those invoked before have not seen this change.
                memory.marked = memory.called.clone();
                memory.requested |= !memory.marked.is_empty();
            }
            if policy.reinvoke_if_needed && !memory.called.contains(&key) {
                memory.called.push(key);
            }
            memory.last_output = attributes.object.clone();
        }
        Ok(failures)
    }
}

/// What reinvocation knows an invocation by: policy, binding and param.
fn invocation_key(policy: &MutatingPolicy, binding: &Binding, param: &Value) -> String {
    let param = match param.is_null() {
        true => String::new(),
        false => format!("{}/{}", meta::namespace_of(param).unwrap_or_default(), meta::name_of(param)),
    };
    format!("policy:{}/{}/{param}", policy.common.name, binding.name)
}

/// The object as `mutation` leaves it: None when it stays as it is (a JSON
/// patch whose `test` failed).
fn mutated(
    mutation: &Mutation,
    variables: &Variables,
    attributes: &Attributes,
) -> Result<Option<Value>, String> {
    let program = mutation.expression.as_ref().map_err(Clone::clone)?;
    let value = variables
        .json(program)
        .map_err(|why| format!("expression '{}' resulted in error: {why}", mutation.source))?;
    let object = attributes.object.as_ref().ok_or("no object to mutate")?;
    match mutation.json_patch {
        true => json_patched(object, value),
        false => applied(object, value, attributes).map(Some),
    }
}

fn json_patched(object: &Value, operations: Value) -> Result<Option<Value>, String> {
    if !operations.is_array() {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".into());
    }
    let patch: json_patch::Patch = serde_json::from_value(operations).map_err(|e| {
        format!("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: {e}")
    })?;
    let mut patched = object.clone();
    match json_patch::patch(&mut patched, &patch) {
        Ok(()) => Ok(Some(patched)),
        Err(e) if matches!(e.kind, json_patch::PatchErrorKind::TestFailed) => Ok(None),
        Err(e) => Err(format!("JSON Patch: {e}")),
    }
}

/// An apply configuration merged into the object, of the object's kind.
fn applied(object: &Value, mut configuration: Value, attributes: &Attributes) -> Result<Value, String> {
    if !configuration.is_object() {
        return Err("unsupported return type from ApplyConfiguration expression".into());
    }
    configuration["apiVersion"] = object["apiVersion"].clone();
    configuration["kind"] = object["kind"].clone();
    let fields =
        attributes.field_manager.as_ref().ok_or("error applying patch: type converter must not be nil")?;
    fields.merge_configuration(object, &configuration).map_err(|why| format!("error applying patch: {why}"))
}

/// A mutated object as decoding would make it: unknown fields dropped,
/// defaults set (kube defaults the result of every mutation).
fn normalized(attributes: &Attributes, object: Value) -> Result<Value, ApiError> {
    match &attributes.normalize {
        Some(normalize) => (normalize.0)(object),
        None => Ok(object),
    }
}

/// kube's refusal when policies failed: 403, the first failure's message
/// and reason, every failure among the causes.
fn denial(attributes: &Attributes, failures: &[Failure]) -> ApiError {
    let forbidden = attributes.forbidden("admission request denied by policy");
    let mut details = forbidden.status()["details"].clone();
    details["causes"] = failures.iter().map(|f| json!({"message": f.message})).collect();
    ApiError::Denied {
        code: 403,
        reason: failures[0].reason.to_string(),
        message: failures[0].message.clone(),
        details: Some(details),
    }
}
