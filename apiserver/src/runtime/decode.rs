//! Objects on their way in: JSON decoded into the kind's type with kube's
//! field validation (unknown fields dropped, reported or refused).

use serde_json::{Map, Value, json};

use crate::errors::ApiError;

/// `?fieldValidation=`: what to do with fields the type does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    /// Drop them, and say so in a `Warning` header (kube's default).
    #[default]
    Warn,
    /// Refuse the request (400).
    Strict,
}

impl FieldValidation {
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some(other) => Err(ApiError::BadRequest(format!(
                "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", got {other:?}"
            ))),
        }
    }
}

/// The type a body must be of.
#[derive(Clone, Copy)]
pub struct Expected<'a> {
    /// `v1`, `apps/v1`.
    pub api_version: &'a str,
    pub kind: &'a str,
    /// Decodes into the typed object and back (see `Strategy::roundtrip`).
    pub roundtrip: &'a dyn Fn(Value) -> Result<Value, String>,
}

/// Decodes `body` as an object of the expected type: its typed form (unknown
/// fields dropped), and the warnings to send (Warn). apiVersion and kind
/// default to the expected ones; others are refused.
pub fn decode(
    expected: Expected<'_>,
    body: Value,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let Value::Object(mut fields) = body else {
        return Err(ApiError::BadRequest("the body of the request was in an unknown format".into()));
    };
    check_type(expected, &mut fields)?;
    let input = Value::Object(fields);
    let typed = (expected.roundtrip)(input.clone()).map_err(ApiError::BadRequest)?;
    let mut unknown = Vec::new();
    unknown_fields(&input, &typed, "", &mut unknown);
    let messages: Vec<String> = unknown.iter().map(|path| format!("unknown field \"{path}\"")).collect();
    match validation {
        FieldValidation::Strict if !messages.is_empty() => {
            Err(ApiError::BadRequest(format!("strict decoding error: {}", messages.join(", "))))
        }
        FieldValidation::Warn => Ok((typed, messages)),
        _ => Ok((typed, Vec::new())),
    }
}

fn check_type(expected: Expected<'_>, fields: &mut Map<String, Value>) -> Result<(), ApiError> {
    let api_version = expected.api_version;
    match fields.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => {
            fields.insert("apiVersion".into(), json!(api_version));
        }
        Some(v) if v == api_version => {}
        Some(v) => {
            return Err(ApiError::BadRequest(format!(
                "the API version in the data ({v}) does not match the expected API version ({api_version})"
            )));
        }
    }
    match fields.get("kind").and_then(Value::as_str) {
        None | Some("") => {
            fields.insert("kind".into(), json!(expected.kind));
        }
        Some(k) if k == expected.kind => {}
        Some(k) => {
            return Err(ApiError::BadRequest(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                expected.kind
            )));
        }
    }
    Ok(())
}

/// The paths (`spec.foo`, `spec.containers[0].bogus`) present in `input`
/// but not in its typed re-encoding.
fn unknown_fields(input: &Value, typed: &Value, path: &str, out: &mut Vec<String>) {
    match (input, typed) {
        (Value::Object(given), Value::Object(kept)) => {
            for (name, value) in given {
                let child = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                match kept.get(name) {
                    Some(kept_value) => unknown_fields(value, kept_value, &child, out),
                    // A null or empty value the type omits is not unknown.
                    None if is_empty(value) => {}
                    None => out.push(child),
                }
            }
        }
        (Value::Array(given), Value::Array(kept)) => {
            for (i, (value, kept_value)) in given.iter().zip(kept).enumerate() {
                unknown_fields(value, kept_value, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn roundtrip(value: Value) -> Result<Value, String> {
        let typed: ConfigMap = serde_json::from_value(value).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }

    fn configmaps() -> Expected<'static> {
        Expected { api_version: "v1", kind: "ConfigMap", roundtrip: &roundtrip }
    }

    #[test]
    fn strict_names_every_unknown_field_and_warn_drops_them() {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labelz": {}, "bogus": 1}, "data": {"k": "v"}, "extra": true});
        let err = decode(configmaps(), body.clone(), FieldValidation::Strict).unwrap_err();
        assert_eq!(
            err,
            ApiError::BadRequest(
                "strict decoding error: unknown field \"extra\", unknown field \"metadata.bogus\"".into()
            )
        );
        let (typed, warnings) = decode(configmaps(), body, FieldValidation::Warn).unwrap();
        assert_eq!(typed["data"]["k"], "v");
        assert!(typed.get("extra").is_none());
        assert_eq!(warnings.len(), 2);
    }

    #[test]
    fn a_body_of_another_kind_is_refused() {
        let err =
            decode(configmaps(), json!({"apiVersion": "v1", "kind": "Secret"}), FieldValidation::Strict);
        assert!(
            matches!(err, Err(ApiError::BadRequest(m)) if m.contains("does not match the expected kind"))
        );
    }
}
