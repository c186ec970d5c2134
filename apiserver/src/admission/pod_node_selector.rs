//! PodNodeSelector (kube's `plugin/pkg/admission/podnodeselector`): a
//! namespace's `scheduler.alpha.kubernetes.io/node-selector` annotation
//! (`key=value,...`) is merged into the node selector of every pod created
//! in it; a pod selecting other values for those keys is refused. (kube's
//! configuration file, with a cluster default and per-namespace
//! whitelists, is not read yet: there is no cluster default.)

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::lookup::{Lookup, namespace_not_found};
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

const ANNOTATION: &str = "scheduler.alpha.kubernetes.io/node-selector";
const CONFLICT: &str = "pod node label selector conflicts with its namespace node label selector";

#[derive(Debug)]
pub struct PodNodeSelector {
    namespaces: Lookup,
}

impl PodNodeSelector {
    pub fn new(namespaces: Lookup) -> Self {
        PodNodeSelector { namespaces }
    }

    /// The namespace's selector, as `key=value` pairs (kube's
    /// `ConvertSelectorToLabelsMap`: `=` or `==`, comma-separated).
    async fn selector(&self, attributes: &Attributes) -> Result<Vec<(String, String)>, ApiError> {
        let name = attributes.namespace.as_deref().unwrap_or_default();
        let Some(namespace) = self.namespaces.find(None, name).await? else {
            return Err(namespace_not_found(name));
        };
        let text = namespace["metadata"]["annotations"][ANNOTATION].as_str().unwrap_or_default();
        let mut pairs = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) else {
                return Err(ApiError::BadRequest(format!("invalid selector: {term:?}")));
            };
            pairs.push((key.trim().to_string(), value.trim().to_string()));
        }
        Ok(pairs)
    }
}

fn created_pod(attributes: &Attributes) -> bool {
    attributes.operation == Operation::Create && attributes.is("", "pods")
}

fn conflicts(pod: &Value, selector: &[(String, String)]) -> bool {
    let own = &pod["spec"]["nodeSelector"];
    selector.iter().any(|(key, value)| own[key].as_str().is_some_and(|v| v != value))
}

#[async_trait]
impl Plugin for PodNodeSelector {
    fn name(&self) -> &'static str {
        "PodNodeSelector"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if !created_pod(attributes) {
            return Ok(());
        }
        let selector = self.selector(attributes).await?;
        if attributes.object.as_ref().is_some_and(|pod| conflicts(pod, &selector)) {
            return Err(attributes.forbidden(CONFLICT));
        }
        let Some(spec) = attributes.spec_mut() else {
            return Ok(());
        };
        if selector.is_empty() {
            return Ok(());
        }
        let mut merged: Map<String, Value> = spec["nodeSelector"].as_object().cloned().unwrap_or_default();
        for (key, value) in selector {
            merged.entry(key).or_insert(Value::String(value));
        }
        spec["nodeSelector"] = Value::Object(merged);
        Ok(())
    }

    /// A later mutation may not select other nodes than the namespace's.
    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if !created_pod(attributes) {
            return Ok(());
        }
        let selector = self.selector(attributes).await?;
        if attributes.object.as_ref().is_some_and(|pod| conflicts(pod, &selector)) {
            return Err(attributes.forbidden(CONFLICT));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::admission::{GroupVersionKind, GroupVersionResource};
    use crate::registry::tests::Cluster;
    use crate::request::UserInfo;

    fn pod_in(namespace: &str, selector: Value) -> Attributes {
        Attributes {
            user: UserInfo::apiserver(),
            operation: Operation::Create,
            kind: GroupVersionKind { group: String::new(), version: "v1".into(), kind: "Pod".into() },
            resource: GroupVersionResource {
                group: String::new(),
                version: "v1".into(),
                resource: "pods".into(),
            },
            subresource: None,
            name: "p".into(),
            namespace: Some(namespace.into()),
            object: Some(json!({"metadata": {"name": "p"}, "spec": {"nodeSelector": selector}})),
            old_object: None,
            options: json!({}),
            dry_run: false,
            notes: Default::default(),
            normalize: None,
            reinvocation: Default::default(),
            field_manager: None,
        }
    }

    #[tokio::test]
    async fn the_namespaces_selector_is_merged_and_may_not_be_contradicted() {
        let c = Cluster::new().await;
        let annotated =
            json!({"metadata": {"name": "gpu", "annotations": {ANNOTATION: "pool=gpu, zone==a"}}});
        c.create("", "namespaces", None, annotated).await.unwrap();
        let namespaces = Lookup::default();
        namespaces.set(Arc::new(c.store("", "namespaces")));
        let plugin = PodNodeSelector::new(namespaces);

        let mut pod = pod_in("gpu", json!({"disk": "ssd"}));
        plugin.admit(&mut pod).await.unwrap();
        assert_eq!(
            pod.object.as_ref().unwrap()["spec"]["nodeSelector"],
            json!({"disk": "ssd", "pool": "gpu", "zone": "a"})
        );
        plugin.validate(&pod).await.unwrap();

        let mut elsewhere = pod_in("gpu", json!({"pool": "cpu"}));
        let err = plugin.admit(&mut elsewhere).await.unwrap_err();
        assert_eq!((err.code(), err.to_string()), (403, format!("pods \"p\" is forbidden: {CONFLICT}")));
        let mut plain = pod_in("default", json!({"pool": "cpu"}));
        plugin.admit(&mut plain).await.unwrap();
        assert_eq!(plain.object.unwrap()["spec"]["nodeSelector"], json!({"pool": "cpu"}));
    }
}
