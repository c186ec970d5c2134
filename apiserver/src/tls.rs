//! HTTPS: the certificate and key given by `--tls-cert-file` and
//! `--tls-private-key-file`, HTTP/2 or HTTP/1.1 by ALPN (client-go speaks
//! HTTP/2 over TLS), each connection served by the same router as plain
//! HTTP.

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the certificate {path}: {why}")]
    Certificate { path: String, why: String },
    #[error("cannot read the private key {path}: {why}")]
    Key { path: String, why: String },
    #[error("the certificate and key do not make a TLS configuration: {0}")]
    Config(String),
}

/// A TLS acceptor for the PEM certificate chain and key at these paths.
pub fn acceptor(cert_file: &Path, key_file: &Path) -> Result<TlsAcceptor, TlsError> {
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
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accepts TLS connections until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    router: Router,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            () = &mut shutdown => return,
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(tls) => tls,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let builder = auto::Builder::new(TokioExecutor::new());
            if let Err(e) = builder.serve_connection_with_upgrades(TokioIo::new(tls), service).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}
