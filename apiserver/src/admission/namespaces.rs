//! How the namespace plugins (NamespaceLifecycle, NamespaceExists,
//! NamespaceAutoProvision) reach namespaces: through the namespaces' own
//! store, handed over once it is registered (it is registered through the
//! same chain these plugins belong to, so it cannot exist before them).

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;

use crate::errors::ApiError;

/// Reads and creates namespaces for the plugins.
#[async_trait]
pub trait Namespaces: Send + Sync + std::fmt::Debug {
    /// The namespace `name`: from the watch cache when `any_version` will
    /// do, else the latest from storage. None when there is no such
    /// namespace.
    async fn namespace(&self, name: &str, any_version: bool) -> Result<Option<Value>, ApiError>;

    /// Creates an empty namespace `name` as the server.
    async fn create_namespace(&self, name: &str) -> Result<(), ApiError>;
}

/// The namespaces, once served; shared by every plugin that needs them.
#[derive(Clone, Default)]
pub struct NamespaceSource {
    served: Arc<OnceLock<Arc<dyn Namespaces>>>,
}

/// Not derived: the namespaces' store holds the plugins through its
/// admission chain, so printing the store would never end.
impl std::fmt::Debug for NamespaceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamespaceSource").field("served", &self.served.get().is_some()).finish()
    }
}

impl NamespaceSource {
    pub fn set(&self, namespaces: Arc<dyn Namespaces>) {
        let _ = self.served.set(namespaces);
    }

    pub fn get(&self) -> Result<&dyn Namespaces, ApiError> {
        self.served
            .get()
            .map(|n| n.as_ref())
            .ok_or_else(|| ApiError::Internal("namespaces are not served yet".into()))
    }

    /// The namespace `name` from the cache, or from storage when the cache
    /// does not have it (it may lag a namespace created just now).
    pub async fn find(&self, name: &str) -> Result<Option<Value>, ApiError> {
        let namespaces = self.get()?;
        match namespaces.namespace(name, true).await? {
            Some(ns) => Ok(Some(ns)),
            None => namespaces.namespace(name, false).await,
        }
    }
}

/// kube's 404 for a namespace that is not there.
pub fn not_found(name: &str) -> ApiError {
    ApiError::NotFound { qualified: "namespaces".into(), name: name.to_string() }
}
