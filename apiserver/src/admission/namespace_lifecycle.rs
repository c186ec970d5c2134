//! NamespaceLifecycle (kube's `pkg/admission/plugin/namespace/lifecycle`):
//! `default`, `kube-system` and `kube-public` cannot be deleted; namespaced
//! objects are written only into namespaces that exist, and none are
//! created in a namespace being deleted.

use async_trait::async_trait;

use super::lookup::{Lookup, namespace_not_found};
use super::{Attributes, Operation, Plugin};
use crate::errors::{ApiError, Cause};

/// The namespaces kube never lets go.
pub const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

#[derive(Debug)]
pub struct NamespaceLifecycle {
    namespaces: Lookup,
}

impl NamespaceLifecycle {
    pub fn new(namespaces: Lookup) -> Self {
        NamespaceLifecycle { namespaces }
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
        if attributes.operation == Operation::Connect {
            return Ok(());
        }
        if attributes.is_namespace() {
            if attributes.operation == Operation::Delete && IMMORTAL.contains(&attributes.name.as_str()) {
                return Err(attributes.forbidden("this namespace may not be deleted"));
            }
            return Ok(());
        }
        // Cluster-scoped objects have no namespace to check; what is in a
        // namespace may always be deleted.
        let Some(namespace) = attributes.namespace.clone() else { return Ok(()) };
        // Subresources (status, scale, a token) act on objects that exist.
        if attributes.operation == Operation::Delete || attributes.subresource.is_some() {
            return Ok(());
        }
        let Some(found) = self.namespaces.find(None, &namespace).await? else {
            return Err(namespace_not_found(&namespace));
        };
        let terminating =
            found["status"]["phase"] == "Terminating" || found["metadata"]["deletionTimestamp"].is_string();
        if attributes.operation == Operation::Create && terminating {
            return Err(attributes.forbidden_because(
                format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
                vec![Cause {
                    reason: "NamespaceTerminating",
                    field: "metadata.namespace".into(),
                    message: format!("namespace {namespace} is being terminated"),
                }],
            ));
        }
        Ok(())
    }
}
