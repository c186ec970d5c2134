//! `GET /openapi/v2`: the whole API in one Swagger 2.0 document, made from the OpenAPI v3
//! group-version documents (so the two never disagree).
//!
//! Who reads it: client-go's `OpenAPISchema()` (in protobuf, see [`gnostic`]): `kubectl explain
//! --output=plaintext-openapiv2`, kubectl's fallback when `/openapi/v3` is missing, Argo CD's
//! diffing, Terraform's manifest resource; Helm and older tools read the JSON.
//!
//! What changes from v3 to v2, as kube-openapi writes the two from the same routes:
//! * `components.schemas` becomes `definitions`, and every `$ref` follows
//!   (`#/definitions/<name>`); a field that v3 writes as `allOf: [{$ref}]` beside its own
//!   description is a `$ref` with a sibling `description` in v2. OpenAPI 3 keywords Swagger 2.0
//!   lacks (`nullable`, `oneOf`, `anyOf`, `not`) are dropped, as kube drops them from custom
//!   resources' v2 schemas; an int-or-string without a type is `type: string, format:
//!   int-or-string`, kube's v2 spelling.
//! * A request body is a parameter `{in: body, name: body, schema}`, its media types the
//!   operation's `consumes`; a response's schema sits on the response, the media types of all
//!   responses are `produces`.
//! * A parameter's `schema` is flattened into it (`type`, `format`, `uniqueItems`, ...).

pub mod gnostic;

use serde_json::{Map, Value, json};

/// The operations a path item may hold.
const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// Swagger 2.0's Schema Object keywords (JSON Schema's subset it keeps, plus its own).
const SCHEMA_KEYWORDS: [&str; 28] = [
    "$ref",
    "format",
    "title",
    "description",
    "default",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "enum",
    "additionalProperties",
    "type",
    "items",
    "allOf",
    "properties",
    "discriminator",
    "readOnly",
    "example",
];

/// The keywords a non-body parameter takes from its v3 `schema`.
const PARAMETER_SCHEMA_KEYWORDS: [&str; 8] =
    ["type", "format", "items", "collectionFormat", "default", "uniqueItems", "enum", "pattern"];

const V3_REF_PREFIX: &str = "#/components/schemas/";
const V2_REF_PREFIX: &str = "#/definitions/";

/// The Swagger 2.0 document of everything the v3 documents `group_versions` describe.
pub fn document<'a>(group_versions: impl IntoIterator<Item = &'a Value>) -> Value {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for doc in group_versions {
        for (path, item) in doc.get("paths").and_then(Value::as_object).into_iter().flatten() {
            paths.entry(path.clone()).or_insert_with(|| path_item(item));
        }
        let schemas = doc.pointer("/components/schemas").and_then(Value::as_object);
        for (name, definition) in schemas.into_iter().flatten() {
            definitions.entry(name.clone()).or_insert_with(|| schema(definition));
        }
    }
    json!({
        "swagger": "2.0",
        "info": { "title": "rtcd-apiserver", "version": "unversioned" },
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey",
            }
        },
        "security": [{ "BearerToken": [] }],
    })
}

fn path_item(item: &Value) -> Value {
    let mut out = Map::new();
    for (key, value) in item.as_object().into_iter().flatten() {
        if key == "parameters" {
            out.insert(key.clone(), parameters(value));
        } else if METHODS.contains(&key.as_str()) {
            out.insert(key.clone(), operation(value));
        } else if key.starts_with("x-") {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

fn operation(op: &Value) -> Value {
    let mut out = Map::new();
    let mut parameters = op.get("parameters").map(parameters).unwrap_or_else(|| json!([]));
    if let Some(body) = op.get("requestBody") {
        let consumes: Vec<&String> = body
            .get("content")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(mime, _)| mime)
            .collect();
        out.insert("consumes".into(), json!(consumes));
        let mut parameter = json!({ "in": "body", "name": "body" });
        if body.get("required") == Some(&Value::Bool(true)) {
            parameter["required"] = json!(true);
        }
        if let Some(body_schema) = first_content_schema(body) {
            parameter["schema"] = schema(body_schema);
        }
        if let Some(list) = parameters.as_array_mut() {
            list.insert(0, parameter);
        }
    }
    let mut produces: Vec<&str> = Vec::new();
    let mut responses = Map::new();
    for (code, response) in op.get("responses").and_then(Value::as_object).into_iter().flatten() {
        for (mime, _) in response.get("content").and_then(Value::as_object).into_iter().flatten() {
            if !produces.contains(&mime.as_str()) {
                produces.push(mime);
            }
        }
        let mut converted =
            json!({ "description": response.get("description").cloned().unwrap_or(json!("")) });
        if let Some(response_schema) = first_content_schema(response) {
            converted["schema"] = schema(response_schema);
        }
        responses.insert(code.clone(), converted);
    }
    for (key, value) in op.as_object().into_iter().flatten() {
        match key.as_str() {
            "description" | "operationId" | "tags" | "summary" | "deprecated" => {
                out.insert(key.clone(), value.clone());
            }
            _ if key.starts_with("x-") => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    if !parameters.as_array().is_some_and(Vec::is_empty) {
        out.insert("parameters".into(), parameters);
    }
    if !produces.is_empty() {
        out.insert("produces".into(), json!(produces));
    }
    out.insert("responses".into(), Value::Object(responses));
    out.insert("schemes".into(), json!(["https"]));
    Value::Object(out)
}

/// The schema of a request body's or a response's first media type (they all share one).
fn first_content_schema(holder: &Value) -> Option<&Value> {
    holder.get("content")?.as_object()?.values().find_map(|media| media.get("schema"))
}

fn parameters(list: &Value) -> Value {
    Value::Array(list.as_array().into_iter().flatten().map(parameter).collect())
}

/// A v3 parameter with its `schema`'s keywords brought up into it.
fn parameter(p: &Value) -> Value {
    let mut out = Map::new();
    for (key, value) in p.as_object().into_iter().flatten() {
        match key.as_str() {
            "name" | "in" | "description" | "required" | "allowEmptyValue" => {
                out.insert(key.clone(), value.clone());
            }
            "schema" => {
                for (keyword, inner) in value.as_object().into_iter().flatten() {
                    if PARAMETER_SCHEMA_KEYWORDS.contains(&keyword.as_str()) {
                        out.insert(keyword.clone(), inner.clone());
                    }
                }
            }
            _ if key.starts_with("x-") => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// A v3 schema in Swagger 2.0's terms (see the module's description).
pub fn schema(s: &Value) -> Value {
    let Some(object) = s.as_object() else { return s.clone() };
    let mut out = Map::new();
    for (key, value) in object {
        let converted = match key.as_str() {
            "$ref" => Value::String(reference(value)),
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, field)| (name.clone(), schema(field)))
                    .collect(),
            ),
            "items" | "additionalProperties" => schema(value),
            "allOf" => Value::Array(value.as_array().into_iter().flatten().map(schema).collect()),
            _ if SCHEMA_KEYWORDS.contains(&key.as_str()) || key.starts_with("x-") => value.clone(),
            _ => continue,
        };
        out.insert(key.clone(), converted);
    }
    lift_single_reference(&mut out);
    let int_or_string = out.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    if int_or_string && !out.contains_key("type") && !out.contains_key("$ref") {
        out.insert("type".into(), json!("string"));
        out.insert("format".into(), json!("int-or-string"));
    }
    Value::Object(out)
}

/// `allOf: [{$ref: X}]` beside other keywords is `$ref: X` beside them (kube's v2 form, and
/// what v2 readers follow: they ignore `allOf`).
fn lift_single_reference(out: &mut Map<String, Value>) {
    let single = match out.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([only]) if only.as_object().is_some_and(|o| o.len() == 1) => only.get("$ref").cloned(),
        _ => None,
    };
    if let Some(target) = single.filter(|_| !out.contains_key("$ref")) {
        out.remove("allOf");
        out.insert("$ref".into(), target);
    }
}

fn reference(value: &Value) -> String {
    let target = value.as_str().unwrap_or_default();
    match target.strip_prefix(V3_REF_PREFIX) {
        Some(name) => format!("{V2_REF_PREFIX}{name}"),
        None => target.to_string(),
    }
}
