//! `matchConditions`: CEL expressions over `object`, `oldObject` and
//! `request` (the AdmissionReview request) that decide whether a webhook
//! (or a policy) applies. Any false: not called. All true: called. An
//! error and no false: the failure policy decides (kube's matchconditions
//! matcher).

use serde_json::Value;

use crate::admission::cel::{self, Program, Variables};

/// Compiled conditions, by name.
#[derive(Debug, Default)]
pub struct Conditions(Vec<(String, Result<Program, String>)>);

/// What the conditions decided.
#[derive(Debug, PartialEq)]
pub enum Decision {
    Call,
    Skip,
    /// The first condition that could not be evaluated, and why.
    Error(String),
}

impl Conditions {
    pub fn compile(conditions: &[Value]) -> Conditions {
        let compiled = conditions
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default().to_string();
                (name, cel::compile(c["expression"].as_str().unwrap_or_default()))
            })
            .collect();
        Conditions(compiled)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The decision for one request over `variables` (`object`,
    /// `oldObject`, `request`, and `params` for policies).
    pub fn decide(&self, variables: &Variables) -> Decision {
        let mut error = None;
        for (name, program) in &self.0 {
            let outcome = program.as_ref().map_err(Clone::clone).and_then(|p| variables.truth(p));
            match outcome {
                Ok(false) => return Decision::Skip,
                Ok(true) => {}
                Err(why) => {
                    error.get_or_insert(format!("matchCondition {name}: {why}"));
                }
            }
        }
        error.map_or(Decision::Call, Decision::Error)
    }
}

/// The variables conditions see for a write.
pub fn variables(object: &Value, old_object: &Value, request: &Value) -> Result<Variables, String> {
    // kube's budget for one webhook's conditions.
    let budget = std::sync::Arc::new(cel::Budget::new(cel::MATCH_CONDITIONS_BUDGET));
    let mut variables = Variables::default().with_budget(budget);
    variables.set("object", object)?;
    variables.set("oldObject", old_object)?;
    variables.set("request", request)?;
    Ok(variables)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn conditions(expressions: &[&str]) -> Conditions {
        let list: Vec<Value> = expressions
            .iter()
            .enumerate()
            .map(|(i, e)| json!({"name": format!("c{i}"), "expression": e}))
            .collect();
        Conditions::compile(&list)
    }

    #[test]
    fn false_skips_all_true_calls_and_an_error_without_false_is_reported() {
        let pod = json!({"metadata": {"name": "web", "labels": {"app": "web"}}});
        let request = json!({"operation": "CREATE", "userInfo": {"username": "alice"}});
        let vars = variables(&pod, &Value::Null, &request).unwrap();
        let decide = |c: &Conditions| c.decide(&vars);
        assert_eq!(
            decide(&conditions(&["object.metadata.name == 'web'", "request.operation == 'CREATE'"])),
            Decision::Call
        );
        assert_eq!(decide(&conditions(&["request.userInfo.username == 'bob'"])), Decision::Skip);
        assert_eq!(decide(&conditions(&["object.nope.deeper == 1", "false"])), Decision::Skip);
        assert!(
            matches!(decide(&conditions(&["object.nope.deeper == 1"])), Decision::Error(why) if why.starts_with("matchCondition c0: "))
        );
        assert!(matches!(decide(&conditions(&["'text'"])), Decision::Error(_)));
        assert!(cel::compile("object.metadata.name ==").is_err());
    }
}
