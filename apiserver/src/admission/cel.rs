//! CEL as admission uses it (match conditions, admission policies):
//! expressions compiled once, evaluated over JSON objects given as
//! variables (`object`, `oldObject`, `request`, `params`, ...), results read
//! as a bool, a string or JSON, errors as text.
//!
//! Mutating policies build objects with struct literals (`Object{spec:
//! Object.spec{...}}`, `JSONPatch{op: "add", ...}`). kube type-checks them
//! against the resource's schema; here every literal an expression names is
//! registered as a type whose values are plain maps of the fields given, so
//! the result reads back as the JSON it spells.

use std::collections::BTreeMap;
use std::sync::Arc;

use cel::common::types::{CelMap, CelMapKey, Type};
use cel::common::value::{CowVal, Val};
use serde_json::Value;

/// A compiled expression, shared by every request it is evaluated for.
pub type Program = Arc<cel::Program>;

/// Compiles `expression`; the parser's complaint when it does not.
pub fn compile(expression: &str) -> Result<Program, String> {
    cel::Program::compile(expression).map(Arc::new).map_err(|e| e.to_string().trim().to_string())
}

/// The names of the struct literals in `expression`: a (dotted) identifier
/// right before a `{`. A name inside a string literal may be caught too;
/// registering it does no harm.
fn literal_names(expression: &str) -> Vec<String> {
    let chars: Vec<char> = expression.chars().collect();
    let is_ident = |c: char| c == '_' || c.is_ascii_alphanumeric();
    let mut names = Vec::new();
    for brace in chars.iter().enumerate().filter(|(_, c)| **c == '{').map(|(i, _)| i) {
        // Walk back over `a . b . c`, whitespace allowed around the dots.
        let mut at = brace;
        let mut segments = Vec::new();
        loop {
            while at > 0 && chars[at - 1].is_whitespace() {
                at -= 1;
            }
            let end = at;
            while at > 0 && is_ident(chars[at - 1]) {
                at -= 1;
            }
            if at == end {
                break;
            }
            segments.push(chars[at..end].iter().collect::<String>());
            let mut before = at;
            while before > 0 && chars[before - 1].is_whitespace() {
                before -= 1;
            }
            if before == 0 || chars[before - 1] != '.' {
                break;
            }
            at = before - 1;
        }
        segments.reverse();
        if segments.first().is_some_and(|s| !s.starts_with(|c: char| c.is_ascii_digit())) {
            names.push(segments.join("."));
        }
    }
    names
}

/// A struct literal's type: its values are maps of the fields set.
struct Literal(Type);

impl cel::StructType for Literal {
    fn get_type(&self) -> &Type {
        &self.0
    }

    fn new_value<'b, 'v>(
        &self,
        fields: BTreeMap<String, CowVal<'b, 'v>>,
    ) -> Result<Box<dyn Val + 'v>, cel::ExecutionError> {
        let entries = fields.into_iter().map(|(name, value)| (CelMapKey::from(name), value.into_owned()));
        Ok(Box::new(CelMap::from(entries.collect::<std::collections::HashMap<_, _>>())))
    }
}

/// The environment mutations are evaluated in: the standard library, the
/// struct literals `expressions` name, and kube's `jsonpatch.escapeKey`.
pub fn literal_env<'a>(expressions: impl IntoIterator<Item = &'a str>) -> Arc<cel::Env> {
    let mut env = cel::Env::stdlib();
    for name in expressions.into_iter().flat_map(literal_names) {
        // Not every caught name can be a type (`in {...}`): those are skipped.
        let _ = env.add_type(Literal(Type::new_struct(name)));
    }
    Arc::new(env)
}

/// kube's `jsonpatch.escapeKey`: a key made a JSON pointer segment.
fn escape_key(key: Arc<String>) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The variables of one evaluation.
#[derive(Default)]
pub struct Variables {
    context: cel::Context<'static, 'static>,
}

impl Variables {
    /// Variables evaluated in `env` (one from [`literal_env`]).
    pub fn with_env(env: Arc<cel::Env>) -> Variables {
        let mut context = cel::Context::with_env(env);
        // Refused only when the environment declares the name itself.
        let _ = context.add_function("jsonpatch.escapeKey", escape_key);
        Variables { context }
    }

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

    /// The expression's value as JSON (functions, types and the like are
    /// an error).
    pub fn json(&self, program: &cel::Program) -> Result<Value, String> {
        let value = self.evaluate(program)?;
        value.json().map_err(|_| format!("a {:?} value has no JSON form", value.type_of()))
    }

    /// The expression's value as a string (anything else is an error).
    pub fn text(&self, program: &cel::Program) -> Result<String, String> {
        match self.evaluate(program)? {
            cel::Value::String(s) => Ok(s.to_string()),
            other => Err(format!("expected a string, got {:?}", other.type_of())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evaluate(expression: &str, object: Value) -> Result<Value, String> {
        let mut variables = Variables::with_env(literal_env([expression]));
        variables.set("object", &object)?;
        variables.json(&*compile(expression)?)
    }

    #[test]
    fn struct_literals_read_back_as_the_json_they_spell() {
        let expression = "Object{metadata: Object.metadata{labels: {'team': object.metadata.name}}, \
            spec: Object . spec{replicas: 3}}";
        let built = evaluate(expression, serde_json::json!({"metadata": {"name": "a"}})).unwrap();
        assert_eq!(
            built,
            serde_json::json!({"metadata": {"labels": {"team": "a"}}, "spec": {"replicas": 3}})
        );
    }

    #[test]
    fn literal_names_are_found_before_braces() {
        assert_eq!(
            literal_names("Object{a: Object . spec {b: {'k': 1}}, c: [JSONPatch{}], d: x in {}}"),
            ["Object", "Object.spec", "JSONPatch", "in"]
        );
        assert!(literal_names("{'a': 1}").is_empty());
    }

    #[test]
    fn json_patches_can_escape_keys() {
        let expression =
            "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a.io/x~y'), value: 'v'}]";
        let built = evaluate(expression, Value::Null).unwrap();
        assert_eq!(
            built,
            serde_json::json!([{"op": "add", "path": "/metadata/labels/a.io~1x~0y", "value": "v"}])
        );
    }

    #[test]
    fn an_unknown_literal_is_an_error_not_a_panic() {
        let program = compile("Other{a: 1}").unwrap();
        let variables = Variables::with_env(literal_env(["Object{}"]));
        assert!(variables.json(&program).is_err());
    }
}
