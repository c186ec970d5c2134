//! The rules a CRD's `openAPIV3Schema` must follow (kube's structural
//! schema invariants and its OpenAPI schema validation), so that pruning,
//! defaulting and validation know the type of every field: a type at every
//! level (unless int-or-string or preserve-unknown-fields), `object` at the
//! root, `items` for every array, nothing but value checks inside
//! `allOf`/`anyOf`/`oneOf`/`not`, root metadata left to the server, no
//! OpenAPI keywords kube does not support.

use serde_json::{Map, Value, json};

use crate::errors::Cause;
use crate::registry::kinds::field::{forbidden, invalid, not_supported, required};

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const UNSUPPORTED: [(&str, &str); 5] = [
    ("id", "id is not supported"),
    ("additionalItems", "additionalItems is not supported"),
    ("patternProperties", "patternProperties is not supported"),
    ("definitions", "definitions is not supported"),
    ("dependencies", "dependencies is not supported"),
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every problem of a version's schema, `at` being its path
/// (`spec.validation.openAPIV3Schema`).
pub fn schema_causes(schema: &Value, at: &str, status_enabled: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    if status_enabled {
        let ty = schema["type"].as_str().unwrap_or_default();
        if !ty.is_empty() && ty != "object" {
            causes.push(invalid(
                &format!("{at}.type"),
                &json!(ty),
                r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
            ));
        }
    }
    if schema["nullable"] == json!(true) {
        causes.push(forbidden(&format!("{at}.nullable"), "nullable cannot be true at the root"));
    }
    // A schema kube cannot even convert to its structural form (an
    // unsupported keyword, an array of items, preserve-unknown-fields
    // false) gets only the OpenAPI checks below, which name the culprit.
    let mut structural = Vec::new();
    if convertible(schema) {
        invariants(schema, Level::Root, at, &mut structural);
    }
    structural.sort_by_key(|c| format!("{}: {}", c.field, c.message));
    causes.extend(structural);
    openapi(schema, at, &mut causes);
    // As in kube, rules are costed only in a schema valid otherwise.
    if causes.is_empty() {
        causes.extend(super::rule_cost::causes(schema, at));
    }
    causes
}

/// Whether kube's `NewStructural` accepts the schema, at every node.
fn convertible(schema: &Value) -> bool {
    let fields = object(schema);
    let set = |key: &str| fields.get(key).is_some_and(|v| !v.is_null() && v != &json!({}) && v != &json!(""));
    let unsupported = ["id", "$ref", "patternProperties", "dependencies", "definitions"];
    if unsupported.iter().any(|key| set(key))
        || fields.get("additionalItems").is_some_and(|v| !v.is_null())
        || schema["items"].is_array()
        || schema["x-kubernetes-preserve-unknown-fields"] == json!(false)
    {
        return false;
    }
    let properties = schema["properties"].as_object().into_iter().flat_map(Map::values);
    let junctors =
        ["allOf", "anyOf", "oneOf"].into_iter().flat_map(|k| schema[k].as_array().into_iter().flatten());
    let nested =
        ["items", "additionalProperties", "not"].into_iter().map(|k| &schema[k]).filter(|n| n.is_object());
    properties.chain(junctors).chain(nested).all(convertible)
}

fn object(schema: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    schema.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

fn flag(schema: &Value, key: &str) -> bool {
    schema[key] == json!(true)
}

/// kube's `validateStructuralInvariants`.
fn invariants(schema: &Value, level: Level, at: &str, out: &mut Vec<Cause>) {
    let fields = object(schema);
    let ty = schema["type"].as_str().unwrap_or_default();
    let embedded = flag(schema, "x-kubernetes-embedded-resource");
    let int_or_string = flag(schema, "x-kubernetes-int-or-string");
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    if ty == "array" && !schema["items"].is_object() {
        out.push(required(&format!("{at}.items"), "must be specified"));
    }
    if schema["items"].is_object() {
        invariants(&schema["items"], Level::Item, &format!("{at}.items"), out);
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        invariants(property, Level::Field, &format!("{at}.properties[{name}]"), out);
    }
    if let Some(additional) = fields.get("additionalProperties") {
        if level == Level::Root {
            out.push(forbidden(&format!("{at}.additionalProperties"), "must not be used at the root"));
        }
        if additional.is_object() {
            invariants(additional, Level::Field, &format!("{at}.additionalProperties"), out);
        }
    }
    if int_or_string && preserve {
        out.push(invalid(
            &format!("{at}.x-kubernetes-preserve-unknown-fields"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        out.push(invalid(
            &format!("{at}.x-kubernetes-embedded-resource"),
            &json!(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    junctors(schema, at, out);
    if let Some(pattern) = schema["pattern"].as_str()
        && let Err(e) = crate::runtime::pattern::compile(pattern)
    {
        let why = format!(
            "must be a valid regular expression, but isn't: {}",
            e.to_string().lines().last().unwrap_or_default().trim()
        );
        out.push(invalid(&format!("{at}.pattern"), &json!(pattern), &why));
    }
    let type_at = format!("{at}.type");
    if embedded && ty != "object" {
        let why = "must be object if x-kubernetes-embedded-resource is true";
        out.push(if ty.is_empty() { required(&type_at, why) } else { invalid(&type_at, &json!(ty), why) });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let why = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(required(&type_at, why));
    }
    if embedded && fields.contains_key("additionalProperties") {
        out.push(forbidden(
            &format!("{at}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        out.push(invalid(&type_at, &json!(ty), "must be object at the root"));
    }
    let check_metadata = level == Level::Root || embedded;
    for key in ["kind", "apiVersion"] {
        if let Some(property) = schema["properties"].get(key).filter(|_| check_metadata) {
            let property_type = property["type"].as_str().unwrap_or_default();
            if property_type != "string" {
                out.push(invalid(
                    &format!("{at}.properties[{key}].type"),
                    &json!(property_type),
                    "must be string",
                ));
            }
        }
    }
    if let Some(metadata) = schema["properties"].get("metadata") {
        metadata_invariants(metadata, check_metadata, level, &format!("{at}.properties[metadata]"), out);
    }
    let no_properties = schema["properties"].as_object().is_none_or(Map::is_empty);
    if embedded && !preserve && no_properties {
        out.push(required(
            &format!("{at}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Root metadata is the server's: a schema may only name `name` and
/// `generateName` in it (to constrain them).
fn metadata_invariants(metadata: &Value, check_metadata: bool, level: Level, at: &str, out: &mut Vec<Cause>) {
    let ty = metadata["type"].as_str().unwrap_or_default();
    if check_metadata && ty != "object" {
        out.push(invalid(&format!("{at}.type"), &json!(ty), "must be object"));
    }
    if level != Level::Root {
        return;
    }
    let properties = metadata["properties"].as_object();
    let only_names = properties.is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
    // Its type is checked above and a default refused elsewhere; anything
    // else (a description too) would describe what the server owns.
    let other_keywords =
        object(metadata).keys().any(|k| !["type", "default", "properties"].contains(&k.as_str()));
    if !only_names || other_keywords {
        out.push(forbidden(at, "must not specify anything other than name and generateName, but metadata is implicitly specified"));
    }
}

/// `allOf`/`anyOf`/`oneOf`/`not` may only constrain values (kube's
/// `validateValueValidation`); `anyOf: [{type: integer}, {type: string}]`
/// is int-or-string's own pattern and allowed.
fn junctors(schema: &Value, at: &str, out: &mut Vec<Cause>) {
    let int_or_string_pattern = json!([{"type": "integer"}, {"type": "string"}]);
    for key in ["anyOf", "allOf", "oneOf"] {
        for (i, nested) in schema[key].as_array().into_iter().flatten().enumerate() {
            let skip_any_of = key == "allOf" && i == 0 && nested["anyOf"] == int_or_string_pattern;
            if key == "anyOf" && schema["anyOf"] == int_or_string_pattern {
                continue;
            }
            nested_value_validation(nested, &format!("{at}.{key}[{i}]"), skip_any_of, out);
        }
    }
    if schema["not"].is_object() {
        nested_value_validation(&schema["not"], &format!("{at}.not"), false, out);
    }
}

fn nested_value_validation(schema: &Value, at: &str, skip_any_of: bool, out: &mut Vec<Cause>) {
    let fields = object(schema);
    if !skip_any_of {
        junctors(schema, at, out);
    } else {
        let mut rest = schema.clone();
        if let Some(map) = rest.as_object_mut() {
            map.remove("anyOf");
        }
        junctors(&rest, at, out);
    }
    if schema["items"].is_object() {
        nested_value_validation(&schema["items"], &format!("{at}.items"), false, out);
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        nested_value_validation(property, &format!("{at}.properties[{name}]"), false, out);
    }
    let rules: [(&str, &str); 13] = [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
        ("x-kubernetes-embedded-resource", "must be false to be structural"),
        ("x-kubernetes-int-or-string", "must be false to be structural"),
        ("x-kubernetes-list-map-keys", "must be empty to be structural"),
        ("x-kubernetes-list-type", "must be undefined to be structural"),
        ("x-kubernetes-map-type", "must be undefined to be structural"),
        ("x-kubernetes-validations", "must be empty to be structural"),
    ];
    for (key, why) in rules {
        let set = match fields.get(key) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty() || key.ends_with("-type"),
            Some(Value::Array(list)) => !list.is_empty(),
            Some(_) => true,
        };
        if set {
            out.push(forbidden(&format!("{at}.{key}"), why));
        }
    }
    // Reasoning about metadata could restrict it in ways not intended.
    if schema["properties"].get("metadata").is_some() {
        out.push(forbidden(
            &format!("{at}.properties[metadata]"),
            "must not be specified in a nested context",
        ));
    }
}

/// kube's OpenAPI schema checks, at every node, in kube's order.
fn openapi(schema: &Value, at: &str, out: &mut Vec<Cause>) {
    let fields = object(schema);
    let ty = schema["type"].as_str().unwrap_or_default();
    if !ty.is_empty() && !TYPES.contains(&ty) {
        out.push(not_supported(&format!("{at}.type"), ty, &TYPES));
    }
    for (key, why) in UNSUPPORTED {
        if fields.get(key).is_some_and(|v| !v.is_null() && v != &json!({}) && v != &json!("")) {
            out.push(forbidden(&format!("{at}.{key}"), why));
        }
    }
    if fields.contains_key("$ref") {
        out.push(forbidden(&format!("{at}.$ref"), "$ref is not supported"));
    }
    if ty == "null" {
        out.push(forbidden(
            &format!("{at}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if schema["items"].is_array() {
        out.push(forbidden(&format!("{at}.items"), "items must be a schema object and not an array"));
    }
    if flag(schema, "uniqueItems") {
        out.push(forbidden(
            &format!("{at}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    // `additionalProperties: true` next to properties only says what
    // properties already allow.
    let additional = fields.get("additionalProperties").filter(|a| !a.is_null());
    let has_properties = schema["properties"].as_object().is_some_and(|p| !p.is_empty());
    if additional.is_some_and(|a| a != &json!(true)) && has_properties {
        out.push(forbidden(
            &format!("{at}.additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if schema["additionalProperties"].is_object() {
        openapi(&schema["additionalProperties"], &format!("{at}.additionalProperties"), out);
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        openapi(property, &format!("{at}.properties[{name}]"), out);
    }
    if schema["not"].is_object() {
        openapi(&schema["not"], &format!("{at}.not"), out);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for (i, nested) in schema[key].as_array().into_iter().flatten().enumerate() {
            openapi(nested, &format!("{at}.{key}[{i}]"), out);
        }
    }
    match &schema["items"] {
        Value::Object(_) => openapi(&schema["items"], &format!("{at}.items"), out),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                openapi(item, &format!("{at}.items[{i}]"), out);
            }
        }
        _ => {}
    }
    if schema["x-kubernetes-preserve-unknown-fields"] == json!(false) {
        out.push(invalid(
            &format!("{at}.x-kubernetes-preserve-unknown-fields"),
            &json!(false),
            "must be true or undefined",
        ));
    }
    if let Some(list_type) = schema["x-kubernetes-list-type"].as_str() {
        list_type_causes(schema, list_type, at, out);
    }
    for (i, rule) in schema["x-kubernetes-validations"].as_array().into_iter().flatten().enumerate() {
        rule_causes(rule, &format!("{at}.x-kubernetes-validations[{i}]"), out);
    }
}

/// A CEL rule must be there and compile (so must its messageExpression).
fn rule_causes(rule: &Value, at: &str, out: &mut Vec<Cause>) {
    let text = rule["rule"].as_str().unwrap_or_default();
    if text.trim().is_empty() {
        out.push(required(&format!("{at}.rule"), "rule is not specified"));
        return;
    }
    let shown = internal_rule(rule);
    let invalid_rule = |field: &str, detail: String| {
        crate::registry::kinds::field::cause(
            "FieldValueInvalid",
            &format!("{at}.{field}"),
            format!("Invalid value: {shown}: {detail}"),
        )
    };
    if let Err(e) = crate::admission::cel::compile(text) {
        out.push(invalid_rule("rule", format!("compilation failed: {e}")));
    }
    if let Some(expression) = rule["messageExpression"].as_str().filter(|e| !e.trim().is_empty())
        && let Err(e) = crate::admission::cel::compile(expression)
    {
        out.push(invalid_rule("messageExpression", format!("messageExpression compilation failed: {e}")));
    }
}

/// A rule as kube prints it in an error: its internal type, whose fields
/// have no JSON names.
fn internal_rule(rule: &Value) -> String {
    let text = |key: &str| json!(rule[key].as_str().unwrap_or_default());
    format!(
        r#"{{"Rule":{},"Message":{},"MessageExpression":{},"Reason":{},"FieldPath":{},"OptionalOldSelf":{}}}"#,
        text("rule"),
        text("message"),
        text("messageExpression"),
        rule["reason"],
        text("fieldPath"),
        rule["optionalOldSelf"],
    )
}

fn list_type_causes(schema: &Value, list_type: &str, at: &str, out: &mut Vec<Cause>) {
    let ty = schema["type"].as_str().unwrap_or_default();
    let type_at = format!("{at}.type");
    let why = "must be array if x-kubernetes-list-type is specified";
    if ty != "array" {
        out.push(if ty.is_empty() { required(&type_at, why) } else { invalid(&type_at, &json!(ty), why) });
    }
    if !["atomic", "set", "map"].contains(&list_type) {
        out.push(not_supported(
            &format!("{at}.x-kubernetes-list-type"),
            list_type,
            &["atomic", "set", "map"],
        ));
    }
    let keys = schema["x-kubernetes-list-map-keys"].as_array().map(Vec::as_slice).unwrap_or_default();
    if list_type == "map" {
        if keys.is_empty() {
            out.push(required(
                &format!("{at}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        let item = &schema["items"];
        if !item.is_object() {
            out.push(required(&format!("{at}.items"), "must have a schema if x-kubernetes-list-type is map"));
        } else if item["type"] != json!("object") {
            out.push(invalid(
                &format!("{at}.items.type"),
                &json!(item["type"].as_str().unwrap_or_default()),
                "must be object if parent array's x-kubernetes-list-type is map",
            ));
        } else {
            for key in keys.iter().filter_map(Value::as_str) {
                let property = &item["properties"][key];
                if property.is_null() {
                    out.push(invalid(
                        &format!("{at}.x-kubernetes-list-map-keys"),
                        &json!(keys),
                        "entries must all be names of item properties",
                    ));
                } else if property["default"].is_null() && !strings(&item["required"]).contains(&key) {
                    out.push(required(
                        &format!("{at}.items.properties[{key}].default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
            }
        }
    } else if !keys.is_empty() {
        out.push(invalid(
            &format!("{at}.x-kubernetes-list-type"),
            &json!(list_type),
            "must be map if x-kubernetes-list-map-keys is non-empty",
        ));
    }
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}
