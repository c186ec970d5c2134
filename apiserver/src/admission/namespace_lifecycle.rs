//! NamespaceLifecycle: new objects go only into namespaces that exist and
//! are not being deleted. (Protecting kube-system, default and kube-public
//! from deletion, kube's other half of this plugin, comes with the admission
//! issue.)

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;

use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

/// Reads namespaces for the plugin: from the watch cache when `any_version`
/// will do, else the latest from storage. None when there is no such
/// namespace.
#[async_trait]
pub trait Namespaces: Send + Sync + std::fmt::Debug {
    async fn namespace(&self, name: &str, any_version: bool) -> Result<Option<Value>, ApiError>;
}

#[derive(Default)]
pub struct NamespaceLifecycle {
    /// Set once the namespaces resource is served (it is registered through
    /// the same chain the plugin belongs to).
    namespaces: OnceLock<Arc<dyn Namespaces>>,
}

/// Not derived: the namespaces' store holds this plugin through its
/// admission chain, so printing the store would never end.
impl std::fmt::Debug for NamespaceLifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceLifecycle")
            .field("namespaces_served", &self.namespaces.get().is_some())
            .finish()
    }
}

impl NamespaceLifecycle {
    pub fn set_namespaces(&self, namespaces: Arc<dyn Namespaces>) {
        let _ = self.namespaces.set(namespaces);
    }
}

#[async_trait]
impl Plugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    /// A mutating plugin in kube (it runs first, before the object is even
    /// validated), though it changes nothing.
    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if attributes.operation != Operation::Create || attributes.subresource.is_some() {
            return Ok(());
        }
        let Some(namespace) = attributes.namespace.as_deref() else { return Ok(()) };
        let namespaces = self
            .namespaces
            .get()
            .ok_or_else(|| ApiError::Internal("namespaces are not served yet".into()))?;
        // The cache may lag a namespace created just now: then ask storage.
        let found = match namespaces.namespace(namespace, true).await? {
            Some(ns) => Some(ns),
            None => namespaces.namespace(namespace, false).await?,
        };
        match found {
            Some(ns) if ns["metadata"]["deletionTimestamp"].is_string() => Err(ApiError::Forbidden(format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ))),
            Some(_) => Ok(()),
            None => Err(ApiError::NotFound { qualified: "namespaces".into(), name: namespace.to_string() }),
        }
    }
}
