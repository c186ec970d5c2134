//! PersistentVolumeClaimResize (kube's
//! `plugin/pkg/admission/storage/persistentvolume/resize`): a claim may ask
//! for more storage only when a StorageClass that allows volume expansion
//! provisioned it; the resizer would otherwise never act on the request.

use async_trait::async_trait;
use serde_json::Value;

use super::lookup::Lookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;
use crate::runtime::quantity::Quantity;

#[derive(Debug)]
pub struct PersistentVolumeClaimResize {
    classes: Lookup,
}

impl PersistentVolumeClaimResize {
    pub fn new(classes: Lookup) -> Self {
        PersistentVolumeClaimResize { classes }
    }

    /// kube's `allowResize`: the same class before and after, one that
    /// exists and says `allowVolumeExpansion: true`.
    async fn allows_resize(&self, claim: &Value, old: &Value) -> bool {
        let class = class_of(claim);
        if class.is_empty() || class != class_of(old) {
            return false;
        }
        match self.classes.find(None, &class).await {
            Ok(Some(class)) => class["allowVolumeExpansion"] == Value::Bool(true),
            _ => false,
        }
    }
}

/// The claim's class: the field, else the old beta annotation.
fn class_of(claim: &Value) -> String {
    let annotated = claim["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].as_str();
    annotated.or_else(|| claim["spec"]["storageClassName"].as_str()).unwrap_or_default().to_string()
}

fn requested_storage(claim: &Value) -> Option<Quantity> {
    claim["spec"]["resources"]["requests"]["storage"].as_str().and_then(|q| Quantity::parse(q).ok())
}

#[async_trait]
impl Plugin for PersistentVolumeClaimResize {
    fn name(&self) -> &'static str {
        "PersistentVolumeClaimResize"
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if attributes.operation != Operation::Update || !attributes.is("", "persistentvolumeclaims") {
            return Ok(());
        }
        let (Some(claim), Some(old)) = (attributes.object.as_ref(), attributes.old_object.as_ref()) else {
            return Ok(());
        };
        let grows = match (requested_storage(claim), requested_storage(old)) {
            (Some(new), Some(was)) => new.cmp_value(&was).is_gt(),
            _ => false,
        };
        if grows && !self.allows_resize(claim, old).await {
            return Err(attributes.forbidden(
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ));
        }
        Ok(())
    }
}
