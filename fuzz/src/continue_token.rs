//! List continue tokens (`rtcd_apiserver::storage::ContinueToken`): what a
//! client sends back as `?continue=`. Input: a selector byte, then either
//! the token text (decoded as the server does) or, for odd selectors, the
//! parts of a token the server could issue (revision, start key).
//!
//! Properties: decoding never panics; a decoded token re-encodes to text
//! that decodes to the same token; the key a token resumes from never
//! leaves the listed prefix through a `..` segment; a token the server
//! issues for a valid position decodes to itself, and no token decodes to
//! something other than what was encoded.

use rtcd_apiserver::storage::ContinueToken;

const PREFIX: &str = "/registry/pods/";

pub fn run(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    if selector & 1 == 0 {
        // Query parameters arrive as UTF-8; lossy conversion is what the server sees.
        decoded(&String::from_utf8_lossy(rest));
    } else {
        issued(rest);
    }
}

fn decoded(text: &str) {
    let Ok(token) = ContinueToken::decode(text) else { return };
    let again = token.encode();
    match ContinueToken::decode(&again) {
        Ok(back) => assert_eq!(back, token, "re-encoded token decodes differently"),
        Err(e) => panic!("re-encoded token {again:?} does not decode: {e:?}"),
    }
    match ContinueToken::resume(PREFIX, Some(text), 0) {
        Ok((key, _rv)) => {
            assert!(key.starts_with(PREFIX), "resumed key {key:?} is outside {PREFIX}");
            assert!(!key.split('/').any(|part| part == ".."), "resumed key {key:?} climbs out of the prefix");
        }
        Err(e) => panic!("a token that decodes does not resume: {e:?}"),
    }
}

fn issued(rest: &[u8]) {
    let Some((rv, start)) = rest.split_first_chunk::<8>() else { return };
    let rv = i64::from_le_bytes(*rv);
    let start = String::from_utf8_lossy(start).into_owned();
    let token = ContinueToken::new(rv, start.clone());
    let text = token.encode();
    // The server issues tokens for positive revisions and a next key below
    // the prefix (`ns/name`: no empty, `.` or `..` segment); those must come
    // back intact. Others may be refused, but never changed.
    let issuable = rv > 0
        && !start.is_empty()
        && start.split('/').all(|part| !part.is_empty() && part != "." && part != "..");
    match ContinueToken::decode(&text) {
        Ok(back) => assert_eq!(back, token, "an issued token decodes differently"),
        Err(e) => assert!(!issuable, "an issued token for rv {rv}, start {start:?} is refused: {e:?}"),
    }
    decoded(&text);
}
