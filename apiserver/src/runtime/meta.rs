//! Typed access to an object's `metadata` over its JSON (kube's
//! `meta.Accessor`): read without panicking whatever a client stored.

use serde_json::{Map, Value, json};

/// The object's `metadata`, created if missing.
pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    match object.get_mut("metadata").and_then(Value::as_object_mut) {
        Some(meta) => meta,
        None => unreachable!("metadata was made an object just above"),
    }
}

pub fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

pub fn namespace_of(object: &Value) -> Option<&str> {
    object["metadata"]["namespace"].as_str().filter(|ns| !ns.is_empty())
}

pub fn uid_of(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

pub fn resource_version_of(object: &Value) -> &str {
    object["metadata"]["resourceVersion"].as_str().unwrap_or_default()
}

pub fn is_being_deleted(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

pub fn finalizers(object: &Value) -> Vec<&str> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Removes a top-level field (`status`), if the object is an object.
pub fn remove_field(object: &mut Value, field: &str) {
    if let Some(fields) = object.as_object_mut() {
        fields.remove(field);
    }
}

/// Now, as kube writes timestamps (RFC 3339, seconds, UTC).
pub fn now() -> String {
    seconds_from_now(0)
}

/// The time `seconds` from now (before it when negative), as kube writes
/// a `metav1.Time`.
pub fn seconds_from_now(seconds: i64) -> String {
    let offset = jiff::SignedDuration::from_secs(seconds);
    let at = jiff::Timestamp::now().checked_add(offset).unwrap_or_else(|_| jiff::Timestamp::now());
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `metadata.deletionGracePeriodSeconds`, None when unset.
pub fn deletion_grace_period(object: &Value) -> Option<i64> {
    object["metadata"]["deletionGracePeriodSeconds"].as_i64()
}

/// The characters kube draws generated name suffixes from.
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `generateName` + 5 random characters, the base cut to 58 characters.
pub fn generate_name(base: &str) -> String {
    let base: String = base.chars().take(58).collect();
    let random = uuid::Uuid::new_v4();
    let suffix: String = random
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| NAME_ALPHABET[*b as usize % NAME_ALPHABET.len()] as char)
        .collect();
    format!("{base}{suffix}")
}
