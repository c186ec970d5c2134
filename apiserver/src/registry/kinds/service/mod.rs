//! Services: names are DNS labels; each gets a cluster IP from the
//! configured range when created (kept for life, freed when it is deleted)
//! and kube's defaults (`SetDefaults_Service`: type ClusterIP, TCP ports,
//! targetPort = port, traffic policies, session affinity).

mod allocator;

pub use allocator::IpRange;

use std::net::Ipv4Addr;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::FutureExt;
use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::{Kind, KindContext};
use crate::errors::ApiError;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults;
use crate::registry::metadata::invalid;
use crate::registry::{NameRule, Resource, Strategy, Undo, WriteHooks};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::storage::{Preconditions, Storage, StorageError};
use crate::table::{self, Printer};
use allocator::ClusterIp;

pub fn kind(context: &KindContext) -> Kind {
    let resource = Resource::new("", "Service", "services")
        .short_names(&["svc"])
        .in_all()
        .stored_under("services/specs")
        .with_status()
        .returns_deleted_object();
    let allocator = Allocator {
        resource: resource.clone(),
        storage: context.storage.clone(),
        etcd_prefix: context.etcd_prefix.clone(),
        range: context.service_ips,
    };
    Kind::typed::<core::Service>(resource, ServiceStrategy).with_hooks(allocator)
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &["metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"],
    refusal: Refusal::NotSupported,
    aliases: &[],
    cluster_scoped: false,
    value: |object, field| match field {
        "spec.clusterIP" => Some(attrs::text(object, &["spec", "clusterIP"])),
        "spec.type" => Some(attrs::text(object, &["spec", "type"])),
        _ => None,
    },
};

#[derive(Debug)]
struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_SERVICE)
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Dns1035Label
    }

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    /// A new Service has no load balancer yet: kube writes its empty status.
    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({"loadBalancer": {}});
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        // A Service keeps the cluster IP it was given.
        for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
            if let Some(value) = old["spec"].get(field) {
                new["spec"][field] = value.clone();
            }
        }
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::SERVICE
    }
}

/// kube's `SetDefaults_Service`.
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::string(spec, "sessionAffinity", "None");
    if spec["sessionAffinity"] == "None" {
        defaults::remove(spec, "sessionAffinityConfig");
    }
    if spec["sessionAffinity"] == "ClientIP"
        && spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].is_null()
    {
        // Three hours, kube's DefaultClientIPServiceAffinitySeconds.
        spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
    }
    defaults::string(spec, "type", "ClusterIP");
    for port in defaults::items(spec, "ports") {
        defaults::string(port, "protocol", "TCP");
        let target = &port["targetPort"];
        if target.is_null() || *target == json!(0) || *target == json!("") {
            port["targetPort"] = port["port"].clone();
        }
    }
    let kind = spec["type"].as_str().unwrap_or_default().to_string();
    let has_external_ips = spec["externalIPs"].as_array().is_some_and(|ips| !ips.is_empty());
    let externally_accessible =
        kind == "LoadBalancer" || kind == "NodePort" || (kind == "ClusterIP" && has_external_ips);
    if externally_accessible {
        defaults::string(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        defaults::pointer(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        defaults::pointer(spec, "allocateLoadBalancerNodePorts", json!(true));
        let ingress = defaults::present(object, "status")
            .and_then(|status| defaults::present(status, "loadBalancer"))
            .map(|balancer| defaults::items(balancer, "ingress"));
        for point in ingress.into_iter().flatten() {
            if defaults::is_set(point, "ip") {
                defaults::pointer(point, "ipMode", json!("VIP"));
            }
        }
    }
}

/// Takes a cluster IP for each new Service and frees it with the Service.
#[derive(Debug)]
struct Allocator {
    resource: Resource,
    storage: Arc<dyn Storage>,
    etcd_prefix: String,
    range: IpRange,
}

#[async_trait]
impl WriteHooks for Allocator {
    async fn begin_create(&self, service: &mut Value, dry_run: bool) -> Result<Option<Undo>, ApiError> {
        let wants = allocator::prepare(&self.resource, service, &self.range)?;
        if dry_run {
            return Ok(None);
        }
        let name = crate::runtime::meta::name_of(service).to_string();
        let namespace = crate::runtime::meta::namespace_of(service).unwrap_or_default().to_string();
        let Some(ip) = self.allocate(&name, &namespace, wants).await? else { return Ok(None) };
        allocator::assign(service, ip);
        let storage = self.storage.clone();
        let key = allocator::address_key(&self.etcd_prefix, ip);
        Ok(Some(Box::new(move || async move { release(storage.as_ref(), &key, ip).await }.boxed())))
    }

    async fn after_delete(&self, service: &Value) {
        if let Some(ip) = allocator::held_address(service) {
            release(self.storage.as_ref(), &allocator::address_key(&self.etcd_prefix, ip), ip).await;
        }
    }
}

impl Allocator {
    /// Takes the address asked for, or the first free one from a random
    /// point of the range.
    async fn allocate(
        &self,
        name: &str,
        namespace: &str,
        wants: ClusterIp,
    ) -> Result<Option<Ipv4Addr>, ApiError> {
        let candidates: Vec<Ipv4Addr> = match wants {
            ClusterIp::NoAddress => return Ok(None),
            ClusterIp::Exactly(ip) => vec![ip],
            ClusterIp::Any => self.range.candidates().collect(),
        };
        for ip in &candidates {
            let record = Bytes::from(
                serde_json::to_vec(&allocator::address_object(*ip, namespace, name))
                    .map_err(|e| ApiError::Internal(e.to_string()))?,
            );
            match self.storage.create(&allocator::address_key(&self.etcd_prefix, *ip), record, None).await {
                Ok(_) => return Ok(Some(*ip)),
                Err(StorageError::AlreadyExists { .. }) => {}
                Err(e) => return Err(ApiError::from_storage(e, &self.resource.qualified_name(), name)),
            }
        }
        let message = match wants {
            ClusterIp::Exactly(ip) => {
                format!(
                    "Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated"
                )
            }
            _ => "Internal error: failed to allocate a serviceIP: range is full".to_string(),
        };
        Err(invalid(&self.resource, name, "FieldValueInvalid", "spec.clusterIPs", &message))
    }
}

/// Frees a Service's cluster IP.
async fn release(storage: &dyn Storage, key: &str, ip: Ipv4Addr) {
    if let Err(e) = storage.delete(key, &Preconditions::default()).await
        && !matches!(e, StorageError::NotFound { .. })
    {
        tracing::warn!(%ip, error = %e, "could not free a service IP");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(spec: Value) -> Value {
        let mut service = json!({"metadata": {"name": "s"}, "spec": spec});
        set_defaults(&mut service);
        service["spec"].clone()
    }

    #[test]
    fn services_get_kubes_defaults() {
        assert_eq!(
            defaulted(json!({"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]})),
            json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                    {"port": 53, "protocol": "UDP", "targetPort": "dns"}],
                "sessionAffinity": "None", "type": "ClusterIP", "internalTrafficPolicy": "Cluster"})
        );
        let balancer = defaulted(json!({"type": "LoadBalancer", "sessionAffinity": "ClientIP"}));
        assert_eq!(balancer["externalTrafficPolicy"], "Cluster");
        assert_eq!(balancer["allocateLoadBalancerNodePorts"], true);
        assert_eq!(balancer["sessionAffinityConfig"], json!({"clientIP": {"timeoutSeconds": 10800}}));
        let external = defaulted(json!({"type": "ExternalName", "externalName": "db.example.com",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}));
        assert!(external.get("internalTrafficPolicy").is_none(), "{external}");
        assert!(external.get("sessionAffinityConfig").is_none(), "dropped with affinity None: {external}");
    }

    #[test]
    fn load_balancer_addresses_default_to_vip_mode() {
        let mut service = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"},
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}, {"hostname": "lb.example.com"}]}}});
        set_defaults(&mut service);
        assert_eq!(
            service["status"]["loadBalancer"]["ingress"],
            json!([{"ip": "192.0.2.1", "ipMode": "VIP"}, {"hostname": "lb.example.com"}])
        );
    }
}
