//! etcd's JWT tokens (`--auth-token jwt,sign-method=RS256,priv-key=...`):
//! a token is signed claims `{username, revision, exp}` that any member
//! holding the key checks by itself: no member needs to have seen it made
//! (a member remembers the tokens it verified only to save the work).
//! `revision` is the auth revision the token was made at: once users, roles
//! or permissions change, the store refuses it as "revision of auth store
//! is old" and the client authenticates again, as with etcd.
//!
//! Keys as etcd reads them: HMAC (`HS*`) takes `priv-key`'s bytes as the
//! secret; RSA (`RS*`, `PS*`) and ECDSA (`ES256`, `ES384`) take PEM files.
//! A member given only `pub-key` verifies tokens but cannot make them
//! (etcd's verify-only mode). When both are given, the private key's own
//! public half verifies, as in etcd.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, EncodingKey, Header, Validation};
use ring::signature::{self as sig, KeyPair};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use serde::{Deserialize, Serialize};

use crate::settings::JwtSettings;

/// What a token says (etcd's claim names).
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    username: String,
    revision: u64,
    /// Unix seconds.
    exp: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    /// etcd's text (it reports every option it cannot read so).
    #[error(
        "auth: invalid auth options (sign-method {0:?} is none of HS256/384/512, RS256/384/512, PS256/384/512, ES256/384)"
    )]
    UnknownMethod(String),
    #[error("sign-method {0} is not supported (ring has no P-521 or EdDSA-in-JWT support here)")]
    UnsupportedMethod(String),
    /// etcd's text: neither key was given (or no secret for HMAC).
    #[error("auth: missing key data")]
    MissingKey,
    /// etcd's text, with the reason.
    #[error("auth: invalid auth options (cannot read {0}: {1})")]
    Read(PathBuf, std::io::Error),
    #[error("{0} is not a usable key for {1:?}: {2}")]
    BadKey(PathBuf, Algorithm, String),
    /// etcd's text: Authenticate on a member that only has a public key.
    #[error("auth: token signing attempted with verify-only key")]
    VerifyOnly,
    #[error("cannot sign a token: {0}")]
    Sign(String),
}

/// How many verified tokens a member remembers (see `JwtTokens::verified`).
const VERIFIED_TOKENS: usize = 4096;

#[derive(Debug)]
pub struct JwtTokens {
    algorithm: Algorithm,
    /// `None` in verify-only mode.
    signing: Option<EncodingKey>,
    verifying: DecodingKey,
    validation: Validation,
    ttl: Duration,
    /// Tokens whose signature checked out, with their claims: a client
    /// sends the same token with every request, and an RSA or ECDSA check
    /// costs tens of microseconds. Keyed by the whole token, so only the
    /// exact bytes that verified are taken; `exp` is still checked on every
    /// use. Emptied when full, which bounds it.
    verified: Mutex<HashMap<String, Claims>>,
}

impl JwtTokens {
    /// Reads and checks the keys of `settings`; a key that cannot sign or
    /// verify stops the member at startup rather than at the first login.
    pub fn load(settings: &JwtSettings) -> Result<Self, JwtError> {
        super::ring_jwt::install();
        let algorithm = algorithm(&settings.sign_method)?;
        // An empty file is no key (etcd's rule): an empty HMAC secret would
        // let anyone sign tokens.
        let private = settings.private_key.as_deref().map(read).transpose()?.filter(|(_, k)| !k.is_empty());
        let public = settings.public_key.as_deref().map(read).transpose()?.filter(|(_, k)| !k.is_empty());
        let (signing, verifying) = match algorithm.family() {
            AlgorithmFamily::Hmac => {
                let (_, secret) = private.ok_or(JwtError::MissingKey)?;
                (Some(EncodingKey::from_secret(&secret)), DecodingKey::from_secret(&secret))
            }
            AlgorithmFamily::Rsa => rsa_keys(algorithm, private, public)?,
            AlgorithmFamily::Ec => ec_keys(algorithm, private, public)?,
            AlgorithmFamily::Ed => return Err(JwtError::UnsupportedMethod(settings.sign_method.clone())),
        };
        let mut validation = Validation::new(algorithm);
        // etcd checks `exp` to the second, with no grace, and sets no audience.
        validation.leeway = 0;
        validation.validate_aud = false;
        Ok(Self { algorithm, signing, verifying, validation, ttl: settings.ttl, verified: Mutex::default() })
    }

    /// Whether this member has the private key (etcd's verify-only mode
    /// has not).
    pub fn can_sign(&self) -> Result<(), JwtError> {
        self.signing.as_ref().map(|_| ()).ok_or(JwtError::VerifyOnly)
    }

    /// A token for `user` at auth revision `revision`, living the TTL.
    pub fn sign(&self, user: &str, revision: u64) -> Result<String, JwtError> {
        let key = self.signing.as_ref().ok_or(JwtError::VerifyOnly)?;
        let exp = unix_seconds(SystemTime::now() + self.ttl);
        let claims = Claims { username: user.to_owned(), revision, exp };
        jsonwebtoken::encode(&Header::new(self.algorithm), &claims, key)
            .map_err(|e| JwtError::Sign(e.to_string()))
    }

    /// The user and auth revision of a token signed with this member's key,
    /// with this sign-method, not expired; `None` for anything else.
    pub fn verify(&self, token: &str) -> Option<(String, u64)> {
        let now = unix_seconds(SystemTime::now());
        // Valid through the second of `exp`, as jsonwebtoken and etcd say.
        let live = |c: &Claims| (now <= c.exp).then(|| (c.username.clone(), c.revision));
        if let Some(claims) = self.verified().get(token) {
            return live(claims);
        }
        let claims = jsonwebtoken::decode::<Claims>(token, &self.verifying, &self.validation).ok()?.claims;
        let answer = live(&claims);
        let mut verified = self.verified();
        if verified.len() >= VERIFIED_TOKENS {
            verified.clear();
        }
        verified.insert(token.to_owned(), claims);
        answer
    }

    fn verified(&self) -> std::sync::MutexGuard<'_, HashMap<String, Claims>> {
        // A map of verified tokens holds no invariant a panic could break.
        self.verified.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn unix_seconds(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// etcd's sign-method names are the JWT `alg` names.
fn algorithm(method: &str) -> Result<Algorithm, JwtError> {
    match method {
        "ES512" | "EdDSA" => Err(JwtError::UnsupportedMethod(method.to_owned())),
        _ => method.parse().map_err(|_| JwtError::UnknownMethod(method.to_owned())),
    }
}

fn read(path: &Path) -> Result<(PathBuf, Vec<u8>), JwtError> {
    let bytes = std::fs::read(path).map_err(|e| JwtError::Read(path.to_owned(), e))?;
    Ok((path.to_owned(), bytes))
}

type Keys = (Option<EncodingKey>, DecodingKey);

/// RSA keys in PEM: PKCS#1 or PKCS#8 private, PKIX or PKCS#1 public.
fn rsa_keys(
    algorithm: Algorithm,
    private: Option<(PathBuf, Vec<u8>)>,
    public: Option<(PathBuf, Vec<u8>)>,
) -> Result<Keys, JwtError> {
    let bad = |path: &Path, why: String| JwtError::BadKey(path.to_owned(), algorithm, why);
    match (private, public) {
        (Some((path, pem)), _) => {
            let signing = EncodingKey::from_rsa_pem(&pem).map_err(|e| bad(&path, e.to_string()))?;
            let pair =
                sig::RsaKeyPair::from_der(signing.as_bytes()).map_err(|e| bad(&path, e.to_string()))?;
            Ok((Some(signing), DecodingKey::from_rsa_der(pair.public().as_ref())))
        }
        (None, Some((path, pem))) => {
            Ok((None, DecodingKey::from_rsa_pem(&pem).map_err(|e| bad(&path, e.to_string()))?))
        }
        (None, None) => Err(JwtError::MissingKey),
    }
}

/// ECDSA keys in PEM: SEC1 (`EC PRIVATE KEY`, what `openssl ecparam
/// -genkey` writes) or PKCS#8 private, PKIX public.
fn ec_keys(
    algorithm: Algorithm,
    private: Option<(PathBuf, Vec<u8>)>,
    public: Option<(PathBuf, Vec<u8>)>,
) -> Result<Keys, JwtError> {
    let bad = |path: &Path, why: String| JwtError::BadKey(path.to_owned(), algorithm, why);
    let (curve, signing_alg) = match algorithm {
        Algorithm::ES256 => (P256_OID, &sig::ECDSA_P256_SHA256_FIXED_SIGNING),
        Algorithm::ES384 => (P384_OID, &sig::ECDSA_P384_SHA384_FIXED_SIGNING),
        other => return Err(JwtError::UnsupportedMethod(format!("{other:?}"))),
    };
    match (private, public) {
        (Some((path, pem)), _) => {
            let pkcs8 = match PrivateKeyDer::from_pem_slice(&pem).map_err(|e| bad(&path, e.to_string()))? {
                PrivateKeyDer::Pkcs8(der) => der.secret_pkcs8_der().to_vec(),
                PrivateKeyDer::Sec1(der) => sec1_to_pkcs8(der.secret_sec1_der(), curve),
                _ => return Err(bad(&path, "not an EC private key".into())),
            };
            let rng = ring::rand::SystemRandom::new();
            let pair = sig::EcdsaKeyPair::from_pkcs8(signing_alg, &pkcs8, &rng)
                .map_err(|e| bad(&path, e.to_string()))?;
            let verifying = DecodingKey::from_ec_der(pair.public_key().as_ref());
            Ok((Some(EncodingKey::from_ec_der(&pkcs8)), verifying))
        }
        (None, Some((path, pem))) => {
            Ok((None, DecodingKey::from_ec_pem(&pem).map_err(|e| bad(&path, e.to_string()))?))
        }
        (None, None) => Err(JwtError::MissingKey),
    }
}

/// DER of the OIDs `id-ecPublicKey` (1.2.840.10045.2.1), `prime256v1`
/// (1.2.840.10045.3.1.7) and `secp384r1` (1.3.132.0.34).
const EC_PUBLIC_KEY_OID: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const P256_OID: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const P384_OID: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

/// A SEC1 `ECPrivateKey` wrapped as PKCS#8 `PrivateKeyInfo` (version 0,
/// the EC algorithm on `curve`, the SEC1 bytes as the private key), the
/// only form ring reads.
fn sec1_to_pkcs8(sec1: &[u8], curve: &[u8]) -> Vec<u8> {
    let algorithm = der(0x30, &[EC_PUBLIC_KEY_OID, curve].concat());
    let version = [0x02, 0x01, 0x00];
    der(0x30, &[&version[..], &algorithm, &der(0x04, sec1)].concat())
}

/// One DER element: tag, definite length (short form below 128, else
/// the length's big-endian bytes after their count), contents.
fn der(tag: u8, contents: &[u8]) -> Vec<u8> {
    let len = contents.len();
    let mut out = vec![tag];
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let significant = &bytes[bytes.iter().take_while(|b| **b == 0).count()..];
        out.push(0x80 | significant.len() as u8);
        out.extend_from_slice(significant);
    }
    out.extend_from_slice(contents);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(dir: &Path, method: &str, private: Option<&[u8]>, public: Option<&[u8]>) -> JwtSettings {
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        JwtSettings {
            sign_method: method.into(),
            private_key: private.map(|b| write(&format!("{method}.key"), b)),
            public_key: public.map(|b| write(&format!("{method}.pub"), b)),
            ttl: Duration::from_secs(60),
        }
    }

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "rtcd-jwt-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn tokens_carry_user_and_revision_and_only_this_key_verifies_them() {
        let dir = temp_dir();
        let ec = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let tokens =
            JwtTokens::load(&settings(&dir, "ES256", Some(ec.serialize_pem().as_bytes()), None)).unwrap();
        let token = tokens.sign("alice", 7).unwrap();
        assert_eq!(tokens.verify(&token), Some(("alice".into(), 7)));

        // Another key of the same kind does not verify it.
        let other = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let others =
            JwtTokens::load(&settings(&dir, "ES256", Some(other.serialize_pem().as_bytes()), None)).unwrap();
        assert_eq!(others.verify(&token), None);

        // A member with the public key alone verifies but cannot sign.
        let public = settings(&dir, "ES256", None, Some(ec.public_key_pem().as_bytes()));
        let verify_only = JwtTokens::load(&public).unwrap();
        assert_eq!(verify_only.verify(&token), Some(("alice".into(), 7)));
        assert!(matches!(verify_only.sign("alice", 7), Err(JwtError::VerifyOnly)));

        // Claims changed after signing, or an `alg` of "none", are refused.
        let parts: Vec<&str> = token.split('.').collect();
        let forged_claims = base64_url(br#"{"username":"root","revision":7,"exp":99999999999}"#);
        assert_eq!(tokens.verify(&format!("{}.{forged_claims}.{}", parts[0], parts[2])), None);
        let none = base64_url(br#"{"alg":"none","typ":"JWT"}"#);
        assert_eq!(tokens.verify(&format!("{none}.{forged_claims}.")), None);
        assert_eq!(tokens.verify("garbage"), None);
        assert_eq!(tokens.verify(""), None);
    }

    #[test]
    fn hmac_tokens_expire_and_an_hmac_member_refuses_rsa_tokens() {
        let dir = temp_dir();
        let mut hs = settings(&dir, "HS256", Some(b"a shared secret"), None);
        let tokens = JwtTokens::load(&hs).unwrap();
        assert_eq!(tokens.verify(&tokens.sign("bob", 3).unwrap()), Some(("bob".into(), 3)));

        // Verified once (and remembered), a token still expires.
        hs.ttl = Duration::from_secs(1);
        let short = JwtTokens::load(&hs).unwrap();
        let token = short.sign("bob", 3).unwrap();
        assert_eq!(short.verify(&token), Some(("bob".into(), 3)));
        std::thread::sleep(Duration::from_millis(2100));
        assert_eq!(short.verify(&token), None, "expired, though verified before");

        // A token signed with another algorithm is refused even if the
        // signature were right for it.
        let es = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let ec_tokens =
            JwtTokens::load(&settings(&dir, "ES256", Some(es.serialize_pem().as_bytes()), None)).unwrap();
        assert_eq!(tokens.verify(&ec_tokens.sign("bob", 3).unwrap()), None);
    }

    #[test]
    fn bad_settings_are_refused_with_etcds_texts() {
        let dir = temp_dir();
        let err = |s: JwtSettings| JwtTokens::load(&s).unwrap_err().to_string();
        assert_eq!(err(settings(&dir, "RS256", None, None)), "auth: missing key data");
        assert_eq!(err(settings(&dir, "HS256", None, Some(b"x"))), "auth: missing key data");
        assert!(err(settings(&dir, "XX256", None, None)).starts_with("auth: invalid auth options"));
        // An empty secret is no secret.
        assert_eq!(err(settings(&dir, "HS256", Some(b""), None)), "auth: missing key data");
        assert!(err(settings(&dir, "ES512", None, None)).contains("not supported"));
        assert!(err(settings(&dir, "RS256", Some(b"not a key"), None)).contains("not a usable key"));
        let ec = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        // An EC key for an RSA method.
        assert!(
            err(settings(&dir, "RS256", Some(ec.serialize_pem().as_bytes()), None))
                .contains("not a usable key")
        );
        let mut missing = settings(&dir, "HS256", None, None);
        missing.private_key = Some(dir.join("absent"));
        assert!(err(missing).starts_with("auth: invalid auth options (cannot read"));
    }

    #[test]
    fn sec1_keys_are_wrapped_as_pkcs8() {
        // Lengths past one byte take the long form.
        assert_eq!(der(0x04, &[0; 3]), vec![0x04, 3, 0, 0, 0]);
        assert_eq!(der(0x04, &[0; 200])[..3], [0x04, 0x81, 200]);
        assert_eq!(der(0x04, &[0; 300])[..4], [0x04, 0x82, 0x01, 0x2c]);
        assert_eq!(der(0x04, &[0; 70_000])[..5], [0x04, 0x83, 0x01, 0x11, 0x70]);
    }

    fn base64_url(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }
}
