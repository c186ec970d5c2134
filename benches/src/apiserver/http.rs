//! A small HTTP/1.1 client for the API server: JSON requests over a pool of
//! keep-alive connections (one per concurrent request), and watch streams.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// How long one request (headers and whole body) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

const JSON: &str = "application/json";
const MERGE_PATCH: &str = "application/merge-patch+json";

#[derive(Debug, Clone)]
pub struct Api {
    client: Client<HttpConnector, Full<Bytes>>,
    /// `http://host:port`, no trailing slash.
    base: String,
    /// `Bearer <token>`, when the server is to know who asks.
    authorization: Option<header::HeaderValue>,
}

/// A whole response.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Bytes,
}

impl Reply {
    /// The status and what the server said (a Status object's message, or
    /// the start of the body), for error samples.
    pub fn describe(&self) -> String {
        let message = serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&self.body[..self.body.len().min(200)]).into_owned());
        format!("HTTP {}: {message}", self.status.as_u16())
    }
}

impl Api {
    pub fn new(server: &str, token: Option<&str>) -> Result<Self, String> {
        let base = server.trim_end_matches('/').to_string();
        if !base.starts_with("http://") {
            return Err(format!("--server {server:?}: an http:// URL"));
        }
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(5)));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(300))
            .pool_max_idle_per_host(usize::MAX)
            .build(connector);
        let authorization = token
            .map(|t| header::HeaderValue::from_str(&format!("Bearer {t}")))
            .transpose()
            .map_err(|e| format!("--token: {e}"))?;
        Ok(Self { client, base, authorization })
    }

    /// The same server and connections, as the holder of `token`.
    pub fn with_token(&self, token: &str) -> Result<Self, String> {
        let authorization =
            header::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|e| format!("token: {e}"))?;
        Ok(Self { authorization: Some(authorization), ..self.clone() })
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<Request<Full<Bytes>>, String> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header(header::ACCEPT, JSON);
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        if let Some(authorization) = &self.authorization {
            request = request.header(header::AUTHORIZATION, authorization.clone());
        }
        request.body(Full::new(body)).map_err(|e| format!("building a request for {path}: {e}"))
    }

    /// Sends a request and reads the whole response.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<Reply, String> {
        let request = self.request(method.clone(), path, content_type, body)?;
        let exchange = async {
            let response = self.client.request(request).await.map_err(|e| chain(&e))?;
            let status = response.status();
            let body = response.into_body().collect().await.map_err(|e| chain(&e))?.to_bytes();
            Ok(Reply { status, body })
        };
        match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
            Ok(reply) => reply.map_err(|e: String| format!("{method} {path}: {e}")),
            Err(_) => Err(format!("{method} {path}: no whole response within {REQUEST_TIMEOUT:?}")),
        }
    }

    pub async fn get(&self, path: &str) -> Result<Reply, String> {
        self.send(Method::GET, path, None, Bytes::new()).await
    }

    pub async fn post(&self, path: &str, body: &serde_json::Value) -> Result<Reply, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        self.send(Method::POST, path, Some(JSON), body.into()).await
    }

    pub async fn put(&self, path: &str, body: &serde_json::Value) -> Result<Reply, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        self.send(Method::PUT, path, Some(JSON), body.into()).await
    }

    /// A server-side apply of `body` (JSON is YAML) as `manager`.
    pub async fn apply(&self, path: &str, manager: &str, body: &serde_json::Value) -> Result<Reply, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let path = format!("{path}?fieldManager={}", encode_query(manager));
        self.send(Method::PATCH, &path, Some("application/apply-patch+yaml"), body.into()).await
    }

    pub async fn merge_patch(&self, path: &str, body: &serde_json::Value) -> Result<Reply, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        self.send(Method::PATCH, path, Some(MERGE_PATCH), body.into()).await
    }

    /// Starts a GET whose body is read as it comes (a watch): returns once
    /// the status line and headers have arrived.
    pub async fn open(&self, path: &str) -> Result<Response<Incoming>, String> {
        let request = self.request(Method::GET, path, None, Bytes::new())?;
        match tokio::time::timeout(REQUEST_TIMEOUT, self.client.request(request)).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(format!("GET {path}: {}", chain(&e))),
            Err(_) => Err(format!("GET {path}: no response within {REQUEST_TIMEOUT:?}")),
        }
    }
}

/// An error and its causes, `: `-separated (hyper's own texts are terse).
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `text` percent-encoded for a query string (everything but RFC 3986's
/// unreserved characters).
pub fn encode_query(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(encode_query("eyJ2Ijo+/="), "eyJ2Ijo%2B%2F%3D");
        assert_eq!(encode_query("a-b_c.d~e"), "a-b_c.d~e");
    }
}
