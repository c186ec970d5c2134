//! TLS on the client and peer URLs, with etcd's flags and rules: the
//! certificate and key (`--cert-file`, `--key-file`), client certificates
//! required and verified against `--trusted-ca-file` with
//! `--client-cert-auth`, a self-signed certificate made in the data dir with
//! `--auto-tls`, the same for peers (`--peer-*`, with
//! `--peer-cert-allowed-cn`). Like etcd, the files are read again when they
//! change, so a renewed certificate serves new connections without a
//! restart.
//!
//! HTTP/2 and HTTP/1.1 are offered by ALPN (gRPC, and etcd's plain HTTP
//! endpoints like `/health`, on one port).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

pub use crate::settings::TlsFiles;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {what} {path}: {why}")]
    File { what: &'static str, path: String, why: String },
    #[error("{0}")]
    Config(String),
}

fn file_error(what: &'static str, path: &Path) -> impl Fn(String) -> TlsError {
    let path = path.display().to_string();
    move |why| TlsError::File { what, path: path.clone(), why }
}

/// The server configuration of `files`, rebuilt when one of them changed
/// since the last connection (etcd reads them on every handshake).
#[derive(Debug)]
pub struct Reloading {
    files: TlsFiles,
    current: Mutex<(Vec<Option<SystemTime>>, Arc<ServerConfig>)>,
}

impl Reloading {
    /// Reads the files once: a broken certificate stops the server at
    /// startup rather than failing every handshake.
    pub fn new(files: TlsFiles) -> Result<Self, TlsError> {
        let config = Arc::new(server_config(&files)?);
        let stamps = stamps(&files);
        Ok(Self { files, current: Mutex::new((stamps, config)) })
    }

    /// The configuration for a new connection. A file that changed but no
    /// longer reads (half-written, say) keeps the last good configuration.
    pub fn config(&self) -> Arc<ServerConfig> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let now = stamps(&self.files);
        if now != current.0 {
            match server_config(&self.files) {
                Ok(config) => {
                    tracing::info!(cert = %self.files.cert.display(), "TLS certificate files changed; reloaded");
                    *current = (now, Arc::new(config));
                }
                Err(error) => {
                    tracing::warn!(%error, "TLS certificate files changed but do not load; kept the last")
                }
            }
        }
        current.1.clone()
    }

    pub fn files(&self) -> &TlsFiles {
        &self.files
    }
}

/// When each file was last modified.
fn stamps(files: &TlsFiles) -> Vec<Option<SystemTime>> {
    [Some(&files.cert), Some(&files.key), files.trusted_ca.as_ref()]
        .into_iter()
        .flatten()
        .map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .collect()
}

pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_config(files: &TlsFiles) -> Result<ServerConfig, TlsError> {
    let certs = read_certs("the certificate file", &files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| file_error("the key file", &files.key)(e.to_string()))?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match (&files.trusted_ca, files.client_cert_auth) {
        (Some(ca), true) => {
            let roots = Arc::new(roots(ca)?);
            let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider())
                .build()
                .map_err(|e| TlsError::Config(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
        (None, true) => {
            return Err(TlsError::Config("client certificate authentication needs a trusted CA file".into()));
        }
        (_, false) => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

pub fn read_certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let error = file_error(what, path);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| error(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| error(e.to_string()))?;
    if certs.is_empty() {
        return Err(error("no certificate in the file".into()));
    }
    Ok(certs)
}

pub fn roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let error = file_error("the trusted CA file", path);
    let mut roots = RootCertStore::empty();
    for cert in read_certs("the trusted CA file", path)? {
        roots.add(cert).map_err(|e| error(e.to_string()))?;
    }
    Ok(roots)
}

/// The subject common name of a DER certificate.
pub fn common_name(cert: &CertificateDer<'_>) -> Option<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let cn = parsed.subject().iter_common_name().next()?;
    cn.as_str().ok().map(str::to_owned)
}

/// `--auto-tls`: makes the self-signed certificate `files` name for
/// `hosts`, once (etcd's `fixtures/client` in the data dir); a restart uses
/// it again.
pub fn make_self_signed(files: &TlsFiles, hosts: &[String]) -> Result<(), TlsError> {
    let (cert, key) = (&files.cert, &files.key);
    if files.self_signed && !(cert.exists() && key.exists()) {
        let dir = cert.parent().unwrap_or(Path::new("."));
        let made = rcgen::generate_simple_self_signed(hosts.to_vec())
            .map_err(|e| TlsError::Config(format!("making a self-signed certificate: {e}")))?;
        let write = |path: &Path, text: String| {
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(path, text))
                .map_err(|e| file_error("the self-signed certificate", path)(e.to_string()))
        };
        write(key, made.signing_key.serialize_pem())?;
        write(cert, made.cert.pem())?;
    }
    Ok(())
}

/// How this member dials https:// peers: with its peer certificate, checking
/// theirs against `--peer-trusted-ca-file`. Read once at startup.
pub fn peer_client(files: Option<&TlsFiles>) -> Result<Option<ClientTlsConfig>, TlsError> {
    let Some(files) = files else { return Ok(None) };
    let read = |what: &'static str, path: &Path| {
        std::fs::read(path).map_err(|e| file_error(what, path)(e.to_string()))
    };
    let mut config = ClientTlsConfig::new().identity(Identity::from_pem(
        read("the peer certificate file", &files.cert)?,
        read("the peer key file", &files.key)?,
    ));
    if let Some(ca) = &files.trusted_ca {
        roots(ca)?;
        config = config.ca_certificate(Certificate::from_pem(read("the peer trusted CA file", ca)?));
    }
    Ok(Some(config))
}
