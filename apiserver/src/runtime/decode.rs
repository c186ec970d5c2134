//! Objects on their way in: JSON decoded into the kind's type with kube's
//! field validation (unknown fields dropped, reported or refused), and YAML
//! bodies turned into that JSON first, as kube's YAML serializer does.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
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

/// A JSON body parsed, and the fields it gives twice in one object, as
/// kube's strict decoder names them (`metadata.name`,
/// `spec.containers[0].image`): once each, the first 100 (kube's cap).
/// `serde_json::from_slice` would keep the last silently; kube warns, or
/// refuses under `Strict`. One pass, the parser's own errors and limits.
pub fn json_noting_duplicates(body: &[u8]) -> Result<(Value, Vec<String>), serde_json::Error> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value = Noting { path: String::new(), found: &mut found }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, found))
}

/// kube keeps at most this many strict decoding errors.
const MAX_STRICT_ERRORS: usize = 100;

/// Builds a value at `path`, noting the duplicates below it.
struct Noting<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl Noting<'_> {
    fn child(&self, name: &str) -> String {
        if self.path.is_empty() { name.to_string() } else { format!("{}.{name}", self.path) }
    }
}

impl<'de> DeserializeSeed<'de> for Noting<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Noting<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = format!("{}[{}]", self.path, items.len());
            match seq.next_element_seed(Noting { path, found: &mut *self.found })? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let path = self.child(&name);
            let twice = fields.contains_key(&name);
            if twice && self.found.len() < MAX_STRICT_ERRORS && !self.found.contains(&path) {
                self.found.push(path.clone());
            }
            let value = map.next_value_seed(Noting { path, found: &mut *self.found })?;
            fields.insert(name, value);
        }
        Ok(Value::Object(fields))
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

/// What go-yaml (and so kube) answers for a document whose aliases expand
/// to far more than the document itself: the billion laughs.
const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

/// A YAML body as JSON, refused as kube refuses it (400, naming the `kind`
/// it had to be). What aliases expand to is bounded: the JSON may take at
/// most `max_bytes` (go-yaml bounds the ratio of alias expansion instead;
/// both stop a few hundred bytes of anchors from taking gigabytes).
pub fn yaml_to_json(body: &[u8], kind: &str, max_bytes: usize) -> Result<Value, ApiError> {
    yaml_value(body, max_bytes).map_err(|why| {
        ApiError::BadRequest(format!(
            "the object provided is unrecognized (must be of type {kind}): {why} ({})",
            summarize(body)
        ))
    })
}

/// A YAML document as JSON, expanding to `max_bytes` of JSON at most; why
/// not otherwise (`yaml: ...`, or kube's refusal of alias bombs).
pub fn yaml_value(body: &[u8], max_bytes: usize) -> Result<Value, String> {
    let budget = Budget { left: Cell::new(max_bytes), exhausted: Cell::new(false) };
    let result = BoundedValue(&budget).deserialize(serde_norway::Deserializer::from_slice(body));
    result.map_err(|e| {
        // serde_norway stops some bombs itself (more alias jumps than 100
        // per event): the same refusal.
        let bomb = budget.exhausted.get() || e.to_string().starts_with("repetition limit exceeded");
        if bomb { EXCESSIVE_ALIASING.to_string() } else { format!("yaml: {e}") }
    })
}

/// The start of a body for an error message, as kube shows it: as text if
/// it looks like JSON, else in hex; 30 bytes at most.
fn summarize(body: &[u8]) -> String {
    const MAX: usize = 30;
    let (head, more) = if body.len() > MAX { (&body[..MAX], " ...") } else { (body, "") };
    match body.first() {
        None => "<empty>".to_string(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(head)),
        Some(_) => format!("{}{more}", head.iter().map(|b| format!("{b:02x}")).collect::<String>()),
    }
}

/// The JSON bytes a YAML document may still expand to.
struct Budget {
    left: Cell<usize>,
    exhausted: Cell<bool>,
}

impl Budget {
    /// Takes `bytes` from the budget; an error once it is spent.
    fn spend<E: serde::de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.exhausted.set(true);
                Err(E::custom(EXCESSIVE_ALIASING))
            }
        }
    }
}

/// Builds a JSON value from any YAML node, charging what each node takes
/// in JSON to the budget as it goes, so an alias bomb is stopped before it
/// is built rather than after.
struct BoundedValue<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for BoundedValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BoundedValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.0.spend(5)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.0.spend(20)?;
        Ok(Value::from(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.0.spend(20)?;
        Ok(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.0.spend(24)?;
        // JSON has no NaN or infinities (Go's encoder refuses them too).
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("unsupported value: {v}")))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.spend(v.len() + 2)?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.0.spend(4)?;
        Ok(Value::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.spend(2)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(BoundedValue(self.0))? {
            self.0.spend(1)?;
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.spend(2)?;
        let mut fields = Map::new();
        while let Some(key) = map.next_key_seed(Key(self.0))? {
            let value = map.next_value_seed(BoundedValue(self.0))?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// A mapping key as JSON's string key: YAML's scalar keys (numbers,
/// booleans, null) are spelled as strings, as sigs.k8s.io/yaml does;
/// collections as keys are refused.
struct Key<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<String, E> {
        self.0.spend(v.len() + 3)?;
        Ok(v)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<String, E> {
        self.visit_string("null".to_string())
    }
}

#[cfg(test)]
mod duplicate_tests {
    use super::json_noting_duplicates;

    fn duplicate_fields(body: &[u8]) -> Vec<String> {
        json_noting_duplicates(body).map(|(_, found)| found).unwrap_or_default()
    }

    #[test]
    fn duplicates_are_named_by_kubes_paths() {
        let body =
            br#"{"kind": "Pod", "kind": "Pod", "metadata": {"name": "a", "labels": {"x": "1"}, "name": "b"},
            "spec": {"containers": [{"name": "c", "image": "i", "image": "j"}]}}"#;
        assert_eq!(duplicate_fields(body), ["kind", "metadata.name", "spec.containers[0].image"]);
        assert!(duplicate_fields(br#"{"a": {"b": 1}, "c": [{"b": 2}]}"#).is_empty());
        assert!(json_noting_duplicates(b"not json").is_err());
        assert!(json_noting_duplicates(b"{} {}").is_err(), "trailing data, as serde_json refuses it");
        // The value is what serde_json makes of the body, the last duplicate kept.
        let body = br#"{"a": [1, -2, 2.5, "x", null, true], "b": {"c": 1, "c": 2}}"#;
        let (value, _) = json_noting_duplicates(body).unwrap();
        assert_eq!(value, serde_json::json!({"a": [1, -2, 2.5, "x", null, true], "b": {"c": 2}}));
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

    #[test]
    fn yaml_becomes_the_same_json() {
        let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {1: x, true: y}\ndata:\n  k: v\n";
        let value = yaml_to_json(yaml, "ConfigMap", 1 << 20).unwrap();
        assert_eq!(
            value,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"1": "x", "true": "y"}}, "data": {"k": "v"}})
        );
    }

    #[test]
    fn malformed_yaml_is_refused_as_kube_refuses_it() {
        let err = yaml_to_json(b"a: b: c\n", "ConfigMap", 1 << 20).unwrap_err();
        let ApiError::BadRequest(message) = err else { panic!("{err:?}") };
        assert!(
            message.starts_with("the object provided is unrecognized (must be of type ConfigMap): yaml: ")
        );
        assert!(message.ends_with(" (613a20623a20630a)"), "{message}");
    }

    #[test]
    fn alias_bombs_stop_at_the_budget() {
        // Nine levels of nine aliases: 9^9 copies of "lol" if expanded.
        let mut yaml = String::from("a0: &a0 lol\n");
        for level in 1..10 {
            let refs = vec![format!("*a{}", level - 1); 9].join(", ");
            yaml.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        let err = yaml_to_json(yaml.as_bytes(), "ConfigMap", 1 << 20).unwrap_err();
        assert!(err.to_string().contains(EXCESSIVE_ALIASING), "{err}");
        // One big anchor aliased many times is bounded the same way.
        let big = format!("a: &a {}\nb: [{}]\n", "x".repeat(100_000), vec!["*a"; 100].join(", "));
        assert!(
            yaml_to_json(big.as_bytes(), "ConfigMap", 1 << 20)
                .unwrap_err()
                .to_string()
                .contains(EXCESSIVE_ALIASING)
        );
    }
}
