//! Objects on their way in: decoding with kube's field validation, and the
//! metadata the server owns (uid, timestamps, generation, generateName).

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::errors::{ApiError, Cause};
use crate::resources::Resource;

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

/// Decodes `body` as an object of `resource`: its typed form (unknown
/// fields dropped), and the warnings to send (Warn). apiVersion and kind
/// default to the resource's; others are refused.
pub fn decode(
    resource: &Resource,
    body: Value,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let Value::Object(mut fields) = body else {
        return Err(ApiError::BadRequest("the body of the request was in an unknown format".into()));
    };
    check_type(resource, &mut fields)?;
    let input = Value::Object(fields);
    let typed = (resource.roundtrip)(input.clone()).map_err(ApiError::BadRequest)?;
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

fn check_type(resource: &Resource, fields: &mut Map<String, Value>) -> Result<(), ApiError> {
    let api_version = resource.api_version();
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
            fields.insert("kind".into(), json!(resource.kind));
        }
        Some(k) if k == resource.kind => {}
        Some(k) => {
            return Err(ApiError::BadRequest(format!(
                "the kind in the data ({k}) does not match the expected kind ({})",
                resource.kind
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

/// Now, as kube writes timestamps (RFC 3339, seconds, UTC).
pub fn now() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Fills what the server owns on a new object: name from generateName,
/// namespace from the URL, uid, creationTimestamp, generation; drops what a
/// client may not set. The name is returned for keys and messages.
pub fn prepare_create(
    resource: &Resource,
    object: &mut Value,
    namespace: Option<&str>,
) -> Result<String, ApiError> {
    let meta = metadata_mut(object);
    if let Some(ns) = namespace {
        match meta.get("namespace").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("namespace".into(), json!(ns));
            }
            Some(given) if given == ns => {}
            Some(_) => {
                return Err(ApiError::BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request"
                        .into(),
                ));
            }
        }
    } else {
        meta.remove("namespace");
    }
    let name =
        match (meta.get("name").and_then(Value::as_str), meta.get("generateName").and_then(Value::as_str)) {
            (Some(name), _) if !name.is_empty() => name.to_string(),
            (_, Some(base)) if !base.is_empty() => generate_name(base),
            _ => {
                return Err(invalid(
                    resource,
                    "",
                    "FieldValueRequired",
                    "metadata.name",
                    "name or generateName is required",
                ));
            }
        };
    validate_name(resource, &name)?;
    meta.insert("name".into(), json!(name));
    meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    meta.insert("creationTimestamp".into(), json!(now()));
    for owned in
        ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"]
    {
        meta.remove(owned);
    }
    if resource.tracks_generation() {
        meta.insert("generation".into(), json!(1));
    } else {
        meta.remove("generation");
    }
    prepare_kind_on_create(resource, object);
    Ok(name)
}

/// What each kind's create strategy does beyond metadata.
fn prepare_kind_on_create(resource: &Resource, object: &mut Value) {
    match resource.plural {
        "namespaces" => {
            object["spec"] = json!({"finalizers": ["kubernetes"]});
            object["status"] = json!({"phase": "Active"});
        }
        "pods" => object["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"}),
        "nodes" => {}
        "secrets" => fold_string_data(object),
        _ if resource.has_status => {
            if let Some(fields) = object.as_object_mut() {
                fields.remove("status");
            }
        }
        _ => {}
    }
    if matches!(resource.plural, "deployments" | "replicasets" | "statefulsets")
        && object["spec"].is_object()
        && object["spec"]["replicas"].is_null()
    {
        object["spec"]["replicas"] = json!(1);
    }
}

/// Secrets: `stringData` is write-only; it lands base64 in `data`.
pub fn fold_string_data(object: &mut Value) {
    let Some(fields) = object.as_object_mut() else { return };
    let Some(Value::Object(strings)) = fields.remove("stringData") else { return };
    let data = fields.entry("data").or_insert_with(|| json!({}));
    if let Some(data) = data.as_object_mut() {
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, json!(base64::engine::general_purpose::STANDARD.encode(text)));
        }
    }
}

/// Carries what a client may not change from `old` into the replacing
/// object, and bumps generation when the spec changed. `subresource`
/// "status" keeps everything but status; the main resource keeps status.
pub fn prepare_update(resource: &Resource, old: &Value, new: &mut Value, subresource: Option<&str>) {
    match subresource {
        Some("status") => {
            let status = new.get("status").cloned();
            *new = old.clone();
            match status {
                Some(status) => new["status"] = status,
                None => {
                    if let Some(fields) = new.as_object_mut() {
                        fields.remove("status");
                    }
                }
            }
            return;
        }
        _ if resource.has_status && resource.plural != "nodes" => match old.get("status") {
            Some(status) => new["status"] = status.clone(),
            None => {
                if let Some(fields) = new.as_object_mut() {
                    fields.remove("status");
                }
            }
        },
        _ => {}
    }
    if resource.plural == "secrets" {
        fold_string_data(new);
    }
    if resource.plural == "namespaces" {
        new["spec"] = old["spec"].clone();
    }
    if resource.plural == "services" {
        // A Service keeps the cluster IP it was given.
        for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if let Some(value) = old["spec"].get(field) {
                new["spec"][field] = value.clone();
            }
        }
    }
    let old_meta = &old["metadata"];
    let meta = metadata_mut(new);
    // The namespace is the URL's, kept from the stored object whatever the
    // body says (or leaves out); the uid was checked by the caller.
    for owned in [
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(owned) {
            Some(v) => meta.insert(owned.into(), v.clone()),
            None => meta.remove(owned),
        };
    }
    meta.remove("managedFields");
    meta.remove("resourceVersion");
    if resource.tracks_generation() && old.get("spec") != new.get("spec") {
        let generation = old_meta["generation"].as_i64().unwrap_or(0) + 1;
        new["metadata"]["generation"] = json!(generation);
    }
}

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

/// An Invalid (422) error with one cause.
pub fn invalid(
    resource: &Resource,
    name: &str,
    reason: &'static str,
    field: &str,
    message: &str,
) -> ApiError {
    ApiError::Invalid {
        kind: resource.kind.to_string(),
        name: name.to_string(),
        causes: vec![Cause { reason, field: field.to_string(), message: message.to_string() }],
    }
}

/// Names are DNS subdomains (RFC 1123): lower-case alphanumerics, `-` and
/// `.`, starting and ending alphanumeric, at most 253 characters; kinds
/// that take DNS labels (namespaces, services) at most 63 and no dots.
pub fn validate_name(resource: &Resource, name: &str) -> Result<(), ApiError> {
    let label_only = matches!(resource.plural, "namespaces" | "services");
    let max = if label_only { 63 } else { 253 };
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || (b == b'.' && !label_only));
    let ok_ends = name.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && name.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric());
    if name.len() <= max && ok_chars && ok_ends {
        return Ok(());
    }
    let what = if label_only {
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    } else {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    };
    let message =
        if name.len() > max { format!("must be no more than {max} characters") } else { what.to_string() };
    Err(invalid(
        resource,
        name,
        "FieldValueInvalid",
        "metadata.name",
        &format!("Invalid value: \"{name}\": {message}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::find;

    fn configmaps() -> &'static Resource {
        find("", "v1", "configmaps").unwrap()
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
    fn create_fills_server_metadata_and_generate_name() {
        let deploy = find("apps", "v1", "deployments").unwrap();
        let mut obj = json!({"metadata": {"generateName": "web-", "resourceVersion": "5"}, "spec": {}, "status": {"replicas": 3}});
        let name = prepare_create(deploy, &mut obj, Some("default")).unwrap();
        assert!(name.starts_with("web-") && name.len() == 9, "{name}");
        assert_eq!(obj["metadata"]["namespace"], "default");
        assert_eq!(obj["metadata"]["generation"], 1);
        assert!(obj["metadata"]["uid"].as_str().is_some_and(|u| u.len() == 36));
        assert!(obj["metadata"].get("resourceVersion").is_none());
        assert!(obj.get("status").is_none());
        assert_eq!(obj["spec"]["replicas"], 1);
    }

    #[test]
    fn update_keeps_owned_fields_and_bumps_generation_on_spec_change() {
        let deploy = find("apps", "v1", "deployments").unwrap();
        let old = json!({"metadata": {"name": "w", "uid": "u1", "generation": 2, "creationTimestamp": "t"}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let mut new = json!({"metadata": {"name": "w", "uid": "other", "labels": {"a": "b"}}, "spec": {"replicas": 2}, "status": {"replicas": 9}});
        prepare_update(deploy, &old, &mut new, None);
        assert_eq!(new["metadata"]["uid"], "u1");
        assert_eq!(new["metadata"]["generation"], 3);
        assert_eq!(new["status"]["replicas"], 1);
        let mut same = json!({"metadata": {"name": "w"}, "spec": {"replicas": 1}});
        prepare_update(deploy, &old, &mut same, None);
        assert_eq!(same["metadata"]["generation"], 2);
    }

    #[test]
    fn bad_names_are_invalid() {
        let mut obj = json!({"metadata": {"name": "Bad_Name"}});
        let err = prepare_create(configmaps(), &mut obj, Some("default")).unwrap_err();
        assert_eq!(err.code(), 422);
        assert!(
            err.to_string().starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value")
        );
    }

    #[test]
    fn string_data_lands_in_data() {
        let mut secret = json!({"stringData": {"password": "hunter2"}});
        fold_string_data(&mut secret);
        assert_eq!(secret["data"]["password"], "aHVudGVyMg==");
        assert!(secret.get("stringData").is_none());
    }
}
