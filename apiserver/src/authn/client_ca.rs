//! A client CA bundle (`--client-ca-file`, `--requestheader-client-ca-file`)
//! and the check that a client's chain leads to it. The TLS listener trusts
//! every client CA the server has; each authenticator then checks the chain
//! against its own, as kube's do, so a front proxy's certificate is never
//! taken for a user's and the other way round.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, UnixTime};

use crate::request::ClientCertificates;

/// The certificates of a PEM bundle, refused when there are none.
pub fn read_roots(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let roots: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| e.to_string())?
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    if roots.is_empty() {
        return Err("no certificate in the file".into());
    }
    Ok(roots)
}

/// A verifier of client chains against `roots`; a client that sends no
/// certificate is let through (authentication decides what it may do).
pub fn verifier(roots: &[CertificateDer<'static>]) -> Result<Arc<dyn ClientCertVerifier>, String> {
    let mut store = RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    WebPkiClientVerifier::builder_with_provider(Arc::new(store), provider)
        .allow_unauthenticated()
        .build()
        .map_err(|e| e.to_string())
}

/// One CA bundle, as an authenticator checks chains against it.
pub struct ClientCa {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl std::fmt::Debug for ClientCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCa").finish_non_exhaustive()
    }
}

impl ClientCa {
    pub fn read(path: &Path) -> Result<ClientCa, String> {
        Ok(ClientCa { verifier: verifier(&read_roots(path)?)? })
    }

    /// Whether `chain` (leaf first) is signed by this CA for client use,
    /// and valid now; if not, why.
    pub fn verify(&self, chain: &ClientCertificates) -> Result<(), String> {
        let (leaf, intermediates) = chain.0.split_first().ok_or("no certificate")?;
        self.verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
