//! StorageObjectInUseProtection: every new PersistentVolumeClaim, PersistentVolume and
//! VolumeAttributesClass gets its protection finalizer, so that deleting one that is in use
//! only marks it; the protection controllers (kube-controller-manager's, and this server's
//! `controllers::storage_protection`) take the finalizer off once nothing uses it.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;
use crate::runtime::meta;

pub const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";
pub const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";
pub const CLASS_FINALIZER: &str = "kubernetes.io/vac-protection";

#[derive(Debug)]
pub struct StorageObjectInUseProtection;

#[async_trait]
impl Plugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    async fn admit(&self, write: &mut Attributes) -> Result<(), ApiError> {
        if write.operation != Operation::Create || write.subresource.is_some() {
            return Ok(());
        }
        let finalizer = match (write.resource.group.as_str(), write.resource.resource.as_str()) {
            ("", "persistentvolumeclaims") => CLAIM_FINALIZER,
            ("", "persistentvolumes") => VOLUME_FINALIZER,
            ("storage.k8s.io", "volumeattributesclasses") => CLASS_FINALIZER,
            _ => return Ok(()),
        };
        let Some(object) = write.object.as_mut() else { return Ok(()) };
        if meta::finalizers(object).contains(&finalizer) {
            return Ok(());
        }
        let metadata = meta::metadata_mut(object);
        match metadata.get_mut("finalizers").and_then(Value::as_array_mut) {
            Some(finalizers) => finalizers.push(json!(finalizer)),
            None => {
                metadata.insert("finalizers".into(), json!([finalizer]));
            }
        }
        Ok(())
    }
}
