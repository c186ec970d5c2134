//! HTTPS: the certificate and key given by `--tls-cert-file` and
//! `--tls-private-key-file`, HTTP/2 or HTTP/1.1 by ALPN (client-go speaks
//! HTTP/2 over TLS), each connection served (by `conn`) with the same
//! router as plain HTTP. With `--client-ca-file` (or front proxies'
//! `--requestheader-client-ca-file`), a client certificate is asked for and
//! verified against those CAs (clients without one are served too, as kube
//! serves them), and its chain goes with every request of the connection
//! (`request::ClientCertificates`) for authentication, which checks it
//! against the CA of the method it stands for.

use std::path::Path;
use std::sync::Arc;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::authn::client_ca;
use crate::request::ClientCertificates;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the certificate {path}: {why}")]
    Certificate { path: String, why: String },
    #[error("cannot read the private key {path}: {why}")]
    Key { path: String, why: String },
    #[error("the certificate and key do not make a TLS configuration: {0}")]
    Config(String),
    #[error("cannot use the client CA file {path}: {why}")]
    ClientCa { path: String, why: String },
}

/// A TLS acceptor for the PEM certificate chain and key at these paths,
/// verifying client certificates against the CAs of `client_ca_files`.
pub fn acceptor(
    cert_file: &Path,
    key_file: &Path,
    client_ca_files: &[&Path],
) -> Result<TlsAcceptor, TlsError> {
    let cert_error = |why: String| TlsError::Certificate { path: cert_file.display().to_string(), why };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .map_err(|e| cert_error(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| cert_error(e.to_string()))?;
    if certs.is_empty() {
        return Err(cert_error("no certificate in the file".into()));
    }
    let key = PrivateKeyDer::from_pem_file(key_file)
        .map_err(|e| TlsError::Key { path: key_file.display().to_string(), why: e.to_string() })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match client_ca_files {
        [] => builder.with_no_client_auth(),
        files => builder.with_client_cert_verifier(client_verifier(files)?),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Verifies client certificates against the CAs in every file of `paths`.
fn client_verifier(paths: &[&Path]) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, TlsError> {
    let mut roots = Vec::new();
    for path in paths {
        let error = |why: String| TlsError::ClientCa { path: path.display().to_string(), why };
        roots.extend(client_ca::read_roots(path).map_err(error)?);
    }
    let error = |why: String| TlsError::ClientCa { path: paths[0].display().to_string(), why };
    client_ca::verifier(&roots).map_err(error)
}

/// The client's verified certificate chain on this connection, if it sent
/// one, to go with each of its requests.
pub fn client_chain<IO>(tls: &TlsStream<IO>) -> Option<ClientCertificates> {
    match tls.get_ref().1.peer_certificates() {
        Some(chain) if !chain.is_empty() => {
            Some(ClientCertificates(Arc::new(chain.iter().map(|c| c.clone().into_owned()).collect())))
        }
        _ => None,
    }
}
