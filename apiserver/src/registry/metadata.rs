//! What the server owns on every object, whatever its kind (kube's
//! `rest.BeforeCreate` / `BeforeUpdate`): name from generateName, namespace
//! from the URL, uid, timestamps, generation; status kept apart from the
//! object; the kind's own part is its [`Strategy`]'s.

use serde_json::{Value, json};

use super::Resource;
use super::strategy::{NameRule, Strategy};
use crate::errors::{ApiError, Cause};
use crate::runtime::meta::{self, metadata_mut};
use crate::selector::validation::{go_quote, label_value_errors, qualified_name_errors};

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
    meta.insert("name".into(), json!(name));
    meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
    meta.insert("creationTimestamp".into(), json!(meta::now()));
    // managedFields are the field manager's (`fieldmanager`), already set.
    for owned in ["resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"] {
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

/// What a write through a subresource changes; everything else is kept.
fn owned_by(subresource: &str) -> Option<(&'static str, Option<&'static str>)> {
    match subresource {
        "status" => Some(("status", None)),
        "ephemeralcontainers" => Some(("spec", Some("ephemeralContainers"))),
        // The kind keeps only the containers' resources of it.
        "resize" => Some(("spec", None)),
        "finalize" => Some(("spec", Some("finalizers"))),
        "approval" => Some(("status", Some("conditions"))),
        _ => None,
    }
}

/// Carries what a client may not change from `old` into the replacing
/// object, lets the kind keep its own, and bumps generation when the spec
/// changed. A subresource (status, a pod's ephemeral containers, a
/// namespace's finalizers) keeps everything but what it owns; the object
/// itself keeps its status.
pub fn prepare_update(
    resource: &Resource,
    strategy: &dyn Strategy,
    old: &Value,
    new: &mut Value,
    subresource: Option<&str>,
) {
    if let Some((field, inner)) = subresource.and_then(owned_by) {
        let written = match inner {
            None => new.get(field).cloned(),
            Some(inner) => new.get(field).and_then(|f| f.get(inner)).cloned(),
        };
        *new = old.clone();
        let parent = match inner {
            None => &mut *new,
            Some(_) if !new[field].is_object() => {
                new[field] = serde_json::json!({});
                &mut new[field]
            }
            Some(_) => &mut new[field],
        };
        let key = inner.unwrap_or(field);
        match written {
            Some(value) => parent[key] = value,
            None => meta::remove_field(parent, key),
        }
        if let Some(sub) = subresource {
            strategy.prepare_subresource_update(sub, new, old);
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
    // A body without managedFields keeps the stored ones (the field manager
    // then records this write in them).
    if !meta.contains_key("managedFields")
        && let Some(managed) = old_meta.get("managedFields")
    {
        meta.insert("managedFields".into(), managed.clone());
    }
    meta.remove("resourceVersion");
    if strategy.tracks_generation() && strategy.spec_changed(old, new) {
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
        kind: resource.qualified_kind(),
        name: name.to_string(),
        causes: vec![Cause { reason, field: field.to_string(), message: message.to_string() }],
    }
}

/// The checks kube runs on every new object's metadata (its
/// `ValidateObjectMeta` with the kind's name rule, and, with
/// `builtin_finalizers`, the finalizer rule of kube's own kinds), as causes
/// of one 422.
pub fn validate_create(rule: NameRule, builtin_finalizers: bool, object: &Value) -> Vec<Cause> {
    let meta = &object["metadata"];
    let mut causes = name_causes(rule, meta::name_of(object));
    causes.extend(label_causes(meta));
    causes.extend(annotation_causes(meta));
    causes.extend(finalizer_causes(meta));
    if builtin_finalizers {
        causes.extend(kube_finalizer_causes(meta));
    }
    causes
}

/// The checks kube runs on a replacing object's metadata: labels,
/// annotations and finalizers as on create, and no finalizer added once the
/// object is being deleted.
pub fn validate_update(old: &Value, new: &Value, builtin_finalizers: bool) -> Vec<Cause> {
    let meta = &new["metadata"];
    let mut causes = label_causes(meta);
    causes.extend(annotation_causes(meta));
    causes.extend(finalizer_causes(meta));
    causes.extend(new_finalizer_causes(&old["metadata"], meta));
    if builtin_finalizers {
        causes.extend(kube_finalizer_causes(meta));
    }
    causes
}

/// One 422 for the metadata causes and the kind's own refusal together, as
/// kube reports all of an object's problems at once.
pub fn refuse(
    resource: &Resource,
    object: &Value,
    mut causes: Vec<Cause>,
    kind: Result<(), ApiError>,
) -> Result<(), ApiError> {
    match kind {
        Err(ApiError::Invalid { causes: more, .. }) => causes.extend(more),
        Err(other) if causes.is_empty() => return Err(other),
        _ => {}
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid {
        kind: resource.qualified_kind(),
        name: meta::name_of(object).to_string(),
        causes,
    })
}

/// `field.Invalid(path, value, detail)` of a string value.
fn invalid_string(field: &str, value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        field: field.to_string(),
        message: format!("Invalid value: {}: {detail}", go_quote(value)),
    }
}

const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS_1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_dns_label(s: &str) -> bool {
    let lower_alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            lower_alnum(first) && lower_alnum(last) && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// Dot-separated RFC 1123 labels: `a..b` and `a.` are not.
fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns_label)
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`
fn is_dns_1035_label(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_lowercase) && is_dns_label(s)
}

/// kube's name checks (`IsDNS1123Subdomain`, `IsDNS1123Label`,
/// `IsDNS1035Label`): each failed rule one cause on `metadata.name`.
pub fn name_causes(rule: NameRule, name: &str) -> Vec<Cause> {
    match rule {
        NameRule::PathSegment => return path_segment_causes(name),
        NameRule::IpAddress => {
            let errors = crate::runtime::ip::ip_errors(name);
            return errors.iter().map(|why| invalid_string("metadata.name", name, why)).collect();
        }
        _ => {}
    }
    let (max, fits, why) = match rule {
        NameRule::PathSegment | NameRule::IpAddress => (usize::MAX, true, ""),
        NameRule::Subdomain => (253, is_dns_subdomain(name), DNS_SUBDOMAIN_MSG),
        // A valid subdomain that is not a label can only have dots.
        NameRule::Label if is_dns_subdomain(name) => (63, is_dns_label(name), "must not contain dots"),
        NameRule::Label => (63, is_dns_label(name), DNS_LABEL_MSG),
        NameRule::Dns1035Label => (63, is_dns_1035_label(name), DNS_1035_MSG),
    };
    let mut causes = Vec::new();
    if name.len() > max {
        causes.push(invalid_string("metadata.name", name, &format!("must be no more than {max} bytes")));
    }
    if !fits {
        causes.push(invalid_string("metadata.name", name, why));
    }
    causes
}

/// kube's `IsDNS1035Label`: why `text` is not one (none if it is).
pub fn dns_1035_errors(text: &str) -> Vec<String> {
    format_errors(text, 63, is_dns_1035_label(text), DNS_1035_MSG)
}

/// kube's `IsDNS1123Label`: why `text` is not one (none if it is).
pub fn dns_label_errors(text: &str) -> Vec<String> {
    format_errors(text, 63, is_dns_label(text), DNS_LABEL_MSG)
}

/// kube's `IsDNS1123Subdomain`: why `text` is not one (none if it is).
pub fn dns_subdomain_errors(text: &str) -> Vec<String> {
    format_errors(text, 253, is_dns_subdomain(text), DNS_SUBDOMAIN_MSG)
}

/// Too long (kube's `MaxLenError`), and not of the form.
fn format_errors(text: &str, max: usize, fits: bool, why: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if text.len() > max {
        errors.push(format!("must be no more than {max} characters"));
    }
    if !fits {
        errors.push(why.to_string());
    }
    errors
}

/// kube's `IsValidPathSegmentName`: `.` and `..` are refused alone, `/` and `%` each anywhere.
pub fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

fn path_segment_causes(name: &str) -> Vec<Cause> {
    path_segment_errors(name).iter().map(|why| invalid_string("metadata.name", name, why)).collect()
}

/// Every label key a qualified name, every value a label value; kube
/// reports them on `metadata.labels` itself.
pub fn label_causes(meta: &Value) -> Vec<Cause> {
    let Some(labels) = meta["labels"].as_object() else { return Vec::new() };
    let mut causes = Vec::new();
    for (key, value) in labels {
        for why in qualified_name_errors(key) {
            causes.push(invalid_string("metadata.labels", key, &why));
        }
        for why in label_value_errors(value.as_str().unwrap_or_default()) {
            causes.push(invalid_string("metadata.labels", value.as_str().unwrap_or_default(), &why));
        }
    }
    causes
}

/// kube's limit on all annotation keys and values together.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Annotation keys are qualified names whatever their case; keys and values
/// together at most 256 KiB.
pub fn annotation_causes(meta: &Value) -> Vec<Cause> {
    let Some(annotations) = meta["annotations"].as_object() else { return Vec::new() };
    let mut causes = Vec::new();
    let mut total = 0;
    for (key, value) in annotations {
        for why in qualified_name_errors(&key.to_lowercase()) {
            causes.push(invalid_string("metadata.annotations", key, &why));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > ANNOTATIONS_MAX_BYTES {
        causes.push(Cause {
            reason: "FieldValueTooLong",
            field: "metadata.annotations".into(),
            message: format!("Too long: may not be more than {ANNOTATIONS_MAX_BYTES} bytes"),
        });
    }
    causes
}

/// The finalizers the garbage collector acts on; they exclude each other.
pub const ORPHAN: &str = "orphan";
pub const FOREGROUND: &str = "foregroundDeletion";

/// Every finalizer a qualified name (reported on `metadata.finalizers`),
/// and not both of the garbage collector's.
fn finalizer_causes(meta: &Value) -> Vec<Cause> {
    let finalizers = finalizer_names(meta);
    let mut causes = Vec::new();
    for finalizer in &finalizers {
        for why in qualified_name_errors(finalizer) {
            causes.push(invalid_string("metadata.finalizers", finalizer, &why));
        }
    }
    if finalizers.contains(&ORPHAN) && finalizers.contains(&FOREGROUND) {
        let all = serde_json::to_string(&finalizers).unwrap_or_default();
        causes.push(Cause {
            reason: "FieldValueInvalid",
            field: "metadata.finalizers".into(),
            message: format!("Invalid value: {all}: finalizer {ORPHAN} and {FOREGROUND} cannot be both set"),
        });
    }
    causes
}

/// kube's own kinds take a finalizer without a `/` only if it is one of
/// the standard ones; reported per index.
fn kube_finalizer_causes(meta: &Value) -> Vec<Cause> {
    const STANDARD: [&str; 3] = ["kubernetes", ORPHAN, FOREGROUND];
    finalizer_names(meta)
        .into_iter()
        .enumerate()
        .filter(|(_, f)| !f.contains('/') && !STANDARD.contains(f))
        .map(|(i, f)| {
            let field = format!("metadata.finalizers[{i}]");
            invalid_string(&field, f, "name is neither a standard finalizer name nor is it fully qualified")
        })
        .collect()
}

/// Once an object is being deleted, its finalizers may only go.
fn new_finalizer_causes(old: &Value, new: &Value) -> Vec<Cause> {
    if !old["deletionTimestamp"].is_string() {
        return Vec::new();
    }
    let before = finalizer_names(old);
    let mut added: Vec<&str> = finalizer_names(new).into_iter().filter(|f| !before.contains(f)).collect();
    if added.is_empty() {
        return Vec::new();
    }
    added.sort_unstable();
    added.dedup();
    // Go's %#v of the sorted []string.
    let listed = added.iter().map(|f| go_quote(f)).collect::<Vec<_>>().join(", ");
    vec![Cause {
        reason: "FieldValueForbidden",
        field: "metadata.finalizers".into(),
        message: format!(
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{listed}}}"
        ),
    }]
}

fn finalizer_names(meta: &Value) -> Vec<&str> {
    meta["finalizers"].as_array().map(|f| f.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds;

    #[test]
    fn create_fills_server_metadata_and_generate_name() {
        let deploy = kinds::deployment::kind();
        let mut obj = json!({"metadata": {"generateName": "web-", "resourceVersion": "5"}, "spec": {}, "status": {"replicas": 3}});
        deploy.strategy.set_defaults(&mut obj);
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

    fn messages(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
    }

    #[test]
    fn bad_names_are_invalid() {
        let configmaps = kinds::configmap::kind();
        let obj = json!({"metadata": {"name": "Bad_Name"}});
        let causes = validate_create(NameRule::Subdomain, true, &obj);
        let err = refuse(&configmaps.resource, &obj, causes, Ok(())).unwrap_err();
        assert_eq!(err.code(), 422);
        assert!(
            err.to_string().starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value")
        );
    }

    #[test]
    fn names_follow_each_kinds_rule() {
        assert_eq!(
            messages(&name_causes(NameRule::Subdomain, "a..b")),
            [format!("metadata.name: Invalid value: \"a..b\": {DNS_SUBDOMAIN_MSG}")]
        );
        assert!(name_causes(NameRule::Subdomain, "a.b-c.d").is_empty());
        assert!(!name_causes(NameRule::Subdomain, "a.").is_empty());
        let long = "a".repeat(254);
        assert_eq!(
            messages(&name_causes(NameRule::Subdomain, &long)),
            [format!("metadata.name: Invalid value: \"{long}\": must be no more than 253 bytes")]
        );
        assert_eq!(
            messages(&name_causes(NameRule::Label, "a.b")),
            ["metadata.name: Invalid value: \"a.b\": must not contain dots"]
        );
        assert_eq!(
            messages(&name_causes(NameRule::Label, "a..b")),
            [format!("metadata.name: Invalid value: \"a..b\": {DNS_LABEL_MSG}")]
        );
        assert!(name_causes(NameRule::Label, "1abc").is_empty());
        assert_eq!(
            messages(&name_causes(NameRule::Dns1035Label, "1abc")),
            [format!("metadata.name: Invalid value: \"1abc\": {DNS_1035_MSG}")]
        );
    }

    #[test]
    fn labels_and_annotations_follow_kubes_rules() {
        let long = "v".repeat(64);
        let obj = json!({"metadata": {"name": "x", "labels": {"k": long, "ok": "", "bad/": "-v"}}});
        assert_eq!(
            messages(&validate_create(NameRule::Subdomain, true, &obj)),
            [
                "metadata.labels: Invalid value: \"bad/\": name part must be non-empty".to_string(),
                "metadata.labels: Invalid value: \"bad/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')".to_string(),
                "metadata.labels: Invalid value: \"-v\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string(),
                format!("metadata.labels: Invalid value: \"{long}\": must be no more than 63 bytes"),
            ]
        );
        let big = "x".repeat(ANNOTATIONS_MAX_BYTES);
        let obj = json!({"metadata": {"name": "x", "annotations": {"Example.COM/Key": "v", "a": big}}});
        let causes = validate_create(NameRule::Subdomain, true, &obj);
        assert_eq!(messages(&causes), ["metadata.annotations: Too long: may not be more than 262144 bytes"]);
        assert_eq!(causes[0].reason, "FieldValueTooLong");
    }

    #[test]
    fn finalizers_are_qualified_names_or_standard() {
        let obj = json!({"metadata": {"name": "x", "finalizers": ["", "kubernetes", "mine", "example.com/ok", "/"]}});
        let got = messages(&validate_create(NameRule::Subdomain, true, &obj));
        let name_regex = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        assert_eq!(
            got,
            [
                "metadata.finalizers: Invalid value: \"\": name part must be non-empty".to_string(),
                format!("metadata.finalizers: Invalid value: \"\": {name_regex}"),
                "metadata.finalizers: Invalid value: \"/\": prefix part must be non-empty".to_string(),
                "metadata.finalizers: Invalid value: \"/\": name part must be non-empty".to_string(),
                format!("metadata.finalizers: Invalid value: \"/\": {name_regex}"),
                "metadata.finalizers[0]: Invalid value: \"\": name is neither a standard finalizer name nor is it fully qualified".to_string(),
                "metadata.finalizers[2]: Invalid value: \"mine\": name is neither a standard finalizer name nor is it fully qualified".to_string(),
            ]
        );
        let both = json!({"metadata": {"name": "x", "finalizers": ["orphan", "foregroundDeletion"]}});
        assert_eq!(
            messages(&validate_create(NameRule::Subdomain, true, &both)),
            [
                "metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set"
            ]
        );
    }

    #[test]
    fn no_finalizer_is_added_to_an_object_being_deleted() {
        let old = json!({"metadata": {"deletionTimestamp": "t", "finalizers": ["a.io/x"]}});
        let new = json!({"metadata": {"finalizers": ["a.io/x", "b.io/y"]}});
        assert_eq!(
            messages(&validate_update(&old, &new, true)),
            [
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b.io/y\"}"
            ]
        );
        assert!(validate_update(&old, &json!({"metadata": {}}), true).is_empty());
    }

    #[test]
    fn path_segments_refuse_dots_alone_and_every_slash_or_percent() {
        assert_eq!(path_segment_errors(".."), ["may not be '..'"]);
        assert_eq!(path_segment_errors("a/b%c"), ["may not contain '/'", "may not contain '%'"]);
        assert!(path_segment_errors("a.b").is_empty());
    }
}
