//! Admission control (k8s.io/apiserver `pkg/admission`): every write, before
//! it is stored, is shown to each plugin of a chain, first to the mutating
//! ones (which may change the object), then, once the object is complete
//! and valid, to the validating ones (which may only refuse it). Reads are
//! never admitted.
//!
//! * `attributes`: what a plugin is told about a write.
//! * `chain`: the plugins in kube's fixed order.
//! * `namespace_lifecycle`: no new objects in missing or terminating
//!   namespaces.

mod attributes;
mod chain;
mod namespace_lifecycle;

pub use attributes::{Attributes, GroupVersionKind, GroupVersionResource, Operation};
pub use chain::Chain;
pub use namespace_lifecycle::{NamespaceLifecycle, Namespaces};

use async_trait::async_trait;

use crate::errors::ApiError;

/// One admission plugin. Both steps default to admitting everything.
#[async_trait]
pub trait Plugin: Send + Sync + std::fmt::Debug {
    /// kube's plugin name (`NamespaceLifecycle`), as the flags name it.
    fn name(&self) -> &'static str;

    /// Mutating admission: may change `attributes.object`.
    async fn admit(&self, _attributes: &mut Attributes) -> Result<(), ApiError> {
        Ok(())
    }

    /// Validating admission: may only refuse.
    async fn validate(&self, _attributes: &Attributes) -> Result<(), ApiError> {
        Ok(())
    }
}
