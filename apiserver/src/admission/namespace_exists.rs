//! The two older namespace plugins kube still accepts, both off by default:
//! NamespaceExists refuses writes into a namespace that is not there (404),
//! NamespaceAutoProvision creates the namespace instead.

use async_trait::async_trait;

use super::lookup::{Lookup, namespace_not_found};
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

/// The namespace a namespaced, non-Namespace object is written into.
fn target(attributes: &Attributes) -> Option<&str> {
    (!attributes.is_namespace()).then_some(attributes.namespace.as_deref()).flatten()
}

#[derive(Debug)]
pub struct NamespaceExists {
    namespaces: Lookup,
}

impl NamespaceExists {
    pub fn new(namespaces: Lookup) -> Self {
        NamespaceExists { namespaces }
    }
}

#[async_trait]
impl Plugin for NamespaceExists {
    fn name(&self) -> &'static str {
        "NamespaceExists"
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if attributes.operation == Operation::Connect {
            return Ok(());
        }
        let Some(namespace) = target(attributes) else { return Ok(()) };
        match self.namespaces.find(None, namespace).await? {
            Some(_) => Ok(()),
            None => Err(namespace_not_found(namespace)),
        }
    }
}

#[derive(Debug)]
pub struct NamespaceAutoProvision {
    namespaces: Lookup,
}

impl NamespaceAutoProvision {
    pub fn new(namespaces: Lookup) -> Self {
        NamespaceAutoProvision { namespaces }
    }
}

#[async_trait]
impl Plugin for NamespaceAutoProvision {
    fn name(&self) -> &'static str {
        "NamespaceAutoProvision"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if attributes.operation != Operation::Create || attributes.dry_run {
            return Ok(());
        }
        let Some(namespace) = target(attributes) else { return Ok(()) };
        if self.namespaces.find(None, namespace).await?.is_some() {
            return Ok(());
        }
        let body =
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
        match self.namespaces.get()?.create_as_server(None, body).await {
            Ok(()) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(attributes.forbidden(e.to_string())),
        }
    }
}
