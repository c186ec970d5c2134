//! Admission policies: CEL kept in policy objects and put in force by their
//! bindings, run on the writes both select.
//!
//! * `validating`: ValidatingAdmissionPolicy, which denies, warns or audits
//!   a write whose validations fail.
//! * `mutating`: MutatingAdmissionPolicy, which changes the object with
//!   apply configurations or JSON patches.
//! * `compiled`: the stored policies and bindings, compiled.
//!
//! Here what both share: which policies and bindings select a write, the
//! params a binding gives its policy, and the variables expressions see.

mod compiled;
mod mutating;
mod validating;

use std::collections::HashMap;

use serde_json::Value;

use self::compiled::{Binding, Common, Match};
pub use self::mutating::MutatingAdmissionPolicy;
pub use self::validating::ValidatingAdmissionPolicy;
use super::Attributes;
use super::cel::Variables;
use super::lookup::{KindLookup, Lookup};
use super::webhook::{matching, review};
use crate::errors::ApiError;

/// How policies find what they are evaluated with: namespaces (selectors,
/// `namespaceObject`) and the objects of any kind (params).
#[derive(Debug)]
struct Selection {
    namespaces: Lookup,
    kinds: KindLookup,
}

impl Selection {
    /// The pairs of a binding and its policy that select the write, in the
    /// bindings' order. A binding to a policy that does not exist binds
    /// nothing.
    async fn selected<'p, P: AsRef<Common>>(
        &self,
        policies: &'p [P],
        bindings: &'p [Binding],
        attributes: &Attributes,
    ) -> Result<Vec<(&'p P, &'p Binding)>, ApiError> {
        let mut selected = Vec::new();
        for binding in bindings {
            let Some(policy) = policies.iter().find(|p| p.as_ref().name == binding.policy) else { continue };
            if self.selects(&policy.as_ref().constraints, attributes).await?
                && self.selects_if_set(binding.resources.as_ref(), attributes).await?
            {
                selected.push((policy, binding));
            }
        }
        Ok(selected)
    }

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

    /// The write's namespace, for `namespaceObject` (null for
    /// cluster-scoped objects).
    async fn namespace_object(&self, attributes: &Attributes) -> Result<Value, ApiError> {
        match attributes.namespace.as_deref() {
            Some(ns) => Ok(self.namespaces.find(None, ns).await?.unwrap_or(Value::Null)),
            None => Ok(Value::Null),
        }
    }

    /// The params the binding gives the policy: `[Null]` for a policy
    /// without params; None when none are found and the binding allows
    /// that; an error (a configuration that cannot work, or none found
    /// where the binding denies) otherwise.
    async fn params(
        &self,
        policy: &Common,
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
}

/// `object`, `oldObject`, `request`, `params`, `namespaceObject`, and the
/// policy's `variables`, each computed from those before it, set in
/// `variables`.
fn set_variables(
    mut variables: Variables,
    policy: &Common,
    attributes: &Attributes,
    param: &Value,
    namespace: &Value,
) -> Result<Variables, String> {
    variables.set("object", attributes.object.as_ref().unwrap_or(&Value::Null))?;
    variables.set("oldObject", attributes.old_object.as_ref().unwrap_or(&Value::Null))?;
    variables.set("request", &review::request(attributes, ""))?;
    variables.set("params", param)?;
    variables.set("namespaceObject", namespace)?;
    let mut computed: HashMap<String, cel::Value> = HashMap::new();
    variables.set_value("variables", cel::Value::from(computed.clone()));
    for (name, program) in &policy.variables {
        // A variable that fails is left out: an expression using it fails
        // in turn, with the failure policy deciding.
        if let Ok(value) = program.as_ref().map_err(Clone::clone).and_then(|p| variables.evaluate(p)) {
            computed.insert(name.clone(), value);
            variables.set_value("variables", cel::Value::from(computed.clone()));
        }
    }
    Ok(variables)
}
