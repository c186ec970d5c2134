//! kube-controller-manager's csrsigning controller for the one built-in signer that needs no
//! kubelet, `kubernetes.io/kube-apiserver-client`: an approved request (not denied, not failed,
//! not yet issued) is signed with the cluster signing CA (`--cluster-signing-cert-file` and
//! `--cluster-signing-key-file`, kube-controller-manager's flags) and its certificate written to
//! its status; one whose usages this signer cannot issue gets kube's `Failed` condition
//! (SignerValidationFailure). Requests for other signers are left to their signers.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::cacher::{Delivery, EventType};
use crate::errors::ApiError;
use crate::pki::Authority;
use crate::registry::Resources;
use crate::registry::kinds::certificatesigningrequest::{
    KUBE_APISERVER_CLIENT, parse_request, subject_repeats_attribute,
};
use crate::runtime::meta;

/// The signing CA and the longest validity it gives (`--cluster-signing-duration`).
#[derive(Debug, Clone)]
pub struct Signer {
    pub authority: Arc<Authority>,
    pub duration: Duration,
}

pub async fn run(resources: Resources, signer: Signer) {
    let Ok(requests) = resources.store("certificates.k8s.io", "certificatesigningrequests") else { return };
    loop {
        let mut watch = match requests.follow().await {
            Ok(watch) => watch,
            Err(e) => {
                tracing::debug!(error = %e, "cannot watch certificate signing requests; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let initial = std::mem::take(&mut watch.initial);
        for delivery in initial {
            handle(&requests, &signer, &delivery).await;
        }
        while let Some(delivery) = watch.live.recv().await {
            handle(&requests, &signer, &delivery).await;
        }
    }
}

async fn handle(requests: &crate::registry::Store, signer: &Signer, delivery: &Delivery) {
    let Delivery::Event { kind: EventType::Added | EventType::Modified, object, .. } = delivery else {
        return;
    };
    let csr = &object.value();
    if !wants_signing(csr) {
        return;
    }
    let name = meta::name_of(csr).to_owned();
    let outcome = issue(csr, signer);
    let written = requests
        .guaranteed_update(None, &name, false, |current| {
            if !wants_signing(current) {
                return Err(ApiError::Conflict {
                    qualified: "certificatesigningrequests.certificates.k8s.io".into(),
                    name: name.clone(),
                    why: "already handled".into(),
                });
            }
            let mut signed = current.clone();
            match &outcome {
                Ok(pem) => {
                    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pem);
                    signed["status"]["certificate"] = json!(encoded);
                }
                Err(why) => failed(&mut signed, why),
            }
            Ok(signed)
        })
        .await;
    if let Err(e) = written {
        tracing::debug!(csr = name, error = %e, "the signed certificate was not written");
    }
}

/// An approved request for this signer that nothing has answered yet.
fn wants_signing(csr: &Value) -> bool {
    let condition = |kind: &str| {
        csr["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    csr["spec"]["signerName"] == KUBE_APISERVER_CLIENT
        && condition("Approved")
        && !condition("Denied")
        && !condition("Failed")
        && csr["status"]["certificate"].as_str().is_none_or(str::is_empty)
}

/// The certificate, or why this signer will not issue it.
fn issue(csr: &Value, signer: &Signer) -> Result<String, String> {
    let usages: Vec<&str> =
        csr["spec"]["usages"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    client_usages(&usages)?;
    let request = parse_request(csr)?;
    if subject_repeats_attribute(csr) {
        // The certificate builder keeps one value per attribute type: it
        // would issue fewer groups than asked for.
        return Err(
            "rtcd's signer cannot issue a subject that repeats an attribute (such as several O groups)"
                .into(),
        );
    }
    let longest = i64::try_from(signer.duration.as_secs()).unwrap_or(i64::MAX);
    let seconds = csr["spec"]["expirationSeconds"].as_i64().map_or(longest, |asked| asked.min(longest));
    signer.authority.sign_request(request, &usages, seconds).map_err(|e| e.to_string())
}

/// What a client certificate for kube-apiserver may be used for: client auth, and optionally
/// digital signature and key encipherment.
fn client_usages(usages: &[&str]) -> Result<(), String> {
    for usage in usages {
        if !matches!(*usage, "client auth" | "digital signature" | "key encipherment") {
            return Err(format!("invalid usage for client certificate: {usage}"));
        }
    }
    if !usages.contains(&"client auth") {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok(())
}

/// kube's Failed condition of a request its signer refused.
fn failed(csr: &mut Value, why: &str) {
    let now = meta::now();
    let condition = json!({
        "type": "Failed",
        "status": "True",
        "reason": "SignerValidationFailure",
        "message": why,
        "lastUpdateTime": now,
    });
    crate::runtime::conditions::set(csr, condition, &now);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_client_usages_are_issued() {
        assert!(client_usages(&["client auth"]).is_ok());
        assert!(client_usages(&["digital signature", "key encipherment", "client auth"]).is_ok());
        assert_eq!(
            client_usages(&["server auth", "client auth"]).unwrap_err(),
            "invalid usage for client certificate: server auth"
        );
        assert_eq!(
            client_usages(&["digital signature"]).unwrap_err(),
            "missing required usage for client certificate: client auth"
        );
    }

    #[test]
    fn only_approved_unanswered_requests_of_this_signer_are_signed() {
        let approved = json!({"type": "Approved", "status": "True"});
        let csr = |signer: &str, conditions: Value, certificate: &str| json!({"spec": {"signerName": signer}, "status": {"conditions": conditions, "certificate": certificate}});
        assert!(wants_signing(&csr(KUBE_APISERVER_CLIENT, json!([approved]), "")));
        assert!(!wants_signing(&csr(KUBE_APISERVER_CLIENT, json!([]), "")));
        assert!(!wants_signing(&csr("example.com/other", json!([approved]), "")));
        assert!(!wants_signing(&csr(KUBE_APISERVER_CLIENT, json!([approved]), "LS0t")));
        let failed = json!({"type": "Failed", "status": "True"});
        assert!(!wants_signing(&csr(KUBE_APISERVER_CLIENT, json!([approved, failed]), "")));
    }
}
