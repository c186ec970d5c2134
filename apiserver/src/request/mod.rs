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
}
