//! A custom resource checked against its version's `openAPIV3Schema`, with
//! the causes and texts kube-apiserver gives (kube-openapi's validators as
//! apiextensions-apiserver turns their results into field errors): a type
//! mismatch names the JSON type found (`spec.replicas in body must be of
//! type integer: "string"`), `maxLength` is "Too long", `maxItems` and
//! `maxProperties` are "Too many", `enum` is "Unsupported value", a missing
//! required field "Required value", everything else "Invalid value" with
//! kube-openapi's sentence. On update, problems in values left as they were
//! are let through (kube's validation ratcheting), so tightening a schema
//! does not lock existing objects.

use std::collections::{HashMap, HashSet};

use regex::Regex;
use serde_json::Value;

use super::rules::Rules;
use crate::errors::{Cause, go_quote};
use crate::runtime::schema_view::Node;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
}

/// A cause and where it is, structured (for ratcheting).
#[derive(Debug)]
struct Failure {
    at: Vec<Step>,
    /// `Required value` is about the parent object.
    about_parent: bool,
    cause: Cause,
}

/// A version's schema with its `pattern`s and CEL rules compiled once.
#[derive(Debug)]
pub struct Validator {
    schema: Value,
    patterns: HashMap<String, Regex>,
    rules: Rules,
}

/// The most failures one object is checked for, and the most of an enum a
/// refusal lists. kube has neither bound: a 50,000-value enum and a
/// thousand values outside it made a 1.3 GB answer. An answer shows at
/// most 256 KiB of causes anyway (`errors`).
const MAX_FAILURES: usize = 4096;
const MAX_LISTED_BYTES: usize = 8 << 10;

/// Causes that keep CEL rules from running (kube's "blocking" errors).
const BLOCKING: [&str; 5] = [
    "FieldValueNotSupported",
    "FieldValueRequired",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "FieldValueTypeInvalid",
];

impl Validator {
    pub fn new(schema: Value) -> Validator {
        let mut patterns = HashMap::new();
        collect_patterns(&schema, &mut patterns);
        let rules = Rules::compile(&schema);
        Validator { schema, patterns, rules }
    }

    pub fn schema(&self) -> Node<'_> {
        Node(&self.schema)
    }

    /// The causes of a new object.
    pub fn validate(&self, object: &Value) -> Vec<Cause> {
        let mut failures = Vec::new();
        self.check(object, self.schema(), &mut Vec::new(), &mut failures);
        let causes = failures.into_iter().map(|f| f.cause).collect();
        self.with_rules(causes, object, None)
    }

    /// The causes of a replacing object, less those in values `old` holds
    /// unchanged.
    pub fn validate_update(&self, new: &Value, old: &Value) -> Vec<Cause> {
        let mut failures = Vec::new();
        self.check(new, self.schema(), &mut Vec::new(), &mut failures);
        let causes = failures
            .into_iter()
            .filter(|f| {
                let at = if f.about_parent { &f.at[..f.at.len().saturating_sub(1)] } else { &f.at[..] };
                resolve(new, at) != resolve(old, at)
            })
            .map(|f| f.cause)
            .collect();
        self.with_rules(causes, new, Some(old))
    }

    /// The CEL rules' causes after the schema's, unless the schema's keep
    /// them from running.
    fn with_rules(&self, mut causes: Vec<Cause>, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        if self.rules.is_empty() {
            return causes;
        }
        if causes.iter().any(|c| BLOCKING.contains(&c.reason)) {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: "<nil>".into(),
                message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
            });
            return causes;
        }
        self.rules.check(object, old, self.schema(), "", &mut causes);
        causes
    }

    fn check(&self, value: &Value, schema: Node<'_>, at: &mut Vec<Step>, out: &mut Vec<Failure>) {
        // More could not be shown (see `errors`): the rest is not looked for.
        if out.len() >= MAX_FAILURES {
            return;
        }
        if value.is_null() {
            // Null meets only the type and enum checks.
            if !schema.nullable() && !schema.type_().is_empty() {
                out.push(type_failure(at, schema, "null"));
            }
            self.check_enum(value, schema, at, out);
            return;
        }
        if let Some(found) = type_mismatch(value, schema) {
            out.push(type_failure(at, schema, found));
        }
        self.check_junctors(value, schema, at, out);
        match value {
            Value::String(text) => self.check_string(text, schema, at, out),
            Value::Number(_) => check_number(value, schema, at, out),
            Value::Array(items) => self.check_array(items, schema, at, out),
            Value::Object(_) => self.check_object(value, schema, at, out),
            Value::Bool(_) | Value::Null => {}
        }
        self.check_enum(value, schema, at, out);
    }

    fn check_string(&self, text: &str, schema: Node<'_>, at: &[Step], out: &mut Vec<Failure>) {
        let chars = text.chars().count() as u64;
        let name = path_string(at);
        // kube-openapi stops at the first of these that fails.
        if let Some(max) = schema.count("maxLength").filter(|max| chars > *max) {
            out.push(failure(
                at,
                "FieldValueTooLong",
                format!("Too long: may not be more than {max} {}", plural(max, "byte")),
            ));
        } else if let Some(min) = schema.count("minLength").filter(|min| chars < *min) {
            out.push(invalid(
                at,
                value_text(&Value::from(text)),
                format!("{name} in body should be at least {min} chars long"),
            ));
        } else if let Some(pattern) = schema.string("pattern") {
            let matches = self.patterns.get(pattern).is_some_and(|re| re.is_match(text));
            if !matches {
                out.push(invalid(
                    at,
                    value_text(&Value::from(text)),
                    format!("{name} in body should match '{pattern}'"),
                ));
            }
        }
        let format = schema.format();
        if !format_holds(format, text) {
            let message = format!(
                "Invalid value: {}: {name} in body must be of type {format}: {}",
                go_quote(text),
                go_quote(text)
            );
            out.push(failure(at, "FieldValueTypeInvalid", message));
        }
    }

    fn check_array(&self, items: &[Value], schema: Node<'_>, at: &mut Vec<Step>, out: &mut Vec<Failure>) {
        if let Some(item) = schema.items() {
            for (i, value) in items.iter().enumerate() {
                at.push(Step::Index(i));
                self.check(value, item, at, out);
                at.pop();
            }
        }
        let name = path_string(at);
        check_size(items.len(), schema, ("minItems", "maxItems", "items"), at, out);
        if schema.is_set("uniqueItems") && has_duplicates(items) {
            out.push(invalid(at, "\"\"".to_string(), format!("{name} in body shouldn't contain duplicates")));
        }
        check_list_type(items, schema, at, out);
    }

    fn check_object(&self, value: &Value, schema: Node<'_>, at: &mut Vec<Step>, out: &mut Vec<Failure>) {
        let Value::Object(fields) = value else { return };
        check_size(fields.len(), schema, ("minProperties", "maxProperties", "properties"), at, out);
        for (field, child) in fields {
            let Some(node) = schema.field(field) else { continue };
            at.push(Step::Field(field.clone()));
            self.check(child, node, at, out);
            at.pop();
        }
        for required in schema.required() {
            if !fields.contains_key(required) {
                at.push(Step::Field(required.to_string()));
                out.push(Failure {
                    at: at.clone(),
                    about_parent: true,
                    cause: Cause {
                        reason: "FieldValueRequired",
                        field: path_string(at),
                        message: "Required value".into(),
                    },
                });
                at.pop();
            }
        }
    }

    fn check_enum(&self, value: &Value, schema: Node<'_>, at: &[Step], out: &mut Vec<Failure>) {
        let Some(allowed) = schema.enum_values() else { return };
        if allowed.iter().any(|a| same_value(a, value)) {
            return;
        }
        let mut message = format!("Unsupported value: {}", value_text(value));
        if !allowed.is_empty() {
            message.push_str(&format!(": supported values: {}", listing(allowed)));
        }
        out.push(failure(at, "FieldValueNotSupported", message));
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`: only whether the value passes.
    fn check_junctors(&self, value: &Value, schema: Node<'_>, at: &[Step], out: &mut Vec<Failure>) {
        let passes = |sub: &Value| {
            let mut inner = Vec::new();
            self.check(value, Node(sub), &mut at.to_vec(), &mut inner);
            inner.is_empty()
        };
        let name = go_quote(&path_string(at));
        for (keyword, subschemas) in schema.junctors() {
            // Each subschema is checked once, whatever the keyword asks of
            // them (nested junctors would otherwise multiply the work).
            let list = subschemas.as_array().map(Vec::as_slice).unwrap_or_default();
            let passing = if keyword == "not" {
                usize::from(passes(subschemas))
            } else {
                list.iter().filter(|s| passes(s)).count()
            };
            let message = match keyword {
                "allOf" if passing < list.len() => {
                    let none = if passing == 0 { ". None validated" } else { "" };
                    format!("{name} must validate all the schemas (allOf){none}")
                }
                "anyOf" if passing == 0 => format!("{name} must validate at least one schema (anyOf)"),
                "oneOf" => match passing {
                    1 => continue,
                    0 => format!("{name} must validate one and only one schema (oneOf). Found none valid"),
                    n => format!(
                        "{name} must validate one and only one schema (oneOf). Found {n} valid alternatives"
                    ),
                },
                "not" if passing == 1 => format!("{name} must not validate the schema (not)"),
                _ => continue,
            };
            out.push(invalid(at, value_text(value), message));
        }
    }
}

/// `minItems`/`maxItems` or `minProperties`/`maxProperties`: too few is
/// kube-openapi's Invalid, too many kube's "Too many" (in items, for both).
fn check_size(
    size: usize,
    schema: Node<'_>,
    (min_key, max_key, noun): (&str, &str, &str),
    at: &[Step],
    out: &mut Vec<Failure>,
) {
    let size = size as u64;
    if let Some(min) = schema.count(min_key).filter(|min| size < *min) {
        let detail = format!("{} in body should have at least {min} {noun}", path_string(at));
        out.push(invalid(at, size.to_string(), detail));
    }
    if let Some(max) = schema.count(max_key).filter(|max| size > *max) {
        out.push(too_many(at, size, max));
    }
}

fn check_number(value: &Value, schema: Node<'_>, at: &[Step], out: &mut Vec<Failure>) {
    let Some(number) = value.as_f64() else { return };
    let name = path_string(at);
    let integral = value.is_i64() || value.is_u64();
    // kube compares an integer with the bound made an integer.
    let bound = |b: f64| if integral { (b.trunc() as i64).to_string() } else { float_text(b) };
    if let Some(m) = schema.number("multipleOf").filter(|m| *m != 0.0 && (number / m).fract() != 0.0) {
        out.push(invalid(
            at,
            value_text(value),
            format!("{name} in body should be a multiple of {}", bound(m)),
        ));
    }
    // (bound, its exclusive flag, whether it is a lower bound, kube's words
    // when exclusive, when not).
    let limits = [
        ("minimum", "exclusiveMinimum", true, "greater than", "greater than or equal to"),
        ("maximum", "exclusiveMaximum", false, "less than", "less than or equal to"),
    ];
    for (key, exclusive_key, lower, strict_words, words) in limits {
        let Some(limit) = schema.number(key) else { continue };
        let exclusive = schema.is_set(exclusive_key);
        let fails = match (lower, exclusive) {
            (true, true) => number <= limit,
            (true, false) => number < limit,
            (false, true) => number >= limit,
            (false, false) => number > limit,
        };
        if fails {
            let words = if exclusive { strict_words } else { words };
            let detail = format!("{name} in body should be {words} {}", bound(limit));
            out.push(invalid(at, value_text(value), detail));
        }
    }
}

/// `x-kubernetes-list-type: set` items, and `map` items' keys, are unique.
fn check_list_type(items: &[Value], schema: Node<'_>, at: &mut Vec<Step>, out: &mut Vec<Failure>) {
    let keys = schema.list_map_keys();
    let identity = |item: &Value| -> Option<Value> {
        match schema.list_type() {
            "set" => Some(item.clone()),
            "map" => {
                let key: serde_json::Map<String, Value> =
                    keys.iter().filter_map(|k| item.get(*k).map(|v| (k.to_string(), v.clone()))).collect();
                Some(Value::Object(key))
            }
            _ => None,
        }
    };
    // Keyed by their JSON text (map keys sorted): linear in the list.
    let mut seen: HashSet<String> = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let Some(id) = identity(item) else { return };
        if !seen.insert(id.to_string()) {
            at.push(Step::Index(i));
            out.push(failure(at, "FieldValueDuplicate", format!("Duplicate value: {}", value_text(&id))));
            at.pop();
        }
    }
}

/// The JSON type name of a value that is not of the schema's type.
fn type_mismatch(value: &Value, schema: Node<'_>) -> Option<&'static str> {
    let found = json_type(value);
    let accepts = |ty: &str| match (ty, found) {
        (a, b) if a == b => true,
        // An integer is a number; a float with no fraction an integer.
        ("number", "integer") => true,
        ("integer", "number") => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    };
    let ok = match schema.type_() {
        "" if schema.int_or_string() => accepts("integer") || accepts("string"),
        "" => true,
        ty => accepts(ty),
    };
    (!ok).then_some(found)
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_failure(at: &[Step], schema: Node<'_>, found: &str) -> Failure {
    let expected = if schema.int_or_string() { "integer,string" } else { schema.type_() };
    let quoted = go_quote(found);
    let message =
        format!("Invalid value: {quoted}: {} in body must be of type {expected}: {quoted}", path_string(at));
    failure(at, "FieldValueTypeInvalid", message)
}

fn failure(at: &[Step], reason: &'static str, message: String) -> Failure {
    Failure { at: at.to_vec(), about_parent: false, cause: Cause { reason, field: path_string(at), message } }
}

fn invalid(at: &[Step], value: String, detail: String) -> Failure {
    failure(at, "FieldValueInvalid", format!("Invalid value: {value}: {detail}"))
}

fn too_many(at: &[Step], actual: u64, max: u64) -> Failure {
    failure(
        at,
        "FieldValueTooMany",
        format!("Too many: {actual}: must have at most {max} {}", plural(max, "item")),
    )
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 { word.to_string() } else { format!("{word}s") }
}

/// `spec.items[0].name`.
fn path_string(at: &[Step]) -> String {
    let mut out = String::new();
    for step in at {
        match step {
            Step::Field(name) if out.is_empty() => out.push_str(name),
            Step::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn resolve<'a>(value: &'a Value, at: &[Step]) -> Option<&'a Value> {
    at.iter().try_fold(value, |v, step| match step {
        Step::Field(name) => v.get(name),
        Step::Index(i) => v.get(i),
    })
}

/// A bad value as kube's field errors print it: strings quoted, numbers
/// and booleans bare, anything else as JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            n.as_f64().map(float_text).unwrap_or_else(|| n.to_string())
        }
        other => other.to_string(),
    }
}

/// Go's `%v` of a float64: no trailing `.0`.
fn float_text(f: f64) -> String {
    format!("{f}")
}

/// Enum members equal to a value, an integral float equal to the integer.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

fn has_duplicates(items: &[Value]) -> bool {
    items.iter().enumerate().any(|(i, a)| items[..i].contains(a))
}

/// The formats kube checks (others are not checked at all).
fn format_holds(format: &str, text: &str) -> bool {
    match format.replace('-', "").as_str() {
        "datetime" => crate::table::parse_rfc3339(text).is_some(),
        "date" => jiff::civil::Date::strptime("%Y-%m-%d", text).is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid::Uuid::try_parse(text).is_ok(),
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(text).is_ok()
        }
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.contains(':') { 128 } else { 32 };
            ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "hostname" => {
            text.len() <= 253
                && text.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                })
        }
        _ => true,
    }
}

/// Every `pattern` in the schema, compiled (one that does not compile
/// never matches; the CRD's validation refused it already).
fn collect_patterns(schema: &Value, out: &mut HashMap<String, Regex>) {
    match schema {
        Value::Object(fields) => {
            if let Some(Value::String(pattern)) = fields.get("pattern")
                && let Ok(re) = crate::runtime::pattern::compile(pattern)
            {
                out.insert(pattern.clone(), re);
            }
            fields.values().for_each(|v| collect_patterns(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_patterns(v, out)),
        _ => {}
    }
}

/// An enum's values as kube lists them, quoted and comma-separated, up to
/// [`MAX_LISTED_BYTES`]; then how many more there are.
fn listing(allowed: &[Value]) -> String {
    let mut listed = String::new();
    for (i, value) in allowed.iter().enumerate() {
        if listed.len() > MAX_LISTED_BYTES {
            listed.push_str(&format!(", and {} more", allowed.len() - i));
            break;
        }
        if i > 0 {
            listed.push_str(", ");
        }
        listed.push_str(&go_quote(&value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string())));
    }
    listed
}

#[cfg(test)]
mod tests;
