//! Where a webhook is reached: its URL, or the first ready endpoint of
//! its Service (named `<name>.<namespace>.svc`, the name its certificate
//! must carry), and the client that calls it. Admission webhooks and CRD
//! conversion webhooks are reached alike.

use std::time::Duration;

use super::client::{Client, Endpoint};
use crate::admission::{Lookup, Lookups};
use crate::errors::go_quote;

/// A webhook's `clientConfig`, as called.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Url(String),
    Service { namespace: String, name: String, path: String, port: u16 },
}

/// Finds webhooks' endpoints and calls them (one pool of connections for
/// every webhook of the server).
#[derive(Debug)]
pub struct Caller {
    pub client: Client,
    services: Lookup,
    endpoints: Lookup,
}

impl Caller {
    pub fn new(lookups: &Lookups) -> Caller {
        Caller {
            client: Client::default(),
            services: lookups.services.clone(),
            endpoints: lookups.endpoints.clone(),
        }
    }

    /// POSTs `body` to `target` trusting `ca_bundle` (the system's roots
    /// when empty), waiting at most `timeout`: the 2xx answer's body, or
    /// why there is none in Go's words.
    pub async fn post(
        &self,
        target: &Target,
        ca_bundle: &[u8],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Vec<u8>, String> {
        let endpoint = self.endpoint(target, timeout).await?;
        self.client.post(&endpoint, ca_bundle, None, body, timeout).await
    }

    /// Where `target` is reached now: its URL, or an endpoint of its
    /// Service; kube's `?timeout=` query says how long the caller waits.
    pub async fn endpoint(&self, target: &Target, timeout: Duration) -> Result<Endpoint, String> {
        let timeout = format!("timeout={}s", timeout.as_secs());
        match target {
            Target::Url(url) => url_endpoint(url, &timeout),
            Target::Service { namespace, name, path, port } => {
                let address = self.service_address(namespace, name, *port).await?;
                let host = format!("{name}.{namespace}.svc");
                let path = if path.is_empty() { "/" } else { path };
                Ok(Endpoint {
                    address,
                    server_name: host.clone(),
                    authority: format!("{host}:{port}"),
                    path: format!("{path}?{timeout}"),
                })
            }
        }
    }

    /// The first ready address of the Service's endpoints, on the target
    /// port of the Service's port `port`.
    async fn service_address(&self, namespace: &str, name: &str, port: u16) -> Result<String, String> {
        let not_found = |what: &str| format!("{what} {} not found", go_quote(name));
        let service = self.services.find(Some(namespace), name).await.map_err(|e| e.to_string())?;
        let service = service.ok_or_else(|| not_found("services"))?;
        let service_port = service["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["port"].as_u64() == Some(u64::from(port)))
            .ok_or_else(|| {
                format!("service {} has no port {port}", go_quote(&format!("{namespace}/{name}")))
            })?;
        let port_name = service_port["name"].as_str().unwrap_or_default();
        let endpoints = self.endpoints.find(Some(namespace), name).await.map_err(|e| e.to_string())?;
        let endpoints = endpoints.ok_or_else(|| not_found("endpoints"))?;
        for subset in endpoints["subsets"].as_array().into_iter().flatten() {
            let ports = subset["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
            let target = ports
                .iter()
                .find(|p| p["name"].as_str().unwrap_or_default() == port_name)
                .or(if ports.len() == 1 { ports.first() } else { None })
                .and_then(|p| p["port"].as_u64());
            let ip = subset["addresses"].as_array().and_then(|a| a.first()).and_then(|a| a["ip"].as_str());
            if let (Some(ip), Some(target)) = (ip, target) {
                return Ok(match ip.contains(':') {
                    true => format!("[{ip}]:{target}"),
                    false => format!("{ip}:{target}"),
                });
            }
        }
        Err(format!("no endpoints available for service {}", go_quote(name)))
    }
}

/// A webhook URL (`https://host[:port][/path]`) as an endpoint.
fn url_endpoint(url: &str, timeout: &str) -> Result<Endpoint, String> {
    let uri: axum::http::Uri = url.parse().map_err(|e| format!("parse {}: {e}", go_quote(url)))?;
    let host = uri.host().ok_or_else(|| format!("no host in {}", go_quote(url)))?;
    let port = uri.port_u16().unwrap_or(443);
    let authority = uri.authority().map(|a| a.as_str().to_string()).unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let address = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    let path = match uri.path() {
        "" => "/",
        path => path,
    };
    Ok(Endpoint { address, server_name: host.to_string(), authority, path: format!("{path}?{timeout}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_become_endpoints_with_the_timeout_query() {
        let e = url_endpoint("https://127.0.0.1:8443/mutate", "timeout=10s").unwrap();
        assert_eq!(e.address, "127.0.0.1:8443");
        assert_eq!(e.url(), "https://127.0.0.1:8443/mutate?timeout=10s");
        let bare = url_endpoint("https://hooks.example.com", "timeout=5s").unwrap();
        assert_eq!((bare.address.as_str(), bare.path.as_str()), ("hooks.example.com:443", "/?timeout=5s"));
    }
}
