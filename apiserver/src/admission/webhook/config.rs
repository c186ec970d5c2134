//! The webhooks of the stored configurations, read into what dispatching
//! needs: gathered from every configuration sorted by configuration name,
//! in their order inside each (kube's webhook managers), with kube's
//! defaults for anything left out. Parsed again only when a configuration
//! changed.

use std::sync::Arc;

use serde_json::{Value, json};

pub use super::caller::Target;
use super::conditions::Conditions;
use crate::admission::Lookup;
use crate::admission::lookup::Parsed;
use crate::errors::ApiError;
use crate::runtime::meta;

/// One webhook, as called.
#[derive(Debug)]
pub struct Hook {
    /// The configuration's name and the webhook's, as messages and
    /// annotations name them.
    pub configuration: String,
    pub name: String,
    pub target: Target,
    /// PEM roots from `caBundle` (empty: the system's).
    pub ca_bundle: Vec<u8>,
    pub rules: Vec<Value>,
    pub fail_open: bool,
    pub namespace_selector: Value,
    pub object_selector: Value,
    /// `None` or `NoneOnDryRun`: may be called for a dry run.
    pub dry_run_safe: bool,
    pub timeout: std::time::Duration,
    /// The first of `admissionReviewVersions` this server speaks.
    pub review_version: &'static str,
    pub reinvoke_if_needed: bool,
    pub conditions: Conditions,
}

/// The configurations of one kind, parsed once per change.
#[derive(Debug)]
pub struct Source(Parsed<Hook>);

impl Source {
    pub fn new(lookup: Lookup) -> Source {
        Source(Parsed::new(lookup))
    }

    /// Every webhook, in calling order.
    pub async fn hooks(&self) -> Result<Arc<Vec<Hook>>, ApiError> {
        self.0.get(parse_configuration).await
    }
}

fn parse_configuration(configuration: &Value) -> Vec<Hook> {
    let name = meta::name_of(configuration);
    configuration["webhooks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|hook| parse_hook(name, hook))
        .collect()
}

/// One stored webhook; None for one that could not have passed validation
/// (stored before it, or written around it).
fn parse_hook(configuration: &str, hook: &Value) -> Option<Hook> {
    let config = &hook["clientConfig"];
    let target = match (config["url"].as_str(), config["service"].as_object()) {
        (Some(url), None) => Target::Url(url.to_string()),
        (None, Some(service)) => Target::Service {
            namespace: service.get("namespace")?.as_str()?.to_string(),
            name: service.get("name")?.as_str()?.to_string(),
            path: service.get("path").and_then(Value::as_str).unwrap_or("/").to_string(),
            port: service.get("port").and_then(Value::as_u64).unwrap_or(443).try_into().ok()?,
        },
        _ => return None,
    };
    let ca_bundle = match config["caBundle"].as_str() {
        Some(encoded) => base64::Engine::decode(&base64::engine::general_purpose::STANDARD, encoded).ok()?,
        None => Vec::new(),
    };
    let versions = hook["admissionReviewVersions"].as_array()?;
    let review_version = versions.iter().find_map(|v| match v.as_str() {
        Some("v1") => Some("v1"),
        Some("v1beta1") => Some("v1beta1"),
        _ => None,
    })?;
    let selector = |key: &str| if hook[key].is_object() { hook[key].clone() } else { json!({}) };
    Some(Hook {
        configuration: configuration.to_string(),
        name: hook["name"].as_str()?.to_string(),
        target,
        ca_bundle,
        rules: hook["rules"].as_array().cloned().unwrap_or_default(),
        fail_open: hook["failurePolicy"].as_str() == Some("Ignore"),
        namespace_selector: selector("namespaceSelector"),
        object_selector: selector("objectSelector"),
        dry_run_safe: matches!(hook["sideEffects"].as_str(), Some("None" | "NoneOnDryRun")),
        timeout: std::time::Duration::from_secs(hook["timeoutSeconds"].as_u64().unwrap_or(10).clamp(1, 30)),
        review_version,
        reinvoke_if_needed: hook["reinvocationPolicy"].as_str() == Some("IfNeeded"),
        conditions: Conditions::compile(
            hook["matchConditions"].as_array().map(Vec::as_slice).unwrap_or_default(),
        ),
    })
}
