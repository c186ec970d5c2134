//! The signatures of jsonwebtoken, computed with ring (the crypto rustls
//! already uses in this binary). The crate's own backends are aws-lc (a
//! C++/cmake build) and RustCrypto's `rsa` (RUSTSEC-2023-0071: its private
//! key operations leak timing), so rtcd plugs ring in through the crate's
//! `CryptoProvider`. Every algorithm etcd's JWT tokens use is here except
//! ES512 (ring has no P-521) and EdDSA, which `JwtTokens::load` refuses.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::signature::{Error as SignatureError, Signer, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::rand::SystemRandom;
use ring::{hmac, signature as sig};

/// The provider; [`install`] makes it the process's.
static RING: CryptoProvider = CryptoProvider {
    signer_factory: |algorithm, key| {
        same_family(*algorithm, key.family())?;
        Ok(Box::new(RingSigner { algorithm: *algorithm, key: key.clone() }))
    },
    verifier_factory: |algorithm, key| {
        same_family(*algorithm, key.family())?;
        Ok(Box::new(RingVerifier { algorithm: *algorithm, key: key.clone() }))
    },
    // Only JWKs use these, and rtcd reads none.
    key_utils: KeyUtils::new_unimplemented(),
};

/// Makes ring jsonwebtoken's crypto for this process; idempotent.
pub fn install() {
    // Fails only when a provider is installed already, which is this one:
    // nothing else in rtcd installs one.
    let _ = RING.install_default();
}

/// A key of one family must never serve another's algorithm (an RSA public
/// key taken as an HMAC secret is the classic forgery).
fn same_family(algorithm: Algorithm, family: jsonwebtoken::AlgorithmFamily) -> Result<()> {
    match algorithm.family() == family {
        true => Ok(()),
        false => Err(ErrorKind::InvalidKeyFormat.into()),
    }
}

struct RingSigner {
    algorithm: Algorithm,
    key: EncodingKey,
}

impl Signer<Vec<u8>> for RingSigner {
    fn try_sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, SignatureError> {
        let key = self.key.as_bytes();
        let rng = SystemRandom::new();
        if let Some(hash) = hmac_hash(self.algorithm) {
            return Ok(hmac::sign(&hmac::Key::new(hash, key), message).as_ref().to_vec());
        }
        if let Some(padding) = rsa_padding(self.algorithm) {
            let pair = sig::RsaKeyPair::from_der(key).map_err(SignatureError::from_source)?;
            let mut signature = vec![0; pair.public().modulus_len()];
            pair.sign(padding, &rng, message, &mut signature).map_err(SignatureError::from_source)?;
            return Ok(signature);
        }
        let (signing, _) = ecdsa_algorithms(self.algorithm).ok_or_else(SignatureError::new)?;
        let pair = sig::EcdsaKeyPair::from_pkcs8(signing, key, &rng).map_err(SignatureError::from_source)?;
        Ok(pair.sign(&rng, message).map_err(SignatureError::from_source)?.as_ref().to_vec())
    }
}

impl JwtSigner for RingSigner {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

struct RingVerifier {
    algorithm: Algorithm,
    key: DecodingKey,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> std::result::Result<(), SignatureError> {
        let checked = match (self.key.kind(), hmac_hash(self.algorithm)) {
            // Compared in constant time by ring.
            (DecodingKeyKind::SecretOrDer(secret), Some(hash)) => {
                hmac::verify(&hmac::Key::new(hash, secret), message, signature)
            }
            (DecodingKeyKind::SecretOrDer(der), None) => {
                let algorithm = verifying_algorithm(self.algorithm).ok_or_else(SignatureError::new)?;
                sig::UnparsedPublicKey::new(algorithm, der).verify(message, signature)
            }
            (DecodingKeyKind::RsaModulusExponent { n, e }, None) => {
                let params = rsa_parameters(self.algorithm).ok_or_else(SignatureError::new)?;
                sig::RsaPublicKeyComponents { n, e }.verify(params, message, signature)
            }
            (DecodingKeyKind::RsaModulusExponent { .. }, Some(_)) => return Err(SignatureError::new()),
        };
        checked.map_err(SignatureError::from_source)
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

fn hmac_hash(algorithm: Algorithm) -> Option<hmac::Algorithm> {
    match algorithm {
        Algorithm::HS256 => Some(hmac::HMAC_SHA256),
        Algorithm::HS384 => Some(hmac::HMAC_SHA384),
        Algorithm::HS512 => Some(hmac::HMAC_SHA512),
        _ => None,
    }
}

fn rsa_padding(algorithm: Algorithm) -> Option<&'static dyn sig::RsaEncoding> {
    match algorithm {
        Algorithm::RS256 => Some(&sig::RSA_PKCS1_SHA256),
        Algorithm::RS384 => Some(&sig::RSA_PKCS1_SHA384),
        Algorithm::RS512 => Some(&sig::RSA_PKCS1_SHA512),
        Algorithm::PS256 => Some(&sig::RSA_PSS_SHA256),
        Algorithm::PS384 => Some(&sig::RSA_PSS_SHA384),
        Algorithm::PS512 => Some(&sig::RSA_PSS_SHA512),
        _ => None,
    }
}

fn rsa_parameters(algorithm: Algorithm) -> Option<&'static sig::RsaParameters> {
    match algorithm {
        Algorithm::RS256 => Some(&sig::RSA_PKCS1_2048_8192_SHA256),
        Algorithm::RS384 => Some(&sig::RSA_PKCS1_2048_8192_SHA384),
        Algorithm::RS512 => Some(&sig::RSA_PKCS1_2048_8192_SHA512),
        Algorithm::PS256 => Some(&sig::RSA_PSS_2048_8192_SHA256),
        Algorithm::PS384 => Some(&sig::RSA_PSS_2048_8192_SHA384),
        Algorithm::PS512 => Some(&sig::RSA_PSS_2048_8192_SHA512),
        _ => None,
    }
}

/// JWT's ECDSA signatures are the fixed-width `r || s`, not DER.
fn ecdsa_algorithms(
    algorithm: Algorithm,
) -> Option<(&'static sig::EcdsaSigningAlgorithm, &'static sig::EcdsaVerificationAlgorithm)> {
    match algorithm {
        Algorithm::ES256 => Some((&sig::ECDSA_P256_SHA256_FIXED_SIGNING, &sig::ECDSA_P256_SHA256_FIXED)),
        Algorithm::ES384 => Some((&sig::ECDSA_P384_SHA384_FIXED_SIGNING, &sig::ECDSA_P384_SHA384_FIXED)),
        _ => None,
    }
}

/// The public-key check of an RSA or ECDSA algorithm on a DER key (RSA's
/// PKCS#1 public key, ECDSA's uncompressed point).
fn verifying_algorithm(algorithm: Algorithm) -> Option<&'static dyn sig::VerificationAlgorithm> {
    if let Some(params) = rsa_parameters(algorithm) {
        return Some(params);
    }
    ecdsa_algorithms(algorithm).map(|(_, verifying)| verifying as &dyn sig::VerificationAlgorithm)
}
