//! certificates.k8s.io/v1 CertificateSigningRequests: a PKCS#10 request for a certificate from
//! a named signer. As kube's strategies: the requester (`spec.username`, `uid`, `groups`,
//! `extra`) is whoever created it, never what the body says; the spec never changes; approval
//! and denial are written only through `/approval`, the certificate only through `/status`
//! (which keeps the approval conditions it finds). The signing is
//! `controllers::csr_signing`'s. kube's CertificateSubjectRestriction admission is here too: no
//! `system:masters` client certificate from the kube-apiserver-client signer.

use base64::Engine as _;
use k8s_openapi::api::certificates::v1 as certificates;
use rustls_pki_types::CertificateSigningRequestDer;
use rustls_pki_types::pem::PemObject;
use serde_json::{Value, json};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer;

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Action, Resource, Strategy};
use crate::request::UserInfo;
use crate::runtime::meta;
use crate::table::{self, Printer};

const KIND: &str = "CertificateSigningRequest.certificates.k8s.io";
const GROUP: &str = "certificates.k8s.io";

/// The signer of client certificates kube-apiserver trusts.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";

/// `kubectl certificate approve|deny`: the approval conditions, alone.
const APPROVAL: Action = Action {
    name: "approval",
    group: GROUP,
    version: "v1",
    kind: "CertificateSigningRequest",
    verbs: &["get", "patch", "update"],
};

/// kube's `allValidUsages`, sorted as its "supported values" list them.
const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

pub fn kind() -> Kind {
    Kind::typed::<certificates::CertificateSigningRequest>(
        Resource::new(GROUP, "CertificateSigningRequest", "certificatesigningrequests")
            .cluster_scoped()
            .short_names(&["csr"])
            .with_status()
            .with_actions(&[APPROVAL]),
        CsrStrategy,
    )
}

#[derive(Debug)]
struct CsrStrategy;

impl Strategy for CsrStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CERTIFICATES_V1_CERTIFICATE_SIGNING_REQUEST)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn stamp_requester(&self, object: &mut Value, user: &UserInfo) {
        let spec = &mut object["spec"];
        if !spec.is_object() {
            *spec = json!({});
        }
        for (field, value) in [
            ("username", json!(user.name)),
            ("uid", json!(user.uid)),
            ("groups", json!(user.groups)),
            ("extra", json!(user.extra)),
        ] {
            let empty = value.as_str() == Some("")
                || value.as_array().is_some_and(Vec::is_empty)
                || value.as_object().is_some_and(|o| o.is_empty());
            match empty {
                true => meta::remove_field(spec, field),
                false => spec[field] = value,
            }
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        new["spec"] = old["spec"].clone();
    }

    fn prepare_subresource_update(&self, subresource: &str, new: &mut Value, old: &Value) {
        if subresource == "status" {
            keep_approval(new, old);
        }
        stamp_conditions(new, old);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(object))?;
        restrict_subject(object)
    }

    fn validate_update(&self, new: &Value, _old: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, new, condition_causes(new))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// The request's PKCS#10, parsed and its signature checked.
pub fn parse_request(csr: &Value) -> Result<rcgen::CertificateSigningRequestParams, String> {
    let pem = request_pem(csr);
    let block = pem.lines().find(|l| l.starts_with("-----BEGIN "));
    if block != Some("-----BEGIN CERTIFICATE REQUEST-----") {
        return Err("PEM block type must be CERTIFICATE REQUEST".into());
    }
    // Only the PEM check above is in kube's words; past it, the parsers'.
    let der = request_der(&pem)?;
    let (_, parsed) = X509CertificationRequest::from_der(&der).map_err(|e| e.to_string())?;
    // The certificate builder takes one attribute per name component (it
    // would panic on none).
    if parsed.certification_request_info.subject.iter().any(|rdn| rdn.iter().count() != 1) {
        return Err("each component of the subject must hold exactly one attribute".into());
    }
    rcgen::CertificateSigningRequestParams::from_der(&der).map_err(|e| e.to_string())
}

fn request_der(pem: &str) -> Result<CertificateSigningRequestDer<'static>, String> {
    CertificateSigningRequestDer::from_pem_slice(pem.as_bytes()).map_err(|e| e.to_string())
}

/// Whether the request's subject names an attribute type twice (several O groups), which the
/// certificate builder cannot carry into a certificate.
pub fn subject_repeats_attribute(csr: &Value) -> bool {
    let Ok(der) = request_der(&request_pem(csr)) else { return false };
    let Ok((_, parsed)) = X509CertificationRequest::from_der(&der) else { return false };
    let types: Vec<String> = parsed
        .certification_request_info
        .subject
        .iter_attributes()
        .map(|attr| attr.attr_type().to_id_string())
        .collect();
    types.iter().enumerate().any(|(i, ty)| types[..i].contains(ty))
}

fn request_bytes(csr: &Value) -> Vec<u8> {
    let text = csr["spec"]["request"].as_str().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_default()
}

fn request_pem(csr: &Value) -> String {
    String::from_utf8_lossy(&request_bytes(csr)).into_owned()
}

/// kube's validateCertificateSigningRequest, but the conditions'.
fn causes(csr: &Value) -> Vec<Cause> {
    let spec = &csr["spec"];
    let mut causes = Vec::new();
    if let Err(why) = parse_request(csr) {
        causes.push(field::cause(
            "FieldValueInvalid",
            "spec.request",
            format!("Invalid value: {}: {why}", go_bytes(&request_bytes(csr))),
        ));
    }
    let usages: Vec<&str> =
        spec["usages"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if usages.is_empty() {
        causes.push(field::required("spec.usages", ""));
    }
    for (i, usage) in usages.iter().enumerate() {
        let at = format!("spec.usages[{i}]");
        if !USAGES.contains(usage) {
            causes.push(field::not_supported(&at, usage, USAGES));
        }
        if usages[..i].contains(usage) {
            causes.push(field::cause("FieldValueDuplicate", &at, format!("Duplicate value: {:?}", usage)));
        }
    }
    let signer = spec["signerName"].as_str().unwrap_or_default();
    if signer == "kubernetes.io/legacy-unknown" {
        causes.push(field::invalid(
            "spec.signerName",
            &json!(signer),
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        causes.extend(field::signer_name_causes("spec.signerName", signer));
    }
    if let Some(seconds) = spec["expirationSeconds"].as_i64().filter(|s| *s < 600) {
        causes.push(field::invalid(
            "spec.expirationSeconds",
            &json!(seconds),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    causes.extend(condition_causes(csr));
    causes
}

/// Each condition typed and with a status; Approved, Denied and Failed once each, and never
/// both Approved and Denied.
fn condition_causes(csr: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let conditions = csr["status"]["conditions"].as_array().map_or(&[][..], Vec::as_slice);
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        let kind = condition["type"].as_str().unwrap_or_default();
        if kind.is_empty() {
            causes.push(field::required(&format!("{at}.type"), ""));
        }
        match condition["status"].as_str().unwrap_or_default() {
            "" => causes.push(field::required(&format!("{at}.status"), "")),
            "True" | "False" | "Unknown" => {}
            other => causes.push(field::not_supported(
                &format!("{at}.status"),
                other,
                &["False", "True", "Unknown"],
            )),
        }
        if matches!(kind, "Approved" | "Denied" | "Failed") {
            if seen.contains(&kind) {
                causes.push(field::cause(
                    "FieldValueDuplicate",
                    &format!("{at}.type"),
                    format!("Duplicate value: {kind:?}"),
                ));
            }
            seen.push(kind);
        }
    }
    if seen.contains(&"Approved") && seen.contains(&"Denied") {
        causes.push(field::cause(
            "FieldValueInvalid",
            "status.conditions",
            format!(
                "Invalid value: {}: Approved and Denied conditions are mutually exclusive",
                csr["status"]["conditions"]
            ),
        ));
    }
    causes
}

/// kube's CertificateSubjectRestriction admission: the kube-apiserver-client signer never
/// issues a `system:masters` certificate (that group bypasses authorization).
fn restrict_subject(csr: &Value) -> Result<(), ApiError> {
    if csr["spec"]["signerName"] != KUBE_APISERVER_CLIENT {
        return Ok(());
    }
    let forbidden = |why: String| ApiError::ForbiddenFor {
        qualified: format!("certificatesigningrequests.{GROUP}"),
        name: meta::name_of(csr).to_owned(),
        why,
        causes: Vec::new(),
    };
    let request = parse_request(csr).map_err(|e| forbidden(format!("failed to parse CSR: {e}")))?;
    let masters = request
        .params
        .distinguished_name
        .iter()
        .any(|(ty, value)| *ty == rcgen::DnType::OrganizationName && dn_text(value) == "system:masters");
    if masters {
        return Err(forbidden(format!(
            "use of {KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed"
        )));
    }
    Ok(())
}

/// A distinguished name's value as text.
pub fn dn_text(value: &rcgen::DnValue) -> String {
    match value {
        rcgen::DnValue::PrintableString(s) => s.as_str().to_owned(),
        rcgen::DnValue::Utf8String(s) => s.clone(),
        rcgen::DnValue::Ia5String(s) => s.as_str().to_owned(),
        rcgen::DnValue::TeletexString(s) => s.as_str().to_owned(),
        other => format!("{other:?}"),
    }
}

/// Bytes as Go's `%#v` writes a `[]byte` (kube's field.Invalid of the request).
fn go_bytes(bytes: &[u8]) -> String {
    let each: Vec<String> = bytes.iter().map(|b| format!("0x{b:x}")).collect();
    format!("[]byte{{{}}}", each.join(", "))
}

/// The status subresource may not approve or deny: the approval conditions stay what they were.
fn keep_approval(new: &mut Value, old: &Value) {
    let is_approval = |c: &&Value| matches!(c["type"].as_str(), Some("Approved" | "Denied"));
    let mut conditions: Vec<Value> = new["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| !is_approval(c))
        .cloned()
        .collect();
    conditions
        .extend(old["status"]["conditions"].as_array().into_iter().flatten().filter(is_approval).cloned());
    match conditions.is_empty() {
        true => {
            if let Some(status) = new["status"].as_object_mut() {
                status.remove("conditions");
            }
        }
        false => new["status"]["conditions"] = json!(conditions),
    }
}

/// kube's populateConditionTimestamps: a condition without lastUpdateTime gets now; without
/// lastTransitionTime, the old one's when its status did not change, else now.
fn stamp_conditions(new: &mut Value, old: &Value) {
    let now = meta::now();
    let old_conditions = old["status"]["conditions"].as_array().cloned().unwrap_or_default();
    // (get_mut: indexing would add a null list where there is none)
    let conditions =
        new.get_mut("status").and_then(|s| s.get_mut("conditions")).and_then(Value::as_array_mut);
    let Some(conditions) = conditions else { return };
    for condition in conditions {
        if condition["lastUpdateTime"].is_null() {
            condition["lastUpdateTime"] = json!(now);
        }
        if condition["lastTransitionTime"].is_null() {
            let was = old_conditions.iter().find(|c| c["type"] == condition["type"]);
            condition["lastTransitionTime"] = match was {
                Some(was) if was["status"] == condition["status"] && !was["lastTransitionTime"].is_null() => {
                    was["lastTransitionTime"].clone()
                }
                _ => json!(now),
            };
        }
    }
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::AGE,
        table::col("SignerName", "string", "The signer that is asked to sign the request."),
        table::col("Requestor", "string", "Name of the user that requested the CSR"),
        table::col("RequestedDuration", "string", "The requested validity of the certificate."),
        table::col("Condition", "string", "The CSR's approval and issuance"),
    ],
    cells,
};

fn cells(csr: &Value, now: i64) -> Vec<Value> {
    let duration = match table::opt_int_at(csr, &["spec", "expirationSeconds"]) {
        Some(seconds) => table::human_duration(seconds),
        None => "<none>".to_owned(),
    };
    vec![
        table::name(csr),
        table::age(csr, now),
        table::s(table::str_at(csr, &["spec", "signerName"])),
        table::s(table::str_at(csr, &["spec", "username"])),
        table::s(duration),
        table::s(condition(csr)),
    ]
}

/// kube's extractCSRStatus: Denied, Approved or Pending, then Failed and Issued.
fn condition(csr: &Value) -> String {
    let has = |kind: &str| table::arr_at(csr, &["status", "conditions"]).iter().any(|c| c["type"] == kind);
    let mut text = if has("Denied") {
        "Denied".to_owned()
    } else if has("Approved") {
        "Approved".to_owned()
    } else {
        "Pending".to_owned()
    };
    if has("Failed") {
        text.push_str(",Failed");
    }
    if !table::str_at(csr, &["status", "certificate"]).is_empty() {
        text.push_str(",Issued");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_condition_column_reads_as_kubes() {
        let csr = |conditions: Value, certificate: &str| json!({"status": {"conditions": conditions, "certificate": certificate}});
        assert_eq!(condition(&csr(json!([]), "")), "Pending");
        assert_eq!(condition(&csr(json!([{"type": "Approved"}]), "LS0t")), "Approved,Issued");
        assert_eq!(condition(&csr(json!([{"type": "Approved"}, {"type": "Failed"}]), "")), "Approved,Failed");
        assert_eq!(condition(&csr(json!([{"type": "Denied"}]), "")), "Denied");
    }

    #[test]
    fn the_requester_is_the_creator() {
        let user = UserInfo {
            name: "jane".into(),
            uid: "u1".into(),
            groups: vec!["dev".into()],
            ..UserInfo::default()
        };
        let mut csr =
            json!({"spec": {"username": "admin", "groups": ["system:masters"], "extra": {"x": ["y"]}}});
        CsrStrategy.stamp_requester(&mut csr, &user);
        assert_eq!(csr["spec"], json!({"username": "jane", "uid": "u1", "groups": ["dev"]}));
    }

    #[test]
    fn status_writes_keep_the_approval_and_stamp_times() {
        let old = json!({"status": {"conditions": [{"type": "Approved", "status": "True", "lastUpdateTime": "t0", "lastTransitionTime": "t0"}]}});
        let mut new =
            json!({"status": {"conditions": [{"type": "Failed", "status": "True"}], "certificate": "LS0t"}});
        CsrStrategy.prepare_subresource_update("status", &mut new, &old);
        let conditions = new["status"]["conditions"].as_array().unwrap();
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[1]["lastTransitionTime"], "t0", "an unchanged condition keeps its time");
        assert!(conditions[0]["lastUpdateTime"].is_string());
    }

    #[test]
    fn a_request_is_bytes_go_would_print() {
        assert_eq!(go_bytes(b"ab"), "[]byte{0x61, 0x62}");
        let junk = json!({"spec": {"request": "bm90IGEgY3Ny"}});
        assert_eq!(parse_request(&junk).unwrap_err(), "PEM block type must be CERTIFICATE REQUEST");
    }
}
