use base64::Engine as _;
use serde_json::{Value, json};

use super::*;

fn messages(result: Result<(), ApiError>) -> Vec<String> {
    match result {
        Ok(()) => Vec::new(),
        Err(ApiError::Invalid { causes, .. }) => {
            causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
        }
        Err(other) => panic!("expected Invalid, got {other:?}"),
    }
}

fn request(key: &rcgen::KeyPair) -> Value {
    let params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    let der = params.serialize_request(key).unwrap().der().to_vec();
    let mut pcr = json!({"metadata": {"name": "pcr", "namespace": "default"}, "spec": {
        "signerName": "example.com/pods", "podName": "web-0", "podUID": "u1",
        "serviceAccountName": "default", "serviceAccountUID": "u2", "nodeName": "node-a", "nodeUID": "u3",
        "stubPKCS10Request": base64::engine::general_purpose::STANDARD.encode(der)}});
    PcrStrategy.set_defaults(&mut pcr);
    PcrStrategy.prepare_for_create(&mut pcr);
    pcr
}

/// A certificate for `key`, valid from `from` for `seconds`, as a signer
/// would issue it (self-signed will do: only the key and times matter).
fn certificate(key: &rcgen::KeyPair, from: i64, seconds: i64) -> String {
    let mut params = rcgen::CertificateParams::new(vec!["web-0.example.com".to_string()]).unwrap();
    params.not_before = time::OffsetDateTime::from_unix_timestamp(from).unwrap();
    params.not_after = time::OffsetDateTime::from_unix_timestamp(from + seconds).unwrap();
    params.self_signed(key).unwrap().pem()
}

fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds).unwrap().to_string()
}

fn condition(kind: &str) -> Value {
    json!({"type": kind, "status": "True", "reason": "Because", "lastTransitionTime": "2026-11-28T10:00:00Z"})
}

#[test]
fn a_kubelet_request_is_defaulted_and_accepted() {
    let pcr = request(&rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap());
    assert_eq!(pcr["spec"]["maxExpirationSeconds"], 86400);
    assert_eq!(pcr["status"], json!({}));
    assert_eq!(messages(PcrStrategy.validate(&pcr)), Vec::<String>::new());
}

#[test]
fn a_bad_request_gets_kubes_causes() {
    let mut pcr = json!({"metadata": {"name": "pcr"}, "spec": {
        "signerName": "kubernetes.io/x/y", "podName": "Web", "podUID": "", "serviceAccountName": "sa",
        "serviceAccountUID": "u", "nodeName": "n", "nodeUID": "u", "maxExpirationSeconds": 100000,
        "unverifiedUserAnnotations": {"plain": "x"}}});
    PcrStrategy.set_defaults(&mut pcr);
    let found = messages(PcrStrategy.validate(&pcr));
    assert_eq!(
        found,
        [
            "spec.signerName: Invalid value: \"kubernetes.io/x/y\": must be a fully qualified domain and path of the form 'example.com/signer-name'",
            "spec.unverifiedUserAnnotations: Invalid value: \"plain\": must be a domain-prefixed key (such as \"acme.io/foo\")",
            "spec.podName: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.podUID: Invalid value: \"\": must not be empty",
            "spec.maxExpirationSeconds: Invalid value: 100000: must be in the range [3600, 86400]",
            "spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set",
        ]
    );
    assert_eq!(
        field::signer_name_causes("s", "example/x").iter().map(|c| c.message.as_str()).collect::<Vec<_>>(),
        ["Invalid value: \"example\": should be a domain with at least two segments separated by dots"]
    );
}

#[test]
fn the_spec_never_changes() {
    let old = request(&rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap());
    let mut new = old.clone();
    new["spec"]["podName"] = json!("other");
    let found = messages(PcrStrategy.validate_update(&new, &old));
    assert_eq!(found.len(), 1);
    assert!(
        found[0].starts_with("spec: Invalid value: ") && found[0].ends_with(": field is immutable"),
        "{found:?}"
    );
}

#[test]
fn a_signer_issues_once_to_the_requested_key() {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let old = request(&key);
    let now = super::now_unix();
    let issue = |chain: String, from: i64, to: i64, refresh: i64| {
        let mut new = old.clone();
        new["status"] = json!({"conditions": [condition("Issued")], "certificateChain": chain,
            "notBefore": rfc3339(from), "notAfter": rfc3339(to), "beginRefreshAt": rfc3339(refresh)});
        new
    };
    let good = issue(certificate(&key, now, 7200), now, now + 7200, now + 3600);
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &good, &old)),
        Vec::<String>::new()
    );

    // Another key's certificate.
    let stranger = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let wrong = issue(certificate(&stranger, now, 7200), now, now + 7200, now + 3600);
    let found = messages(PcrStrategy.validate_subresource_update(Some("status"), &wrong, &old));
    assert!(found[0].ends_with(": leaf certificate was not issued to the requested public key"), "{found:?}");

    // Too long a life for the request, too short a one, a refresh too late.
    let long = issue(certificate(&key, now, 90_000), now, now + 90_000, now + 3600);
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &long, &old)),
        [
            "status.certificateChain: Invalid value: 90000000000000: leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)"
        ]
    );
    let short = issue(certificate(&key, now, 1800), now, now + 1800, now + 900);
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &short, &old)),
        [
            "status.certificateChain: Invalid value: 1800000000000: leaf certificate lifetime must be >= 1 hour"
        ]
    );
    let late = issue(certificate(&key, now, 7200), now, now + 7200, now + 7000);
    let found = messages(PcrStrategy.validate_subresource_update(Some("status"), &late, &old));
    assert!(found[0].ends_with(": must be at least 10 minutes before status.notAfter"), "{found:?}");

    // Once issued, nothing changes; a status write that is not a decision
    // changes nothing either.
    let mut again = good.clone();
    again["status"]["conditions"] = json!([condition("Denied")]);
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &again, &good)),
        ["status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed"]
    );
    let mut pending = old.clone();
    pending["status"]["certificateChain"] = json!("x");
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &pending, &old)),
        [
            "status: Invalid value: status is immutable unless transitioning to \"Issued\", \"Denied\", or \"Failed\""
        ]
    );
}

#[test]
fn denials_carry_only_their_condition() {
    let old = request(&rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap());
    let mut denied = old.clone();
    denied["status"] = json!({"conditions": [condition("Denied")]});
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &denied, &old)),
        Vec::<String>::new()
    );
    denied["status"]["certificateChain"] = json!("x");
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &denied, &old)),
        [
            "status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest"
        ]
    );
    let mut odd = old.clone();
    odd["status"] =
        json!({"conditions": [condition("Ready"), {"type": "Failed", "status": "False", "reason": "x y"}]});
    assert_eq!(
        messages(PcrStrategy.validate_subresource_update(Some("status"), &odd, &old)),
        [
            "status.conditions[0].type: Unsupported value: \"Ready\": supported values: \"Issued\", \"Denied\", \"Failed\"",
            "status.conditions[1].status: Unsupported value: \"False\": supported values: \"True\"",
            "status.conditions[1].lastTransitionTime: Required value",
            "status.conditions[1].reason: Invalid value: \"x y\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
        ]
    );
}
