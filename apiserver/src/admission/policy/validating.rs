//! ValidatingAdmissionPolicy: CEL validations, kept in
//! ValidatingAdmissionPolicies and put in force by their bindings, run on
//! the writes both select. A failed validation denies the write (422
//! `Invalid` unless the validation names another reason), warns the client
//! or is recorded in the audit event, as the binding's actions say.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::compiled::{self, Binding, Policy};
use super::{Selection, set_variables};
use crate::admission::cel::{OUT_OF_BUDGET, Variables};
use crate::admission::lookup::Parsed;
use crate::admission::webhook::conditions::Decision;
use crate::admission::webhook::matching;
use crate::admission::{Attributes, Lookups, Plugin};
use crate::errors::ApiError;

#[derive(Debug)]
pub struct ValidatingAdmissionPolicy {
    policies: Parsed<Policy>,
    bindings: Parsed<Binding>,
    selection: Selection,
}

impl ValidatingAdmissionPolicy {
    pub fn new(lookups: &Lookups) -> ValidatingAdmissionPolicy {
        ValidatingAdmissionPolicy {
            policies: Parsed::new(lookups.policies.clone()),
            bindings: Parsed::new(lookups.policy_bindings.clone()),
            selection: Selection { namespaces: lookups.namespaces.clone(), kinds: lookups.kinds.clone() },
        }
    }
}

/// One validation that did not hold.
#[derive(Debug, Clone)]
struct Failure {
    message: String,
    reason: String,
    index: usize,
}

#[async_trait]
impl Plugin for ValidatingAdmissionPolicy {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if matching::excluded(attributes) {
            return Ok(());
        }
        let bindings = self.bindings.get(compiled::read_binding).await?;
        if bindings.is_empty() {
            return Ok(());
        }
        let policies = self.policies.get(compiled::read_policy).await?;
        let mut denial = None;
        let mut audited = Vec::new();
        for (policy, binding) in self.selection.selected(&policies, &bindings, attributes).await? {
            let name = &policy.common.name;
            for failure in self.evaluate(policy, binding, attributes).await? {
                let who = format!("ValidatingAdmissionPolicy '{name}' with binding '{}'", binding.name);
                if binding.warn {
                    attributes.notes.warn(format!("Validation failed for {who}: {}", failure.message));
                }
                if binding.audit {
                    audited.push(json!({"message": failure.message, "policy": name, "binding": binding.name,
                        "expressionIndex": failure.index, "validationActions": actions(binding)}));
                }
                if binding.deny && denial.is_none() {
                    denial = Some(deny(
                        attributes,
                        &format!("{who} denied request: {}", failure.message),
                        &failure.reason,
                    ));
                }
            }
        }
        if !audited.is_empty() {
            audited.truncate(50);
            attributes.notes.annotate(
                "validation.policy.admission.k8s.io/validation_failure",
                Value::Array(audited).to_string(),
            );
        }
        denial.map_or(Ok(()), Err)
    }
}

impl ValidatingAdmissionPolicy {
    /// The failures of the policy under the binding: for each of its
    /// params (or once without), match conditions, then every validation.
    async fn evaluate(
        &self,
        policy: &Policy,
        binding: &Binding,
        attributes: &Attributes,
    ) -> Result<Vec<Failure>, ApiError> {
        let common = &policy.common;
        let params = match self.selection.params(common, binding, attributes).await {
            Ok(Some(params)) => params,
            Ok(None) => return Ok(Vec::new()),
            Err(why) if common.fail_open => {
                tracing::warn!(policy = %common.name, binding = %binding.name, "{why}; failing open");
                return Ok(Vec::new());
            }
            Err(why) => return Ok(vec![Failure { message: why, reason: "Invalid".into(), index: 0 }]),
        };
        let namespace = self.selection.namespace_object(attributes).await?;
        let mut failures = Vec::new();
        for param in &params {
            let variables = match set_variables(Variables::default(), common, attributes, param, &namespace) {
                Ok(variables) => variables,
                Err(why) => {
                    failures.push(Failure { message: why, reason: "Invalid".into(), index: 0 });
                    continue;
                }
            };
            match common.conditions.decide(&variables) {
                Decision::Call => {}
                Decision::Skip => continue,
                Decision::Error(_) if common.fail_open => continue,
                Decision::Error(why) => {
                    failures.push(Failure { message: why, reason: "Invalid".into(), index: 0 });
                    continue;
                }
            }
            failures.extend(validate_all(policy, &variables));
            annotate(policy, &variables, attributes);
        }
        Ok(failures)
    }
}

/// Every validation of the policy; a validation that cannot be evaluated
/// fails unless the policy fails open.
fn validate_all(policy: &Policy, variables: &Variables) -> Vec<Failure> {
    let mut failures = Vec::new();
    for (index, validation) in policy.validations.iter().enumerate() {
        let outcome = validation.expression.as_ref().map_err(Clone::clone).and_then(|p| variables.truth(p));
        let message = match outcome {
            Ok(true) => continue,
            // A spent budget fails the binding, not one validation (kube's
            // single decision), and nothing after it runs.
            Err(why) if why == OUT_OF_BUDGET && policy.common.fail_open => return Vec::new(),
            Err(why) if why == OUT_OF_BUDGET => {
                return vec![Failure { message: why, reason: "Invalid".into(), index: 0 }];
            }
            Err(_) if policy.common.fail_open => continue,
            Err(why) => format!("expression '{}' resulted in error: {why}", validation.source),
            Ok(false) => {
                let from_expression = validation
                    .message_expression
                    .as_ref()
                    .and_then(|m| m.as_ref().ok())
                    .and_then(|p| variables.text(p).ok())
                    .and_then(|m| crate::admission::cel::usable_message(&m));
                match (from_expression, validation.message.as_str()) {
                    (Some(message), _) => message,
                    (None, "") => format!("failed expression: {}", validation.source),
                    (None, message) => message.to_string(),
                }
            }
        };
        failures.push(Failure { message, reason: validation.reason.clone(), index });
    }
    failures
}

/// The policy's audit annotations, `<policy>/<key>`, for those that
/// evaluate to a string (null leaves them out).
fn annotate(policy: &Policy, variables: &Variables, attributes: &Attributes) {
    for (key, program) in &policy.audit_annotations {
        if let Ok(value) = program.as_ref().map_err(Clone::clone).and_then(|p| variables.text(p)) {
            attributes.notes.annotate(format!("{}/{key}", policy.common.name), value);
        }
    }
}

fn actions(binding: &Binding) -> Vec<&'static str> {
    [(binding.deny, "Deny"), (binding.warn, "Warn"), (binding.audit, "Audit")]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
}

/// kube's policy denial: admission's Forbidden text for the object, with
/// the validation's reason (`Invalid` by default) and the code it implies.
fn deny(attributes: &Attributes, message: &str, reason: &str) -> ApiError {
    let forbidden = attributes.forbidden(message);
    let mut details = forbidden.status()["details"].clone();
    details["causes"] = json!([{"message": message}]);
    let code = match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    ApiError::Denied {
        code,
        reason: reason.to_string(),
        message: forbidden.to_string(),
        details: Some(details),
    }
}
