//! List continue tokens in kube-apiserver's format, so clients see the same
//! opaque strings: base64url (unpadded) of
//! `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key after the prefix>"}`.

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};

use super::StorageError;

const VERSION: &str = "meta.k8s.io/v1";

/// Where the next page starts: the revision the list is pinned to and the
/// first key to read, relative to the listed prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueToken {
    #[serde(rename = "v")]
    version: String,
    pub rv: i64,
    pub start: String,
}

impl ContinueToken {
    /// Where a list of `prefix` starts and at which revision: from the
    /// client's `token` when it continues one (the first page's revision),
    /// else the whole prefix at `resource_version` (0: the latest).
    pub fn resume(
        prefix: &str,
        token: Option<&str>,
        resource_version: i64,
    ) -> Result<(String, i64), StorageError> {
        match token {
            Some(token) => {
                let token = ContinueToken::decode(token)?;
                Ok((format!("{prefix}{}", token.start), token.rv))
            }
            None => Ok((prefix.to_string(), resource_version)),
        }
    }

    pub fn new(rv: i64, start: impl Into<String>) -> Self {
        Self { version: VERSION.into(), rv, start: start.into() }
    }

    pub fn encode(&self) -> String {
        // Serializing a struct of strings and an integer cannot fail.
        let json = serde_json::to_vec(self).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// Parses a token from a client; anything malformed is refused, as is a
    /// start key that would leave the listed prefix.
    pub fn decode(token: &str) -> Result<Self, StorageError> {
        let invalid = |why: &str| StorageError::InvalidContinue(why.to_string());
        let raw = URL_SAFE_NO_PAD
            .decode(token)
            .or_else(|_| URL_SAFE.decode(token))
            .map_err(|_| invalid("not base64"))?;
        let parsed: Self = serde_json::from_slice(&raw).map_err(|_| invalid("not a continue token"))?;
        if parsed.version != VERSION {
            return Err(invalid(&format!("incorrect encoded start resourceVersion (version {VERSION})")));
        }
        if parsed.rv <= 0 {
            return Err(invalid("incorrect encoded start resourceVersion"));
        }
        if parsed.start.is_empty() || parsed.start.split('/').any(|part| part == "..") {
            return Err(invalid("path traversal attempt detected"));
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_match_kubes_encoding() {
        let token = ContinueToken::new(42, "ns/b\u{0}");
        let encoded = token.encode();
        assert!(!encoded.contains('='), "unpadded base64url");
        let json = URL_SAFE_NO_PAD.decode(&encoded).unwrap();
        assert_eq!(json, br#"{"v":"meta.k8s.io/v1","rv":42,"start":"ns/b\u0000"}"#);
        assert_eq!(ContinueToken::decode(&encoded).unwrap(), token);
    }

    #[test]
    fn foreign_or_malformed_tokens_are_refused() {
        let bad = |json: &str| ContinueToken::decode(&URL_SAFE_NO_PAD.encode(json));
        for token in [
            bad(r#"{"v":"meta.k8s.io/v2","rv":1,"start":"a"}"#),
            bad(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
            bad(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}"#),
            bad(r#"{"v":"meta.k8s.io/v1","rv":1,"start":""}"#),
            bad("[]"),
            ContinueToken::decode("%%%"),
        ] {
            assert!(matches!(token, Err(StorageError::InvalidContinue(_))), "{token:?}");
        }
    }
}
