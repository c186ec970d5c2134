//! RuntimeClass (kube's `plugin/pkg/admission/runtimeclass`): a new pod
//! that names a RuntimeClass gets the class's pod overhead and scheduling
//! (node selector and tolerations), so it lands on nodes that run that
//! runtime and is charged what the runtime costs; a class that is not there
//! refuses the pod.

use async_trait::async_trait;
use serde_json::Value;

use super::lookup::Lookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

#[derive(Debug)]
pub struct RuntimeClass {
    classes: Lookup,
}

impl RuntimeClass {
    pub fn new(classes: Lookup) -> Self {
        RuntimeClass { classes }
    }

    /// The class a new pod names (None when it names none).
    async fn class_of(&self, attributes: &Attributes) -> Result<Option<Value>, ApiError> {
        let named = attributes.object.as_ref().and_then(|pod| pod["spec"]["runtimeClassName"].as_str());
        let Some(name) = named.filter(|n| !n.is_empty()) else { return Ok(None) };
        match self.classes.find(None, name).await? {
            Some(class) => Ok(Some(class)),
            None => Err(attributes.forbidden(format!("pod rejected: RuntimeClass \"{name}\" not found"))),
        }
    }
}

fn applies(attributes: &Attributes) -> bool {
    attributes.operation == Operation::Create && attributes.is("", "pods")
}

/// kube's `setOverhead`: the class's fixed overhead, unless the pod already
/// states a different one.
fn set_overhead(attributes: &mut Attributes, class: &Value) -> Result<(), ApiError> {
    let overhead = &class["overhead"]["podFixed"];
    if overhead.is_null() {
        return Ok(());
    }
    let stated = attributes.object.as_ref().map(|pod| pod["spec"]["overhead"].clone()).unwrap_or_default();
    if !stated.is_null() && &stated != overhead {
        return Err(attributes
            .forbidden("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"));
    }
    if let Some(spec) = attributes.spec_mut() {
        spec["overhead"] = overhead.clone();
    }
    Ok(())
}

/// kube's `setScheduling`: the class's node selector joins the pod's (a
/// key both set differently is a conflict), its tolerations are added.
fn set_scheduling(attributes: &mut Attributes, class: &Value) -> Result<(), ApiError> {
    let scheduling = &class["scheduling"];
    let pod_selector =
        attributes.object.as_ref().map(|pod| pod["spec"]["nodeSelector"].clone()).unwrap_or_default();
    for (key, value) in scheduling["nodeSelector"].as_object().into_iter().flatten() {
        if let Some(own) = pod_selector.get(key).filter(|own| *own != value) {
            let (value, own) = (value.as_str().unwrap_or_default(), own.as_str().unwrap_or_default());
            return Err(attributes.forbidden(format!(
                "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; pod.spec.nodeSelector[{key}] = {own}"
            )));
        }
    }
    let Some(spec) = attributes.spec_mut() else { return Ok(()) };
    if let Some(selector) = scheduling["nodeSelector"].as_object().filter(|s| !s.is_empty()) {
        if !spec["nodeSelector"].is_object() {
            spec["nodeSelector"] = Value::Object(Default::default());
        }
        for (key, value) in selector {
            spec["nodeSelector"][key] = value.clone();
        }
    }
    let added: Vec<Value> = scheduling["tolerations"].as_array().cloned().unwrap_or_default();
    if !added.is_empty() {
        let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
        for toleration in added {
            if !tolerations.contains(&toleration) {
                tolerations.push(toleration);
            }
        }
        spec["tolerations"] = Value::Array(tolerations);
    }
    Ok(())
}

#[async_trait]
impl Plugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !applies(attributes) {
            return Ok(());
        }
        let Some(class) = self.class_of(attributes).await? else { return Ok(()) };
        set_overhead(attributes, &class)?;
        set_scheduling(attributes, &class)
    }

    /// kube's `validateOverhead`: what mutation settled stays the class's.
    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if !applies(attributes) {
            return Ok(());
        }
        let class = self.class_of(attributes).await?;
        let stated = attributes.object.as_ref().map(|pod| &pod["spec"]["overhead"]).unwrap_or(&Value::Null);
        match class.as_ref().map(|c| &c["overhead"]["podFixed"]).filter(|o| !o.is_null()) {
            Some(overhead) if stated != overhead => Err(attributes
                .forbidden("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")),
            None if !stated.is_null() => Err(attributes.forbidden(
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
            )),
            _ => Ok(()),
        }
    }
}
