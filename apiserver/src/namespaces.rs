//! Namespace deletion, as kube's namespace controller does it: a deleted
//! namespace is marked Terminating, its contents are deleted, then it is
//! removed. Runs in the background after the DELETE, and again at startup
//! for namespaces a previous run left Terminating.

use std::time::Duration;

use crate::errors::ApiError;
use crate::registry::{ListOptions, Registry};
use crate::resources;

/// How long to wait between tries while objects with finalizers remain.
const RETRY: Duration = Duration::from_secs(1);

/// Deletes the contents of namespace `name` (the one with `uid`), then the
/// namespace itself, retrying until nothing is left; stops if that
/// namespace is gone or is no longer being deleted.
pub fn finalize_in_background(registry: Registry, name: String, uid: String) {
    tokio::spawn(async move {
        loop {
            match registry.finalize_namespace(&name, &uid).await {
                Ok(true) => return,
                Ok(false) => {}
                Err(ApiError::NotFound { .. }) => return,
                Err(e) => tracing::warn!(namespace = name, error = %e, "namespace deletion will retry"),
            }
            tokio::time::sleep(RETRY).await;
        }
    });
}

/// Resumes the deletion of every namespace left Terminating.
pub async fn resume_terminating(registry: &Registry) -> Result<(), ApiError> {
    let namespaces = resources::find("", "v1", "namespaces")
        .ok_or_else(|| ApiError::Internal("namespaces are not served".into()))?;
    let list = registry.list(namespaces, &ListOptions::default()).await?;
    for ns in list.items {
        if ns["metadata"]["deletionTimestamp"].is_string() {
            let name = ns["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let uid = ns["metadata"]["uid"].as_str().unwrap_or_default().to_string();
            finalize_in_background(registry.clone(), name, uid);
        }
    }
    Ok(())
}
