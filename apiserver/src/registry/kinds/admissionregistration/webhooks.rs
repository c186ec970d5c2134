//! admissionregistration.k8s.io/v1 MutatingWebhookConfigurations and
//! ValidatingWebhookConfigurations: the webhooks the admission plugins of
//! the same names call. Cluster-scoped; each holds a list of webhooks with
//! kube's defaults (failurePolicy Fail, matchPolicy Equivalent, empty
//! selectors, 10 s, rule scope `*`, service port 443, reinvocation Never)
//! and kube's validation, texts included.

use k8s_openapi::api::admissionregistration::v1 as registration;
use serde_json::{Value, json};

use super::super::Kind;
use super::super::webhook_client::{service_causes, url_causes};
use super::{
    cause, invalid, match_condition_causes, one_of, required, rule_causes, selector_causes, strings,
};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::selector::go_quote;
use crate::table::{self, Printer};

pub fn mutating() -> Kind {
    Kind::typed::<registration::MutatingWebhookConfiguration>(
        Resource::new(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        )
        .cluster_scoped()
        .in_api_extensions(),
        WebhookConfigurationStrategy { mutating: true },
    )
}

pub fn validating() -> Kind {
    Kind::typed::<registration::ValidatingWebhookConfiguration>(
        Resource::new(
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        )
        .cluster_scoped()
        .in_api_extensions(),
        WebhookConfigurationStrategy { mutating: false },
    )
}

#[derive(Debug)]
struct WebhookConfigurationStrategy {
    mutating: bool,
}

impl WebhookConfigurationStrategy {
    fn kind(&self) -> &'static str {
        match self.mutating {
            true => "MutatingWebhookConfiguration.admissionregistration.k8s.io",
            false => "ValidatingWebhookConfiguration.admissionregistration.k8s.io",
        }
    }
}

impl Strategy for WebhookConfigurationStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(match self.mutating {
            true => &nodes::ADMISSIONREGISTRATION_V1_MUTATING_WEBHOOK_CONFIGURATION,
            false => &nodes::ADMISSIONREGISTRATION_V1_VALIDATING_WEBHOOK_CONFIGURATION,
        })
    }

    fn set_defaults(&self, object: &mut Value) {
        for hook in object["webhooks"].as_array_mut().into_iter().flatten() {
            default_webhook(hook, self.mutating);
        }
    }

    /// Every webhook checked; the configuration's generation still moves
    /// with its webhooks (kube counts it).
    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        let mut names = Vec::new();
        for (i, hook) in object["webhooks"].as_array().into_iter().flatten().enumerate() {
            let at = format!("webhooks[{i}]");
            causes.extend(webhook_causes(hook, &at, self.mutating));
            let name = hook["name"].as_str().unwrap_or_default();
            if !name.is_empty() {
                if names.contains(&name) {
                    causes.push(cause(
                        "FieldValueDuplicate",
                        &format!("{at}.name"),
                        format!("Duplicate value: {}", go_quote(name)),
                    ));
                }
                names.push(name);
            }
        }
        if causes.is_empty() {
            return Ok(());
        }
        Err(ApiError::Invalid { kind: self.kind().into(), name: meta::name_of(object).into(), causes })
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's v1 defaults for one webhook.
fn default_webhook(hook: &mut Value, mutating: bool) {
    let Some(fields) = hook.as_object_mut() else { return };
    let mut default = |key: &str, value: Value| {
        if fields.get(key).is_none_or(Value::is_null) {
            fields.insert(key.to_string(), value);
        }
    };
    default("failurePolicy", json!("Fail"));
    default("matchPolicy", json!("Equivalent"));
    default("namespaceSelector", json!({}));
    default("objectSelector", json!({}));
    default("timeoutSeconds", json!(10));
    if mutating {
        default("reinvocationPolicy", json!("Never"));
    }
    for rule in fields.get_mut("rules").and_then(Value::as_array_mut).into_iter().flatten() {
        if rule.is_object() && rule["scope"].is_null() {
            rule["scope"] = json!("*");
        }
    }
    let service = fields.get_mut("clientConfig").and_then(|c| c.get_mut("service")).filter(|s| s.is_object());
    if let Some(service) = service
        && service["port"].is_null()
    {
        service["port"] = json!(443);
    }
}

/// kube's `validateMutatingWebhook` / `validateValidatingWebhook` and its
/// review-version check, for a webhook at `at`.
fn webhook_causes(hook: &Value, at: &str, mutating: bool) -> Vec<Cause> {
    let mut causes = fully_qualified_name(hook["name"].as_str().unwrap_or_default(), &format!("{at}.name"));
    for (i, rule) in hook["rules"].as_array().into_iter().flatten().enumerate() {
        causes.extend(rule_causes(rule, &format!("{at}.rules[{i}]")));
    }
    causes.extend(one_of(hook, "failurePolicy", at, &["Fail", "Ignore"]));
    causes.extend(one_of(hook, "matchPolicy", at, &["Equivalent", "Exact"]));
    match hook["sideEffects"].as_str() {
        None => causes.push(required(&format!("{at}.sideEffects"), "must specify one of None, NoneOnDryRun")),
        Some(_) => causes.extend(one_of(hook, "sideEffects", at, &["None", "NoneOnDryRun"])),
    }
    if let Some(timeout) = hook["timeoutSeconds"].as_i64().filter(|t| !(1..=30).contains(t)) {
        causes.push(invalid(
            &format!("{at}.timeoutSeconds"),
            &json!(timeout),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        causes.extend(selector_causes(&hook[selector], &format!("{at}.{selector}")));
    }
    if mutating {
        causes.extend(one_of(hook, "reinvocationPolicy", at, &["IfNeeded", "Never"]));
    }
    causes.extend(client_config_causes(&hook["clientConfig"], &format!("{at}.clientConfig")));
    causes.extend(match_condition_causes(&hook["matchConditions"], &format!("{at}.matchConditions")));
    causes.extend(review_version_causes(
        &hook["admissionReviewVersions"],
        &format!("{at}.admissionReviewVersions"),
    ));
    causes
}

/// kube's `IsFullyQualifiedName`: a DNS subdomain of three labels or more.
fn fully_qualified_name(name: &str, field: &str) -> Vec<Cause> {
    if name.is_empty() {
        return vec![required(field, "")];
    }
    let subdomain = crate::registry::metadata::name_causes(crate::registry::NameRule::Subdomain, name);
    if !subdomain.is_empty() {
        let why: Vec<String> = subdomain
            .iter()
            .map(|c| c.message.split_once(": ").map_or(c.message.clone(), |(_, rest)| rest.to_string()))
            .map(|m| m.split_once(": ").map_or(m.clone(), |(_, why)| why.to_string()))
            .collect();
        return vec![invalid(field, &json!(name), &why.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![invalid(
            field,
            &json!(name),
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// Exactly one of url and service; an https URL without user, query or
/// fragment; a named service with a valid port and path.
fn client_config_causes(config: &Value, at: &str) -> Vec<Cause> {
    match (config["url"].as_str(), config["service"].is_object()) {
        (Some(url), false) => url_causes(url, &format!("{at}.url")),
        (None, true) => {
            let service = &config["service"];
            let text = |key: &str| service[key].as_str().unwrap_or_default();
            let port = service["port"].as_i64().unwrap_or(443);
            service_causes(
                &format!("{at}.service"),
                text("namespace"),
                text("name"),
                service["path"].as_str(),
                port,
            )
        }
        _ => vec![required(at, "exactly one of url or service is required")],
    }
}

/// kube's `validateAdmissionReviewVersions`: some, DNS-1035 labels, no
/// duplicates, and one this server speaks (v1 or v1beta1).
fn review_version_causes(value: &Value, at: &str) -> Vec<Cause> {
    let versions = strings(value);
    if versions.is_empty() {
        return vec![required(at, "must specify one of v1, v1beta1")];
    }
    let mut causes = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        if versions[..i].contains(version) {
            causes.push(invalid(&format!("{at}[{i}]"), &json!(version), "duplicate version"));
        }
    }
    if !versions.iter().any(|v| ["v1", "v1beta1"].contains(v)) {
        causes.push(invalid(at, value, "must include at least one of v1, v1beta1"));
    }
    causes
}

/// kube's printer: name, number of webhooks, age.
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Webhooks", "integer", "Webhooks indicates the number of webhooks in the configuration."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let count = object["webhooks"].as_array().map_or(0, Vec::len);
    vec![table::name(object), json!(count), table::age(object, now)]
}
