//! AdmissionReview on the wire (admission.k8s.io/v1 and v1beta1): the
//! request a webhook is sent, and its response checked as kube checks it
//! before anything in it is used.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::admission::Attributes;

/// The `request` of an AdmissionReview for `attributes`, with a fresh uid.
pub fn request(attributes: &Attributes, uid: &str) -> Value {
    let kind = &attributes.kind;
    let resource = &attributes.resource;
    let kind = json!({"group": kind.group, "version": kind.version, "kind": kind.kind});
    let resource =
        json!({"group": resource.group, "version": resource.version, "resource": resource.resource});
    let mut request = Map::new();
    request.insert("uid".into(), json!(uid));
    request.insert("kind".into(), kind.clone());
    request.insert("resource".into(), resource.clone());
    if let Some(sub) = &attributes.subresource {
        request.insert("subResource".into(), json!(sub));
    }
    request.insert("requestKind".into(), kind);
    request.insert("requestResource".into(), resource);
    if let Some(sub) = &attributes.subresource {
        request.insert("requestSubResource".into(), json!(sub));
    }
    if !attributes.name.is_empty() {
        request.insert("name".into(), json!(attributes.name));
    }
    if let Some(namespace) = &attributes.namespace {
        request.insert("namespace".into(), json!(namespace));
    }
    request.insert("operation".into(), json!(attributes.operation.as_str()));
    request.insert("userInfo".into(), attributes.user.to_json());
    request.insert("object".into(), attributes.object.clone().unwrap_or(Value::Null));
    request.insert("oldObject".into(), attributes.old_object.clone().unwrap_or(Value::Null));
    request.insert("dryRun".into(), json!(attributes.dry_run));
    request.insert("options".into(), attributes.options.clone());
    Value::Object(request)
}

/// The whole review body in `version` (`v1` or `v1beta1`).
pub fn body(version: &str, request: Value) -> Value {
    json!({"apiVersion": format!("admission.k8s.io/{version}"), "kind": "AdmissionReview", "request": request})
}

/// What a webhook answered, once checked.
#[derive(Debug, Default)]
pub struct Answer {
    pub allowed: bool,
    /// The Status of a refusal, as sent.
    pub status: Value,
    /// The RFC 6902 operations of a mutation.
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
    pub audit_annotations: Vec<(String, String)>,
}

/// Checks a response body against the review sent (`version`, `uid`):
/// why it cannot be used, in kube's words, after "received invalid webhook
/// response: ".
pub fn answer(version: &str, uid: &str, body: &[u8], may_patch: bool) -> Result<Answer, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let expected = format!("admission.k8s.io/{version}");
    let api_version = review["apiVersion"].as_str().unwrap_or_default();
    let kind = review["kind"].as_str().unwrap_or_default();
    // v1beta1 answers were never checked for their type; v1 ones are.
    if version == "v1" && (api_version != expected || kind != "AdmissionReview") {
        return Err(format!(
            "expected webhook response of {expected}, Kind=AdmissionReview, got {}, Kind={kind}",
            if api_version.is_empty() { "/" } else { api_version }
        ));
    }
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".to_string());
    };
    let got_uid = response["uid"].as_str().unwrap_or_default();
    if got_uid != uid {
        return Err(format!("expected response.uid={}, got {}", go_quote(uid), go_quote(got_uid)));
    }
    let patch = patch_of(version, response)?;
    if patch.is_some() && !may_patch {
        return Err("validating webhooks may not return patches".to_string());
    }
    Ok(Answer {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        status: response["status"].clone(),
        patch,
        warnings: strings(&response["warnings"]),
        audit_annotations: response["auditAnnotations"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
    })
}

/// The decoded patch; v1 insists on `patchType: JSONPatch` beside it,
/// v1beta1 implied it.
fn patch_of(version: &str, response: &Value) -> Result<Option<Vec<u8>>, String> {
    let encoded = response["patch"].as_str().filter(|p| !p.is_empty());
    let patch_type = response["patchType"].as_str();
    if version == "v1" {
        match (encoded, patch_type) {
            (Some(_), None) => {
                return Err("webhook returned response.patch but not response.patchType".into());
            }
            (None, Some(_)) => {
                return Err("webhook returned response.patchType but not response.patch".into());
            }
            (Some(_), Some(kind)) if kind != "JSONPatch" => {
                return Err(format!("webhook returned invalid response.patchType of {}", go_quote(kind)));
            }
            _ => {}
        }
    }
    let Some(encoded) = encoded else { return Ok(None) };
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map(Some)
        .map_err(|e| format!("response.patch is not base64: {e}"))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

fn go_quote(text: &str) -> String {
    crate::errors::go_quote(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(response: Value) -> Vec<u8> {
        serde_json::to_vec(
            &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
        )
        .unwrap()
    }

    #[test]
    fn answers_are_checked_as_kube_checks_them() {
        let ok = answer("v1", "u1", &reply(json!({"uid": "u1", "allowed": true, "warnings": ["w"]})), true)
            .unwrap();
        assert!(ok.allowed);
        assert_eq!(ok.warnings, ["w"]);
        let wrong = answer("v1", "u1", &reply(json!({"uid": "u2", "allowed": true})), true).unwrap_err();
        assert_eq!(wrong, "expected response.uid=\"u1\", got \"u2\"");
        let typeless = answer("v1", "u1", br#"{"response": {"uid": "u1"}}"#, true).unwrap_err();
        assert_eq!(
            typeless,
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind="
        );
        // v1beta1 answers need neither their type nor a patchType.
        let patch = base64::engine::general_purpose::STANDARD.encode("[]");
        let beta = answer(
            "v1beta1",
            "u1",
            &serde_json::to_vec(&json!({"response": {"uid": "u1", "allowed": true, "patch": patch}}))
                .unwrap(),
            true,
        )
        .unwrap();
        assert_eq!(beta.patch.as_deref(), Some(&b"[]"[..]));
        let untyped = answer("v1", "u1", &reply(json!({"uid": "u1", "allowed": true, "patch": patch})), true)
            .unwrap_err();
        assert_eq!(untyped, "webhook returned response.patch but not response.patchType");
        let merge = reply(json!({"uid": "u1", "allowed": true, "patch": patch, "patchType": "Merge"}));
        assert_eq!(
            answer("v1", "u1", &merge, true).unwrap_err(),
            "webhook returned invalid response.patchType of \"Merge\""
        );
        let patched = reply(json!({"uid": "u1", "allowed": true, "patch": patch, "patchType": "JSONPatch"}));
        assert!(answer("v1", "u1", &patched, false).is_err());
        assert_eq!(answer("v1", "u1", &reply(json!(null)), true).unwrap_err(), "webhook response was absent");
        assert!(answer("v1", "u1", b"garbage", true).is_err());
    }
}
