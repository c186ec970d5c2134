//! Two validating plugins kube keeps off by default, for clusters shared
//! between tenants: LimitPodHardAntiAffinityTopology (a required pod
//! anti-affinity may only spread over hosts, so one tenant cannot block a
//! whole zone) and DenyServiceExternalIPs (no new Service externalIPs,
//! which would let a tenant capture another's traffic).

use async_trait::async_trait;
use serde_json::Value;

use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

const HOSTNAME: &str = "kubernetes.io/hostname";

fn create_or_update(attributes: &Attributes, resource: &str) -> bool {
    matches!(attributes.operation, Operation::Create | Operation::Update) && attributes.is("", resource)
}

#[derive(Debug)]
pub struct LimitPodHardAntiAffinityTopology;

#[async_trait]
impl Plugin for LimitPodHardAntiAffinityTopology {
    fn name(&self) -> &'static str {
        "LimitPodHardAntiAffinityTopology"
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if !create_or_update(attributes, "pods") {
            return Ok(());
        }
        let Some(pod) = attributes.object.as_ref() else { return Ok(()) };
        let terms =
            &pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
        for term in terms.as_array().into_iter().flatten() {
            let key = term["topologyKey"].as_str().unwrap_or_default();
            if key != HOSTNAME {
                return Err(attributes.forbidden(format!(
                    "affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey {key} but only key {HOSTNAME} is allowed"
                )));
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct DenyServiceExternalIPs;

fn external_ips(service: Option<&Value>) -> Vec<&str> {
    service
        .map(|s| {
            s["spec"]["externalIPs"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
        })
        .unwrap_or_default()
}

#[async_trait]
impl Plugin for DenyServiceExternalIPs {
    fn name(&self) -> &'static str {
        "DenyServiceExternalIPs"
    }

    /// Addresses a Service already had may stay; none may be added.
    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        if !create_or_update(attributes, "services") {
            return Ok(());
        }
        let old = external_ips(attributes.old_object.as_ref());
        if external_ips(attributes.object.as_ref()).iter().all(|ip| old.contains(ip)) {
            return Ok(());
        }
        Err(attributes.forbidden("Use of external IPs is denied by admission control"))
    }
}
