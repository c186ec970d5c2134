//! ServiceAccount tokens: JWTs this server signs for the TokenRequest
//! subresource (`kubectl create token`) and verifies as bearer tokens.
//!
//! A token names its ServiceAccount (and, when bound, a Pod or Secret) by
//! name and uid; it authenticates only while that account still exists with
//! the same uid, so deleting the account revokes its tokens. Signing uses
//! `--service-account-signing-key-file` (ECDSA P-256 as ES256, or RSA as
//! RS256); verification every key of `--service-account-key-file` (the
//! signing key's public half when none is given).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair, UnparsedPublicKey};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivateKeyDer, SubjectPublicKeyInfoDer};
use serde_json::{Value, json};
use x509_parser::prelude::FromDer;

use crate::cacher::ReadAt;
use crate::errors::ApiError;
use crate::registry::Resources;
use crate::request::UserInfo;
use crate::runtime::meta;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read key file {path}: {why}")]
    Read { path: String, why: String },
    #[error("key file {path} holds no key this server can use (ECDSA P-256 or RSA): {why}")]
    Unusable { path: String, why: String },
}

/// What a TokenRequest asks for, checked.
#[derive(Debug, Clone)]
pub struct TokenSpec {
    pub namespace: String,
    pub account: String,
    pub account_uid: String,
    pub audiences: Vec<String>,
    pub expiration_seconds: i64,
    /// `(kind, name, uid)` of a bound Pod or Secret.
    pub bound: Option<(String, String, String)>,
}

enum Signer {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Signer::Ecdsa(_) => "Signer::Ecdsa",
            Signer::Rsa(_) => "Signer::Rsa",
        })
    }
}

/// A public key tokens are checked against.
#[derive(Debug, Clone)]
struct Verifier {
    alg: &'static str,
    key: Vec<u8>,
}

impl Verifier {
    fn verifies(&self, alg: &str, message: &[u8], sig: &[u8]) -> bool {
        if alg != self.alg {
            return false;
        }
        let algorithm: &dyn signature::VerificationAlgorithm = match self.alg {
            "ES256" => &signature::ECDSA_P256_SHA256_FIXED,
            _ => &signature::RSA_PKCS1_2048_8192_SHA256,
        };
        UnparsedPublicKey::new(algorithm, &self.key).verify(message, sig).is_ok()
    }
}

#[derive(Debug)]
pub struct ServiceAccountTokens {
    signer: Option<(Signer, String)>,
    verifiers: Vec<Verifier>,
    issuers: Vec<String>,
    /// The server's audiences (`--api-audiences`, else the issuers).
    audiences: Vec<String>,
    resources: Resources,
}

impl ServiceAccountTokens {
    pub fn new(
        signing_key: Option<&Path>,
        key_files: &[std::path::PathBuf],
        issuers: Vec<String>,
        api_audiences: Vec<String>,
        resources: Resources,
    ) -> Result<ServiceAccountTokens, KeyError> {
        let mut verifiers = Vec::new();
        let signer = match signing_key {
            Some(path) => {
                let (signer, verifier) = read_signer(path)?;
                verifiers.push(verifier.clone());
                let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &verifier.key));
                Some((signer, kid))
            }
            None => None,
        };
        if !key_files.is_empty() {
            verifiers.clear();
            for path in key_files {
                verifiers.push(read_verifier(path)?);
            }
        }
        let audiences = if api_audiences.is_empty() { issuers.clone() } else { api_audiences };
        Ok(ServiceAccountTokens { signer, verifiers, issuers, audiences, resources })
    }

    /// The server's own audiences (a TokenRequest without any gets them).
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Signs a token for `spec`; None when no signing key is configured.
    pub fn mint(&self, spec: &TokenSpec) -> Option<(String, i64)> {
        let (signer, kid) = self.signer.as_ref()?;
        let issuer = self.issuers.first()?;
        let now = unix_now();
        let expires = now + spec.expiration_seconds;
        let mut private = json!({
            "namespace": spec.namespace,
            "serviceaccount": {"name": spec.account, "uid": spec.account_uid},
        });
        if let Some((kind, name, uid)) = &spec.bound {
            private[kind.to_lowercase()] = json!({"name": name, "uid": uid});
        }
        let audiences =
            if spec.audiences.is_empty() { self.audiences.clone() } else { spec.audiences.clone() };
        let claims = json!({
            "aud": audiences,
            "exp": expires,
            "iat": now,
            "iss": issuer,
            "jti": uuid::Uuid::new_v4().to_string(),
            "kubernetes.io": private,
            "nbf": now,
            "sub": format!("system:serviceaccount:{}:{}", spec.namespace, spec.account),
        });
        let alg = match signer {
            Signer::Ecdsa(_) => "ES256",
            Signer::Rsa(_) => "RS256",
        };
        let header = json!({"alg": alg, "kid": kid});
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let sig = match signer {
            Signer::Ecdsa(key) => key.sign(&rng, signing_input.as_bytes()).ok()?.as_ref().to_vec(),
            Signer::Rsa(key) => {
                let mut sig = vec![0; key.public().modulus_len()];
                key.sign(&signature::RSA_PKCS1_SHA256, &rng, signing_input.as_bytes(), &mut sig).ok()?;
                sig
            }
        };
        Some((format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)), expires))
    }

    /// The ServiceAccount a token stands for, if it is one of ours, meant
    /// for one of `audiences` (the server's when empty), in date, and its
    /// account (and bound object) still there.
    pub async fn user_of(&self, token: &str, audiences: &[String]) -> Option<UserInfo> {
        let claims = self.verified_claims(token)?;
        let now = unix_now();
        // kube allows a minute of clock skew either way.
        if claims["exp"].as_i64().is_some_and(|exp| now > exp + 60)
            || claims["nbf"].as_i64().is_some_and(|nbf| now + 60 < nbf)
        {
            return None;
        }
        let wanted = if audiences.is_empty() { &self.audiences } else { audiences };
        let token_audiences: Vec<&str> = match &claims["aud"] {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !wanted.iter().any(|a| token_audiences.contains(&a.as_str())) {
            return None;
        }
        let private = &claims["kubernetes.io"];
        let namespace = private["namespace"].as_str()?;
        let account = private["serviceaccount"]["name"].as_str()?;
        let uid = private["serviceaccount"]["uid"].as_str()?;
        if !self.still_there("serviceaccounts", Some(namespace), account, uid).await {
            return None;
        }
        let mut extra = BTreeMap::new();
        for kind in ["pod", "secret"] {
            let bound = &private[kind];
            if let (Some(name), Some(uid)) = (bound["name"].as_str(), bound["uid"].as_str()) {
                let plural = if kind == "pod" { "pods" } else { "secrets" };
                if !self.still_there(plural, Some(namespace), name, uid).await {
                    return None;
                }
                if kind == "pod" {
                    extra.insert("authentication.kubernetes.io/pod-name".to_string(), vec![name.to_string()]);
                    extra.insert("authentication.kubernetes.io/pod-uid".to_string(), vec![uid.to_string()]);
                }
            }
        }
        if let Some(jti) = claims["jti"].as_str() {
            extra
                .insert("authentication.kubernetes.io/credential-id".to_string(), vec![format!("JTI={jti}")]);
        }
        Some(UserInfo {
            name: format!("system:serviceaccount:{namespace}:{account}"),
            uid: uid.to_string(),
            groups: vec!["system:serviceaccounts".into(), format!("system:serviceaccounts:{namespace}")],
            extra,
        })
    }

    /// The claims of a token signed by one of the keys and issued here.
    fn verified_claims(&self, token: &str) -> Option<Value> {
        let mut parts = token.split('.');
        let (header, claims, sig) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
        let alg = header["alg"].as_str()?;
        let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
        let signing_input = &token[..token.len() - token.rsplit('.').next()?.len() - 1];
        if !self.verifiers.iter().any(|v| v.verifies(alg, signing_input.as_bytes(), &sig)) {
            return None;
        }
        let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).ok()?).ok()?;
        let issuer = claims["iss"].as_str()?;
        self.issuers.iter().any(|i| i == issuer).then_some(claims)
    }

    /// Whether object `name` of `plural` exists with `uid` and is not
    /// being deleted: from the watch cache, then from storage (a brand-new
    /// account may not be in the cache yet).
    async fn still_there(&self, plural: &str, namespace: Option<&str>, name: &str, uid: &str) -> bool {
        let Ok(store) = self.resources.store("", plural) else { return false };
        let cached = ReadAt { resource_version: Some(0), exact: false };
        let found = match store.get(namespace, name, &cached).await {
            Err(ApiError::NotFound { .. }) => store.get(namespace, name, &ReadAt::default()).await,
            other => other,
        };
        found.is_ok_and(|object| meta::uid_of(&object) == uid && !meta::is_being_deleted(&object))
    }
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or_default()
}

fn read_signer(path: &Path) -> Result<(Signer, Verifier), KeyError> {
    let unusable = |why: String| KeyError::Unusable { path: path.display().to_string(), why };
    let key = PrivateKeyDer::from_pem_file(path).map_err(|e| match e {
        rustls_pki_types::pem::Error::Io(e) => {
            KeyError::Read { path: path.display().to_string(), why: e.to_string() }
        }
        other => unusable(other.to_string()),
    })?;
    let rng = SystemRandom::new();
    match &key {
        PrivateKeyDer::Pkcs8(der) => {
            if let Ok(pair) = EcdsaKeyPair::from_pkcs8(
                &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                der.secret_pkcs8_der(),
                &rng,
            ) {
                let verifier = Verifier { alg: "ES256", key: pair.public_key().as_ref().to_vec() };
                return Ok((Signer::Ecdsa(pair), verifier));
            }
            let pair = RsaKeyPair::from_pkcs8(der.secret_pkcs8_der()).map_err(|e| unusable(e.to_string()))?;
            let verifier = Verifier { alg: "RS256", key: pair.public().as_ref().to_vec() };
            Ok((Signer::Rsa(pair), verifier))
        }
        PrivateKeyDer::Pkcs1(der) => {
            let pair = RsaKeyPair::from_der(der.secret_pkcs1_der()).map_err(|e| unusable(e.to_string()))?;
            let verifier = Verifier { alg: "RS256", key: pair.public().as_ref().to_vec() };
            Ok((Signer::Rsa(pair), verifier))
        }
        _ => Err(unusable("SEC1 EC keys are not read; convert with `openssl pkcs8 -topk8 -nocrypt`".into())),
    }
}

/// A public key (PEM `PUBLIC KEY`) or the public half of a private key.
fn read_verifier(path: &Path) -> Result<Verifier, KeyError> {
    if let Ok(spki) = SubjectPublicKeyInfoDer::from_pem_file(path) {
        let unusable = |why: String| KeyError::Unusable { path: path.display().to_string(), why };
        let (_, info) = x509_parser::x509::SubjectPublicKeyInfo::from_der(spki.as_ref())
            .map_err(|e| unusable(e.to_string()))?;
        let alg = match info.algorithm.algorithm.to_id_string().as_str() {
            "1.2.840.10045.2.1" => "ES256",
            "1.2.840.113549.1.1.1" => "RS256",
            other => return Err(unusable(format!("key algorithm {other}"))),
        };
        return Ok(Verifier { alg, key: info.subject_public_key.data.to_vec() });
    }
    read_signer(path).map(|(_, verifier)| verifier)
}
