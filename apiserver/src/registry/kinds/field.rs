//! Field errors in kube's words (`field.Required`, `field.Invalid`,
//! `field.NotSupported`, `field.Forbidden`), for the kinds whose
//! validation builds its causes by hand.

use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::registry::metadata::{dns_label_errors, dns_subdomain_errors};
use crate::runtime::meta;
use crate::selector::go_quote;

pub fn cause(reason: &'static str, field: &str, message: String) -> Cause {
    Cause { reason, field: field.to_string(), message }
}

/// A DNS label (RFC 1123) that must be given: Required when empty, else why it is not one.
pub fn required_dns_label(value: &str, field: &str) -> Vec<Cause> {
    required_or(value, field, dns_label_errors)
}

/// A DNS subdomain (RFC 1123) that must be given: Required when empty, else why it is not one.
pub fn required_dns_subdomain(value: &str, field: &str) -> Vec<Cause> {
    required_or(value, field, dns_subdomain_errors)
}

fn required_or(value: &str, field: &str, errors: fn(&str) -> Vec<String>) -> Vec<Cause> {
    if value.is_empty() {
        return vec![required(field, "")];
    }
    errors(value).iter().map(|why| invalid(field, &Value::String(value.to_string()), why)).collect()
}

pub fn required(field: &str, detail: &str) -> Cause {
    let message = match detail {
        "" => "Required value".to_string(),
        detail => format!("Required value: {detail}"),
    };
    cause("FieldValueRequired", field, message)
}

pub fn invalid(field: &str, value: &Value, detail: &str) -> Cause {
    let shown = match value {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    };
    cause("FieldValueInvalid", field, format!("Invalid value: {shown}: {detail}"))
}

pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    cause(
        "FieldValueNotSupported",
        field,
        format!("Unsupported value: {}: supported values: {}", go_quote(value), supported.join(", ")),
    )
}

pub fn forbidden(field: &str, detail: &str) -> Cause {
    cause("FieldValueForbidden", field, format!("Forbidden: {detail}"))
}

/// `field.TooMany`: a list of `have` items where at most `most` may be.
pub fn too_many(field: &str, have: usize, most: usize) -> Cause {
    let items = if most == 1 { "item" } else { "items" };
    cause("FieldValueTooMany", field, format!("Too many: {have}: must have at most {most} {items}"))
}

/// `field.TooLong`: a value longer than `most` bytes (kube leaves the value out).
pub fn too_long(field: &str, most: usize) -> Cause {
    cause("FieldValueTooLong", field, format!("Too long: may not be more than {most} bytes"))
}

/// `field.Duplicate` of a string key.
pub fn duplicate(field: &str, key: &str) -> Cause {
    cause("FieldValueDuplicate", field, format!("Duplicate value: {}", go_quote(key)))
}

/// kube's 422 for `object` of `kind` (`Ingress.networking.k8s.io`) when
/// validation found `causes`.
pub fn refuse(kind: &str, object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid { kind: kind.to_string(), name: meta::name_of(object).to_string(), causes })
}

/// `field: Invalid value: ...: field is immutable` when `new` changed it.
pub fn immutable(field: &str, new: &Value, old: &Value) -> Option<Cause> {
    (new != old).then(|| invalid(field, new, "field is immutable"))
}

/// kube's `metav1validation.ValidateConditions` over `conditions` at `at`:
/// each type once and a qualified name; a status of True, False or
/// Unknown; a transition time; a reason of kube's form; bounded texts.
pub fn meta_condition_causes(conditions: &[Value], at: &str) -> Vec<Cause> {
    const REASON_MAX: usize = 1024;
    const MESSAGE_MAX: usize = 32 * 1024;
    const REASON_FORM: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let here = format!("{at}[{i}]");
        let text = |key: &str| condition[key].as_str().unwrap_or_default();
        if seen.contains(&text("type")) {
            causes.push(duplicate(&here, text("type")));
        } else {
            seen.push(text("type"));
        }
        match text("type") {
            "" => causes.push(required(&format!("{here}.type"), "is required")),
            kind => {
                for why in crate::selector::validation::qualified_name_errors(kind) {
                    causes.push(invalid(&format!("{here}.type"), &Value::from(kind), &why));
                }
            }
        }
        match text("status") {
            "" => causes.push(required(&format!("{here}.status"), "")),
            "True" | "False" | "Unknown" => {}
            other => {
                causes.push(not_supported(&format!("{here}.status"), other, &["False", "True", "Unknown"]))
            }
        }
        if let Some(generation) = condition["observedGeneration"].as_i64().filter(|g| *g < 0) {
            causes.push(invalid(
                &format!("{here}.observedGeneration"),
                &Value::from(generation),
                "must be greater than or equal to zero",
            ));
        }
        if text("lastTransitionTime").is_empty() {
            causes.push(required(&format!("{here}.lastTransitionTime"), ""));
        }
        match text("reason") {
            "" => causes.push(required(&format!("{here}.reason"), "")),
            reason => {
                if !is_condition_reason(reason) {
                    causes.push(invalid(&format!("{here}.reason"), &Value::from(reason), REASON_FORM));
                }
                if reason.len() > REASON_MAX {
                    causes.push(too_long(&format!("{here}.reason"), REASON_MAX));
                }
            }
        }
        if text("message").len() > MESSAGE_MAX {
            causes.push(too_long(&format!("{here}.message"), MESSAGE_MAX));
        }
    }
    causes
}

/// `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`
fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
    let last = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    bytes.first().is_some_and(u8::is_ascii_alphabetic)
        && bytes.iter().all(inner)
        && bytes.last().is_some_and(last)
}

/// kube's `ValidateSignerName` (certificate requests' signers): `<domain>/<path>`, the domain of at least
/// two DNS labels, the path of DNS subdomains, both within kube's lengths.
pub fn signer_name_causes(at: &str, signer: &str) -> Vec<Cause> {
    const DOMAIN_MAX: usize = 253;
    const SIGNER_MAX: usize = DOMAIN_MAX + (253 + 63 + 1) + 1;
    if signer.is_empty() {
        return vec![required(at, "")];
    }
    let Some((domain, path)) = signer.split_once('/').filter(|(_, path)| !path.contains('/')) else {
        return vec![invalid(
            at,
            &json!(signer),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    };
    let mut causes = Vec::new();
    if domain.len() > DOMAIN_MAX {
        causes.push(too_long(at, DOMAIN_MAX));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    // The first bad label is enough: the others would say the same.
    if let Some((label, errors)) =
        labels.iter().map(|l| (l, dns_label_errors(l))).find(|(_, e)| !e.is_empty())
    {
        for why in errors {
            causes.push(invalid(at, &json!(domain), &format!("validating label {label:?}: {why}")));
        }
    }
    if labels.len() < 2 {
        causes.push(invalid(
            at,
            &json!(domain),
            "should be a domain with at least two segments separated by dots",
        ));
    }
    if let Some((label, errors)) =
        path.split('.').map(|l| (l, dns_subdomain_errors(l))).find(|(_, e)| !e.is_empty())
    {
        for why in errors {
            causes.push(invalid(at, &json!(path), &format!("validating label {label:?}: {why}")));
        }
    }
    if signer.len() > SIGNER_MAX {
        causes.push(too_long(at, SIGNER_MAX));
    }
    causes
}
