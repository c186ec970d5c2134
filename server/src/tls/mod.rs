//! TLS on the client and peer URLs, with etcd's flags and rules: the
//! certificate and key (`--cert-file`, `--key-file`), client certificates
//! required and verified against `--trusted-ca-file` with
//! `--client-cert-auth`, a self-signed certificate made in the data dir with
//! `--auto-tls`, the same for peers (`--peer-*`, with
//! `--peer-cert-allowed-cn`, `--peer-auto-tls`), the cipher suites and
//! versions both sides negotiate (`--cipher-suites`, `--tls-min-version`,
//! `--tls-max-version`). Like etcd, the files are read again when they
//! change, so a renewed certificate serves new connections, and dials new
//! peer connections, without a restart.
//!
//! HTTP/2 and HTTP/1.1 are offered by ALPN (gRPC, and etcd's plain HTTP
//! endpoints like `/health`, on one port).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustls::crypto::{CryptoProvider, ring};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedCipherSuite};

pub use crate::settings::TlsFiles;
use crate::settings::{TlsPolicy, TlsVersion};

mod peer;
pub use peer::peer_dialer;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {what} {path}: {why}")]
    File { what: &'static str, path: String, why: String },
    #[error("{0}")]
    Config(String),
}

pub(crate) fn file_error(what: &'static str, path: &Path) -> impl Fn(String) -> TlsError {
    let path = path.display().to_string();
    move |why| TlsError::File { what, path: path.clone(), why }
}

/// A configuration made from `files` (a server's, or a peer client's),
/// rebuilt when one of them changed since the last connection (etcd reads
/// them on every handshake).
#[derive(Debug)]
pub struct Reloading<C = ServerConfig> {
    files: TlsFiles,
    build: fn(&TlsFiles) -> Result<C, TlsError>,
    current: Mutex<(Vec<Option<SystemTime>>, Arc<C>)>,
}

impl Reloading<ServerConfig> {
    /// Reads the files once: a broken certificate stops the server at
    /// startup rather than failing every handshake.
    pub fn new(files: TlsFiles) -> Result<Self, TlsError> {
        Self::with(files, server_config)
    }
}

impl<C> Reloading<C> {
    pub(crate) fn with(
        files: TlsFiles,
        build: fn(&TlsFiles) -> Result<C, TlsError>,
    ) -> Result<Self, TlsError> {
        let config = Arc::new(build(&files)?);
        let stamps = stamps(&files);
        Ok(Self { files, build, current: Mutex::new((stamps, config)) })
    }

    /// The configuration for a new connection. A file that changed but no
    /// longer reads (half-written, say) keeps the last good configuration.
    pub fn config(&self) -> Arc<C> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let now = stamps(&self.files);
        if now != current.0 {
            match (self.build)(&self.files) {
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

/// Go's name of a cipher suite -> rustls's (ring's) suite: `None` for
/// TLS 1.3's, which are always offered; an error for a name Go does not
/// know (etcd's text) or a suite rustls does not offer (CBC, RC4, 3DES,
/// RSA key exchange, all of them weak).
pub fn cipher_suite(name: &str) -> Result<Option<SupportedCipherSuite>, String> {
    use ring::cipher_suite as s;
    Ok(Some(match name {
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" => s::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" => s::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" | "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256" => {
            s::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
        }
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" => s::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" => s::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" | "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" => {
            s::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
        }
        "TLS_AES_128_GCM_SHA256" | "TLS_AES_256_GCM_SHA384" | "TLS_CHACHA20_POLY1305_SHA256" => {
            return Ok(None);
        }
        "TLS_RSA_WITH_RC4_128_SHA"
        | "TLS_RSA_WITH_3DES_EDE_CBC_SHA"
        | "TLS_RSA_WITH_AES_128_CBC_SHA"
        | "TLS_RSA_WITH_AES_256_CBC_SHA"
        | "TLS_RSA_WITH_AES_128_CBC_SHA256"
        | "TLS_RSA_WITH_AES_128_GCM_SHA256"
        | "TLS_RSA_WITH_AES_256_GCM_SHA384"
        | "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA"
        | "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"
        | "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"
        | "TLS_ECDHE_RSA_WITH_RC4_128_SHA"
        | "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"
        | "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"
        | "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"
        | "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"
        | "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256" => {
            return Err(format!(
                "TLS cipher suite {name:?} is not offered by rustls (only ECDHE with AES-GCM or ChaCha20-Poly1305)"
            ));
        }
        _ => return Err(format!("unexpected TLS cipher suite {name:?}")),
    }))
}

/// ring's crypto with the suites `policy` allows: TLS 1.3's and the
/// named TLS 1.2 ones in their order, or all of rustls's.
pub fn provider(policy: &TlsPolicy) -> Arc<CryptoProvider> {
    let mut provider = ring::default_provider();
    if !policy.cipher_suites.is_empty() {
        let named = policy.cipher_suites.iter().filter_map(|name| cipher_suite(name).ok().flatten());
        let tls13 = provider.cipher_suites.iter().filter(|s| s.version() == &rustls::version::TLS13).copied();
        provider.cipher_suites = tls13.chain(named).collect();
    }
    Arc::new(provider)
}

/// The protocol versions `policy` allows.
pub(crate) fn versions(policy: &TlsPolicy) -> Vec<&'static rustls::SupportedProtocolVersion> {
    [(TlsVersion::V1_2, &rustls::version::TLS12), (TlsVersion::V1_3, &rustls::version::TLS13)]
        .into_iter()
        .filter(|(v, _)| (policy.min_version..=policy.max_version).contains(v))
        .map(|(_, version)| version)
        .collect()
}

fn server_config(files: &TlsFiles) -> Result<ServerConfig, TlsError> {
    let certs = read_certs("the certificate file", &files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| file_error("the key file", &files.key)(e.to_string()))?;
    let provider = provider(&files.policy);
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions(&files.policy))
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = match (&files.trusted_ca, files.client_cert_auth) {
        (Some(ca), true) => {
            let roots = Arc::new(roots(ca)?);
            let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_suites_follow_tls13s_in_the_given_order() {
        let policy = TlsPolicy {
            cipher_suites: vec![
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305".into(),
                "TLS_AES_128_GCM_SHA256".into(),
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into(),
            ],
            ..TlsPolicy::default()
        };
        let suites: Vec<String> =
            provider(&policy).cipher_suites.iter().map(|s| format!("{:?}", s.suite())).collect();
        let tls12: Vec<&String> = suites.iter().filter(|s| s.contains("ECDHE")).collect();
        assert_eq!(
            tls12,
            ["TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]
        );
        assert_eq!(suites.len(), 3 + 2, "TLS 1.3's three, then the two named: {suites:?}");
        assert_eq!(
            provider(&TlsPolicy::default()).cipher_suites.len(),
            ring::default_provider().cipher_suites.len()
        );
        assert!(cipher_suite("TLS_RSA_WITH_AES_128_CBC_SHA").unwrap_err().contains("not offered by rustls"));
        assert_eq!(cipher_suite("nope").unwrap_err(), "unexpected TLS cipher suite \"nope\"");
    }

    #[test]
    fn versions_are_those_between_the_bounds() {
        let only =
            |min, max| versions(&TlsPolicy { min_version: min, max_version: max, ..TlsPolicy::default() });
        assert_eq!(only(TlsVersion::V1_2, TlsVersion::V1_3).len(), 2);
        assert_eq!(only(TlsVersion::V1_3, TlsVersion::V1_3), vec![&rustls::version::TLS13]);
        assert_eq!(only(TlsVersion::V1_2, TlsVersion::V1_2), vec![&rustls::version::TLS12]);
    }
}
