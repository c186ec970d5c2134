//! ValidatingAdmissionPolicy: CEL validations, kept in
//! ValidatingAdmissionPolicies and put in force by their bindings, run on
//! the writes both select. A failed validation denies the write (422
//! `Invalid` unless the validation names another reason), warns the client
//! or is recorded in the audit event, as the binding's actions say.
//!
//! * `compiled`: the stored policies and bindings, compiled.

mod compiled;

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::{Value, json};

use self::compiled::{Binding, Match, Policy};
use super::cel::Variables;
use super::lookup::{KindLookup, Parsed};
use super::webhook::conditions::Decision;
use super::webhook::{matching, review};
use super::{Attributes, Lookup, Lookups, Plugin};
use crate::errors::ApiError;

#[derive(Debug)]
pub struct ValidatingAdmissionPolicy {
    policies: Parsed<Policy>,
    bindings: Parsed<Binding>,
    namespaces: Lookup,
    kinds: KindLookup,
}

impl ValidatingAdmissionPolicy {
    pub fn new(lookups: &Lookups) -> ValidatingAdmissionPolicy {
        ValidatingAdmissionPolicy {
            policies: Parsed::new(lookups.policies.clone()),
            bindings: Parsed::new(lookups.policy_bindings.clone()),
            namespaces: lookups.namespaces.clone(),
            kinds: lookups.kinds.clone(),
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
        for binding in bindings.iter() {
            // A binding to a policy that does not exist binds nothing.
            let Some(policy) = policies.iter().find(|p| p.name == binding.policy) else { continue };
            if !self.selects(&policy.constraints, attributes).await?
                || !self.selects_if_set(binding.resources.as_ref(), attributes).await?
            {
                continue;
            }
            for failure in self.evaluate(policy, binding, attributes).await? {
                let who =
                    format!("ValidatingAdmissionPolicy '{}' with binding '{}'", policy.name, binding.name);
                if binding.warn {
                    attributes.notes.warn(format!("Validation failed for {who}: {}", failure.message));
                }
                if binding.audit {
                    audited.push(
                        json!({"message": failure.message, "policy": policy.name, "binding": binding.name,
                        "expressionIndex": failure.index, "validationActions": actions(binding)}),
                    );
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
    /// Whether a MatchResources selects the write: a rule (no rules select
    /// every resource, as in kube's matcher: a binding's `matchResources`
    /// with only a namespace selector, as kube's documentation writes one),
    /// no exclusion, both selectors.
    async fn selects(&self, wanted: &Match, attributes: &Attributes) -> Result<bool, ApiError> {
        Ok((wanted.rules.is_empty() || matching::rules_match(&wanted.rules, attributes))
            && !matching::rules_match(&wanted.exclude, attributes)
            && matching::object_matches(&wanted.object_selector, attributes)
            && matching::namespace_matches(&wanted.namespace_selector, attributes, &self.namespaces).await?)
    }

    async fn selects_if_set(
        &self,
        wanted: Option<&Match>,
        attributes: &Attributes,
    ) -> Result<bool, ApiError> {
        match wanted {
            Some(wanted) => self.selects(wanted, attributes).await,
            None => Ok(true),
        }
    }

    /// The failures of the policy under the binding: for each of its
    /// params (or once without), match conditions, then every validation.
    async fn evaluate(
        &self,
        policy: &Policy,
        binding: &Binding,
        attributes: &Attributes,
    ) -> Result<Vec<Failure>, ApiError> {
        let params = match self.params(policy, binding, attributes).await {
            Ok(Some(params)) => params,
            Ok(None) => return Ok(Vec::new()),
            Err(why) if policy.fail_open => {
                tracing::warn!(policy = %policy.name, binding = %binding.name, "{why}; failing open");
                return Ok(Vec::new());
            }
            Err(why) => return Ok(vec![Failure { message: why, reason: "Invalid".into(), index: 0 }]),
        };
        let namespace = match attributes.namespace.as_deref() {
            Some(ns) => self.namespaces.find(None, ns).await?.unwrap_or(Value::Null),
            None => Value::Null,
        };
        let mut failures = Vec::new();
        for param in &params {
            let variables = match self.variables(policy, attributes, param, &namespace) {
                Ok(variables) => variables,
                Err(why) => {
                    failures.push(Failure { message: why, reason: "Invalid".into(), index: 0 });
                    continue;
                }
            };
            match policy.conditions.decide(&variables) {
                Decision::Call => {}
                Decision::Skip => continue,
                Decision::Error(_) if policy.fail_open => continue,
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

    /// The params the binding gives the policy: `[Null]` for a policy
    /// without params; None when none are found and the binding allows
    /// that; an error (a configuration that cannot work, or none found
    /// where the binding denies) otherwise.
    async fn params(
        &self,
        policy: &Policy,
        binding: &Binding,
        attributes: &Attributes,
    ) -> Result<Option<Vec<Value>>, String> {
        let Some((api_version, kind)) = &policy.param_kind else {
            return Ok(Some(vec![Value::Null]));
        };
        let Some(reference) = &binding.param_ref else {
            return Err(format!(
                "failed to configure binding: {} specifies paramKind but binding {} has no paramRef",
                policy.name, binding.name
            ));
        };
        let Some((objects, namespaced)) = self.kinds.objects_of(api_version, kind) else {
            return Err(format!(
                "failed to find resource referenced by paramKind: '{api_version}, Kind={kind}'"
            ));
        };
        // A namespaced param is looked for where the binding says, else in
        // the namespace of the object written.
        let namespace = match (namespaced, &reference.namespace) {
            (false, _) => None,
            (true, Some(ns)) => Some(ns.clone()),
            (true, None) => attributes.namespace.clone(),
        };
        let found = match (&reference.name, &reference.selector) {
            (Some(name), _) => objects
                .read(namespace.as_deref(), name, true)
                .await
                .map_err(|e| e.to_string())?
                .into_iter()
                .collect(),
            (None, Some(selector)) => objects
                .list(namespace.as_deref(), true)
                .await
                .map_err(|e| e.to_string())?
                .into_iter()
                .filter(|o| crate::selector::object::matches(selector, o["metadata"]["labels"].as_object()))
                .collect(),
            (None, None) => Vec::new(),
        };
        match (found.is_empty(), reference.deny_when_missing) {
            (false, _) => Ok(Some(found)),
            (true, false) => Ok(None),
            (true, true) => {
                Err("no params found for policy binding with `Deny` parameterNotFoundAction".to_string())
            }
        }
    }

    /// `object`, `oldObject`, `request`, `params`, `namespaceObject`, and
    /// the policy's `variables`, each computed from those before it.
    fn variables(
        &self,
        policy: &Policy,
        attributes: &Attributes,
        param: &Value,
        namespace: &Value,
    ) -> Result<Variables, String> {
        let mut variables = Variables::default();
        variables.set("object", attributes.object.as_ref().unwrap_or(&Value::Null))?;
        variables.set("oldObject", attributes.old_object.as_ref().unwrap_or(&Value::Null))?;
        variables.set("request", &review::request(attributes, ""))?;
        variables.set("params", param)?;
        variables.set("namespaceObject", namespace)?;
        let mut computed: HashMap<String, cel::Value> = HashMap::new();
        variables.set_value("variables", cel::Value::from(computed.clone()));
        for (name, program) in &policy.variables {
            // A variable that fails is left out: an expression using it
            // fails in turn, with the failure policy deciding.
            if let Ok(value) = program.as_ref().map_err(Clone::clone).and_then(|p| variables.evaluate(p)) {
                computed.insert(name.clone(), value);
                variables.set_value("variables", cel::Value::from(computed.clone()));
            }
        }
        Ok(variables)
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
            Err(_) if policy.fail_open => continue,
            Err(why) => format!("expression '{}' resulted in error: {why}", validation.source),
            Ok(false) => {
                let from_expression = validation
                    .message_expression
                    .as_ref()
                    .and_then(|m| m.as_ref().ok())
                    .and_then(|p| variables.text(p).ok())
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty() && !m.contains('\n'));
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
            attributes.notes.annotate(format!("{}/{key}", policy.name), value);
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
