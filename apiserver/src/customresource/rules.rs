//! `x-kubernetes-validations`: CEL rules a CRD's schema attaches to a node,
//! evaluated with `self` bound to the value there (and `oldSelf` to the
//! value it replaces, for transition rules on update), reported as kube
//! reports them: the rule's `messageExpression`, else its `message`, else
//! `failed rule: <rule>`, on the node's path (plus the rule's `fieldPath`),
//! as `Invalid` unless the rule gives another `reason`. Rules run only on an
//! object that passed the schema's other checks, as in kube.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::admission::cel::{self, Budget, Program, Variables};
use crate::errors::{Cause, go_quote};
use crate::runtime::schema_view::Node;

/// Every rule of a schema, compiled once (keyed by its text). A stored rule
/// that no longer compiles (one past a limit added since) keeps its error:
/// it refuses what it would have judged, as kube's does.
#[derive(Debug, Default)]
pub struct Rules {
    programs: HashMap<String, Result<Program, String>>,
}

impl Rules {
    pub fn compile(schema: &Value) -> Rules {
        let mut rules = Rules::default();
        rules.collect(schema);
        rules
    }

    fn collect(&mut self, schema: &Value) {
        let node = Node(schema);
        for rule in rules_of(node) {
            for text in [rule["rule"].as_str(), rule["messageExpression"].as_str()].into_iter().flatten() {
                if !self.programs.contains_key(text) {
                    self.programs.insert(text.to_string(), cel::compile(text));
                }
            }
        }
        for (_, property) in node.properties().into_iter().flatten() {
            self.collect(property);
        }
        for nested in [node.items(), node.additional_properties()].into_iter().flatten() {
            self.collect(nested.0);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.programs.is_empty()
    }

    /// Evaluates the rules at every node of `value` (with `old`, the value
    /// it replaces, where one corresponds): a node's own rules before its
    /// children's, as kube walks them, all within one cost budget. Once it
    /// is spent, or one rule passes its cost limit, no further rule runs.
    pub fn check(
        &self,
        value: &Value,
        old: Option<&Value>,
        schema: Node<'_>,
        path: &str,
        out: &mut Vec<Cause>,
    ) {
        let budget = Arc::new(Budget::default());
        self.check_node(value, old, schema, path, &budget, out);
    }

    fn check_node(
        &self,
        value: &Value,
        old: Option<&Value>,
        schema: Node<'_>,
        path: &str,
        budget: &Arc<Budget>,
        out: &mut Vec<Cause>,
    ) {
        if value.is_null() || budget.is_spent() {
            return;
        }
        for rule in rules_of(schema) {
            if let Some(cause) = self.evaluate(rule, value, old, schema, path, budget) {
                out.push(cause);
            }
            if budget.is_spent() {
                return;
            }
        }
        match value {
            Value::Object(fields) => {
                for (name, child) in fields {
                    let Some(node) = schema.field(name) else { continue };
                    let old_child = old.and_then(|o| o.get(name));
                    self.check_node(child, old_child, node, &join(path, name), budget, out);
                }
            }
            Value::Array(items) => {
                if let Some(item) = schema.items() {
                    for (i, child) in items.iter().enumerate() {
                        let old_child = old.and_then(|o| corresponding_item(child, o, schema));
                        self.check_node(child, old_child, item, &format!("{path}[{i}]"), budget, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn evaluate(
        &self,
        rule: &Value,
        value: &Value,
        old: Option<&Value>,
        schema: Node<'_>,
        path: &str,
        budget: &Arc<Budget>,
    ) -> Option<Cause> {
        let text = rule["rule"].as_str()?;
        let node_path = if path.is_empty() { "<nil>".to_string() } else { path.to_string() };
        // kube's errors about the rule itself show the node's type.
        let about_rule = |detail: String| {
            let kind = go_quote(schema.0["type"].as_str().unwrap_or_default());
            Cause {
                reason: "FieldValueInvalid",
                field: node_path.clone(),
                message: format!("Invalid value: {kind}: {detail}"),
            }
        };
        let program = match self.programs.get(text)? {
            Ok(program) => program,
            Err(e) => return Some(about_rule(format!("rule compile error: {e}"))),
        };
        let transition = text.contains("oldSelf");
        // Ratcheting: a value left as it was is not judged again.
        if old == Some(value) {
            return None;
        }
        // A transition rule says nothing about a value that replaces none.
        if transition && old.is_none() && rule["optionalOldSelf"] != Value::Bool(true) {
            return None;
        }
        let mut variables = Variables::default().with_budget(budget.clone());
        variables.set("self", value).ok()?;
        match old {
            Some(old) => variables.set("oldSelf", old).ok()?,
            None if transition => variables.set_value("oldSelf", ::cel::Value::Null),
            None => {}
        }
        let detail = match variables.truth(program) {
            Ok(true) => return None,
            Ok(false) => self.message(rule, &variables, text),
            Err(e) => return Some(about_rule(evaluation_error(&e, rule, budget))),
        };
        let field = match rule["fieldPath"].as_str().filter(|p| !p.is_empty()) {
            Some(extra) => format!("{path}{extra}"),
            None => path.to_string(),
        };
        let field = if field.is_empty() { "<nil>".to_string() } else { field };
        Some(cause(rule["reason"].as_str().unwrap_or("FieldValueInvalid"), field, value, detail))
    }

    /// messageExpression's text, else message, else the rule itself.
    fn message(&self, rule: &Value, variables: &Variables, text: &str) -> String {
        let from_expression = rule["messageExpression"]
            .as_str()
            .and_then(|e| self.programs.get(e))
            .and_then(|p| p.as_ref().ok())
            .and_then(|p| variables.text(p).ok())
            .and_then(|m| cel::usable_message(&m));
        match (from_expression, rule["message"].as_str().map(str::trim).filter(|m| !m.is_empty())) {
            (Some(message), _) => message,
            (None, Some(message)) => message.to_string(),
            (None, None) => format!("failed rule: {}", text.trim()),
        }
    }
}

/// kube's words for a rule that could not be evaluated; a rule past its
/// cost limit stops the rest, as a spent budget does.
fn evaluation_error(error: &str, rule: &Value, budget: &Budget) -> String {
    let named = rule["message"]
        .as_str()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .or(rule["rule"].as_str().map(str::trim))
        .unwrap_or_default();
    if error == cel::OUT_OF_BUDGET {
        error.to_string()
    } else if error == cel::COST_LIMIT_EXCEEDED {
        budget.spend_all();
        format!(
            "'{error}': no further validation rules will be run due to call cost exceeds limit for rule: {named}"
        )
    } else if error.starts_with("found no matching overload") {
        format!(
            "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {named}"
        )
    } else {
        format!("{error} evaluating rule: {named}")
    }
}

fn rules_of(schema: Node<'_>) -> impl Iterator<Item = &Value> {
    schema.0.get("x-kubernetes-validations").and_then(Value::as_array).into_iter().flatten()
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

/// The old item an item replaces: by its keys in a list-type map, by value
/// in a set; items of atomic lists correspond to none.
fn corresponding_item<'a>(item: &Value, old: &'a Value, schema: Node<'_>) -> Option<&'a Value> {
    let old_items = old.as_array()?;
    match schema.list_type() {
        "map" => {
            let keys = schema.list_map_keys();
            old_items.iter().find(|o| keys.iter().all(|k| o.get(*k) == item.get(*k)))
        }
        "set" => old_items.iter().find(|o| *o == item),
        _ => None,
    }
}

/// A failed rule as kube words it: objects and lists are not shown.
fn cause(reason: &str, field: String, value: &Value, detail: String) -> Cause {
    let shown = match value {
        Value::Object(_) | Value::Array(_) => None,
        Value::String(s) => Some(go_quote(s)),
        other => Some(other.to_string()),
    };
    let (reason, message) = match reason {
        "FieldValueForbidden" => ("FieldValueForbidden", format!("Forbidden: {detail}")),
        "FieldValueRequired" => ("FieldValueRequired", format!("Required value: {detail}")),
        "FieldValueDuplicate" => match shown {
            Some(v) => ("FieldValueDuplicate", format!("Duplicate value: {v}: {detail}")),
            None => ("FieldValueDuplicate", format!("Duplicate value: {detail}")),
        },
        _ => match shown {
            Some(v) => ("FieldValueInvalid", format!("Invalid value: {v}: {detail}")),
            None => ("FieldValueInvalid", format!("Invalid value: {detail}")),
        },
    };
    Cause { reason, field, message }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_stored_rule_past_the_limits_refuses_instead_of_failing_open() {
        let deep = format!("1{} > 0", "+1".repeat(3000));
        let schema = json!({"type": "object", "x-kubernetes-validations": [{"rule": deep}],
            "properties": {"spec": {"type": "object", "x-kubernetes-validations": [{"rule": "self.n > 1"}],
                "properties": {"n": {"type": "integer"}}}}});
        let rules = Rules::compile(&schema);
        let mut out = Vec::new();
        rules.check(&json!({"spec": {"n": 1}}), None, Node(&schema), "", &mut out);
        let found: Vec<String> = out.iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            found,
            [
                "<nil>: Invalid value: \"object\": rule compile error: max recursion depth exceeded",
                "spec: Invalid value: failed rule: self.n > 1",
            ]
        );
    }

    #[test]
    fn a_message_expression_past_kubes_cap_gives_way_to_the_message() {
        let schema = json!({"type": "object", "properties": {"s": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self.size() < 3", "message": "too long",
                "messageExpression": "self + self + self"}]}}});
        let rules = Rules::compile(&schema);
        let check = |s: &str| {
            let mut out = Vec::new();
            rules.check(&json!({"s": s}), None, Node(&schema), "", &mut out);
            out.into_iter().map(|c| c.message).collect::<Vec<_>>()
        };
        assert_eq!(check("abcd"), ["Invalid value: \"abcd\": abcdabcdabcd"]);
        // 3 × 2 KiB: over 5 KiB, so the rule's message instead.
        let long = "x".repeat(2048);
        assert_eq!(check(&long), [format!("Invalid value: \"{long}\": too long")]);
    }
}
