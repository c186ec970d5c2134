//! What a signer may write to a PodCertificateRequest's status (kube's
//! `ValidatePodCertificateRequestStatusUpdate`): exactly one of `Issued`,
//! `Denied` or `Failed`, once; a denial or failure with nothing but its
//! condition; an issuance with a certificate chain whose leaf was issued to
//! the requested key, lives between an hour and `maxExpirationSeconds`, and
//! whose times the status repeats; nothing changes after that.

use serde_json::{Value, json};
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

use super::super::field;
use super::key::{self, invalid_omitted};
use crate::errors::Cause;
use crate::table::parse_rfc3339;

const TERMINAL: [&str; 3] = ["Issued", "Denied", "Failed"];
const CHAIN: &str = "status.certificateChain";

/// kube's cap on the chain's size.
const MAX_CHAIN_BYTES: usize = 100 * 1024;

/// `Pending`, or the terminal condition the request is in.
pub fn state(pcr: &Value) -> &'static str {
    let conditions = pcr["status"]["conditions"].as_array().into_iter().flatten();
    // As kube's printer: the last terminal condition listed wins.
    let mut types = conditions.filter_map(|c| TERMINAL.iter().copied().find(|t| c["type"] == *t));
    types.next_back().unwrap_or("Pending")
}

fn is_in(pcr: &Value, condition: &str) -> bool {
    let conditions = pcr["status"]["conditions"].as_array().into_iter().flatten();
    conditions.into_iter().any(|c| c["type"] == condition && c["status"] == "True")
}

fn terminal(pcr: &Value) -> bool {
    TERMINAL.iter().any(|t| is_in(pcr, t))
}

/// The causes to refuse a status write from `old` to `new` at `now`.
pub fn update_causes(new: &Value, old: &Value, now: i64) -> Vec<Cause> {
    let causes = condition_causes(&new["status"]["conditions"]);
    if !causes.is_empty() {
        return causes;
    }
    let status = |pcr: &Value| match &pcr["status"] {
        Value::Null => json!({}),
        status => status.clone(),
    };
    if terminal(old) {
        return unchanged(
            &status(new),
            &status(old),
            "immutable after PodCertificateRequest is issued, denied, or failed",
        );
    }
    if is_in(new, "Denied") || is_in(new, "Failed") {
        let only_conditions = json!({"conditions": new["status"]["conditions"]});
        return unchanged(
            &status(new),
            &only_conditions,
            "non-condition status fields must be empty when denying or failing the PodCertificateRequest",
        );
    }
    if is_in(new, "Issued") {
        return issued_causes(new, old, now).err().into_iter().flatten().collect();
    }
    unchanged(
        &status(new),
        &status(old),
        "status is immutable unless transitioning to \"Issued\", \"Denied\", or \"Failed\"",
    )
}

fn unchanged(new: &Value, old: &Value, detail: &str) -> Vec<Cause> {
    let empty = |v: &Value| v.is_null() || v.as_array().is_some_and(Vec::is_empty);
    // Semantic equality: an empty list is no list.
    let strip = |status: &Value| -> Value {
        let mut status = status.clone();
        if let Some(map) = status.as_object_mut() {
            map.retain(|_, v| !empty(v));
        }
        status
    };
    match strip(new) == strip(old) {
        true => Vec::new(),
        false => vec![invalid_omitted("status", detail)],
    }
}

/// At most one terminal condition, each `True`; no other types; then the
/// rules of every metav1 Condition.
fn condition_causes(conditions: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let conditions = conditions.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut terminal = 0;
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        let kind = condition["type"].as_str().unwrap_or_default();
        if TERMINAL.contains(&kind) {
            terminal += 1;
            if terminal > 1 {
                causes.push(field::invalid(
                    &format!("{at}.type"),
                    &json!(kind),
                    "There may be at most one condition with type \"Issued\", \"Denied\", or \"Failed\"",
                ));
            }
            let status = condition["status"].as_str().unwrap_or_default();
            if status != "True" {
                causes.push(field::not_supported(&format!("{at}.status"), status, &["True"]));
            }
        } else {
            causes.push(field::not_supported(&format!("{at}.type"), kind, &TERMINAL));
        }
    }
    causes.extend(field::meta_condition_causes(conditions, "status.conditions"));
    causes
}

/// The checks of an issuance; the first that fails ends them, as in kube.
fn issued_causes(new: &Value, old: &Value, now: i64) -> Result<(), Vec<Cause>> {
    let one = |cause: Cause| vec![cause];
    let status = &new["status"];
    let chain = status["certificateChain"].as_str().unwrap_or_default();
    if chain.len() > MAX_CHAIN_BYTES {
        return Err(one(field::too_long(CHAIN, MAX_CHAIN_BYTES)));
    }
    let invalid_chain = |detail: &str| one(field::invalid(CHAIN, &json!(chain), detail));
    let blocks: Vec<x509_parser::pem::Pem> =
        x509_parser::pem::Pem::iter_from_buffer(chain.as_bytes()).map_while(Result::ok).collect();
    let Some(leaf_block) = blocks.first() else {
        return Err(invalid_chain("issued certificate chain must contain at least one certificate"));
    };
    if leaf_block.label != "CERTIFICATE" {
        return Err(invalid_chain(
            "issued certificate chain must consist entirely of CERTIFICATE PEM blocks",
        ));
    }
    let Ok((_, leaf)) = X509Certificate::from_der(&leaf_block.contents) else {
        return Err(invalid_chain("leaf certificate does not parse as valid X.509"));
    };
    let names = name_causes(&leaf);
    if !names.is_empty() {
        return Err(names);
    }
    let requested = super::stub_request(&old["spec"]).and_then(|der| key::public_key_der(&der));
    if requested.as_deref() != Some(leaf.public_key().raw) {
        return Err(invalid_chain("leaf certificate was not issued to the requested public key"));
    }
    times_causes(status, &leaf, &new["spec"], now)?;
    for block in &blocks[1..] {
        if block.label != "CERTIFICATE" {
            // (kube's text, its spelling included.)
            return Err(invalid_chain(
                "issued certificate chain must consist entirely of CERTFICATE PEM blocks",
            ));
        }
        if X509Certificate::from_der(&block.contents).is_err() {
            return Err(invalid_chain("intermediate certificate does not parse as valid X.509"));
        }
    }
    Ok(())
}

/// The leaf's DNS names and email addresses must be well formed.
fn name_causes(leaf: &X509Certificate) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Ok(Some(names)) = leaf.subject_alternative_name() else { return causes };
    for name in &names.value.general_names {
        match name {
            GeneralName::DNSName(dns) => {
                let bad = |detail: &str| field::invalid(CHAIN, &json!(dns), detail);
                if dns.is_empty() {
                    causes.push(bad("leaf certificate should not contain empty DNSName"));
                }
                if dns.contains("..") {
                    causes.push(bad("leaf certificate's DNSName should not contain '..'"));
                }
                if dns.starts_with('.') || dns.ends_with('.') {
                    causes.push(bad("leaf certificate's DNSName should not start or end with '.'"));
                }
            }
            GeneralName::RFC822Name(email) if !is_email_address(email) => causes.push(field::invalid(
                CHAIN,
                &json!(email),
                "leaf certificate should not contain invalid EmailAddress",
            )),
            _ => {}
        }
    }
    causes
}

/// A bare `local@domain` address (what Go's `mail.ParseAddress` accepts of
/// a certificate's addresses, which carry no display names).
fn is_email_address(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else { return false };
    !local.is_empty()
        && !domain.is_empty()
        && !text.contains(char::is_whitespace)
        && !domain.starts_with('.')
        && !domain.ends_with('.')
}

/// The status's times: present, the leaf's own, notBefore near now, a
/// lifetime within bounds, a refresh time well inside it.
fn times_causes(status: &Value, leaf: &X509Certificate, spec: &Value, now: i64) -> Result<(), Vec<Cause>> {
    let mut missing = Vec::new();
    let times =
        ["notBefore", "notAfter", "beginRefreshAt"].map(|key| status[key].as_str().and_then(parse_rfc3339));
    let [not_before, not_after, refresh] = times;
    if not_before.is_none() {
        missing.push(field::required(
            "status.notBefore",
            "must be present and consistent with the issued certificate",
        ));
    }
    if not_after.is_none() {
        missing.push(field::required(
            "status.notAfter",
            "must be present and consistent with the issued certificate",
        ));
    }
    if refresh.is_none() {
        missing.push(field::required(
            "status.beginRefreshAt",
            "must be present and in the range [notbefore+10min, notafter-10min]",
        ));
    }
    let (Some(not_before), Some(not_after), Some(refresh)) = (not_before, not_after, refresh) else {
        return Err(missing);
    };
    let invalid =
        |key: &str, detail: &str| vec![field::invalid(&format!("status.{key}"), &status[key], detail)];
    let (leaf_before, leaf_after) =
        (leaf.validity().not_before.timestamp(), leaf.validity().not_after.timestamp());
    if not_before != leaf_before {
        return Err(invalid(
            "notBefore",
            "must be set to the NotBefore time encoded in the leaf certificate",
        ));
    }
    if (not_before - now).abs() >= 5 * 60 {
        return Err(invalid("notBefore", "must be set to within 5 minutes of kube-apiserver's current time"));
    }
    if not_after != leaf_after {
        return Err(invalid("notAfter", "must be set to the NotAfter time encoded in the leaf certificate"));
    }
    let lifetime = leaf_after - leaf_before;
    // Go prints the lifetime, a Duration, in nanoseconds.
    let lifetime_value = json!(lifetime.saturating_mul(1_000_000_000));
    if lifetime < 3600 {
        return Err(vec![field::invalid(
            CHAIN,
            &lifetime_value,
            "leaf certificate lifetime must be >= 1 hour",
        )]);
    }
    let most = spec["maxExpirationSeconds"].as_i64().unwrap_or_default();
    if lifetime > most {
        return Err(vec![field::invalid(
            CHAIN,
            &lifetime_value,
            &format!("leaf certificate lifetime must be <= spec.maxExpirationSeconds ({most})"),
        )]);
    }
    if refresh < not_before + 600 {
        return Err(invalid("beginRefreshAt", "must be at least 10 minutes after status.notBefore"));
    }
    if refresh > not_after - 600 {
        return Err(invalid("beginRefreshAt", "must be at least 10 minutes before status.notAfter"));
    }
    Ok(())
}
