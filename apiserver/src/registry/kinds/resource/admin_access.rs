//! kube's DRAAdminAccess rule (`AuthorizedForAdmin`): admin access to
//! devices (monitoring or repairing devices other claims hold) may be asked
//! for only in a namespace its admin labelled for it, so a user who can
//! create claims cannot reach other tenants' devices. Checked when a claim
//! or a claim template is made; their specs never change after.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::device_config::items;
use crate::cacher::to_value;
use crate::errors::ApiError;
use crate::registry::kinds::field;
use crate::registry::{Undo, WriteHooks};
use crate::runtime::meta;
use crate::storage::Storage;

/// The label (with value `"true"`) that lets a namespace's claims ask for admin access.
pub const NAMESPACE_LABEL: &str = "resource.kubernetes.io/admin-access";

/// Where a kind keeps its claim spec's requests, and how kube names it.
#[derive(Debug)]
pub struct AdminAccess {
    storage: Arc<dyn Storage>,
    etcd_prefix: String,
    kind: &'static str,
    requests_at: &'static str,
}

impl AdminAccess {
    /// For `kind` (`ResourceClaim.resource.k8s.io`), whose requests are at
    /// the JSON pointer `requests_at`.
    pub fn new(
        context: &crate::registry::kinds::KindContext,
        kind: &'static str,
        requests_at: &'static str,
    ) -> Self {
        AdminAccess {
            storage: context.storage.clone(),
            etcd_prefix: context.etcd_prefix.clone(),
            kind,
            requests_at,
        }
    }

    async fn namespace_allows(&self, namespace: &str) -> Result<bool, ApiError> {
        let key = format!("{}/namespaces/{namespace}", self.etcd_prefix);
        let unreadable = |e: String| {
            ApiError::Internal(format!("could not retrieve namespace to verify admin access: {e}"))
        };
        let stored = self.storage.get(&key).await.map_err(|e| unreadable(e.to_string()))?;
        let Some(stored) = stored else { return Ok(false) };
        let namespace =
            to_value(&key, &stored.value, stored.resource_version).map_err(|e| unreadable(e.to_string()))?;
        Ok(namespace["metadata"]["labels"][NAMESPACE_LABEL] == "true")
    }
}

/// The first request asking for admin access, as kube reports it.
fn first_admin_request(requests: &Value) -> Option<usize> {
    items(requests).iter().position(|request| request["exactly"]["adminAccess"] == Value::Bool(true))
}

#[async_trait]
impl WriteHooks for AdminAccess {
    async fn begin_create(&self, object: &mut Value, _dry_run: bool) -> Result<Option<Undo>, ApiError> {
        let requests = object.pointer(self.requests_at).unwrap_or(&Value::Null);
        let Some(i) = first_admin_request(requests) else { return Ok(None) };
        let namespace = meta::namespace_of(object).unwrap_or_default().to_string();
        if self.namespace_allows(&namespace).await? {
            return Ok(None);
        }
        let refusal = field::forbidden(
            &format!("spec.devices.requests[{i}].adminAccess"),
            &format!(
                "admin access to devices requires the `{NAMESPACE_LABEL}: true` label on the containing namespace"
            ),
        );
        field::refuse(self.kind, object, vec![refusal])?;
        Ok(None)
    }

    async fn after_delete(&self, _object: &Value) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_exact_requests_ask_for_admin_access() {
        let requests = json!([
            {"name": "a", "exactly": {"deviceClassName": "gpu"}},
            {"name": "b", "exactly": {"deviceClassName": "gpu", "adminAccess": false}},
            {"name": "c", "exactly": {"deviceClassName": "gpu", "adminAccess": true}}
        ]);
        assert_eq!(first_admin_request(&requests), Some(2));
        assert_eq!(first_admin_request(&json!([{"name": "a", "firstAvailable": []}])), None);
    }
}
