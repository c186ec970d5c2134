//! certificates.k8s.io/v1 PodCertificateRequests: kubelet asks a signer for
//! a certificate for one pod (its podCertificate projected volumes), with a
//! stub PKCS#10 request that carries the key. As kube's strategies: the
//! spec never changes after creation and a create starts without status;
//! the signer answers through `/status`, once, with a certificate issued to
//! that key (`Issued`) or a denial or failure, and only a user allowed to
//! `sign` for the signer may (that check is admission's
//! `certificates::PodCertificateSigning`). Signers run outside the API
//! server; kubelet creates the requests.
//!
//! * `key`: the stub request's key and signature.
//! * `status`: what a signer may write.

mod key;
mod status;

use k8s_openapi::api::certificates::v1 as certificates;
use serde_json::{Value, json};

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::metadata::dns_subdomain_errors;
use crate::registry::{Resource, Strategy};
use crate::selector::validation::qualified_name_errors;
use crate::table::{self, Printer};

const KIND: &str = "PodCertificateRequest.certificates.k8s.io";
const GROUP: &str = "certificates.k8s.io";

/// kube's bounds on `maxExpirationSeconds`: an hour at least; a day for
/// the Kubernetes project's signers, 91 days for others.
const MIN_MAX_EXPIRATION: i64 = 3600;
const KUBERNETES_MAX_MAX_EXPIRATION: i64 = 86_400;
const MAX_MAX_EXPIRATION: i64 = 7_862_400;

/// kube's cap on UIDs in the spec.
const MAX_UID_BYTES: usize = 128;

/// kube's limit on the user annotations, keys and values together.
const USER_ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

pub fn kind() -> Kind {
    Kind::typed::<certificates::PodCertificateRequest>(
        Resource::new(GROUP, "PodCertificateRequest", "podcertificaterequests").with_status(),
        PcrStrategy,
    )
}

#[derive(Debug)]
struct PcrStrategy;

impl Strategy for PcrStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CERTIFICATES_V1_POD_CERTIFICATE_REQUEST)
    }

    fn set_defaults(&self, object: &mut Value) {
        if let Some(spec) = object.get_mut("spec").filter(|s| s.is_object())
            && spec["maxExpirationSeconds"].is_null()
        {
            spec["maxExpirationSeconds"] = json!(KUBERNETES_MAX_MAX_EXPIRATION);
        }
    }

    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({});
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        new["status"] = old["status"].clone();
    }

    fn prepare_subresource_update(&self, _subresource: &str, new: &mut Value, old: &Value) {
        new["spec"] = old["spec"].clone();
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, create_causes(&object["spec"]))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let causes = field::immutable("spec", &new["spec"], &old["spec"]).into_iter().collect();
        field::refuse(KIND, new, causes)
    }

    fn validate_subresource_update(
        &self,
        _subresource: Option<&str>,
        new: &Value,
        old: &Value,
    ) -> Result<(), ApiError> {
        field::refuse(KIND, new, status::update_causes(new, old, now_unix()))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidatePodCertificateRequestCreate` (metadata aside).
fn create_causes(spec: &Value) -> Vec<Cause> {
    let text = |key: &str| spec[key].as_str().unwrap_or_default();
    let signer = text("signerName");
    let mut causes = field::signer_name_causes("spec.signerName", signer);
    if spec["unverifiedUserAnnotations"].is_object() {
        causes.extend(user_annotation_causes(&spec["unverifiedUserAnnotations"]));
    }
    for (name, uid) in
        [("podName", "podUID"), ("serviceAccountName", "serviceAccountUID"), ("nodeName", "nodeUID")]
    {
        let at = format!("spec.{name}");
        for why in dns_subdomain_errors(text(name)) {
            causes.push(field::invalid(&at, &json!(text(name)), &why));
        }
        let at = format!("spec.{uid}");
        if text(uid).is_empty() {
            causes.push(field::invalid(&at, &json!(""), "must not be empty"));
        }
        if text(uid).len() > MAX_UID_BYTES {
            causes.push(field::too_long(&at, MAX_UID_BYTES));
        }
    }
    let Some(seconds) = spec["maxExpirationSeconds"].as_i64() else {
        causes.push(field::required("spec.maxExpirationSeconds", "must be set"));
        return causes;
    };
    let most = if is_kubernetes_signer(signer) { KUBERNETES_MAX_MAX_EXPIRATION } else { MAX_MAX_EXPIRATION };
    if !(MIN_MAX_EXPIRATION..=most).contains(&seconds) {
        causes.push(field::invalid(
            "spec.maxExpirationSeconds",
            &json!(seconds),
            &format!("must be in the range [{MIN_MAX_EXPIRATION}, {most}]"),
        ));
    }
    match stub_request(spec) {
        Some(der) => causes.extend(key::request_causes(&der)),
        None => causes.push(key::invalid_omitted(
            "spec",
            "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set",
        )),
    }
    causes
}

/// The stub request's DER (base64 in JSON); None when missing or empty.
fn stub_request(spec: &Value) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let text = spec["stubPKCS10Request"].as_str().filter(|t| !t.is_empty())?;
    base64::engine::general_purpose::STANDARD.decode(text).ok().filter(|der| !der.is_empty())
}

/// kube's `IsKubernetesSignerName`: a signer of `kubernetes.io` or a
/// subdomain of it.
fn is_kubernetes_signer(signer: &str) -> bool {
    let host = signer.split('/').next().unwrap_or_default();
    host == "kubernetes.io" || host.ends_with(".kubernetes.io")
}

/// kube's `ValidateUserAnnotations`: domain-prefixed keys, whatever their
/// case; keys and values together within the annotations' limit.
fn user_annotation_causes(annotations: &Value) -> Vec<Cause> {
    const AT: &str = "spec.unverifiedUserAnnotations";
    let entries = annotations.as_object().into_iter().flatten();
    let mut causes = Vec::new();
    let mut total = 0;
    for (key, value) in entries {
        total += key.len() + value.as_str().map_or(0, str::len);
        let key = key.to_lowercase();
        if key.is_empty() {
            causes.push(field::required(AT, ""));
            continue;
        }
        let errors = qualified_name_errors(&key);
        for why in &errors {
            causes.push(field::invalid(AT, &json!(key), why));
        }
        if errors.is_empty() && key.split('/').count() != 2 {
            causes.push(field::invalid(
                AT,
                &json!(key),
                "must be a domain-prefixed key (such as \"acme.io/foo\")",
            ));
        }
    }
    if total > USER_ANNOTATIONS_MAX_BYTES {
        causes.push(field::too_long(AT, USER_ANNOTATIONS_MAX_BYTES));
    }
    causes
}

/// kube's printer: the pod, its account and node, the signer, the state;
/// the user annotations when wide.
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col(
            "PodName",
            "string",
            "podName is the name of the pod into which the certificate will be mounted.",
        ),
        table::col(
            "ServiceAccountName",
            "string",
            "serviceAccountName is the name of the service account the pod is running as.",
        ),
        table::col("NodeName", "string", "nodeName is the name of the node the pod is assigned to."),
        table::col(
            "SignerName",
            "string",
            "signerName indicates the requested signer.\n\nAll signer names beginning with `kubernetes.io` are reserved for use by the Kubernetes project.  There is currently one well-known signer documented by the Kubernetes project, `kubernetes.io/kube-apiserver-client-pod`, which will issue client certificates understood by kube-apiserver.  It is currently unimplemented.",
        ),
        table::col("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
        table::wide(
            "UnverifiedUserAnnotations",
            "string",
            "unverifiedUserAnnotations allow pod authors to pass additional information to the signer implementation.  Kubernetes does not restrict or validate this metadata in any way.\n\nEntries are subject to the same validation as object metadata annotations, with the addition that all keys must be domain-prefixed. No restrictions are placed on values, except an overall size limitation on the entire field.\n\nSigners should document the keys and values they support.  Signers should deny requests that contain keys they do not recognize.",
        ),
    ],
    cells,
};

fn cells(pcr: &Value, _now: i64) -> Vec<Value> {
    let spec = &pcr["spec"];
    let text = |key: &str| json!(spec[key].as_str().unwrap_or_default());
    let mut annotations: Vec<String> = spec["unverifiedUserAnnotations"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    annotations.sort();
    let annotations = if annotations.is_empty() { "<none>".to_string() } else { annotations.join(",") };
    vec![
        table::name(pcr),
        text("podName"),
        text("serviceAccountName"),
        text("nodeName"),
        text("signerName"),
        json!(status::state(pcr)),
        json!(annotations),
    ]
}

#[cfg(test)]
mod tests;

/// Seconds since the epoch, for the checks of an issued certificate's times.
fn now_unix() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
}
