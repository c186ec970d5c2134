//! Just enough of a Kubernetes client for the injector: the current
//! context of a kubeconfig (server, CA, token or client certificate) and
//! a GET of one namespace, over HTTP or HTTPS.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::Value;

/// Where the API server is and how to call it.
pub struct Client {
    host: String,
    port: u16,
    tls: Option<Arc<rustls::ClientConfig>>,
    token: Option<String>,
}

impl Client {
    /// From the kubeconfig's current context.
    pub fn from_kubeconfig(path: &Path) -> Result<Client, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let config: Value = serde_norway::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let named = |list: &str, name: &str, field: &str| -> Value {
            config[list]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["name"] == name)
                .map(|e| e[field].clone())
                .unwrap_or(Value::Null)
        };
        let context = named("contexts", config["current-context"].as_str().unwrap_or_default(), "context");
        let cluster = named("clusters", context["cluster"].as_str().unwrap_or_default(), "cluster");
        let user = named("users", context["user"].as_str().unwrap_or_default(), "user");
        let server: axum::http::Uri =
            cluster["server"].as_str().unwrap_or_default().parse().map_err(|e| format!("server: {e}"))?;
        let https = server.scheme_str() == Some("https");
        let host = server.host().ok_or("the kubeconfig's server has no host")?.to_string();
        let port = server.port_u16().unwrap_or(if https { 443 } else { 80 });
        let read = |data: &str, file: &str, of: &Value| -> Result<Option<Vec<u8>>, String> {
            if let Some(encoded) = of[data].as_str() {
                return base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map(Some)
                    .map_err(|e| format!("{data}: {e}"));
            }
            match of[file].as_str() {
                Some(f) => std::fs::read(dir.join(f)).map(Some).map_err(|e| format!("{f}: {e}")),
                None => Ok(None),
            }
        };
        let tls = match https {
            false => None,
            true => Some(Arc::new(tls_config(
                read("certificate-authority-data", "certificate-authority", &cluster)?,
                read("client-certificate-data", "client-certificate", &user)?.zip(read(
                    "client-key-data",
                    "client-key",
                    &user,
                )?),
            )?)),
        };
        let token = user["token"].as_str().map(str::to_string);
        Ok(Client { host, port, tls, token })
    }

    /// The namespace named `name`, as JSON.
    pub async fn namespace(&self, name: &str) -> Result<Value, String> {
        let body = self.get(&format!("/api/v1/namespaces/{name}")).await?;
        serde_json::from_slice(&body).map_err(|e| format!("namespace {name}: {e}"))
    }

    async fn get(&self, path: &str) -> Result<Vec<u8>, String> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| e.to_string())?;
        let mut request =
            hyper::Request::get(path).header(hyper::header::HOST, format!("{}:{}", self.host, self.port));
        if let Some(token) = &self.token {
            request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(Empty::<Bytes>::new()).map_err(|e| e.to_string())?;
        let response = match &self.tls {
            Some(config) => {
                let name = ServerName::try_from(self.host.clone()).map_err(|e| e.to_string())?;
                let tls = tokio_rustls::TlsConnector::from(config.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(|e| e.to_string())?;
                send(TokioIo::new(tls), request).await?
            }
            None => send(TokioIo::new(tcp), request).await?,
        };
        let (status, body) = response;
        if status != 200 {
            return Err(format!("GET {path}: HTTP {status}: {}", String::from_utf8_lossy(&body)));
        }
        Ok(body)
    }
}

async fn send<T>(io: T, request: hyper::Request<Empty<Bytes>>) -> Result<(u16, Vec<u8>), String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(io).await.map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes().to_vec();
    Ok((status, body))
}

fn tls_config(
    ca: Option<Vec<u8>>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    let ca = ca.ok_or("an https server needs certificate-authority(-data) in the kubeconfig")?;
    for cert in CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    }
    let builder =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots);
    match identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(&cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| e.to_string())?;
            builder.with_client_auth_cert(chain, key).map_err(|e| e.to_string())
        }
        None => Ok(builder.with_no_client_auth()),
    }
}
