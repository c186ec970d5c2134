//! What every request carries past the filters: what it is about
//! ([`RequestInfo`]) and who sent it ([`UserInfo`]). Filters put them in the
//! request's extensions; handlers, admission and (later) audit read them.
//! [`deadline`] says when the request must be done by, [`ClientPresence`]
//! whether its client is still there.

pub mod deadline;
mod info;
pub mod presence;
mod user;

pub use info::{RequestInfo, ResourceRequest};
pub use presence::ClientPresence;
pub use user::UserInfo;

use std::sync::Arc;

use rustls_pki_types::CertificateDer;

/// The client's certificate chain (leaf first), verified against
/// `--client-ca-file` by the TLS listener, in the extensions of every request
/// on that connection; absent on plain HTTP or when the client sent none.
#[derive(Debug, Clone)]
pub struct ClientCertificates(pub Arc<Vec<CertificateDer<'static>>>);

/// An extra's key as it travels in a header name (impersonation, front
/// proxies), decoded as kube's `url.PathUnescape` does: `%2F` is `/`; a
/// key with a malformed escape is kept as it came.
pub fn unescape_extra_key(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = key.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else { return key.to_string() };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_string())
}

/// An extra's key made fit for a header name, as client-go's
/// `headerKeyEscape` makes it: bytes that are not a header token's, and
/// `%` itself, %-encoded (undone by [`unescape_extra_key`]).
pub fn escape_extra_key(key: &str) -> String {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if token(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_unescaped_as_kube_unescapes_them() {
        assert_eq!(unescape_extra_key("acme.com%2Fproject"), "acme.com/project");
        assert_eq!(unescape_extra_key("scopes"), "scopes");
        assert_eq!(unescape_extra_key("bad%zzkey"), "bad%zzkey", "kept as it came");
        assert_eq!(unescape_extra_key("cut%2"), "cut%2");
    }

    #[test]
    fn extra_keys_round_trip_through_header_names() {
        assert_eq!(escape_extra_key("acme.com/project"), "acme.com%2Fproject");
        assert_eq!(escape_extra_key("100%"), "100%25");
        assert_eq!(escape_extra_key("scopes"), "scopes");
        for key in ["acme.com/project", "100%", "a b\u{e9}", "scopes"] {
            assert_eq!(unescape_extra_key(&escape_extra_key(key)), key);
        }
    }
}
