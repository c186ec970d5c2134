//! TLS for the server's own outgoing connections (webhooks, extension API
//! servers): whom a connection trusts and which certificate it presents.

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

/// Whom a connection trusts.
#[derive(Debug, Clone, Copy)]
pub enum Trust<'a> {
    /// The certificates of a PEM bundle (a `caBundle`).
    Bundle(&'a [u8]),
    /// The system's roots (Debian's bundle).
    System,
    /// Any certificate at all (`insecureSkipTLSVerify`): the connection is
    /// encrypted, the server unknown.
    Anyone,
}

impl<'a> Trust<'a> {
    /// kube's reading of a `caBundle` (or a kubeconfig's
    /// certificate-authority) and `insecureSkipTLSVerify`: anyone when
    /// insecure, else the bundle, else (none given) the system's roots.
    pub fn of(bundle: &'a [u8], insecure: bool) -> Trust<'a> {
        match (insecure, bundle.is_empty()) {
            (true, _) => Trust::Anyone,
            (false, true) => Trust::System,
            (false, false) => Trust::Bundle(bundle),
        }
    }
}

/// A PEM client certificate (its chain) and key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ClientCertificate {
    pub certificate: Vec<u8>,
    pub key: Vec<u8>,
}

/// A TLS client trusting `trust`, presenting `identity` when there is one,
/// offering `alpn`'s protocols. Errors in Go's words where users meet them.
pub fn config(
    trust: Trust<'_>,
    identity: Option<&ClientCertificate>,
    alpn: &[&[u8]],
) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match trust {
        Trust::Anyone => {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(Verifier::anyone(provider)))
        }
        Trust::Bundle(pem) => {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(Verifier::bundle(pem, provider)?))
        }
        Trust::System => builder.with_root_certificates(roots(&system_roots())?),
    };
    let mut config = match identity {
        Some(identity) => {
            let chain = CertificateDer::pem_slice_iter(&identity.certificate)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("tls: client certificate: {e}"))?;
            let private =
                PrivateKeyDer::from_pem_slice(&identity.key).map_err(|e| format!("tls: client key: {e}"))?;
            builder
                .with_client_auth_cert(chain, private)
                .map_err(|e| format!("tls: client certificate: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// The certificates of `pem`; a bad one is skipped, as Go's pool does.
fn roots(pem: &[u8]) -> Result<rustls::RootCertStore, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem).flatten() {
        let _ = roots.add(cert);
    }
    if roots.is_empty() {
        return Err("tls: no certificate authority to verify the server with (the bundle holds none)".into());
    }
    Ok(roots)
}

/// The server certificate checks rustls cannot be told to make:
/// * a bundle's, with Go's leniency: a server certificate that is one of
///   the bundle's own (a self-signed certificate a kubeconfig trusts) is
///   accepted when valid for the name asked, even though it is a CA, which
///   rustls alone refuses as an end entity;
/// * anyone's (`insecureSkipTLSVerify`).
///
/// Either way the handshake's signatures are checked, so the peer holds the
/// key of the certificate it sent.
#[derive(Debug)]
struct Verifier {
    /// None: anyone.
    chains: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    listed: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
}

impl Verifier {
    fn anyone(provider: Arc<CryptoProvider>) -> Verifier {
        Verifier { chains: None, listed: Vec::new(), provider }
    }

    fn bundle(pem: &[u8], provider: Arc<CryptoProvider>) -> Result<Verifier, String> {
        let chains = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots(pem)?),
            provider.clone(),
        )
        .build()
        .map_err(|e| e.to_string())?;
        let listed = CertificateDer::pem_slice_iter(pem).flatten().collect();
        Ok(Verifier { chains: Some(chains), listed, provider })
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chains) = &self.chains else { return Ok(ServerCertVerified::assertion()) };
        let refused =
            match chains.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
                Ok(verified) => return Ok(verified),
                Err(refused) => refused,
            };
        if !self.listed.iter().any(|listed| listed.as_ref() == end_entity.as_ref()) {
            return Err(refused);
        }
        let certificate = webpki::EndEntityCert::try_from(end_entity).map_err(|_| refused.clone())?;
        certificate.verify_is_valid_for_subject_name(server_name).map_err(|_| refused)?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// A TCP connection to `address` (`host:port`), Nagle off; errors in Go's
/// words (`dial tcp <address>: connect: connection refused`).
pub async fn dial(address: &str) -> Result<tokio::net::TcpStream, String> {
    let tcp = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| format!("dial tcp {address}: {}", crate::errors::go_io_error(&e)))?;
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

/// A TLS connection to `address` with `config`, the server checked as
/// `server_name`.
pub async fn connect(
    config: Arc<ClientConfig>,
    address: &str,
    server_name: &str,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    let name = ServerName::try_from(server_name.to_string()).map_err(|e| format!("tls: {e}"))?;
    let tcp = dial(address).await?;
    tokio_rustls::TlsConnector::from(config)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("tls: failed to verify certificate: {e}"))
}

/// The system's trusted roots (Debian's bundle).
fn system_roots() -> Vec<u8> {
    std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default()
}
