//! Admission control (k8s.io/apiserver `pkg/admission`): every write, before
//! it is stored, is shown to each plugin of a chain, first to the mutating
//! ones (which may change the object), then, once the object is complete
//! and valid, to the validating ones (which may only refuse it). Reads are
//! never admitted.
//!
//! * `attributes`: what a plugin is told about a write, and its refusals.
//! * `chain`: the plugins in the order they run.
//! * `plugins`: every plugin name kube accepts, kube's order and default
//!   set, and the instances of those built here.
//! * `config_file`: `--admission-control-config-file`.
//! * `cel`: CEL expressions over objects (match conditions, policies).
//! * `step_metrics`: how long each plugin and step takes.
//! * `notes`: the warnings and audit annotations a write collects.
//! * `lookup`: how plugins reach the objects they decide on (namespaces,
//!   ServiceAccounts, LimitRanges, PriorityClasses).
//! * one module per plugin or family of plugins: `always` (AlwaysAdmit,
//!   AlwaysDeny), `limit_ranger`, `namespace_lifecycle`, `namespace_exists`
//!   (NamespaceExists, NamespaceAutoProvision), `pod_defaults`
//!   (DefaultTolerationSeconds, AlwaysPullImages, ExtendedResourceToleration),
//!   `pod_node_selector`, `pod_security`, `priority`, `restrictions`
//!   (LimitPodHardAntiAffinityTopology, DenyServiceExternalIPs),
//!   `service_account`, `taint_nodes_by_condition`, `webhook`
//!   (MutatingAdmissionWebhook, ValidatingAdmissionWebhook), `policy`
//!   (ValidatingAdmissionPolicy), `resource_quota`.

mod always;
mod attributes;
pub mod cel;
mod certificates;
mod chain;
pub mod config_file;
mod default_class;
mod limit_ranger;
pub mod lookup;
mod namespace_exists;
mod namespace_lifecycle;
mod notes;
pub mod plugins;
mod pod_defaults;
mod pod_node_selector;
mod pod_security;
mod policy;
mod priority;
mod pvc_resize;
pub mod resource_quota;
mod restrictions;
mod runtime_class;
pub mod service_account;
mod step_metrics;
pub mod storage_protection;
mod taint_nodes_by_condition;
pub mod webhook;

use std::sync::Arc;

pub use attributes::{
    Attributes, GroupVersionKind, GroupVersionResource, Normalize, Operation, Reinvocation,
};
pub use chain::Chain;
pub use lookup::{Lookup, Lookups, Objects, Permissions, StatusChange};
pub use namespace_lifecycle::IMMORTAL;
pub use notes::{AnnotationLevel, Notes};
pub use plugins::{Known, PluginConfig};

use async_trait::async_trait;

use crate::errors::ApiError;

/// One admission plugin. Both steps default to admitting everything.
#[async_trait]
pub trait Plugin: Send + Sync + std::fmt::Debug {
    /// kube's plugin name (`NamespaceLifecycle`), as the flags name it.
    fn name(&self) -> &'static str;

    /// Mutating admission: may change `attributes.object`.
    async fn admit(&self, _attributes: &mut Attributes) -> Result<(), ApiError> {
        Ok(())
    }

    /// Validating admission: may only refuse.
    async fn validate(&self, _attributes: &Attributes) -> Result<(), ApiError> {
        Ok(())
    }
}

/// What appends a part of admission's metrics to `/metrics`.
pub type MetricsWriter = Arc<dyn Fn(&mut String) + Send + Sync>;

/// A server's admission: the chain every store runs, and the handles its
/// plugins wait on until the stores they read are served.
#[derive(Debug)]
pub struct Setup {
    pub chain: Arc<Chain>,
    pub lookups: Lookups,
    /// The webhook plugins' counters, for `/metrics`.
    pub webhook_metrics: Arc<webhook::WebhookMetrics>,
    /// How the webhook plugins reach webhooks (shared with CRDs'
    /// conversion webhooks).
    pub webhook_caller: Arc<webhook::Caller>,
}

impl Setup {
    /// The plugins `enabled`, then `checks` (the server's own, such as
    /// RBAC's escalation check, which kube runs in its storage layer).
    /// Refused when a plugin's configuration cannot be used.
    pub fn new(
        enabled: &[&'static Known],
        config: &PluginConfig,
        checks: Vec<Arc<dyn Plugin>>,
    ) -> Result<Setup, String> {
        Ok(Setup::assemble(enabled, config, config.webhook_credentials()?, checks))
    }

    /// What admission adds to `/metrics`: step, plugin and webhook figures.
    pub fn metrics(&self) -> Vec<MetricsWriter> {
        let (steps, webhooks) = (self.chain.metrics(), self.webhook_metrics.clone());
        vec![Arc::new(move |out| steps.write_metrics(out)), Arc::new(move |out| webhooks.write_metrics(out))]
    }

    /// kube's default plugins, configured as kube's defaults.
    pub fn default_plugins() -> Setup {
        let enabled = plugins::enabled(&[], &[]).unwrap_or_default();
        Setup::assemble(&enabled, &PluginConfig::default(), Default::default(), Vec::new())
    }

    fn assemble(
        enabled: &[&'static Known],
        config: &PluginConfig,
        credentials: webhook::WebhookCredentials,
        checks: Vec<Arc<dyn Plugin>>,
    ) -> Setup {
        let lookups = Lookups::default();
        let webhooks = webhook::Webhooks::new(&lookups, credentials);
        let mut chain = plugins::build(enabled, config, &lookups, &webhooks);
        // What kube checks in storage strategies rather than plugins: on
        // whatever the flags say.
        chain.push(Arc::new(certificates::PodCertificateSigning(lookups.permissions.clone())));
        chain.extend(checks);
        Setup {
            chain: Arc::new(Chain::new(chain)),
            lookups,
            webhook_metrics: webhooks.metrics.clone(),
            webhook_caller: webhooks.caller(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
