//! PodSecurity: the Pod Security Standards, as namespaces ask for them
//! with the labels `pod-security.kubernetes.io/{enforce,audit,warn}`
//! (`privileged`, `baseline`, `restricted`) and `...-version`. A pod that
//! breaks its namespace's `enforce` level is refused with kube's
//! "violates PodSecurity" text; breaking `warn` sends a `Warning`, breaking
//! `audit` annotates the audit event. Workloads' pod templates are warned
//! about and audited, never refused. Defaults and exemptions come from the
//! PodSecurityConfiguration in `--admission-control-config-file`.
//!
//! Every version label is evaluated with the latest checks (the checks
//! built here; earlier versions differ only in details rtcd does not
//! model), and its name is kept in the texts.
//!
//! * `checks`: the baseline and restricted checks.

mod checks;

use async_trait::async_trait;
use serde_json::Value;

use super::{Attributes, Lookup, Operation, Plugin};
use crate::errors::ApiError;

const PREFIX: &str = "pod-security.kubernetes.io/";

/// Pod subresources that change nothing the standards look at.
const IGNORED_SUBRESOURCES: [&str; 8] =
    ["exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"];

/// Workload kinds whose pod template is checked (warn and audit only).
const WORKLOADS: [(&str, &str); 6] = [
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
];

/// A level and the version it was asked at (`restricted:latest`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LevelVersion {
    level: Level,
    version: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl LevelVersion {
    fn text(&self) -> String {
        let level = match self.level {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        };
        format!("{level}:{}", self.version)
    }

    fn failures(&self, spec: &Value) -> Vec<checks::Failure> {
        match self.level {
            Level::Privileged => Vec::new(),
            level => checks::evaluate(spec, level == Level::Restricted),
        }
    }
}

/// What the configuration file sets: defaults and exemptions.
#[derive(Debug, Default, Clone)]
pub struct PodSecurityConfig {
    defaults: Value,
    exempt_users: Vec<String>,
    exempt_namespaces: Vec<String>,
    exempt_runtime_classes: Vec<String>,
}

impl PodSecurityConfig {
    /// From a PodSecurityConfiguration (pod-security.admission.config.k8s.io).
    pub fn from_configuration(configuration: &Value) -> PodSecurityConfig {
        let list = |key: &str| -> Vec<String> {
            configuration["exemptions"][key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        PodSecurityConfig {
            defaults: configuration["defaults"].clone(),
            exempt_users: list("usernames"),
            exempt_namespaces: list("namespaces"),
            exempt_runtime_classes: list("runtimeClasses"),
        }
    }
}

#[derive(Debug)]
pub struct PodSecurity {
    namespaces: Lookup,
    config: PodSecurityConfig,
}

impl PodSecurity {
    pub fn new(namespaces: Lookup, config: PodSecurityConfig) -> PodSecurity {
        PodSecurity { namespaces, config }
    }

    /// The namespace's level for `mode` (`enforce`, `audit`, `warn`): its
    /// label, else the configured default, else privileged; an unknown
    /// level is taken as restricted (kube fails closed).
    fn level(&self, labels: &Value, mode: &str) -> LevelVersion {
        let label = |key: &str| labels[format!("{PREFIX}{key}")].as_str().map(str::to_string);
        let default = |key: &str| self.config.defaults[key].as_str().map(str::to_string);
        let level = label(mode).or_else(|| default(mode)).unwrap_or_else(|| "privileged".into());
        let version_key = format!("{mode}-version");
        let version =
            label(&version_key).or_else(|| default(&version_key)).unwrap_or_else(|| "latest".into());
        let level = match level.as_str() {
            "privileged" => Level::Privileged,
            "baseline" => Level::Baseline,
            _ => Level::Restricted,
        };
        LevelVersion { level, version }
    }
}

#[async_trait]
impl Plugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        let Some(spec) = pod_spec(attributes) else { return Ok(()) };
        let Some(namespace) = attributes.namespace.as_deref() else { return Ok(()) };
        let is_pod = attributes.resource.group.is_empty() && attributes.resource.resource == "pods";
        if let Some(why) = self.exemption(attributes, namespace, spec) {
            attributes.notes.annotate(format!("{PREFIX}exempt"), why);
            return Ok(());
        }
        let labels = match self.namespaces.find(None, namespace).await? {
            Some(found) => found["metadata"]["labels"].clone(),
            None => return Err(ApiError::Internal(format!("failed to lookup namespace \"{namespace}\""))),
        };
        let (enforce, audit, warn) =
            (self.level(&labels, "enforce"), self.level(&labels, "audit"), self.level(&labels, "warn"));
        if is_pod {
            attributes.notes.annotate(format!("{PREFIX}enforce-policy"), enforce.text());
            let failures = enforce.failures(spec);
            if !failures.is_empty() {
                return Err(attributes.forbidden(format!(
                    "violates PodSecurity \"{}\": {}",
                    enforce.text(),
                    checks::describe(&failures)
                )));
            }
        }
        let failures = audit.failures(spec);
        if !failures.is_empty() {
            let text =
                format!("would violate PodSecurity \"{}\": {}", audit.text(), checks::describe(&failures));
            attributes.notes.annotate(format!("{PREFIX}audit-violations"), text);
        }
        let failures = warn.failures(spec);
        if !failures.is_empty() {
            attributes.notes.warn(format!(
                "would violate PodSecurity \"{}\": {}",
                warn.text(),
                checks::describe(&failures)
            ));
        }
        Ok(())
    }
}

impl PodSecurity {
    /// Why the write is exempt, as kube's `exempt` audit annotation says.
    fn exemption(&self, attributes: &Attributes, namespace: &str, spec: &Value) -> Option<&'static str> {
        let config = &self.config;
        if config.exempt_namespaces.iter().any(|n| n == namespace) {
            return Some("namespace");
        }
        if config.exempt_users.iter().any(|u| *u == attributes.user.name) {
            return Some("user");
        }
        let class = spec["runtimeClassName"].as_str().unwrap_or_default();
        (!class.is_empty() && config.exempt_runtime_classes.iter().any(|c| c == class))
            .then_some("runtimeClass")
    }
}

/// The pod spec a write is about: a pod's own (on create, and on updates
/// that change its containers), or a workload's template; None otherwise.
fn pod_spec(attributes: &Attributes) -> Option<&Value> {
    if !matches!(attributes.operation, Operation::Create | Operation::Update) {
        return None;
    }
    let object = attributes.object.as_ref()?;
    let resource = &attributes.resource;
    if resource.group.is_empty() && resource.resource == "pods" {
        if attributes.subresource.as_deref().is_some_and(|s| IGNORED_SUBRESOURCES.contains(&s)) {
            return None;
        }
        if let Some(old) = &attributes.old_object
            && ["containers", "initContainers", "ephemeralContainers"]
                .iter()
                .all(|f| old["spec"][*f] == object["spec"][*f])
        {
            return None;
        }
        return Some(&object["spec"]);
    }
    if attributes.subresource.is_some()
        || !WORKLOADS.contains(&(resource.group.as_str(), resource.resource.as_str()))
    {
        return None;
    }
    let template = match resource.resource.as_str() {
        "cronjobs" => &object["spec"]["jobTemplate"]["spec"]["template"],
        _ => &object["spec"]["template"],
    };
    template["spec"].is_object().then_some(&template["spec"])
}
