//! Kubeconfigs with the CA, the client certificate and its key embedded
//! (base64 `*-data` fields), so a file is all a client needs.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::files::{read, write_new};
use super::{Authority, PkiError};

/// Writes (once) a kubeconfig at `path` for user `user` with the client
/// certificate `<file>.crt` / `.key` from `dir`.
pub fn write(
    path: &Path,
    server: &str,
    ca: &Authority,
    dir: &Path,
    file: &str,
    user: &str,
) -> Result<(), PkiError> {
    let cert = read(&dir.join(format!("{file}.crt")))?;
    let key = read(&dir.join(format!("{file}.key")))?;
    let text = render(server, ca.cert_pem(), &cert, &key, user);
    if path.exists() {
        return Ok(());
    }
    write_new(path, text.as_bytes(), true)
}

fn render(server: &str, ca: &str, cert: &str, key: &str, user: &str) -> String {
    let quote = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: rtcd\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\nusers:\n- name: {name}\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\ncontexts:\n- name: {context}\n  context:\n    cluster: rtcd\n    user: {name}\ncurrent-context: {context}\n",
        server = quote(server),
        ca = STANDARD.encode(ca),
        cert = STANDARD.encode(cert),
        key = STANDARD.encode(key),
        name = quote(user),
        context = quote(&format!("{user}@rtcd")),
    )
}
