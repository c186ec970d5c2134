//! storage.k8s.io/v1, one module per kind. Stored, defaulted, validated and
//! printed as kube does; provisioning and attaching are the storage
//! drivers' and kube-controller-manager's work.

pub mod csidriver;
pub mod csinode;
pub mod csistoragecapacity;
pub mod storageclass;
pub mod volumeattachment;
pub mod volumeattributesclass;

use super::Kind;

/// The group's kinds, in kube's discovery order.
pub fn kinds() -> Vec<Kind> {
    vec![
        csidriver::kind(),
        csinode::kind(),
        csistoragecapacity::kind(),
        storageclass::kind(),
        volumeattachment::kind(),
        volumeattributesclass::kind(),
    ]
}
