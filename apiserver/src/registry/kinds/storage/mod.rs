//! storage.k8s.io/v1, one module per kind. Stored, defaulted, validated and
//! printed as kube does; provisioning and attaching are the storage
//! drivers' and kube-controller-manager's work.

pub mod csidriver;
pub mod csinode;
pub mod storageclass;
pub mod volumeattachment;

use super::Kind;

/// The group's kinds, in kube's discovery order.
pub fn kinds() -> Vec<Kind> {
    vec![csidriver::kind(), csinode::kind(), storageclass::kind(), volumeattachment::kind()]
}
