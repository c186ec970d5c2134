//! Dialling peers over TLS: the client side of `--peer-cert-file`,
//! `--peer-key-file`, `--peer-trusted-ca-file` and `--peer-auto-tls`. Each
//! new connection takes the configuration as the files are now (a renewed
//! certificate is presented without a restart) and runs the handshake
//! itself (tokio-rustls) before gRPC speaks HTTP/2 over it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::rt::TokioIo;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::{Reloading, TlsError, TlsFiles, file_error, provider, read_certs, roots, versions};

/// How this member dials peers: plain text to http:// URLs; to https://
/// ones with TLS as `files` say (its peer certificate presented, theirs
/// checked against `--peer-trusted-ca-file`, or not checked at all with
/// `--peer-auto-tls`), the files read again when they change.
pub fn peer_dialer(files: Option<&TlsFiles>) -> Result<rtcd_raft::Dialer, TlsError> {
    let Some(files) = files else { return Ok(rtcd_raft::Dialer::plain()) };
    let configs = Arc::new(Reloading::with(files.clone(), peer_client_config)?);
    Ok(rtcd_raft::Dialer::new(move |url| {
        let endpoint = |url: String| tonic::transport::Endpoint::from_shared(url).map_err(|e| e.to_string());
        Ok(match url.strip_prefix("https://") {
            // tonic refuses https:// without its own TLS; the connector
            // below makes the connection TLS before tonic sees it.
            Some(rest) => {
                endpoint(format!("http://{rest}"))?.connect_with_connector_lazy(TlsDial(configs.clone()))
            }
            None => endpoint(url.to_owned())?.connect_lazy(),
        })
    }))
}

/// A peer client's configuration: its certificate presented, the peer's
/// verified against `--peer-trusted-ca-file` (else the system's CAs, as
/// etcd) and its common name checked with `--peer-cert-allowed-cn`; with
/// `--peer-auto-tls` no certificate, and the peer's not verified, as etcd.
fn peer_client_config(files: &TlsFiles) -> Result<ClientConfig, TlsError> {
    let provider = provider(&files.policy);
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions(&files.policy))
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let webpki = match files.self_signed {
        true => None,
        false => {
            let roots = match &files.trusted_ca {
                Some(ca) => roots(ca)?,
                None => system_roots()?,
            };
            let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| TlsError::Config(e.to_string()))?;
            Some(verifier)
        }
    };
    let builder = match (webpki, &files.allowed_cn) {
        (Some(webpki), None) => builder.with_webpki_verifier(webpki),
        // etcd checks the name of the peers it dials too.
        (webpki, allowed_cn) => {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(PeerVerifier {
                webpki,
                allowed_cn: allowed_cn.clone(),
                provider,
            }))
        }
    };
    let mut config = match files.self_signed {
        true => builder.with_no_client_auth(),
        false => {
            let certs = read_certs("the peer certificate file", &files.cert)?;
            let key = PrivateKeyDer::from_pem_file(&files.key)
                .map_err(|e| file_error("the peer key file", &files.key)(e.to_string()))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| TlsError::Config(e.to_string()))?
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// The system's CA bundle (`SSL_CERT_FILE`, else Debian's), for peers
/// dialled without `--peer-trusted-ca-file`.
fn system_roots() -> Result<rustls::RootCertStore, TlsError> {
    let bundle = std::env::var_os("SSL_CERT_FILE")
        .map_or_else(|| std::path::PathBuf::from("/etc/ssl/certs/ca-certificates.crt"), Into::into);
    roots(&bundle)
        .map_err(|e| TlsError::Config(format!("no --peer-trusted-ca-file, and the system's CAs: {e}")))
}

/// How a dialled peer's certificate is checked when webpki's plain check
/// is not all: with `--peer-auto-tls` not at all (etcd's
/// `InsecureSkipVerify` for self-signed peers), with `--peer-cert-allowed-cn`
/// also for its common name (etcd's "CommonName authentication failed").
/// The handshake's signatures are checked either way, so the link is
/// encrypted to whoever holds the certificate's key.
#[derive(Debug)]
struct PeerVerifier {
    /// `None`: any certificate is taken.
    webpki: Option<Arc<WebPkiServerVerifier>>,
    allowed_cn: Option<String>,
    provider: Arc<CryptoProvider>,
}

impl PeerVerifier {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.provider.signature_verification_algorithms
    }
}

impl ServerCertVerifier for PeerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(webpki) = &self.webpki {
            webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)?;
        }
        match &self.allowed_cn {
            Some(allowed) if super::common_name(end_entity).as_ref() != Some(allowed) => {
                Err(rustls::Error::General("CommonName authentication failed".into()))
            }
            _ => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

/// tonic's connector for https:// peers: TCP, then the TLS handshake with
/// the configuration of the moment, named for the URL's host.
#[derive(Clone)]
struct TlsDial(Arc<Reloading<ClientConfig>>);

type Dialled = Pin<Box<dyn Future<Output = Result<TokioIo<TlsStream<TcpStream>>, std::io::Error>> + Send>>;

impl tower_service::Service<http::Uri> for TlsDial {
    type Response = TokioIo<TlsStream<TcpStream>>;
    type Error = std::io::Error;
    type Future = Dialled;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let config = self.0.config();
        Box::pin(async move {
            let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
            let host = uri.host().ok_or_else(|| invalid(format!("no host in {uri}")))?;
            let port = uri.port_u16().unwrap_or(443);
            // `[::1]` in a URL is `::1` to a socket and to the certificate.
            let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
            let name = ServerName::try_from(host.clone()).map_err(|e| invalid(e.to_string()))?;
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            Ok(TokioIo::new(TlsConnector::from(config).connect(name, tcp).await?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::TlsPolicy;

    /// A CA-signed peer certificate and key written to `dir`, with the CA.
    fn peer_files(dir: &std::path::Path, serial: u64) -> TlsFiles {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = ca.self_signed(&ca_key).unwrap();
        let issuer =
            rcgen::Issuer::new(rcgen::CertificateParams::new(Vec::<String>::new()).unwrap(), &ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        params.serial_number = Some(serial.into());
        let cert = params.signed_by(&key, &issuer).unwrap();
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        TlsFiles {
            cert: write("peer.pem", cert.pem()),
            key: write("peer.key", key.serialize_pem()),
            trusted_ca: Some(write("ca.pem", ca.pem())),
            client_cert_auth: true,
            allowed_cn: None,
            self_signed: false,
            policy: TlsPolicy::default(),
        }
    }

    #[test]
    fn a_renewed_peer_certificate_is_presented_on_the_next_connection() {
        let dir = tempfile::tempdir().unwrap();
        let files = peer_files(dir.path(), 1);
        let configs = Reloading::with(files.clone(), peer_client_config).unwrap();
        let first = configs.config();
        assert!(Arc::ptr_eq(&first, &configs.config()), "unchanged files: the same configuration");
        assert_eq!(first.alpn_protocols, vec![b"h2".to_vec()]);
        // File times have a coarse grain on some file systems.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        peer_files(dir.path(), 2);
        assert!(!Arc::ptr_eq(&first, &configs.config()), "renewed files: a new configuration");
    }

    #[test]
    fn a_dialled_peer_must_carry_the_allowed_common_name() {
        let dir = tempfile::tempdir().unwrap();
        let files = peer_files(dir.path(), 1);
        let certs = read_certs("cert", &files.cert).unwrap();
        let name = super::super::common_name(&certs[0]).unwrap();
        let roots = Arc::new(roots(files.trusted_ca.as_ref().unwrap()).unwrap());
        let check = |cn: &str| {
            let verifier =
                WebPkiServerVerifier::builder_with_provider(roots.clone(), provider(&files.policy))
                    .build()
                    .unwrap();
            let host = ServerName::try_from("127.0.0.1").unwrap();
            let checks = PeerVerifier {
                webpki: Some(verifier),
                allowed_cn: Some(cn.into()),
                provider: provider(&files.policy),
            };
            checks.verify_server_cert(&certs[0], &[], &host, &[], UnixTime::now())
        };
        assert!(check(&name).is_ok());
        let refused = check("someone-else").unwrap_err().to_string();
        assert!(refused.contains("CommonName authentication failed"), "{refused}");
    }

    #[test]
    fn self_signed_peers_need_no_files_and_others_fall_back_to_the_systems_cas() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = peer_files(dir.path(), 1);
        files.trusted_ca = None;
        let system = std::path::Path::new("/etc/ssl/certs/ca-certificates.crt");
        if std::env::var_os("SSL_CERT_FILE").is_none() && system.exists() {
            assert!(peer_client_config(&files).is_ok(), "Debian's CA bundle serves");
        }
        files.self_signed = true;
        files.cert = dir.path().join("not-made-yet.pem");
        assert!(peer_client_config(&files).is_ok());
    }
}
