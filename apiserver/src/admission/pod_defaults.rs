//! The plugins that fill in a pod's spec as it is written:
//! DefaultTolerationSeconds (tolerate a not-ready or unreachable node for a
//! while before eviction) and AlwaysPullImages (every container pulls its
//! image, so a pod cannot use an image cached for another tenant).

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The pod a create or update writes, if this is one (subresources such as
/// status are left alone).
fn written_pod(attributes: &Attributes) -> bool {
    matches!(attributes.operation, Operation::Create | Operation::Update) && attributes.is("", "pods")
}

#[derive(Debug)]
pub struct DefaultTolerationSeconds {
    /// `--default-not-ready-toleration-seconds`.
    pub not_ready_seconds: i64,
    /// `--default-unreachable-toleration-seconds`.
    pub unreachable_seconds: i64,
}

/// Whether `toleration` covers taint `key` with effect NoExecute (an empty
/// key or effect covers every one).
fn tolerates(toleration: &Value, key: &str) -> bool {
    let matches =
        |field: &str, want: &str| toleration[field].as_str().is_none_or(|v| v.is_empty() || v == want);
    matches("key", key) && matches("effect", "NoExecute")
}

#[async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !written_pod(attributes) {
            return Ok(());
        }
        let Some(spec) = attributes.spec_mut() else {
            return Ok(());
        };
        let present: Vec<Value> = spec["tolerations"].as_array().cloned().unwrap_or_default();
        let mut tolerations = present.clone();
        for (key, seconds) in [(NOT_READY, self.not_ready_seconds), (UNREACHABLE, self.unreachable_seconds)] {
            if !present.iter().any(|t| tolerates(t, key)) {
                tolerations.push(json!({
                    "key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds,
                }));
            }
        }
        if tolerations.len() != present.len() {
            spec["tolerations"] = Value::Array(tolerations);
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct AlwaysPullImages;

/// Every container of a pod spec (init, regular, ephemeral) with its path.
fn containers(spec: &Value) -> impl Iterator<Item = (String, &Value)> {
    ["initContainers", "containers", "ephemeralContainers"].into_iter().flat_map(move |list| {
        spec[list]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(i, c)| (format!("spec.{list}[{i}]"), c))
    })
}

fn images(pod: Option<&Value>) -> Vec<&str> {
    pod.map(|p| containers(&p["spec"]).filter_map(|(_, c)| c["image"].as_str()).collect()).unwrap_or_default()
}

impl AlwaysPullImages {
    /// Pods only, and on update only when an image is new (kube's rule: a
    /// pod already running keeps the policy it was admitted with).
    fn applies(attributes: &Attributes) -> bool {
        if !written_pod(attributes) {
            return false;
        }
        if attributes.operation == Operation::Update {
            let old = images(attributes.old_object.as_ref());
            return images(attributes.object.as_ref()).iter().any(|image| !old.contains(image));
        }
        true
    }
}

#[async_trait]
impl Plugin for AlwaysPullImages {
    fn name(&self) -> &'static str {
        "AlwaysPullImages"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !AlwaysPullImages::applies(attributes) {
            return Ok(());
        }
        let Some(spec) = attributes.spec_mut() else {
            return Ok(());
        };
        for list in ["initContainers", "containers", "ephemeralContainers"] {
            for container in spec.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                if container.is_object() {
                    container["imagePullPolicy"] = json!("Always");
                }
            }
        }
        Ok(())
    }

    /// A later mutation (a webhook's) may not undo the policy.
    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if !AlwaysPullImages::applies(attributes) {
            return Ok(());
        }
        let Some(pod) = attributes.object.as_ref() else { return Ok(()) };
        let wrong: Vec<String> = containers(&pod["spec"])
            .filter(|(_, c)| c["imagePullPolicy"] != "Always")
            .map(|(path, c)| {
                let value = crate::errors::go_quote(c["imagePullPolicy"].as_str().unwrap_or(""));
                format!("{path}.imagePullPolicy: Unsupported value: {value}: supported values: \"Always\"")
            })
            .collect();
        match wrong.as_slice() {
            [] => Ok(()),
            [one] => Err(attributes.forbidden(one.clone())),
            many => Err(attributes.forbidden(format!("[{}]", many.join(", ")))),
        }
    }
}

/// ExtendedResourceToleration: a pod asking for an extended resource (a
/// GPU, `example.com/device`) tolerates the taint of the nodes dedicated to
/// it (key the resource name, NoSchedule), so tainting those nodes keeps
/// everyone else off them.
#[derive(Debug)]
pub struct ExtendedResourceToleration;

/// kube's `IsExtendedResourceName`: a qualified name outside
/// `kubernetes.io/`, not a quota's `requests.` name.
fn is_extended_resource(name: &str) -> bool {
    let Some((prefix, short)) = name.split_once('/') else { return false };
    let label_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    !name.contains("kubernetes.io/")
        && !name.starts_with("requests.")
        && !prefix.is_empty()
        && prefix.len() <= 253
        && prefix.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
        && !short.is_empty()
        && short.len() <= 63
        && short.chars().all(label_char)
        && short.starts_with(|c: char| c.is_ascii_alphanumeric())
        && short.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[async_trait]
impl Plugin for ExtendedResourceToleration {
    fn name(&self) -> &'static str {
        "ExtendedResourceToleration"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !written_pod(attributes) {
            return Ok(());
        }
        let Some(spec) = attributes.spec_mut() else {
            return Ok(());
        };
        let mut resources: Vec<String> = ["containers", "initContainers"]
            .iter()
            .flat_map(|list| spec[*list].as_array().into_iter().flatten())
            .flat_map(|c| c["resources"]["requests"].as_object().into_iter().flat_map(|r| r.keys().cloned()))
            .filter(|name| is_extended_resource(name))
            .collect();
        resources.sort();
        resources.dedup();
        if resources.is_empty() {
            return Ok(());
        }
        let mut tolerations: Vec<Value> = spec["tolerations"].as_array().cloned().unwrap_or_default();
        for resource in resources {
            let wanted = json!({"key": resource, "operator": "Exists", "effect": "NoSchedule"});
            // The same key, operator, value and effect: already tolerated.
            let same = |t: &Value| {
                t["key"] == wanted["key"]
                    && t["operator"] == wanted["operator"]
                    && t["effect"] == wanted["effect"]
                    && t["value"].as_str().unwrap_or_default().is_empty()
            };
            if !tolerations.iter().any(same) {
                tolerations.push(wanted);
            }
        }
        spec["tolerations"] = Value::Array(tolerations);
        Ok(())
    }
}
