//! Which admission plugins run, and in what order: every name
//! kube-apiserver's `--enable-admission-plugins` and
//! `--disable-admission-plugins` accept, in kube's fixed order (the order of
//! the flags never matters), with kube's default set, and what rtcd does
//! with each.

use std::sync::Arc;

use super::Plugin;
use super::always::{AlwaysAdmit, AlwaysDeny};
use super::certificates::SignerCheck;
use super::config_file::PluginConfigurations;
use super::default_class::DefaultClass;
use super::limit_ranger::LimitRanger;
use super::lookup::Lookups;
use super::namespace_exists::{NamespaceAutoProvision, NamespaceExists};
use super::namespace_lifecycle::NamespaceLifecycle;
use super::pod_defaults::{AlwaysPullImages, DefaultTolerationSeconds, ExtendedResourceToleration};
use super::pod_node_selector::PodNodeSelector;
use super::pod_security::{PodSecurity, PodSecurityConfig};
use super::policy::{MutatingAdmissionPolicy, ValidatingAdmissionPolicy};
use super::priority::Priority;
use super::pvc_resize::PersistentVolumeClaimResize;
use super::resource_quota::ResourceQuota;
use super::restrictions::{DenyServiceExternalIPs, LimitPodHardAntiAffinityTopology};
use super::runtime_class::RuntimeClass;
use super::service_account::ServiceAccount;
use super::storage_protection::StorageObjectInUseProtection;
use super::taint_nodes_by_condition::TaintNodesByCondition;
use super::webhook::credentials::Credentials;
use super::webhook::{MutatingAdmissionWebhook, ValidatingAdmissionWebhook, WebhookCredentials, Webhooks};

/// What rtcd does with a plugin kube knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Built here, with kube's behaviour.
    Built,
    /// Acts only on kinds (or behind feature gates) this server does not
    /// serve: enabled or not, it would never change a request.
    Inert,
    /// Not built yet: asking for it by flag stops the server; on by
    /// default, it is named in a warning at startup.
    Missing,
}

/// One name the flags accept.
#[derive(Debug)]
pub struct Known {
    pub name: &'static str,
    pub default_on: bool,
    pub support: Support,
}

const fn known(name: &'static str, default_on: bool, support: Support) -> Known {
    Known { name, default_on, support }
}

use Support::{Built, Inert, Missing};

/// kube-apiserver's plugins in kube's execution order (its
/// `AllOrderedPlugins`); webhooks, ResourceQuota and AlwaysDeny stay last.
pub const KNOWN: &[Known] = &[
    known("AlwaysAdmit", false, Built),
    known("NamespaceAutoProvision", false, Built),
    known("NamespaceLifecycle", true, Built),
    known("NamespaceExists", false, Built),
    known("LimitPodHardAntiAffinityTopology", false, Built),
    known("LimitRanger", true, Built),
    known("ServiceAccount", true, Built),
    known("NodeRestriction", false, Missing),
    known("TaintNodesByCondition", true, Built),
    known("AlwaysPullImages", false, Built),
    known("ImagePolicyWebhook", false, Missing),
    known("PodSecurity", true, Built),
    known("PodNodeSelector", false, Built),
    known("Priority", true, Built),
    known("DefaultTolerationSeconds", true, Built),
    known("PodTolerationRestriction", false, Missing),
    known("EventRateLimit", false, Missing),
    known("ExtendedResourceToleration", false, Built),
    known("DefaultStorageClass", true, Built),
    known("StorageObjectInUseProtection", true, Built),
    known("PodGroupProtection", true, Inert),
    known("OwnerReferencesPermissionEnforcement", false, Missing),
    known("PersistentVolumeClaimResize", true, Built),
    known("RuntimeClass", true, Built),
    known("CertificateApproval", true, Built),
    known("CertificateSigning", true, Built),
    known("ClusterTrustBundleAttest", true, Inert),
    known("CertificateSubjectRestriction", true, Inert),
    known("DefaultIngressClass", true, Built),
    known("DenyServiceExternalIPs", false, Built),
    known("PodTopologyLabels", true, Inert),
    known("PodGroupWorkloadExists", true, Inert),
    known("NodeDeclaredFeatureValidator", true, Inert),
    known("JobValidation", true, Inert),
    known("PodResizeValidator", true, Inert),
    known("MutatingAdmissionPolicy", true, Built),
    known("MutatingAdmissionWebhook", true, Built),
    known("ValidatingAdmissionPolicy", true, Built),
    known("ValidatingAdmissionWebhook", true, Built),
    known("ResourceQuota", true, Built),
    known("AlwaysDeny", false, Built),
];

fn find(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name == name)
}

/// The plugins enabled by the two flags, in kube's order: the default set,
/// plus `enable`, minus `disable`. Refused, with kube's texts, when a name
/// is unknown or in both lists; also when a plugin asked for by name is
/// not built here (running without it would silently drop what it
/// enforces).
pub fn enabled(enable: &[String], disable: &[String]) -> Result<Vec<&'static Known>, String> {
    let mut errors = Vec::new();
    for (flag, names) in [("enable-admission-plugins", enable), ("disable-admission-plugins", disable)] {
        for name in names.iter().filter(|n| find(n).is_none()) {
            errors.push(format!("{flag} plugin {} is unknown", crate::errors::go_quote(name)));
        }
    }
    let mut both: Vec<&str> = enable.iter().filter(|n| disable.contains(n)).map(String::as_str).collect();
    both.sort_unstable();
    both.dedup();
    if !both.is_empty() {
        errors.push(format!(
            "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
            both.join(" ")
        ));
    }
    for name in enable {
        if find(name).is_some_and(|k| k.support == Missing) {
            errors.push(format!(
                "admission plugin {} is not built into rtcd-apiserver yet",
                crate::errors::go_quote(name)
            ));
        }
    }
    // Several as kube's error aggregate prints them.
    match errors.as_slice() {
        [] => {}
        [one] => return Err(one.clone()),
        many => return Err(format!("[{}]", many.join(", "))),
    }
    let on = |k: &Known| {
        (k.default_on || enable.iter().any(|n| n == k.name)) && !disable.iter().any(|n| n == k.name)
    };
    Ok(KNOWN.iter().filter(|k| on(k)).collect())
}

/// What the plugins built here are configured with.
#[derive(Debug, Clone)]
pub struct PluginConfig {
    pub not_ready_toleration_seconds: i64,
    pub unreachable_toleration_seconds: i64,
    /// What `--admission-control-config-file` gives each plugin.
    pub configurations: PluginConfigurations,
}

impl Default for PluginConfig {
    /// kube-apiserver's defaults.
    fn default() -> Self {
        PluginConfig {
            not_ready_toleration_seconds: 300,
            unreachable_toleration_seconds: 300,
            configurations: PluginConfigurations::default(),
        }
    }
}

/// The plugins of `names` that are built here, in order; those that
/// would act on nothing, or are not built yet, are left out.
/// Both webhook plugins share `webhooks` (configurations, connections,
/// metrics).
pub fn build(
    names: &[&'static Known],
    config: &PluginConfig,
    lookups: &Lookups,
    webhooks: &Arc<Webhooks>,
) -> Vec<Arc<dyn Plugin>> {
    names.iter().filter_map(|known| instance(known.name, config, lookups, webhooks)).collect()
}

fn instance(
    name: &str,
    config: &PluginConfig,
    lookups: &Lookups,
    webhooks: &Arc<Webhooks>,
) -> Option<Arc<dyn Plugin>> {
    let namespaces = &lookups.namespaces;
    Some(match name {
        "AlwaysAdmit" => Arc::new(AlwaysAdmit),
        "AlwaysDeny" => Arc::new(AlwaysDeny),
        "NamespaceLifecycle" => Arc::new(NamespaceLifecycle::new(namespaces.clone())),
        "NamespaceExists" => Arc::new(NamespaceExists::new(namespaces.clone())),
        "NamespaceAutoProvision" => Arc::new(NamespaceAutoProvision::new(namespaces.clone())),
        "TaintNodesByCondition" => Arc::new(TaintNodesByCondition),
        "ServiceAccount" => Arc::new(ServiceAccount::new(lookups.service_accounts.clone())),
        "LimitRanger" => Arc::new(LimitRanger::new(lookups.limit_ranges.clone())),
        "Priority" => Arc::new(Priority::new(lookups.priority_classes.clone())),
        "DefaultStorageClass" => Arc::new(DefaultClass::storage(lookups.storage_classes.clone())),
        "DefaultIngressClass" => Arc::new(DefaultClass::ingress(lookups.ingress_classes.clone())),
        "PersistentVolumeClaimResize" => {
            Arc::new(PersistentVolumeClaimResize::new(lookups.storage_classes.clone()))
        }
        "RuntimeClass" => Arc::new(RuntimeClass::new(lookups.runtime_classes.clone())),
        "CertificateApproval" => Arc::new(SignerCheck::approval(lookups.permissions.clone())),
        "CertificateSigning" => Arc::new(SignerCheck::signing(lookups.permissions.clone())),
        "StorageObjectInUseProtection" => Arc::new(StorageObjectInUseProtection),
        "AlwaysPullImages" => Arc::new(AlwaysPullImages),
        "ExtendedResourceToleration" => Arc::new(ExtendedResourceToleration),
        "PodNodeSelector" => Arc::new(PodNodeSelector::new(namespaces.clone())),
        "LimitPodHardAntiAffinityTopology" => Arc::new(LimitPodHardAntiAffinityTopology),
        "DenyServiceExternalIPs" => Arc::new(DenyServiceExternalIPs),
        "PodSecurity" => Arc::new(PodSecurity::new(namespaces.clone(), config.pod_security())),
        "ResourceQuota" => Arc::new(ResourceQuota::new(lookups.resource_quotas.clone())),
        "ValidatingAdmissionPolicy" => Arc::new(ValidatingAdmissionPolicy::new(lookups)),
        "MutatingAdmissionPolicy" => Arc::new(MutatingAdmissionPolicy::new(lookups)),
        "MutatingAdmissionWebhook" => Arc::new(MutatingAdmissionWebhook(webhooks.clone())),
        "ValidatingAdmissionWebhook" => Arc::new(ValidatingAdmissionWebhook(webhooks.clone())),
        "DefaultTolerationSeconds" => Arc::new(DefaultTolerationSeconds {
            not_ready_seconds: config.not_ready_toleration_seconds,
            unreachable_seconds: config.unreachable_toleration_seconds,
        }),
        _ => return None,
    })
}

impl PluginConfig {
    /// PodSecurity's defaults and exemptions.
    pub fn pod_security(&self) -> PodSecurityConfig {
        self.configurations.get("PodSecurity").map(PodSecurityConfig::from_configuration).unwrap_or_default()
    }

    /// The webhook plugins' credentials, from their configurations'
    /// `kubeConfigFile`s; what is wrong with one otherwise.
    pub fn webhook_credentials(&self) -> Result<WebhookCredentials, String> {
        let read = |plugin: &str| match self.configurations.get(plugin) {
            Some(configuration) => {
                Credentials::from_configuration(configuration, |f| self.configurations.resolve(f))
            }
            None => Ok(Credentials::default()),
        };
        Ok(WebhookCredentials {
            mutating: read("MutatingAdmissionWebhook")?,
            validating: read("ValidatingAdmissionWebhook")?,
        })
    }
}
