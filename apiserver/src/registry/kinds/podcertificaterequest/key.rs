//! The key a PodCertificateRequest asks a certificate for: kubelet's stub
//! PKCS#10 request, whose contents do not matter but whose key and
//! signature do. As kube checks it: a key of a supported type and size
//! (Ed25519; ECDSA on P-256, P-384 or P-521; RSA of 3072 or 4096 bits)
//! and a signature that verifies.

use serde_json::json;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::prelude::FromDer;
use x509_parser::x509::SubjectPublicKeyInfo;

use super::super::field;
use crate::errors::Cause;

const AT: &str = "spec.stubPKCS10Request";

/// kube's cap on the request's size.
pub const MAX_REQUEST_BYTES: usize = 10 * 1024;

const RSA: &str = "1.2.840.113549.1.1.1";
const EC: &str = "1.2.840.10045.2.1";
const ED25519: &str = "1.3.101.112";
const DSA: &str = "1.2.840.10040.4.1";

/// The curves Go's x509 parses, by OID, with the names it prints.
const CURVES: [(&str, &str); 4] = [
    ("1.3.132.0.33", "P-224"),
    ("1.2.840.10045.3.1.7", "P-256"),
    ("1.3.132.0.34", "P-384"),
    ("1.3.132.0.35", "P-521"),
];

/// A field error whose value kube leaves out (`field.OmitValueType`).
pub fn invalid_omitted(at: &str, detail: &str) -> Cause {
    field::cause("FieldValueInvalid", at, format!("Invalid value: {detail}"))
}

/// kube's `validateStubPKCS10Request`.
pub fn request_causes(der: &[u8]) -> Vec<Cause> {
    if der.len() > MAX_REQUEST_BYTES {
        return vec![field::too_long(AT, MAX_REQUEST_BYTES)];
    }
    let Ok((_, request)) = X509CertificationRequest::from_der(der) else {
        return vec![invalid_omitted(AT, "must be a valid PKCS#10 CSR")];
    };
    if let Some(cause) = key_cause(&request.certification_request_info.subject_pki) {
        return vec![cause];
    }
    // Only the signature is checked: kubelet's requests are empty, and
    // signers judge the contents.
    match request.verify_signature() {
        Ok(()) => Vec::new(),
        Err(_) => vec![invalid_omitted(AT, "invalid signature")],
    }
}

/// Why the key is not one kube accepts, if it is not.
fn key_cause(key: &SubjectPublicKeyInfo) -> Option<Cause> {
    match key.algorithm.algorithm.to_id_string().as_str() {
        ED25519 => None,
        EC => {
            let curve =
                key.algorithm.parameters.as_ref().and_then(|p| p.as_oid().ok()).map(|o| o.to_id_string());
            match CURVES.iter().find(|(oid, _)| Some(*oid) == curve.as_deref()) {
                None => Some(invalid_omitted(AT, "must be a valid PKCS#10 CSR")),
                Some((_, "P-224")) => Some(field::invalid(
                    AT,
                    &json!("curve P-224"),
                    "elliptic public keys must use curve P256, P384, or P521",
                )),
                Some(_) => None,
            }
        }
        RSA => {
            let bits = key.parsed().map(|k| k.key_size()).unwrap_or_default();
            (bits != 3072 && bits != 4096).then(|| {
                field::invalid(
                    AT,
                    &json!(format!("{bits}-bit modulus")),
                    "RSA keys must have modulus size 3072 or 4096",
                )
            })
        }
        DSA => {
            Some(invalid_omitted(AT, "unknown public key type; supported types are Ed25519, ECDSA, and RSA"))
        }
        _ => Some(invalid_omitted(AT, "must be a valid PKCS#10 CSR")),
    }
}

/// The DER of the request's public key (a SubjectPublicKeyInfo), to
/// compare with the key a certificate was issued to.
pub fn public_key_der(request: &[u8]) -> Option<Vec<u8>> {
    let (_, parsed) = X509CertificationRequest::from_der(request).ok()?;
    Some(parsed.certification_request_info.subject_pki.raw.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stub(algorithm: &'static rcgen::SignatureAlgorithm) -> Vec<u8> {
        let key = rcgen::KeyPair::generate_for(algorithm).unwrap();
        let params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.serialize_request(&key).unwrap().der().to_vec()
    }

    fn messages(causes: Vec<Cause>) -> Vec<String> {
        causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
    }

    #[test]
    fn kubelets_key_types_pass_and_others_get_kubes_words() {
        for algorithm in
            [&rcgen::PKCS_ED25519, &rcgen::PKCS_ECDSA_P256_SHA256, &rcgen::PKCS_ECDSA_P384_SHA384]
        {
            assert!(request_causes(&stub(algorithm)).is_empty());
        }
        assert_eq!(
            messages(request_causes(b"nonsense")),
            ["spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR"]
        );
        assert_eq!(
            messages(request_causes(&[0; MAX_REQUEST_BYTES + 1])),
            ["spec.stubPKCS10Request: Too long: may not be more than 10240 bytes"]
        );
        // A signature that does not verify: flip a bit of it (the last byte).
        let mut tampered = stub(&rcgen::PKCS_ED25519);
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert_eq!(
            messages(request_causes(&tampered)),
            ["spec.stubPKCS10Request: Invalid value: invalid signature"]
        );
    }
}
