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
        let Some(spec) =
            attributes.object.as_mut().and_then(|pod| pod.get_mut("spec")).filter(|s| s.is_object())
        else {
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
        let Some(spec) = attributes.object.as_mut().and_then(|pod| pod.get_mut("spec")) else {
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
