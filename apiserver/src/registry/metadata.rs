//! What the server owns on every object, whatever its kind (kube's
//! `rest.BeforeCreate` / `BeforeUpdate`): name from generateName, namespace
//! from the URL, uid, timestamps, generation; status kept apart from the
//! object; the kind's own part is its [`Strategy`]'s.

use serde_json::{Value, json};

use super::Resource;
use super::strategy::{NameRule, Strategy};
use crate::errors::{ApiError, Cause};
use crate::runtime::meta::{self, metadata_mut};

/// Fills what the server owns on a new object and lets the kind prepare it;
/// drops what a client may not set. The name is returned for keys and
/// messages.
pub fn prepare_create(
    resource: &Resource,
    strategy: &dyn Strategy,
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
            (_, Some(base)) if !base.is_empty() => meta::generate_name(base),
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
    validate_name(resource, strategy.name_rule(), &name)?;
    meta.insert("name".into(), json!(name));
    meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    meta.insert("creationTimestamp".into(), json!(meta::now()));
    for owned in
        ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"]
    {
        meta.remove(owned);
    }
    if strategy.tracks_generation() {
        meta.insert("generation".into(), json!(1));
    } else {
        meta.remove("generation");
    }
    // Status is written through its subresource, not with a new object.
    if resource.has_status && !strategy.status_with_object() {
        meta::remove_field(object, "status");
    }
    strategy.prepare_for_create(object);
    Ok(name)
}

/// Carries what a client may not change from `old` into the replacing
/// object, lets the kind keep its own, and bumps generation when the spec
/// changed. `subresource` "status" keeps everything but status; the object
/// itself keeps its status.
pub fn prepare_update(
    resource: &Resource,
    strategy: &dyn Strategy,
    old: &Value,
    new: &mut Value,
    subresource: Option<&str>,
) {
    if subresource == Some("status") {
        let status = new.get("status").cloned();
        *new = old.clone();
        match status {
            Some(status) => new["status"] = status,
            None => meta::remove_field(new, "status"),
        }
        return;
    }
    if resource.has_status && !strategy.status_with_object() {
        match old.get("status") {
            Some(status) => new["status"] = status.clone(),
            None => meta::remove_field(new, "status"),
        }
    }
    strategy.prepare_for_update(new, old);
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
    if strategy.tracks_generation() && old.get("spec") != new.get("spec") {
        let generation = old_meta["generation"].as_i64().unwrap_or(0) + 1;
        new["metadata"]["generation"] = json!(generation);
    }
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
        kind: resource.kind.clone(),
        name: name.to_string(),
        causes: vec![Cause { reason, field: field.to_string(), message: message.to_string() }],
    }
}

/// Names are DNS subdomains (RFC 1123): lower-case alphanumerics, `-` and
/// `.`, starting and ending alphanumeric, at most 253 characters; kinds
/// that take DNS labels (namespaces, services) at most 63 and no dots.
pub fn validate_name(resource: &Resource, rule: NameRule, name: &str) -> Result<(), ApiError> {
    let label_only = rule == NameRule::Label;
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
    use crate::registry::kinds;

    #[test]
    fn create_fills_server_metadata_and_generate_name() {
        let deploy = kinds::deployment::kind();
        let mut obj = json!({"metadata": {"generateName": "web-", "resourceVersion": "5"}, "spec": {}, "status": {"replicas": 3}});
        let name =
            prepare_create(&deploy.resource, deploy.strategy.as_ref(), &mut obj, Some("default")).unwrap();
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
        let deploy = kinds::deployment::kind();
        let (resource, strategy) = (&deploy.resource, deploy.strategy.as_ref());
        let old = json!({"metadata": {"name": "w", "uid": "u1", "generation": 2, "creationTimestamp": "t"}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let mut new = json!({"metadata": {"name": "w", "uid": "other", "labels": {"a": "b"}}, "spec": {"replicas": 2}, "status": {"replicas": 9}});
        prepare_update(resource, strategy, &old, &mut new, None);
        assert_eq!(new["metadata"]["uid"], "u1");
        assert_eq!(new["metadata"]["generation"], 3);
        assert_eq!(new["status"]["replicas"], 1);
        let mut same = json!({"metadata": {"name": "w"}, "spec": {"replicas": 1}});
        prepare_update(resource, strategy, &old, &mut same, None);
        assert_eq!(same["metadata"]["generation"], 2);
    }

    #[test]
    fn bad_names_are_invalid() {
        let configmaps = kinds::configmap::kind();
        let mut obj = json!({"metadata": {"name": "Bad_Name"}});
        let err =
            prepare_create(&configmaps.resource, configmaps.strategy.as_ref(), &mut obj, Some("default"))
                .unwrap_err();
        assert_eq!(err.code(), 422);
        assert!(
            err.to_string().starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value")
        );
    }
}
