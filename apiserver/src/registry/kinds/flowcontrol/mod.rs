//! flowcontrol.apiserver.k8s.io/v1: the configuration of API Priority and
//! Fairness. FlowSchemas sort requests into flows and send them to
//! PriorityLevelConfigurations, which bound how much of the server they
//! get. kube's bootstrap objects (`bootstrap`) are kept by the
//! `flowcontrol_bootstrap` controller.

pub mod bootstrap;
mod flowschema;
mod prioritylevel;

use std::collections::HashSet;

use serde_json::Value;

use super::Kind;
use crate::errors::Cause;
use crate::patch::strategic_schema::{TypeNode, for_kind};
use crate::registry::kinds::field::{duplicate, invalid, required};
use crate::runtime::meta;

pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";

pub fn kinds() -> Vec<Kind> {
    vec![flowschema::kind(), prioritylevel::kind()]
}

fn patch_schema(kind: &str) -> Option<&'static TypeNode> {
    for_kind(GROUP, kind)
}

fn has_wildcard(items: &[&str]) -> bool {
    items.contains(&"*")
}

/// A list holding `*` may hold nothing else (`what`: the list's items, as
/// kube names them).
fn only_wildcard(value: &Value, items: &[&str], at: &str, what: &str) -> Vec<Cause> {
    if items.len() > 1 {
        return vec![invalid(at, value, &format!("if '*' is present, must not specify other {what}"))];
    }
    Vec::new()
}

/// kube's refusal of a mandatory object whose spec is not kube's (`defaults`:
/// the kind's, applied to kube's object first, as to the stored one).
fn fixed_spec_cause(object: &Value, mandatory: Vec<Value>, defaults: impl Fn(&mut Value)) -> Option<Cause> {
    let name = meta::name_of(object);
    let mut fixed = mandatory.into_iter().find(|m| meta::name_of(m) == name)?;
    defaults(&mut fixed);
    let why = format!("spec of '{name}' must equal the fixed value");
    (fixed["spec"] != object["spec"]).then(|| invalid("spec", &object["spec"], &why))
}

/// A status's conditions: each with a type, no type twice.
fn conditions_causes(status: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = HashSet::new();
    for (i, condition) in status["conditions"].as_array().into_iter().flatten().enumerate() {
        let kind = condition["type"].as_str().unwrap_or_default();
        let at = format!("status.conditions[{i}].type");
        if !seen.insert(kind) {
            causes.push(duplicate(&at, kind));
        }
        if kind.is_empty() {
            causes.push(required(&at, "must not be empty"));
        }
    }
    causes
}
