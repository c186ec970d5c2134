//! kube's discovery check of an extension server: a GET of its discovery
//! document (`/apis/<group>/<version>`) as `system:kube-aggregator` of
//! `system:masters`, five tries at once, any 2xx within 5 s a pass. A pass
//! also keeps what the document lists, for this server's aggregated
//! discovery, and where the server's OpenAPI v3 document of the group
//! version is, for this server's `/openapi/v3`. A pass stands for
//! [`PASS_LASTS`] (the controller looks every 2 s); a failure is looked at
//! again on the next round, so a server that comes back is seen at once.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Method, Request, header};
use futures_util::future::{FutureExt, select_ok};
use http_body_util::{BodyExt, Limited};
use serde_json::Value;

use super::Aggregator;
use super::resolve;
use super::target::Target;
use super::transport::Connection;
use crate::errors::go_quote;
use crate::registry::Resources;

/// kube's number of tries, and how long each may take.
const ATTEMPTS: usize = 5;
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a pass stands before the server is checked again.
pub const PASS_LASTS: Duration = Duration::from_secs(10);

/// The most a discovery or OpenAPI index document may hold here.
const MAX_DOCUMENT_BYTES: usize = 8 << 20;

/// What an extension server said at its last pass.
#[derive(Debug, Clone)]
pub struct Learned {
    /// Its discovery document (an APIResourceList).
    pub resources: Value,
    /// The `serverRelativeURL` its `/openapi/v3` gives the group version.
    pub openapi_url: Option<String>,
    /// When it passed, and where and how it was reached then.
    passed: Option<(Instant, String)>,
}

impl Learned {
    /// What a server listed, as read elsewhere (tests).
    pub fn new(resources: Value, openapi_url: Option<String>) -> Learned {
        Learned { resources, openapi_url, passed: None }
    }
}

impl Aggregator {
    /// Checks `target`'s server as kube does: Ok when it answered, the
    /// text kube puts in `FailedDiscoveryCheck` when it did not.
    pub async fn check(&self, resources: &Resources, target: &Target) -> Result<(), String> {
        let reached = target.reached_as();
        if self.passed_lately(&target.name, &reached) {
            return Ok(());
        }
        let attempts = (0..ATTEMPTS).map(|_| self.attempt(resources, target).boxed());
        let mut learned = match select_ok(attempts).await {
            Ok((learned, _)) => learned,
            Err(why) => {
                // What it listed stays (discovery marks it stale); its pass
                // no longer stands.
                let mut known = self.learned.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(learned) = known.get_mut(&target.name) {
                    learned.passed = None;
                }
                return Err(why);
            }
        };
        learned.passed = Some((Instant::now(), reached));
        let mut known = self.learned.lock().unwrap_or_else(|p| p.into_inner());
        known.insert(target.name.clone(), learned);
        Ok(())
    }

    /// Whether `name` passed within [`PASS_LASTS`], reached as it is now.
    fn passed_lately(&self, name: &str, reached: &str) -> bool {
        let known = self.learned.lock().unwrap_or_else(|p| p.into_inner());
        let passed = known.get(name).and_then(|learned| learned.passed.as_ref());
        passed.is_some_and(|(at, how)| at.elapsed() < PASS_LASTS && how == reached)
    }

    /// One try at a freshly resolved endpoint.
    async fn attempt(&self, resources: &Resources, target: &Target) -> Result<Learned, String> {
        let address = resolve::address(resources, self.routing, &target.service).await?;
        let path = target.discovery_path();
        let url = format!("https://{address}{path}");
        let failed = |why: String| format!("failing or missing response from {url}: {why}");
        let exchange = async {
            let mut connection = self.transport.connect(target, &address).await?;
            let resources = get(&mut connection, &address, &path).await?;
            // Best effort: an extension server without OpenAPI v3 still passes.
            let openapi = match connection.ready().await {
                Ok(()) => get(&mut connection, &address, "/openapi/v3").await.ok(),
                Err(_) => None,
            };
            let key = path.trim_start_matches('/');
            let openapi_url = openapi
                .and_then(|index| index["paths"][key]["serverRelativeURL"].as_str().map(str::to_string));
            Ok::<_, Fetch>(Learned { resources, openapi_url, passed: None })
        };
        match tokio::time::timeout(ATTEMPT_TIMEOUT, exchange).await {
            Ok(Ok(learned)) => Ok(learned),
            Ok(Err(Fetch::Status(code))) => Err(failed(format!("bad status from {url}: {code}"))),
            Ok(Err(Fetch::Failed(why))) => Err(failed(format!("Get {}: {why}", go_quote(&url)))),
            Err(_) => Err(failed(format!(
                "Get {}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                go_quote(&url)
            ))),
        }
    }
}

/// Why a GET brought nothing.
enum Fetch {
    /// The server answered, not with 2xx.
    Status(u16),
    /// No answer, or not a JSON one.
    Failed(String),
}

impl From<String> for Fetch {
    fn from(why: String) -> Fetch {
        Fetch::Failed(why)
    }
}

/// GETs `path` as kube's aggregator identity; the JSON answered with 2xx.
async fn get(connection: &mut Connection, address: &str, path: &str) -> Result<Value, Fetch> {
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, address)
        .header(header::ACCEPT, "application/json")
        // Always allowed to look, whatever the server's authorization.
        .header("x-remote-user", "system:kube-aggregator")
        .header("x-remote-group", "system:masters")
        .body(Body::empty())
        .map_err(|e| e.to_string())?;
    let response = connection.send_request(request).await.map_err(|e| e.to_string())?;
    let code = response.status().as_u16();
    if !(200..300).contains(&code) {
        return Err(Fetch::Status(code));
    }
    let body =
        Limited::new(response.into_body(), MAX_DOCUMENT_BYTES).collect().await.map_err(|e| e.to_string())?;
    serde_json::from_slice(&body.to_bytes()).map_err(|e| Fetch::Failed(format!("not JSON: {e}")))
}
