//! JSON requests to the main API server a kubeconfig names: its cluster's
//! server and trust, its user's credentials. One connection per request:
//! reviews are cached by their askers, so they are few.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use serde_json::Value;

use crate::kubeconfig::{self, Identity};
use crate::tls_client::Trust;

/// kube's delegating clients give the main server this long.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The most an answer may hold here (a review, a ConfigMap of CAs).
const MAX_ANSWER_BYTES: usize = 4 << 20;

/// The main API server, as a kubeconfig reaches it.
pub struct MainServer {
    /// `host:port` to connect to, and the Host header.
    address: String,
    /// The server URL's path, before every request's.
    prefix: String,
    /// None for `http://`; else the TLS client and the name the server's
    /// certificate must carry.
    tls: Option<(Arc<ClientConfig>, String)>,
    identity: Identity,
}

impl std::fmt::Debug for MainServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MainServer").field("address", &self.address).finish_non_exhaustive()
    }
}

impl MainServer {
    /// The server of `path`'s current context, as its user.
    pub fn from_kubeconfig(path: &std::path::Path) -> Result<MainServer, String> {
        let (cluster, identity) = kubeconfig::current(path)?;
        let url: axum::http::Uri = cluster
            .server
            .parse()
            .map_err(|e| format!("{}: server {}: {e}", path.display(), cluster.server))?;
        let host = url.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_string();
        let secure = url.scheme_str() != Some("http");
        let port = url.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let address = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let tls = match secure {
            true => {
                let trust = Trust::of(&cluster.certificate_authority, cluster.insecure_skip_tls_verify);
                let config =
                    crate::tls_client::config(trust, identity.certificate().as_ref(), &[b"http/1.1"])?;
                Some((Arc::new(config), host))
            }
            false => None,
        };
        Ok(MainServer { address, prefix: url.path().trim_end_matches('/').to_string(), tls, identity })
    }

    /// GETs `path`: the JSON answered with 2xx, or why not.
    pub async fn get(&self, path: &str) -> Result<Value, String> {
        self.exchange(hyper::Method::GET, path, None).await
    }

    /// POSTs `body` to `path`: the JSON answered with 2xx, or why not.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        self.exchange(hyper::Method::POST, path, Some(body.to_string().into_bytes())).await
    }

    async fn exchange(
        &self,
        method: hyper::Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Value, String> {
        let url = format!("{}{path}", self.prefix);
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(&url)
            .header(hyper::header::HOST, &self.address)
            .header(hyper::header::ACCEPT, "application/json");
        if body.is_some() {
            request = request.header(hyper::header::CONTENT_TYPE, "application/json");
        }
        if let Some(authorization) = self.identity.authorization() {
            request = request.header(hyper::header::AUTHORIZATION, authorization);
        }
        let request =
            request.body(Full::new(Bytes::from(body.unwrap_or_default()))).map_err(|e| e.to_string())?;
        let (code, answer) = tokio::time::timeout(TIMEOUT, self.send(request))
            .await
            .map_err(|_| format!("{url}: no answer within {TIMEOUT:?}"))??;
        if !(200..300).contains(&code) {
            let text = String::from_utf8_lossy(&answer[..answer.len().min(512)]).trim().to_string();
            return Err(format!("{url}: the server answered {code}: {text}"));
        }
        serde_json::from_slice(&answer).map_err(|e| format!("{url}: not JSON: {e}"))
    }

    async fn send(&self, request: hyper::Request<Full<Bytes>>) -> Result<(u16, Vec<u8>), String> {
        match &self.tls {
            Some((config, name)) => {
                let tls = crate::tls_client::connect(config.clone(), &self.address, name).await?;
                exchange_on(TokioIo::new(tls), request).await
            }
            None => exchange_on(TokioIo::new(crate::tls_client::dial(&self.address).await?), request).await,
        }
    }
}

/// One HTTP/1.1 exchange on `io`: the answer's code and body.
async fn exchange_on<IO>(io: IO, request: hyper::Request<Full<Bytes>>) -> Result<(u16, Vec<u8>), String>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(io).await.map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
    let code = response.status().as_u16();
    let body =
        Limited::new(response.into_body(), MAX_ANSWER_BYTES).collect().await.map_err(|e| e.to_string())?;
    Ok((code, body.to_bytes().to_vec()))
}
