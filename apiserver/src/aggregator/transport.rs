//! Connections to extension servers: TLS trusting the APIService's
//! `caBundle` (anyone with `insecureSkipTLSVerify`), checked against the
//! Service's DNS name, presenting the proxy's client certificate
//! (`--proxy-client-cert-file`) so the extension server knows the request
//! comes from its front proxy; then HTTP/1.1, which carries upgrades.
//!
//! A connection serves one request at a time: watches and upgrades hold
//! theirs for as long as they last; others give theirs back (`pool`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;

use super::target::Target;
use crate::tls_client::{ClientCertificate, Trust};

pub type Connection = SendRequest<Body>;

/// TLS clients by the trust they were made with.
type Configs = HashMap<(Vec<u8>, bool), Arc<ClientConfig>>;

#[derive(Default)]
pub struct Transport {
    identity: Option<ClientCertificate>,
    configs: Mutex<Configs>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("aggregator::Transport").field("identity", &self.identity.is_some()).finish()
    }
}

impl Transport {
    /// Presenting `identity`, when there is one.
    pub fn new(identity: Option<ClientCertificate>) -> Transport {
        Transport { identity, configs: Mutex::default() }
    }

    /// A connection to `address` for `target`; errors in Go's words
    /// (`dial tcp <address>: connect: connection refused`).
    pub async fn connect(&self, target: &Target, address: &str) -> Result<Connection, String> {
        let config = self.config(target)?;
        let tls = crate::tls_client::connect(config, address, &target.server_name()).await?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = connection.with_upgrades().await;
        });
        Ok(sender)
    }

    /// The TLS client for `target`'s trust, made once per trust.
    fn config(&self, target: &Target) -> Result<Arc<ClientConfig>, String> {
        let key = (target.ca_bundle.clone(), target.insecure_skip_tls_verify);
        let mut configs = self.configs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(config) = configs.get(&key) {
            return Ok(config.clone());
        }
        let trust = Trust::of(&target.ca_bundle, target.insecure_skip_tls_verify);
        let config = Arc::new(crate::tls_client::config(trust, self.identity.as_ref(), &[b"http/1.1"])?);
        configs.insert(key, config.clone());
        Ok(config)
    }
}
