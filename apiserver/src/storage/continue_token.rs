//! List continue tokens in kube-apiserver's format, so clients see the same
//! opaque strings: base64url (unpadded) of
//! `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key after the prefix>"}`.
//! A token from a client is read as kube reads it, and refused with kube's
//! texts (`invalid continue token: continue key is not valid: ...`).

use base64::Engine as _;
use base64::alphabet;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde::{Deserialize, Serialize};

use super::StorageError;

const VERSION: &str = "meta.k8s.io/v1";
const NOT_VALID: &str = "continue key is not valid";

/// Go's `base64.RawURLEncoding` as a decoder: no padding, and (Go being
/// lenient there) non-zero bits after the last full byte are ignored.
const GO_RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// Where the next page starts: the revision the list is pinned to and the
/// first key to read, relative to the listed prefix. A negative revision
/// (kube issues -1 with a 410 for a compacted list) means the latest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueToken {
    // Missing fields read as empty, as Go's json.Unmarshal leaves them.
    #[serde(rename = "v", default)]
    version: String,
    #[serde(default)]
    pub rv: i64,
    #[serde(default)]
    pub start: String,
}

impl ContinueToken {
    /// Where a list of `prefix` starts and at which revision (0: the
    /// latest): from the client's `token` when it continues one (the first
    /// page's revision), else the whole prefix at `resource_version`.
    pub fn resume(
        prefix: &str,
        token: Option<&str>,
        resource_version: i64,
    ) -> Result<(String, i64), StorageError> {
        match token {
            Some(token) => {
                let token = ContinueToken::decode(token)?;
                Ok((format!("{prefix}{}", token.start_key()), token.rv.max(0)))
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

    /// The start key relative to the prefix: kube roots it at `/` to clean
    /// it, then drops that `/` again.
    pub fn start_key(&self) -> &str {
        self.start.strip_prefix('/').unwrap_or(&self.start)
    }

    /// Parses a token from a client with kube's checks, in kube's order:
    /// base64, JSON, version, revision, start key, and a start key that
    /// `path.Clean` would change (so it cannot climb out of the prefix).
    pub fn decode(token: &str) -> Result<Self, StorageError> {
        let invalid = |why: String| StorageError::InvalidContinue(format!("{NOT_VALID}: {why}"));
        let raw = GO_RAW_URL
            .decode(token)
            .map_err(|_| invalid(format!("illegal base64 data at input byte {}", bad_base64_at(token))))?;
        let parsed: Self = serde_json::from_slice(&raw).map_err(|e| invalid(e.to_string()))?;
        if parsed.version != VERSION {
            return Err(StorageError::InvalidContinue(format!(
                "{NOT_VALID}: server does not recognize this encoded version {}",
                parsed.version
            )));
        }
        if parsed.rv == 0 {
            return Err(invalid(format!("incorrect encoded start resourceVersion (version {VERSION})")));
        }
        if parsed.start.is_empty() {
            return Err(invalid(format!("encoded start key empty (version {VERSION})")));
        }
        if !is_clean_path(&parsed.start) {
            return Err(invalid(parsed.start.clone()));
        }
        Ok(parsed)
    }
}

/// The byte Go's decoder reports for input it refuses: the first one
/// outside the alphabet, else the dangling last one of a bad length.
fn bad_base64_at(token: &str) -> usize {
    let in_alphabet = |b: &u8| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_';
    token.bytes().position(|b| !in_alphabet(&b)).unwrap_or(token.len().saturating_sub(1))
}

/// Whether Go's `path.Clean` leaves `start` (rooted at `/`) as it is: no
/// empty, `.` or `..` segment and no trailing `/`.
fn is_clean_path(start: &str) -> bool {
    let rooted = start.strip_prefix('/').unwrap_or(start);
    if rooted.is_empty() {
        return true;
    }
    rooted.split('/').all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<ContinueToken, StorageError>) -> String {
        match result {
            Err(StorageError::InvalidContinue(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    fn token(json: &str) -> String {
        URL_SAFE_NO_PAD.encode(json)
    }

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
    fn refusals_read_like_kubes() {
        let cases = [
            (
                token(r#"{"v":"meta.k8s.io/v2","rv":1,"start":"a"}"#),
                "server does not recognize this encoded version meta.k8s.io/v2",
            ),
            (token(r#"{"rv":1,"start":"a"}"#), "server does not recognize this encoded version "),
            (
                token(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
                "incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            ),
            (
                token(r#"{"v":"meta.k8s.io/v1","rv":1,"start":""}"#),
                "encoded start key empty (version meta.k8s.io/v1)",
            ),
            (token(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}"#), "../secrets/x"),
            (token(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"a//b"}"#), "a//b"),
            (token(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"a/"}"#), "a/"),
            ("%%%".to_string(), "illegal base64 data at input byte 0"),
            ("abcde".to_string(), "illegal base64 data at input byte 4"),
            (format!("{}=", token("{}")), "illegal base64 data at input byte 3"),
        ];
        for (input, why) in cases {
            assert_eq!(message(ContinueToken::decode(&input)), format!("continue key is not valid: {why}"));
        }
        assert!(message(ContinueToken::decode(&token("[]"))).starts_with("continue key is not valid: "));
    }

    #[test]
    fn a_negative_revision_continues_at_the_latest() {
        let (start, rv) =
            ContinueToken::resume("/p/", Some(&ContinueToken::new(-1, "b\u{0}").encode()), 0).unwrap();
        assert_eq!((start.as_str(), rv), ("/p/b\u{0}", 0));
        let (start, _) =
            ContinueToken::resume("/p/", Some(&ContinueToken::new(5, "/b").encode()), 0).unwrap();
        assert_eq!(start, "/p/b");
    }
}
