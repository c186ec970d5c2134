//! `matchConditions`: CEL expressions over `object`, `oldObject` and
//! `request` (the AdmissionReview request) that decide whether a webhook
//! is called. Any false: not called. All true: called. An error and no
//! false: the failure policy decides (kube's matchconditions matcher).

use std::sync::Arc;

use serde_json::Value;

/// A webhook's compiled conditions.
#[derive(Debug, Default)]
pub struct Conditions(Vec<(String, Result<Arc<cel::Program>, String>)>);

/// What the conditions decided.
#[derive(Debug, PartialEq)]
pub enum Decision {
    Call,
    Skip,
    /// The first condition that could not be evaluated, and why.
    Error(String),
}

/// Compiles one expression, as validation checks it.
pub fn compile(expression: &str) -> Result<cel::Program, String> {
    cel::Program::compile(expression).map_err(|e| e.to_string().trim().to_string())
}

impl Conditions {
    pub fn compile(conditions: &[Value]) -> Conditions {
        let compiled = conditions
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default().to_string();
                (name, compile(c["expression"].as_str().unwrap_or_default()).map(Arc::new))
            })
            .collect();
        Conditions(compiled)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The decision for one request; `request` is the AdmissionReview's.
    pub fn decide(&self, object: &Value, old_object: &Value, request: &Value) -> Decision {
        let mut context = cel::Context::default();
        for (name, value) in [("object", object), ("oldObject", old_object), ("request", request)] {
            match cel::to_value(value) {
                Ok(value) => context.add_variable_from_value(name, value),
                Err(e) => return Decision::Error(format!("{name} cannot be given to CEL: {e}")),
            }
        }
        let mut error = None;
        for (name, program) in &self.0 {
            let outcome = match program {
                Ok(program) => program.execute(&context).map_err(|e| e.to_string()),
                Err(why) => Err(why.clone()),
            };
            match outcome {
                Ok(cel::Value::Bool(false)) => return Decision::Skip,
                Ok(cel::Value::Bool(true)) => {}
                Ok(other) => {
                    error.get_or_insert(format!(
                        "matchCondition {name}: expected a bool, got {:?}",
                        other.type_of()
                    ));
                }
                Err(why) => {
                    error.get_or_insert(format!("matchCondition {name}: {why}"));
                }
            }
        }
        error.map_or(Decision::Call, Decision::Error)
    }
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
        let decide = |c: &Conditions| c.decide(&pod, &Value::Null, &request);
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
        assert!(compile("object.metadata.name ==").is_err());
    }
}
