//! Field errors in kube's words (`field.Required`, `field.Invalid`,
//! `field.NotSupported`, `field.Forbidden`), for the kinds whose
//! validation builds its causes by hand.

use serde_json::Value;

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
