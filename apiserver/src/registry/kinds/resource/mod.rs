//! resource.k8s.io/v1, dynamic resource allocation: DeviceClasses,
//! ResourceClaims and their templates, ResourceSlices, one module each,
//! with what their specs share beside them. Stored, defaulted, validated and
//! printed as kube does, so kube-scheduler's informers on them sync;
//! allocating devices is kube-scheduler's work, making claims from
//! templates kube-controller-manager's, preparing devices the drivers'.

pub mod admin_access;
pub mod claim_spec;
pub mod device_config;
pub mod deviceclass;
pub mod resourceclaim;
pub mod resourceclaimtemplate;
pub mod resourceslice;

use super::{Kind, KindContext};

/// The group's kinds, in kube's discovery order.
pub fn kinds(context: &KindContext) -> Vec<Kind> {
    vec![
        deviceclass::kind(),
        resourceclaim::kind(context),
        resourceclaimtemplate::kind(context),
        resourceslice::kind(),
    ]
}
