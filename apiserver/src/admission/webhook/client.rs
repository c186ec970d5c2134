//! Calls to webhooks: an HTTPS POST of the review, verified with the
//! webhook's `caBundle` (or the system's roots), to its URL or to an
//! endpoint of its Service (as `<name>.<namespace>.svc`, the name its
//! certificate must carry). Connections are kept and reused per endpoint
//! and trust, so a webhook costs one TLS handshake, not one per request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;

use super::credentials::Identity;
use crate::tls_client::Trust;

/// The most a webhook may answer: a review holds one object and a patch
/// for it, far below this; more is refused rather than held in memory.
pub const MAX_RESPONSE_BYTES: usize = 8 << 20;

/// Where one call goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// `host:port` to connect to.
    pub address: String,
    /// The name the certificate must be valid for (and the SNI).
    pub server_name: String,
    /// `host[:port]` for the Host header.
    pub authority: String,
    /// Path and query, `?timeout=<n>s` included.
    pub path: String,
}

impl Endpoint {
    /// The URL as kube prints it in errors (`Post "<url>": ...`).
    pub fn url(&self) -> String {
        format!("https://{}{}", self.authority, self.path)
    }

    /// The port connected to, as credentials are looked up by it.
    pub fn port(&self) -> u16 {
        self.address.rsplit_once(':').and_then(|(_, port)| port.parse().ok()).unwrap_or(443)
    }
}

type Connection = SendRequest<Full<Bytes>>;

/// Idle connections by endpoint, the trust they were made with and the
/// identity they present.
type Pool = HashMap<(Endpoint, Vec<u8>, Option<Identity>), Vec<Connection>>;

/// TLS clients by the roots they trust and the certificate they present.
type Configs = HashMap<(Vec<u8>, Option<Identity>), Arc<ClientConfig>>;

#[derive(Default)]
pub struct Client {
    idle: Mutex<Pool>,
    trust: Mutex<Configs>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("webhook::Client").finish_non_exhaustive()
    }
}

impl Client {
    /// POSTs `body`; the response body when the webhook answered 2xx.
    /// Errors in Go's words: `Post "<url>": <why>` when no answer came.
    pub async fn post(
        &self,
        to: &Endpoint,
        ca_bundle: &[u8],
        identity: Option<&Identity>,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, String> {
        let post_failed = |why: String| format!("Post {}: {why}", crate::errors::go_quote(&to.url()));
        let (code, bytes) =
            match tokio::time::timeout(timeout, self.exchange(to, ca_bundle, identity, body)).await {
                Ok(Ok(answered)) => answered,
                Ok(Err(why)) => return Err(post_failed(why)),
                Err(_) => return Err(post_failed("context deadline exceeded".into())),
            };
        if !(200..300).contains(&code) {
            return Err(unsuccessful(code, &bytes));
        }
        Ok(bytes)
    }

    /// The HTTP exchange itself: the answer's code and body.
    async fn exchange(
        &self,
        to: &Endpoint,
        ca_bundle: &[u8],
        identity: Option<&Identity>,
        body: Vec<u8>,
    ) -> Result<(u16, Vec<u8>), String> {
        let key = (to.clone(), ca_bundle.to_vec(), identity.cloned());
        let mut connection = match self.take_idle(&key) {
            Some(connection) => connection,
            None => self.connect(to, ca_bundle, identity).await?,
        };
        let mut request = hyper::Request::post(&to.path)
            .header(hyper::header::HOST, &to.authority)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::ACCEPT, "application/json, */*");
        if let Some(authorization) = identity.and_then(Identity::authorization) {
            request = request.header(hyper::header::AUTHORIZATION, authorization);
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
        let response = connection.send_request(request).await.map_err(|e| e.to_string())?;
        let code = response.status().as_u16();
        let collected =
            Limited::new(response.into_body(), MAX_RESPONSE_BYTES).collect().await.map_err(|e| {
                match e.downcast_ref::<http_body_util::LengthLimitError>() {
                    Some(_) => format!("the response is larger than {MAX_RESPONSE_BYTES} bytes"),
                    None => e.to_string(),
                }
            })?;
        self.keep_idle(key, connection);
        Ok((code, collected.to_bytes().to_vec()))
    }

    fn take_idle(&self, key: &(Endpoint, Vec<u8>, Option<Identity>)) -> Option<Connection> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let pool = idle.get_mut(key)?;
        while let Some(connection) = pool.pop() {
            if connection.is_ready() {
                return Some(connection);
            }
        }
        None
    }

    fn keep_idle(&self, key: (Endpoint, Vec<u8>, Option<Identity>), connection: Connection) {
        if connection.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let pool = idle.entry(key).or_default();
        // Enough for the concurrency a webhook sees; more are closed.
        if pool.len() < 64 {
            pool.push(connection);
        }
    }

    async fn connect(
        &self,
        to: &Endpoint,
        ca_bundle: &[u8],
        identity: Option<&Identity>,
    ) -> Result<Connection, String> {
        let config = self.config(ca_bundle, identity)?;
        let tls = crate::tls_client::connect(config, &to.address, &to.server_name).await?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// The TLS client trusting `ca_bundle` (or the system's roots) and
    /// presenting the identity's certificate, if any; made once per pair.
    fn config(&self, ca_bundle: &[u8], identity: Option<&Identity>) -> Result<Arc<ClientConfig>, String> {
        let key = (ca_bundle.to_vec(), identity.filter(|i| !i.certificate.is_empty()).cloned());
        let mut trust = self.trust.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(config) = trust.get(&key) {
            return Ok(config.clone());
        }
        let trust_in = Trust::of(ca_bundle, false);
        let certificate = key.1.as_ref().and_then(Identity::certificate);
        let config = crate::tls_client::config(trust_in, certificate.as_ref(), &[])?;
        let config = Arc::new(config);
        trust.insert(key, config.clone());
        Ok(config)
    }
}

/// client-go's texts for an answer that is not 2xx and not a Status.
fn unsuccessful(code: u16, body: &[u8]) -> String {
    match code {
        404 => "the server could not find the requested resource".into(),
        500..=599 => {
            let text = String::from_utf8_lossy(&body[..body.len().min(1024)]).trim().to_string();
            format!(
                "an error on the server ({}) has prevented the request from succeeding",
                crate::errors::go_quote(&text)
            )
        }
        _ => format!("the server responded with the status code {code} but did not return more information"),
    }
}
