//! The REST endpoints (k8s.io/apiserver `pkg/endpoints`): one dispatcher
//! that sends resource requests to `handlers` and serves discovery,
//! version, health, metrics and OpenAPI itself. The filter chain wraps it
//! (and answers some refusals with `respond`'s helpers).
//!
//! * `query`: query parameters checked as kube checks them.
//! * `handlers` / `watch`: the verbs.
//! * `respond`: response bodies, Status errors, Tables, warnings.
//! * `discovery`: legacy and aggregated discovery documents.
//! * `extension_discovery`: extension servers' group versions in them.
//! * `reviews`: access, rules, self-subject and token reviews.
//! * `token_request`: ServiceAccount tokens (`kubectl create token`).
//! * `component_status`: `kubectl get componentstatuses`, probed on each read.
//! * `openapi_cache`: the OpenAPI documents, rebuilt when resources change.
//! * `openapi_v2`: `/openapi/v2` in JSON or protobuf, with ETags.

mod binding;
mod component_status;
pub mod discovery;
mod eviction;
mod extension_discovery;
mod handlers;
mod negotiate;
mod openapi_cache;
mod openapi_v2;
mod query;
pub mod respond;
pub mod reviews;
mod token_request;
mod watch;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::admission::{AnnotationLevel, Notes};
use crate::aggregator::{Aggregator, Target};
use crate::audit::{AuditContext, Level};
use crate::authn::Authenticator;
use crate::authz::{AlwaysAllow, Union};
use crate::errors::ApiError;
use crate::flowcontrol::FlowControl;
use crate::metrics::Metrics;
use crate::metrics::labels::APISERVER;
use crate::metrics::tracker::{self, Route};
use crate::registry::Resources;
use crate::request::{RequestInfo, UserInfo};
use openapi_cache::OpenApiCache;
use query::Params;

/// kube-apiserver's limit on a request body: `MaxRequestBodyBytes`, 3 MiB
/// (twice etcd's 1.5 MiB request limit, since JSON is larger than the
/// protobuf stored).
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The Kubernetes version this server reports (`/version`): the API it
/// serves is Kubernetes 1.37's, as kubectl 1.37 expects.
pub const KUBE_VERSION: (&str, &str) = ("1", "37");

/// What every request handler shares.
#[derive(Debug)]
pub struct App {
    pub resources: Resources,
    pub metrics: Arc<Metrics>,
    /// Longer request bodies are refused with 413 before they are read.
    pub max_request_body_bytes: usize,
    /// For the reviews: who a token stands for, what a user may do.
    pub authenticator: Arc<Authenticator>,
    pub authorizer: Arc<Union>,
    openapi: OpenApiCache,
    /// API Priority and Fairness, whose state `/debug/api_priority_and_fairness/`
    /// dumps; unset when it is off.
    flow_control: std::sync::OnceLock<Arc<FlowControl>>,
    /// The aggregation layer; unset, extension servers' group versions
    /// answer 503.
    aggregator: std::sync::OnceLock<Arc<Aggregator>>,
}

pub type SharedApp = Arc<App>;

impl App {
    pub fn new(resources: Resources, metrics: Arc<Metrics>) -> SharedApp {
        Self::with_body_limit(resources, metrics, DEFAULT_MAX_REQUEST_BODY_BYTES)
    }

    /// As `new`, refusing request bodies longer than `max_request_body_bytes`.
    pub fn with_body_limit(
        resources: Resources,
        metrics: Arc<Metrics>,
        max_request_body_bytes: usize,
    ) -> SharedApp {
        let authenticator = Arc::new(Authenticator::anonymous_only());
        let authorizer = Arc::new(Union::new(vec![Arc::new(AlwaysAllow)]));
        Self::secured(resources, metrics, max_request_body_bytes, authenticator, authorizer)
    }

    /// As `with_body_limit`, answering reviews with these authenticators
    /// and authorizers (the filters' own).
    pub fn secured(
        resources: Resources,
        metrics: Arc<Metrics>,
        max_request_body_bytes: usize,
        authenticator: Arc<Authenticator>,
        authorizer: Arc<Union>,
    ) -> SharedApp {
        let openapi = OpenApiCache::new(resources.clone());
        // Built now rather than on the first request, which would wait for it.
        openapi.docs();
        let flow_control = std::sync::OnceLock::new();
        let aggregator = std::sync::OnceLock::new();
        Arc::new(App {
            resources,
            metrics,
            max_request_body_bytes,
            authenticator,
            authorizer,
            openapi,
            flow_control,
            aggregator,
        })
    }

    /// Passes extension servers' requests on through `aggregator`.
    pub fn aggregate_with(&self, aggregator: Arc<Aggregator>) {
        let _ = self.aggregator.set(aggregator);
    }

    /// Serves `flow_control`'s debug dumps.
    pub fn serve_flow_control_dumps(&self, flow_control: Arc<FlowControl>) {
        let _ = self.flow_control.set(flow_control);
    }
}

/// The endpoints, without the filters.
pub fn router(app: SharedApp) -> Router {
    Router::new().fallback(dispatch).with_state(app)
}

async fn dispatch(State(app): State<SharedApp>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let params = Params(
        parts
            .uri
            .query()
            .map(|q| {
                axum::extract::Query::<HashMap<String, String>>::try_from_uri(&parts.uri)
                    .map(|p| p.0)
                    .unwrap_or_else(|_| parse_lossy(q))
            })
            .unwrap_or_default(),
    );
    // The chain's request-info layer has read it already.
    let info = match parts.extensions.get::<RequestInfo>() {
        Some(info) => info.clone(),
        None => RequestInfo::parse(&parts.method, parts.uri.path(), params.is_watch()),
    };
    // The authentication filter sets the user; a request that did not go
    // through it (none in this server) would be anonymous.
    let user = parts.extensions.get::<Arc<UserInfo>>().cloned().unwrap_or_default();
    if let Some((target, discovery)) = extension_for(&app, &info, parts.uri.path()).await {
        return pass_on(&app, &target, Request::from_parts(parts, body), &user, discovery).await;
    }
    let body = match read_body(&parts.headers, body, app.max_request_body_bytes).await {
        Ok(body) => body,
        Err(e) => return e.into_response(),
    };
    let result = match &info {
        RequestInfo::Resource(resource) if token_request::is_token_request(resource) => {
            tracker::routed(Route::Resource);
            token_request::serve(&app, resource, &parts.headers, &body).await
        }
        RequestInfo::Resource(resource) if component_status::is_component_statuses(resource) => {
            tracker::routed(Route::Resource);
            component_status::serve(&app, resource, &parts.headers).await
        }
        RequestInfo::Resource(resource) if binding::is_bindings(resource) => {
            tracker::routed(Route::Resource);
            let accept = parts.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
            match negotiate::negotiate(accept, None) {
                Ok((_, encoding)) => {
                    binding::serve(&app, resource, &params, &parts.headers, &body, encoding).await
                }
                Err(e) => Err(e),
            }
        }
        RequestInfo::Resource(resource) => match reviews::find(resource) {
            Some(review) => {
                tracker::routed(Route::Resource);
                reviews::serve(&app, review, resource, &user, &parts.headers, &body).await
            }
            None => {
                let notes = Arc::new(Notes::default());
                let served =
                    handlers::serve(&app, resource, &user, &params, &parts.headers, &body, &notes).await;
                let response = served.unwrap_or_else(IntoResponse::into_response);
                return hand_on(response, &notes, &parts.extensions);
            }
        },
        RequestInfo::NonResource { .. } => {
            non_resource(&app, &parts.method, &parts.uri, &parts.headers).await
        }
    };
    result.unwrap_or_else(IntoResponse::into_response)
}

/// What admission noted during a write: its warnings onto the response
/// (refused or not, as kube's warning recorder does), its annotations (and
/// a created object's name) into the request's audit event.
fn hand_on(response: Response, notes: &Notes, extensions: &axum::http::Extensions) -> Response {
    if let Some(audit) = extensions.get::<AuditContext>() {
        let mut event = audit.lock();
        // kube completes a create's objectRef from the object sent.
        if let (Some(name), Some(object_ref)) = (notes.created_name(), event.object_ref.as_mut())
            && object_ref.get("name").is_none()
        {
            object_ref["name"] = json!(name);
        }
        for (key, value, level) in notes.annotations() {
            let kept = match level {
                AnnotationLevel::Metadata => true,
                AnnotationLevel::Request => event.level >= Level::Request,
            };
            if kept {
                event.annotations.insert(key, json!(value));
            }
        }
    }
    respond::with_warnings(response, &notes.warnings())
}

/// The whole body, read only as far as `limit`: a longer one is refused
/// with kube's 413 ("limit is N"), and one that says it is longer is
/// refused before any of it is read.
async fn read_body(headers: &axum::http::HeaderMap, body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let too_large = || ApiError::RequestEntityTooLarge(format!("limit is {limit}"));
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let over =
            std::error::Error::source(&e).is_some_and(|cause| cause.is::<http_body_util::LengthLimitError>());
        if over {
            too_large()
        } else {
            ApiError::BadRequest(format!("the request body could not be read: {e}"))
        }
    })
}

/// Query strings that are not valid form encoding, read as far as they go.
fn parse_lossy(query: &str) -> HashMap<String, String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

async fn non_resource(
    app: &App,
    method: &Method,
    uri: &axum::http::Uri,
    headers: &axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let path = uri.path();
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::NoSuchPath);
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let path = path.trim_end_matches('/');
    let ok = |body: serde_json::Value| respond::json_response(StatusCode::OK, &body);
    // kube instruments its health checks and aggregated discovery only.
    let routed = |subresource, component| tracker::routed(Route::NonResource { subresource, component });
    match path.split('/').skip(1).collect::<Vec<_>>().as_slice() {
        ["version"] => Ok(ok(version())),
        ["healthz"] => {
            routed("/healthz", "");
            Ok(text(StatusCode::OK, "ok"))
        }
        ["livez"] => {
            routed("/livez", "");
            Ok(text(StatusCode::OK, "ok"))
        }
        ["readyz"] => {
            routed("/readyz", "");
            readyz(app).await
        }
        ["metrics"] => Ok(text(StatusCode::OK, &app.metrics.render())),
        ["debug", "api_priority_and_fairness", dump] => flow_control_dump(app, dump, uri),
        ["api"] if discovery::wants_aggregated(accept) => {
            routed("api", APISERVER);
            Ok(aggregated(app, true).await)
        }
        ["apis"] if discovery::wants_aggregated(accept) => {
            routed("apis", APISERVER);
            Ok(aggregated(app, false).await)
        }
        ["api"] => Ok(ok(discovery::api_versions())),
        ["apis"] => {
            let mut list = discovery::api_group_list(&app.resources);
            let local = discovery::groups(&app.resources);
            let remote = extension_discovery::api_groups(&remotes(app).await, &local);
            if let Some(groups) = list["groups"].as_array_mut() {
                groups.extend(remote);
            }
            Ok(ok(list))
        }
        ["apis", group] if discovery::groups(&app.resources).iter().any(|g| g == group) => {
            Ok(ok(discovery::api_group(&app.resources, group)))
        }
        ["apis", group] => {
            extension_discovery::api_group_of(&remotes(app).await, group).map(ok).ok_or(ApiError::NoSuchPath)
        }
        ["api", version] => {
            discovery::api_resource_list(&app.resources, "", version).map(ok).ok_or(ApiError::NoSuchPath)
        }
        ["apis", group, version] => {
            discovery::api_resource_list(&app.resources, group, version).map(ok).ok_or(ApiError::NoSuchPath)
        }
        ["openapi", "v2"] => Ok(openapi_v2::serve(&app.openapi.docs(), headers)),
        ["openapi", "v3"] => Ok(openapi_v3_root(app).await),
        ["openapi", "v3", rest @ ..] => app
            .openapi
            .docs()
            .group_version(&rest.join("/"))
            .map(|doc| respond::json_bytes(StatusCode::OK, doc.to_vec(), respond::JSON))
            .ok_or(ApiError::NoSuchPath),
        _ => Err(ApiError::NoSuchPath),
    }
}

/// Aggregated discovery: this server's groups, then extension servers'.
async fn aggregated(app: &App, core: bool) -> Response {
    let mut document = discovery::aggregated(&app.resources, core);
    if !core {
        let local = discovery::groups(&app.resources);
        let remote = extension_discovery::aggregated_groups(&remotes(app).await, &local);
        if let Some(items) = document["items"].as_array_mut() {
            items.extend(remote);
        }
    }
    let body = serde_json::to_vec(&document).unwrap_or_default();
    let mut response = respond::json_bytes(StatusCode::OK, body, discovery::AGGREGATED_CONTENT_TYPE);
    response.headers_mut().insert(header::VARY, header::HeaderValue::from_static("Accept"));
    response
}

/// `/openapi/v3`: this server's group versions, then extension servers'
/// (whose documents are fetched from them through the proxy).
async fn openapi_v3_root(app: &App) -> Response {
    let root = app.openapi.docs().root().to_vec();
    let local = discovery::groups(&app.resources);
    let remote = extension_discovery::openapi_paths(&remotes(app).await, &local);
    if remote.is_empty() {
        return respond::json_bytes(StatusCode::OK, root, respond::JSON);
    }
    let mut document: serde_json::Value = serde_json::from_slice(&root).unwrap_or_default();
    for (path, url) in remote {
        document["paths"][path] = json!({"serverRelativeURL": url});
    }
    respond::json_response(StatusCode::OK, &document)
}

/// Extension servers' group versions and what they last said they serve.
async fn remotes(app: &App) -> Vec<extension_discovery::Remote> {
    match app.aggregator.get() {
        Some(aggregator) => aggregator.targets(&app.resources).await,
        None => Vec::new(),
    }
}

/// The extension server a request is for, and whether it is a discovery
/// request: a group version this server does not serve itself, whose
/// APIService names a Service (its resources, its discovery document,
/// its OpenAPI v3 document).
async fn extension_for(app: &App, info: &RequestInfo, path: &str) -> Option<(Target, bool)> {
    let (group, version, discovery) = match info {
        // Most requests: one of this server's resources, found at once.
        RequestInfo::Resource(resource)
            if app.resources.get(&resource.group, &resource.version, &resource.resource).is_some() =>
        {
            return None;
        }
        RequestInfo::Resource(resource) => (resource.group.clone(), resource.version.clone(), false),
        RequestInfo::NonResource { .. } => {
            match path.trim_end_matches('/').split('/').skip(1).collect::<Vec<_>>().as_slice() {
                ["apis", group, version] => (group.to_string(), version.to_string(), true),
                ["openapi", "v3", "apis", group, version] => (group.to_string(), version.to_string(), false),
                _ => return None,
            }
        }
    };
    if discovery::serves(&app.resources, &group, &version) {
        return None;
    }
    Aggregator::target(&app.resources, &group, &version).await.map(|target| (target, discovery))
}

/// Passes `request` on to `target`'s server; kube's 503 with the reason
/// when that cannot be done.
async fn pass_on(app: &App, target: &Target, request: Request, user: &UserInfo, discovery: bool) -> Response {
    let Some(aggregator) = app.aggregator.get() else {
        return respond::go_http_error(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
    };
    match aggregator.serve(&app.resources, target, request, user, discovery).await {
        Ok(response) => response,
        Err(why) => respond::go_http_error(StatusCode::SERVICE_UNAVAILABLE, &why),
    }
}

/// kube's APF dumps; `includeRequestDetails` (any value) adds who sent each
/// request and what it asks.
fn flow_control_dump(app: &App, dump: &str, uri: &axum::http::Uri) -> Result<Response, ApiError> {
    let flow_control = app.flow_control.get().ok_or(ApiError::NoSuchPath)?;
    let query = axum::extract::Query::<HashMap<String, String>>::try_from_uri(uri).map(|q| q.0);
    let details = query.unwrap_or_default().get("includeRequestDetails").is_some_and(|v| !v.is_empty());
    let body = match dump {
        "dump_priority_levels" => flow_control.dump_priority_levels(),
        "dump_queues" => flow_control.dump_queues(),
        "dump_requests" => flow_control.dump_requests(details),
        _ => return Err(ApiError::NoSuchPath),
    };
    Ok(text(StatusCode::OK, &body))
}

fn text(code: StatusCode, body: &str) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = code;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// How long the etcd check of `/readyz` and componentstatuses waits
/// (kube's `--etcd-healthcheck-timeout` default).
const ETCD_HEALTHCHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether etcd answers a read within the check's time, and why not: the
/// storage layer goes on trying members until the deadline given here,
/// then says what the last one answered.
pub(crate) async fn etcd_check(app: &App) -> Result<(), String> {
    let deadline = std::time::Instant::now() + ETCD_HEALTHCHECK_TIMEOUT;
    let read =
        crate::request::deadline::within(deadline, None, app.resources.storage().current_revision("/"));
    match tokio::time::timeout(ETCD_HEALTHCHECK_TIMEOUT + Duration::from_secs(1), read).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {ETCD_HEALTHCHECK_TIMEOUT:?}")),
    }
}

/// Ready when etcd answers (kube's `[+]etcd ok` check), every watch cache
/// has loaded and the authorizers have what they decide from.
async fn readyz(app: &App) -> Result<Response, ApiError> {
    match etcd_check(app).await {
        Ok(_) if !app.resources.caches_ready() => {
            Ok(text(StatusCode::INTERNAL_SERVER_ERROR, "[-]watch caches loading\nreadyz check failed"))
        }
        // kube's post-start hook: RBAC decides nothing before its objects are in.
        Ok(_) if !app.authorizer.is_ready() => Ok(text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "[-]poststarthook/rbac/bootstrap-roles failed: not finished\nreadyz check failed",
        )),
        Ok(_) => Ok(text(StatusCode::OK, "ok")),
        Err(e) => {
            Ok(text(StatusCode::INTERNAL_SERVER_ERROR, &format!("[-]etcd failed: {e}\nreadyz check failed")))
        }
    }
}

/// `kubernetes_build_info`'s labels: what `/version` says.
pub fn build_info() -> crate::metrics::BuildInfo {
    let version = version();
    let field = |name: &str| version[name].as_str().unwrap_or_default().to_string();
    crate::metrics::BuildInfo {
        major: field("major"),
        minor: field("minor"),
        git_version: field("gitVersion"),
        git_commit: field("gitCommit"),
        git_tree_state: field("gitTreeState"),
        build_date: field("buildDate"),
        go_version: field("goVersion"),
        compiler: field("compiler"),
        platform: field("platform"),
    }
}

/// `version.Info`; gitVersion must be semver for kubectl.
fn version() -> serde_json::Value {
    let (major, minor) = KUBE_VERSION;
    json!({
        "major": major,
        "minor": minor,
        "gitVersion": format!("v{major}.{minor}.0+rtcd.{}", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}
