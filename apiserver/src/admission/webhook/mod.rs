//! MutatingAdmissionWebhook and ValidatingAdmissionWebhook: the writes
//! the stored webhook configurations select are sent, as an
//! AdmissionReview, to the webhooks' HTTPS endpoints. Mutating webhooks
//! are called one after another (sorted by configuration name) and may
//! patch the object; validating ones are called all at once and may only
//! refuse. A webhook that cannot be called fails the write (`Fail`) or is
//! passed over (`Ignore`).
//!
//! * `config`: the stored configurations, read into [`config::Hook`]s.
//! * `matching`: which webhooks a write goes to.
//! * `conditions`: `matchConditions` in CEL.
//! * `review`: the AdmissionReview request and the checks of the answer.
//! * `caller`: where a webhook is reached (its URL, or its Service's
//!   endpoint), shared with CRD conversion webhooks.
//! * `client`: the HTTPS calls.
//! * `credentials`: what the server presents to webhooks (kubeConfigFile).
//! * `metrics`: `apiserver_admission_webhook_*`.

mod caller;
mod client;
pub mod conditions;
mod config;
pub mod credentials;
pub mod matching;
mod metrics;
pub mod review;

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::{Value, json};

pub use metrics::WebhookMetrics;

pub use self::caller::{Caller, Target};
use self::conditions::Decision;
use self::config::{Hook, Source};
use self::credentials::Credentials;
use self::metrics::Outcome;
use self::review::Answer;
use super::{AnnotationLevel, Attributes, Lookup, Lookups, Operation, Plugin};
use crate::errors::{ApiError, go_quote};

/// What both plugins share: the configurations, the connections and the
/// counters.
#[derive(Debug)]
pub struct Webhooks {
    mutating: Source,
    validating: Source,
    caller: Arc<Caller>,
    namespaces: Lookup,
    /// Credentials for mutating and for validating webhooks.
    credentials: WebhookCredentials,
    pub metrics: Arc<WebhookMetrics>,
}

impl Webhooks {
    /// How webhooks are reached, for the server's other webhooks
    /// (CustomResourceDefinition conversion).
    pub fn caller(&self) -> Arc<Caller> {
        self.caller.clone()
    }
}

/// Each plugin's credentials, from its WebhookAdmissionConfiguration.
#[derive(Debug, Clone, Default)]
pub struct WebhookCredentials {
    pub mutating: Credentials,
    pub validating: Credentials,
}

impl Webhooks {
    pub fn new(lookups: &Lookups, credentials: WebhookCredentials) -> Arc<Webhooks> {
        Arc::new(Webhooks {
            credentials,
            mutating: Source::new(lookups.mutating_webhooks.clone()),
            validating: Source::new(lookups.validating_webhooks.clone()),
            caller: Arc::new(Caller::new(lookups)),
            namespaces: lookups.namespaces.clone(),
            metrics: Arc::default(),
        })
    }
}

#[derive(Debug)]
pub struct MutatingAdmissionWebhook(pub Arc<Webhooks>);

#[derive(Debug)]
pub struct ValidatingAdmissionWebhook(pub Arc<Webhooks>);

#[async_trait]
impl Plugin for MutatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "MutatingAdmissionWebhook"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if matching::excluded(attributes) {
            return Ok(());
        }
        let hooks = self.0.mutating.hooks().await?;
        let round = attributes.reinvocation.round;
        if round == 1 && attributes.reinvocation.last_output != attributes.object {
            // In-tree plugins changed the object since the last webhook:
            // every IfNeeded webhook called so far may see the change.
            attributes.reinvocation.marked = attributes.reinvocation.called.clone();
        }
        for (index, hook) in hooks.iter().enumerate() {
            let key = format!("{}/{}", hook.configuration, hook.name);
            if round == 1 && !attributes.reinvocation.marked.contains(&key) {
                continue;
            }
            if !self.0.should_call(hook, attributes).await? {
                continue;
            }
            let Some(answer) = self.0.call(hook, attributes, "admit", index).await? else { continue };
            let mutated = self.0.apply(hook, attributes, &answer, index)?;
            let memory = &mut attributes.reinvocation;
            if mutated && round == 0 {
                // Earlier IfNeeded webhooks have not seen this change.
                memory.marked = memory.called.clone();
                memory.requested |= !memory.marked.is_empty();
            }
            if hook.reinvoke_if_needed && !memory.called.contains(&key) {
                memory.called.push(key);
            }
            memory.last_output = attributes.object.clone();
        }
        Ok(())
    }
}

#[async_trait]
impl Plugin for ValidatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionWebhook"
    }

    /// Every matching webhook at once; the first refusal to arrive is the
    /// answer (kube logs the others).
    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if matching::excluded(attributes) {
            return Ok(());
        }
        let hooks = self.0.validating.hooks().await?;
        let mut selected = Vec::new();
        for (index, hook) in hooks.iter().enumerate() {
            if self.0.should_call(hook, attributes).await? {
                selected.push((index, hook));
            }
        }
        let mut calls: FuturesUnordered<_> = selected
            .into_iter()
            .map(|(index, hook)| self.0.call(hook, attributes, "validating", index))
            .collect();
        while let Some(outcome) = calls.next().await {
            outcome?;
        }
        Ok(())
    }
}

impl Webhooks {
    /// Whether `hook` is to be called for the write: its rules, then its
    /// selectors, then its match conditions; a dry run refuses a webhook
    /// that may have side effects.
    async fn should_call(&self, hook: &Hook, attributes: &Attributes) -> Result<bool, ApiError> {
        if !matching::rules_match(&hook.rules, attributes)
            || !matching::namespace_matches(&hook.namespace_selector, attributes, &self.namespaces).await?
            || !matching::object_matches(&hook.object_selector, attributes)
        {
            return Ok(false);
        }
        if !hook.conditions.is_empty() {
            let request = review::request(attributes, "");
            let object = attributes.object.as_ref().unwrap_or(&Value::Null);
            let old = attributes.old_object.as_ref().unwrap_or(&Value::Null);
            let decision = match conditions::variables(object, old, &request) {
                Ok(variables) => hook.conditions.decide(&variables),
                Err(why) => Decision::Error(why),
            };
            match decision {
                Decision::Call => {}
                Decision::Skip => return Ok(false),
                Decision::Error(_) if hook.fail_open => return Ok(false),
                Decision::Error(why) => {
                    return Err(attributes
                        .forbidden(format!("failed calling webhook {}: {why}", go_quote(&hook.name))));
                }
            }
        }
        if attributes.dry_run && !hook.dry_run_safe {
            return Err(ApiError::BadRequest(format!(
                "admission webhook {} does not support dry run",
                go_quote(&hook.name)
            )));
        }
        Ok(true)
    }

    /// Calls `hook` and checks its answer: the answer when it allowed the
    /// write; None when the call failed and the hook is `Ignore`; the
    /// refusal or the failure otherwise. Warnings and audit annotations
    /// are noted either way.
    async fn call(
        &self,
        hook: &Hook,
        attributes: &Attributes,
        kind: metrics::Kind,
        index: usize,
    ) -> Result<Option<Answer>, ApiError> {
        let started = Instant::now();
        let operation = attributes.operation.as_str();
        let result = self.exchange(hook, attributes, kind == "admit").await;
        // Left out of the request's SLI latency, as kube's webhook trackers do.
        crate::metrics::tracker::webhook(kind == "admit", started.elapsed());
        let failure = match result {
            Ok(answer) => {
                for warning in &answer.warnings {
                    attributes.notes.warn(warning.clone());
                }
                for (key, value) in &answer.audit_annotations {
                    attributes.notes.annotate(format!("{}/{key}", hook.name), value.clone());
                }
                if answer.allowed {
                    let outcome = Outcome { code: 200, rejected: false, error_type: "", rejection_code: 0 };
                    self.metrics.observe(&hook.name, kind, operation, started.elapsed(), outcome);
                    return Ok(Some(answer));
                }
                let denial = denial(&hook.name, &answer.status);
                let outcome = Outcome {
                    code: 200,
                    rejected: true,
                    error_type: "no_error",
                    rejection_code: denial.code(),
                };
                self.metrics.observe(&hook.name, kind, operation, started.elapsed(), outcome);
                return Err(denial);
            }
            Err(failure) => failure,
        };
        let message = format!("failed calling webhook {}: {failure}", go_quote(&hook.name));
        if hook.fail_open {
            tracing::warn!(webhook = %hook.name, "{message}; failing open");
            let outcome = Outcome { code: 0, rejected: false, error_type: "", rejection_code: 0 };
            self.metrics.observe(&hook.name, kind, operation, started.elapsed(), outcome);
            self.metrics.fail_open(&hook.name, kind);
            let phase = if kind == "admit" { "mutation" } else { "validating" };
            let round = attributes.reinvocation.round;
            attributes.notes.annotate(
                format!("failed-open.{phase}.webhook.admission.k8s.io/round_{round}_index_{index}"),
                hook.name.clone(),
            );
            return Ok(None);
        }
        let outcome =
            Outcome { code: 0, rejected: true, error_type: "calling_webhook_error", rejection_code: 500 };
        self.metrics.observe(&hook.name, kind, operation, started.elapsed(), outcome);
        Err(ApiError::Internal(message))
    }

    /// One call: the review sent, the answer read and checked. Failures
    /// in kube's words after `failed calling webhook "<name>": `.
    async fn exchange(
        &self,
        hook: &Hook,
        attributes: &Attributes,
        may_patch: bool,
    ) -> Result<Answer, String> {
        let endpoint = self
            .caller
            .endpoint(&hook.target, hook.timeout)
            .await
            .map_err(|why| format!("failed to call webhook: {why}"))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let body = review::body(hook.review_version, review::request(attributes, &uid));
        let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        let credentials = if may_patch { &self.credentials.mutating } else { &self.credentials.validating };
        let identity = credentials.for_host(&endpoint.server_name, endpoint.port());
        let response = self
            .caller
            .client
            .post(&endpoint, &hook.ca_bundle, identity, body, hook.timeout)
            .await
            .map_err(|why| format!("failed to call webhook: {why}"))?;
        review::answer(hook.review_version, &uid, &response, may_patch)
            .map_err(|why| format!("received invalid webhook response: {why}"))
    }

    /// Applies a mutating webhook's answer to the object: its patch (then
    /// the object decoded and defaulted again, as kube does) and the
    /// mutation annotations. Whether the object changed.
    fn apply(
        &self,
        hook: &Hook,
        attributes: &mut Attributes,
        answer: &Answer,
        index: usize,
    ) -> Result<bool, ApiError> {
        let round = attributes.reinvocation.round;
        let mut mutated = false;
        if let Some(patch) = &answer.patch {
            if attributes.operation == Operation::Delete || attributes.object.is_none() {
                return Err(ApiError::Internal(format!(
                    "admission webhook {} attempted to modify the object, which is not supported for this operation",
                    go_quote(&hook.name)
                )));
            }
            let before = attributes.object.clone().unwrap_or_default();
            let patched = apply_patch(&before, patch).map_err(|why| {
                ApiError::Internal(format!(
                    "admission webhook {} returned a patch that cannot be applied: {why}",
                    go_quote(&hook.name)
                ))
            })?;
            // kube decodes the patched object again: one that no longer
            // decodes is the webhook's fault, a 500 naming it.
            let patched = match &attributes.normalize {
                Some(normalize) => (normalize.0)(patched).map_err(|e| {
                    ApiError::Internal(format!(
                        "admission webhook {} returned a patch whose result cannot be decoded: {e}",
                        go_quote(&hook.name)
                    ))
                })?,
                None => patched,
            };
            mutated = patched != before;
            attributes.object = Some(patched);
            let operations: Value = serde_json::from_slice(patch).unwrap_or(Value::Null);
            let record = json!({"configuration": hook.configuration, "webhook": hook.name, "patch": operations, "patchType": "JSONPatch"});
            attributes.notes.annotate_at(
                AnnotationLevel::Request,
                format!("patch.webhook.admission.k8s.io/round_{round}_index_{index}"),
                record.to_string(),
            );
        }
        let record = json!({"configuration": hook.configuration, "webhook": hook.name, "mutated": mutated});
        attributes.notes.annotate(
            format!("mutation.webhook.admission.k8s.io/round_{round}_index_{index}"),
            record.to_string(),
        );
        Ok(mutated)
    }
}

/// A JSON Patch (RFC 6902) applied to a copy of `object`.
fn apply_patch(object: &Value, patch: &[u8]) -> Result<Value, String> {
    let operations: json_patch::Patch = serde_json::from_slice(patch).map_err(|e| e.to_string())?;
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &operations).map_err(|e| e.to_string())?;
    Ok(patched)
}

/// kube's error for `allowed: false`: the webhook's Status, its code at
/// least 400, its message prefixed with who refused.
fn denial(name: &str, status: &Value) -> ApiError {
    let code =
        status["code"].as_u64().and_then(|c| u16::try_from(c).ok()).filter(|c| *c >= 400).unwrap_or(400);
    let reason = status["reason"].as_str().unwrap_or_default();
    let said =
        status["message"].as_str().filter(|m| !m.is_empty()).or(Some(reason).filter(|r| !r.is_empty()));
    let message = match said {
        Some(said) => format!("admission webhook {} denied the request: {said}", go_quote(name)),
        None => format!("admission webhook {} denied the request without explanation", go_quote(name)),
    };
    let details = status.get("details").filter(|d| d.is_object()).cloned();
    ApiError::Denied { code, reason: reason.to_string(), message, details }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::tests::write;

    fn hook(dry_run_safe: bool) -> Hook {
        Hook {
            configuration: "c".into(),
            name: "side-effects.example.com".into(),
            target: Target::Url("https://127.0.0.1:1/".into()),
            ca_bundle: Vec::new(),
            rules: vec![
                json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}),
            ],
            fail_open: true,
            namespace_selector: json!({}),
            object_selector: json!({}),
            dry_run_safe,
            timeout: std::time::Duration::from_secs(1),
            review_version: "v1",
            reinvoke_if_needed: false,
            conditions: Default::default(),
        }
    }

    #[tokio::test]
    async fn a_dry_run_refuses_webhooks_with_side_effects_whatever_their_failure_policy() {
        let webhooks = Webhooks::new(&Lookups::default(), Default::default());
        let mut attributes =
            write(Operation::Create, "", "configmaps", "ConfigMap", Some(json!({"metadata": {"name": "a"}})));
        assert!(webhooks.should_call(&hook(false), &attributes).await.unwrap());
        attributes.dry_run = true;
        assert!(webhooks.should_call(&hook(true), &attributes).await.unwrap());
        let refused = webhooks.should_call(&hook(false), &attributes).await.unwrap_err();
        assert_eq!(refused.code(), 400);
        assert_eq!(
            refused.to_string(),
            "admission webhook \"side-effects.example.com\" does not support dry run"
        );
        // The admission configuration itself is never sent to webhooks.
        let own = write(
            Operation::Create,
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            None,
        );
        assert!(matching::excluded(&own));
    }

    #[test]
    fn denials_read_as_kube_writes_them() {
        let refused = denial(
            "policy.example.com",
            &json!({"code": 403, "reason": "Forbidden", "message": "no privileged pods"}),
        );
        assert_eq!(refused.code(), 403);
        assert_eq!(
            refused.to_string(),
            "admission webhook \"policy.example.com\" denied the request: no privileged pods"
        );
        assert_eq!(refused.status()["reason"], "Forbidden");
        let bare = denial("policy.example.com", &json!({"code": 200}));
        assert_eq!(bare.code(), 400);
        assert_eq!(
            bare.to_string(),
            "admission webhook \"policy.example.com\" denied the request without explanation"
        );
        assert!(bare.status().get("reason").is_none());
        let reason_only = denial("p.example.com", &json!({"reason": "NotAllowed"}));
        assert_eq!(
            reason_only.to_string(),
            "admission webhook \"p.example.com\" denied the request: NotAllowed"
        );
    }
}
