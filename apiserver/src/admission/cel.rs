//! CEL as admission uses it (match conditions, ValidatingAdmissionPolicy):
//! expressions compiled once, evaluated over JSON objects given as
//! variables (`object`, `oldObject`, `request`, `params`, ...), results read
//! as a bool or a string, errors as text.

use std::sync::Arc;

use serde_json::Value;

/// A compiled expression, shared by every request it is evaluated for.
pub type Program = Arc<cel::Program>;

/// Compiles `expression`; the parser's complaint when it does not.
pub fn compile(expression: &str) -> Result<Program, String> {
    cel::Program::compile(expression).map(Arc::new).map_err(|e| e.to_string().trim().to_string())
}

/// The variables of one evaluation.
#[derive(Default)]
pub struct Variables {
    context: cel::Context<'static, 'static>,
}

impl Variables {
    /// Adds `name` with the JSON `value` (objects become maps, as kube's
    /// unstructured objects are to CEL).
    pub fn set(&mut self, name: &str, value: &Value) -> Result<(), String> {
        let value = cel::to_value(value).map_err(|e| format!("{name} cannot be given to CEL: {e}"))?;
        self.context.add_variable_from_value(name.to_string(), value);
        Ok(())
    }

    /// Adds `name` with a value already evaluated.
    pub fn set_value(&mut self, name: &str, value: cel::Value) {
        self.context.add_variable_from_value(name.to_string(), value);
    }

    pub fn evaluate(&self, program: &cel::Program) -> Result<cel::Value, String> {
        program.execute(&self.context).map_err(|e| e.to_string())
    }

    /// The expression's value as a bool (anything else is an error).
    pub fn truth(&self, program: &cel::Program) -> Result<bool, String> {
        match self.evaluate(program)? {
            cel::Value::Bool(b) => Ok(b),
            other => Err(format!("expected a bool, got {:?}", other.type_of())),
        }
    }

    /// The expression's value as a string (anything else is an error).
    pub fn text(&self, program: &cel::Program) -> Result<String, String> {
        match self.evaluate(program)? {
            cel::Value::String(s) => Ok(s.to_string()),
            other => Err(format!("expected a string, got {:?}", other.type_of())),
        }
    }
}
