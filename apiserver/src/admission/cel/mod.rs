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
//!
//! Evaluation is bounded as kube bounds it (`cost`): a cost limit per call,
//! a budget per object, the request's deadline.

mod cost;
mod estimate;
mod regex;

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use cel::common::types::{CelMap, CelMapKey, INT_TYPE, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use serde_json::Value;

pub use cost::{Budget, COST_LIMIT_EXCEEDED, MATCH_CONDITIONS_BUDGET, OUT_OF_BUDGET, RUNTIME_BUDGET};
pub use estimate::{Declarations, Kind, Shape, Step};

/// A compiled expression, shared by every request it is evaluated for.
pub type Program = Arc<Compiled>;

/// An expression's tree, instrumented to count its cost (see `cost`).
#[derive(Debug)]
pub struct Compiled {
    tree: cel::IdedExpr,
    /// Its nodes, charged once per evaluation.
    nodes: u64,
}

/// cel-go's limits, which kube keeps: the size of an expression in code
/// points, and how deep its expressions may nest.
const MAX_CODE_POINTS: usize = 100_000;
const MAX_DEPTH: usize = 250;

/// kube's cap on what a messageExpression may evaluate to (longer messages
/// are not used: the rule's own message is).
pub const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// A messageExpression's result as kube uses it: trimmed, on one line, not
/// empty, within [`MAX_MESSAGE_BYTES`].
pub fn usable_message(message: &str) -> Option<String> {
    let message = message.trim();
    let usable = !message.is_empty() && !message.contains('\n') && message.len() <= MAX_MESSAGE_BYTES;
    usable.then(|| message.to_string())
}

/// The stack parsing runs on. The parser recurses once per term of a chain
/// (`1+1+...`, `a.b.c...`) before the depth can be checked, a few KiB each
/// (more in debug builds); an expression within the code point limit fits
/// in this. Only what is touched is resident.
const PARSE_STACK_BYTES: usize = 512 << 20;

/// Compiles `expression`; the parser's complaint when it does not. Bounded
/// as kube bounds it (see [`parse`]).
pub fn compile(expression: &str) -> Result<Program, String> {
    let mut tree = parse(expression)?;
    cost::instrument(&mut tree);
    let nodes = cost::nodes(&tree);
    Ok(Arc::new(Compiled { tree, nodes }))
}

/// A lower bound of the cost kube estimates for `expression` before it
/// runs (see `estimate`), its variables declared by `declared`; the
/// parser's complaint when it does not compile.
pub fn estimated_cost(expression: &str, declared: &dyn Declarations) -> Result<u64, String> {
    Ok(estimate::max_cost(&parse(expression)?, declared))
}

/// Parses `expression` so that no expression, however written, takes the
/// server down: refused over the size limit, parsed on a thread with a
/// stack sized for that limit (a parser panic is an error), and refused
/// when it nests deeper than evaluation may recurse.
fn parse(expression: &str) -> Result<cel::IdedExpr, String> {
    let size = expression.chars().count();
    if size > MAX_CODE_POINTS {
        return Err(format!(
            "expression code point size exceeds limit: size: {size}, limit {MAX_CODE_POINTS}"
        ));
    }
    let source = expression.to_string();
    let parse = move || {
        let program = cel::Program::compile(&source).map_err(|e| e.to_string().trim().to_string())?;
        // A program refused here is dropped here too: dropping a deep tree
        // recurses as deep.
        match depth(program.expression()) {
            Some(depth) if depth <= MAX_DEPTH => Ok(program.expression().clone()),
            Some(_) => Err("max recursion depth exceeded".to_string()),
            None => Err("the expression could not be compiled".to_string()),
        }
    };
    let parser =
        std::thread::Builder::new().name("cel-parse".into()).stack_size(PARSE_STACK_BYTES).spawn(parse);
    match parser.map(std::thread::JoinHandle::join) {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => Err("the expression could not be parsed".to_string()),
        Err(e) => Err(format!("the expression could not be parsed: {e}")),
    }
}

/// How deep the tree nests, walked without recursion; None when it holds
/// a node evaluation cannot take (an unspecified expression, a struct
/// field in a map), which the parser never makes.
fn depth(root: &cel::IdedExpr) -> Option<usize> {
    use cel::common::ast::{EntryExpr, Expr};
    let mut deepest = 0;
    let mut pending = vec![(root, 1)];
    while let Some((node, depth)) = pending.pop() {
        deepest = deepest.max(depth);
        let below = depth + 1;
        match &node.expr {
            Expr::Unspecified => return None,
            Expr::Ident(_) | Expr::Literal(_) => {}
            Expr::Call(call) => {
                pending.extend(call.target.iter().map(|t| (t.as_ref(), below)));
                pending.extend(call.args.iter().map(|a| (a, below)));
            }
            Expr::Comprehension(c) => {
                for part in [&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                    pending.push((part, below));
                }
            }
            Expr::List(list) => pending.extend(list.elements.iter().map(|e| (e, below))),
            Expr::Select(select) => pending.push((select.operand.as_ref(), below)),
            Expr::Map(map) => {
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else { return None };
                    pending.push((&entry.key, below));
                    pending.push((&entry.value, below));
                }
            }
            Expr::Struct(literal) => {
                for entry in &literal.entries {
                    match &entry.expr {
                        EntryExpr::StructField(field) => pending.push((&field.value, below)),
                        EntryExpr::MapEntry(entry) => pending.push((&entry.value, below)),
                    }
                }
            }
        }
    }
    Some(deepest)
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

/// The standard library and what instrumented trees call (`@tick`,
/// `@matches`).
fn base_env() -> cel::Env {
    let mut env = cel::Env::stdlib();
    let added = [
        env.add_overload(cost::TICK, "rtcd_tick", vec![INT_TYPE], cost::tick),
        env.add_overload(regex::MATCHES, "rtcd_matches", vec![STRING_TYPE, STRING_TYPE], regex::matches),
    ];
    // Names no standard overload has: nothing to conflict with.
    debug_assert!(added.iter().all(Result::is_ok));
    env
}

/// The environment every evaluation without struct literals shares: made
/// once (the standard library is hundreds of overloads).
static BASE_ENV: LazyLock<Arc<cel::Env>> = LazyLock::new(|| Arc::new(base_env()));

/// The environment mutations are evaluated in: the base one, the struct
/// literals `expressions` name, and kube's `jsonpatch.escapeKey`.
pub fn literal_env<'a>(expressions: impl IntoIterator<Item = &'a str>) -> Arc<cel::Env> {
    let mut env = base_env();
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

/// A JSON value as kube gives it to CEL: integers are `int` (a JSON number
/// that fits, as every Kubernetes integer does), not `uint`, so that
/// `self.replicas + 1` adds; larger ones are `uint`, fractions `double`.
fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            (None, None) => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::from(items.iter().map(to_cel).collect::<Vec<_>>()),
        Value::Object(fields) => cel::Value::from(
            fields.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect::<std::collections::HashMap<_, _>>(),
        ),
    }
}

/// The variables of one evaluation, and the budget its evaluations spend
/// (a fresh [`RUNTIME_BUDGET`] unless shared with [`Variables::with_budget`]).
pub struct Variables {
    context: cel::Context<'static, 'static>,
    budget: Arc<Budget>,
}

impl Default for Variables {
    fn default() -> Self {
        Variables { context: cel::Context::with_env(BASE_ENV.clone()), budget: Arc::default() }
    }
}

impl Variables {
    /// Variables evaluated in `env` (one from [`literal_env`]).
    pub fn with_env(env: Arc<cel::Env>) -> Variables {
        let mut context = cel::Context::with_env(env);
        // Refused only when the environment declares the name itself.
        let _ = context.add_function("jsonpatch.escapeKey", escape_key);
        Variables { context, budget: Arc::default() }
    }

    /// These variables' evaluations spend `budget`, shared with others.
    pub fn with_budget(mut self, budget: Arc<Budget>) -> Variables {
        self.budget = budget;
        self
    }

    /// Adds `name` with the JSON `value` (objects become maps, as kube's
    /// unstructured objects are to CEL).
    pub fn set(&mut self, name: &str, value: &Value) -> Result<(), String> {
        self.context.add_variable_from_value(name.to_string(), to_cel(value));
        Ok(())
    }

    /// Adds `name` with a value already evaluated.
    pub fn set_value(&mut self, name: &str, value: cel::Value) {
        self.context.add_variable_from_value(name.to_string(), value);
    }

    /// The expression's value; past its cost limit, the budget or the
    /// request's deadline, kube's text for that ([`COST_LIMIT_EXCEEDED`],
    /// [`OUT_OF_BUDGET`]).
    pub fn evaluate(&self, program: &Compiled) -> Result<cel::Value, String> {
        let run = || cel::Value::resolve(&program.tree, &self.context);
        match cost::metered(&self.budget, program.nodes, run) {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(stopped) => Err(stopped.to_string()),
        }
    }

    /// The expression's value as a bool (anything else is an error).
    pub fn truth(&self, program: &Compiled) -> Result<bool, String> {
        match self.evaluate(program)? {
            cel::Value::Bool(b) => Ok(b),
            other => Err(format!("expected a bool, got {:?}", other.type_of())),
        }
    }

    /// The expression's value as JSON (functions, types and the like are
    /// an error).
    pub fn json(&self, program: &Compiled) -> Result<Value, String> {
        let value = self.evaluate(program)?;
        value.json().map_err(|_| format!("a {:?} value has no JSON form", value.type_of()))
    }

    /// The expression's value as a string (anything else is an error).
    pub fn text(&self, program: &Compiled) -> Result<String, String> {
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
    fn expressions_past_kubes_limits_are_refused_not_fatal() {
        let chain = |n: usize| format!("1{} > 0", "+1".repeat(n));
        assert!(compile(&chain(240)).is_ok());
        assert_eq!(compile(&chain(6000)).unwrap_err(), "max recursion depth exceeded");
        assert_eq!(
            compile(&format!("self{}", ".a".repeat(49_000))).unwrap_err(),
            "max recursion depth exceeded"
        );
        assert_eq!(
            compile(&format!("self{}", ".a".repeat(50_000))).unwrap_err(),
            "expression code point size exceeds limit: size: 100004, limit 100000"
        );
        assert!(compile(&format!("{}1{}", "(".repeat(50_000), ")".repeat(49_999))).is_err());
        // Logical chains are balanced, as cel-go balances them.
        assert!(compile(&format!("true{}", " && true".repeat(6000))).is_ok());
    }

    #[test]
    fn integers_are_ints_as_kube_gives_them() {
        let built = evaluate(
            "object.n + 1 == 3 && object.f * 2.0 == 3.0 && object.big == 18446744073709551615u",
            serde_json::json!({"n": 2, "f": 1.5, "big": u64::MAX}),
        );
        assert_eq!(built, Ok(Value::Bool(true)));
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
