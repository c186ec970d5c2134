//! networking.k8s.io/v1: NetworkPolicies, Ingresses, IngressClasses,
//! IPAddresses and ServiceCIDRs,
//! one module each. Stored, defaulted, validated and printed as kube does;
//! enforcing them is the network plugin's and the ingress controller's work.

pub mod ingress;
pub mod ingressclass;
pub mod ipaddress;
pub mod networkpolicy;
pub mod servicecidr;

use super::Kind;

/// The group's kinds, in kube's discovery order.
pub fn kinds() -> Vec<Kind> {
    vec![ingressclass::kind(), ingress::kind(), ipaddress::kind(), networkpolicy::kind(), servicecidr::kind()]
}
