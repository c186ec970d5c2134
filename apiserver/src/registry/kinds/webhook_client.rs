//! Where a webhook is reached (`clientConfig` of admission webhooks and
//! CRD conversion webhooks), checked in kube's words (its
//! `ValidateWebhookURL`, `ValidateWebhookService` and `ValidateCABundle`).

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::json;

use super::field::{invalid, required};
use crate::errors::Cause;

/// kube's `ValidateWebhookURL` (https forced).
pub fn url_causes(url: &str, at: &str) -> Vec<Cause> {
    const FORM: &str = "; desired format: https://host[/path]";
    let Ok(parsed) = url.parse::<axum::http::Uri>() else {
        return vec![required(at, &format!("url must be a valid URL{FORM}"))];
    };
    let mut causes = Vec::new();
    let scheme = parsed.scheme_str().unwrap_or_default();
    if scheme != "https" {
        causes.push(invalid(at, &json!(scheme), &format!("'https' is the only allowed URL scheme{FORM}")));
    }
    let authority = parsed.authority().map(|a| a.as_str()).unwrap_or_default();
    let (user, host) = authority.rsplit_once('@').map_or(("", authority), |(u, h)| (u, h));
    if host.is_empty() {
        causes.push(invalid(at, &json!(host), &format!("host must be specified{FORM}")));
    }
    if !user.is_empty() {
        causes.push(invalid(at, &json!(user), "user information is not permitted in the URL"));
    }
    if let Some((_, fragment)) = url.split_once('#') {
        causes.push(invalid(at, &json!(fragment), "fragments are not permitted in the URL"));
    }
    if let Some(query) = parsed.query() {
        causes.push(invalid(at, &json!(query), "query parameters are not permitted in the URL"));
    }
    causes
}

/// kube's `ValidateWebhookService`: a name, a namespace, a valid port and
/// path (no path at all is fine).
pub fn service_causes(at: &str, namespace: &str, name: &str, path: Option<&str>, port: i64) -> Vec<Cause> {
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(required(&format!("{at}.name"), ""));
    }
    if namespace.is_empty() {
        causes.push(required(&format!("{at}.namespace"), ""));
    }
    if !(1..=65535).contains(&port) {
        causes.push(invalid(
            &format!("{at}.port"),
            &json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let path = path.unwrap_or_default();
    if path.is_empty() || path == "/" {
        return causes;
    }
    let field = format!("{at}.path");
    if path == "//" {
        causes.push(invalid(&field, &json!(path), "segment[0] may not be empty"));
        return causes;
    }
    if !path.starts_with('/') {
        causes.push(invalid(&field, &json!(path), "must start with a '/'"));
    }
    let steps = path.strip_prefix('/').unwrap_or(path);
    let steps = steps.strip_suffix('/').unwrap_or(steps);
    for (i, step) in steps.split('/').enumerate() {
        if step.is_empty() {
            causes.push(invalid(&field, &json!(path), &format!("segment[{i}] may not be empty")));
            continue;
        }
        for problem in crate::registry::metadata::name_causes(crate::registry::NameRule::Subdomain, step) {
            let why = problem.message.splitn(3, ": ").nth(2).unwrap_or_default().to_string();
            causes.push(invalid(&field, &json!(path), &format!("segment[{i}]: {why}")));
        }
    }
    causes
}

/// kube's `ValidateCABundle`: the bundle (base64 in the object) must hold
/// PEM certificates.
pub fn ca_bundle_causes(encoded: &str, at: &str) -> Vec<Cause> {
    let pem = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, encoded).unwrap_or_default();
    if CertificateDer::pem_slice_iter(&pem).flatten().next().is_some() {
        return Vec::new();
    }
    vec![invalid(at, &json!(encoded), "unable to load root certificates: unable to parse bytes as PEM block")]
}
