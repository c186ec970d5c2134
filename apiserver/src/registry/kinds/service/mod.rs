//! Services: names are DNS labels; each gets a cluster IP from the
//! configured range when created (kept for life, freed when it is deleted)
//! and kube's defaults (`SetDefaults_Service`: type ClusterIP, TCP ports,
//! targetPort = port, traffic policies, session affinity).

mod allocator;
mod node_ports;

pub use allocator::IpRange;
pub use node_ports::PortRange;

use std::net::Ipv4Addr;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::FutureExt;
use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::{Kind, KindContext, field};
use crate::errors::{ApiError, Cause};
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
        range: context.services.cluster_ips,
        node_ports: context.services.node_ports,
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
        node_ports::keep_allocated(new, old);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse("Service", object, node_ports::misplaced(object))
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::SERVICE
    }
}

/// The ranges Services' addresses and node ports come from
/// (`--service-cluster-ip-range`, `--service-node-port-range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranges {
    pub cluster_ips: IpRange,
    pub node_ports: PortRange,
}

impl From<IpRange> for Ranges {
    /// These cluster IPs, and kube's default node ports.
    fn from(cluster_ips: IpRange) -> Ranges {
        Ranges { cluster_ips, node_ports: PortRange::default() }
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

/// Takes a cluster IP and node ports for each new Service and frees them
/// with the Service.
#[derive(Debug)]
struct Allocator {
    resource: Resource,
    storage: Arc<dyn Storage>,
    etcd_prefix: String,
    range: IpRange,
    node_ports: PortRange,
}

#[async_trait]
impl WriteHooks for Allocator {
    async fn begin_create(&self, service: &mut Value, dry_run: bool) -> Result<Option<Undo>, ApiError> {
        let wants = allocator::prepare(&self.resource, service, &self.range)?;
        self.check_node_port_ranges(service)?;
        if dry_run {
            return Ok(None);
        }
        let name = crate::runtime::meta::name_of(service).to_string();
        let namespace = crate::runtime::meta::namespace_of(service).unwrap_or_default().to_string();
        let ip = self.allocate(&name, &namespace, wants).await?;
        let mut keys: Vec<String> =
            ip.map(|ip| allocator::address_key(&self.etcd_prefix, ip)).into_iter().collect();
        if let Some(ip) = ip {
            allocator::assign(service, ip);
        }
        match self.allocate_node_ports(service, &namespace, &name).await {
            Ok(ports) => keys.extend(ports.iter().map(|p| node_ports::port_key(&self.etcd_prefix, *p))),
            Err(e) => {
                release_all(self.storage.as_ref(), &keys).await;
                return Err(e);
            }
        }
        let storage = self.storage.clone();
        Ok(Some(Box::new(move || async move { release_all(storage.as_ref(), &keys).await }.boxed())))
    }

    /// Node ports an update dropped (a port removed, a type that needs
    /// none) are freed.
    async fn after_update(&self, old: &Value, new: &Value) {
        let still = node_ports::held(new);
        let dropped = node_ports::held(old).into_iter().filter(|p| !still.contains(p));
        let keys: Vec<String> = dropped.map(|p| node_ports::port_key(&self.etcd_prefix, p)).collect();
        release_all(self.storage.as_ref(), &keys).await;
    }

    async fn after_delete(&self, service: &Value) {
        let address =
            allocator::held_address(service).map(|ip| allocator::address_key(&self.etcd_prefix, ip));
        let ports = node_ports::held(service).into_iter().map(|p| node_ports::port_key(&self.etcd_prefix, p));
        let keys: Vec<String> = address.into_iter().chain(ports).collect();
        release_all(self.storage.as_ref(), &keys).await;
    }
}

impl Allocator {
    /// Refuses node ports outside the range before anything is taken.
    fn check_node_port_ranges(&self, service: &Value) -> Result<(), ApiError> {
        let wanted = node_ports::wanted(service);
        let given = wanted
            .ports
            .iter()
            .filter_map(|(i, port)| port.map(|p| (format!("spec.ports[{i}].nodePort"), p)));
        let health = wanted.health_check.flatten().map(|p| ("spec.healthCheckNodePort".to_string(), p));
        let causes: Vec<Cause> = given
            .chain(health)
            .filter(|(_, port)| !self.node_ports.contains(*port))
            .map(|(at, port)| node_ports::out_of_range(&at, port, &self.node_ports))
            .collect();
        field::refuse("Service", service, causes)
    }

    /// Takes the node ports a Service asks for and free ones for the ports
    /// that need one, writing them in; the ports taken. Nothing stays
    /// taken when it fails.
    async fn allocate_node_ports(
        &self,
        service: &mut Value,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<u16>, ApiError> {
        let wanted = node_ports::wanted(service);
        let health = wanted.health_check.map(|port| ("spec.healthCheckNodePort".to_string(), None, port));
        let ports =
            wanted.ports.iter().map(|(i, port)| (format!("spec.ports[{i}].nodePort"), Some(*i), *port));
        let mut taken = Vec::new();
        for (at, index, asked) in ports.chain(health) {
            let port = match self.take_node_port(namespace, name, asked).await {
                Ok(Some(port)) => port,
                Ok(None) => {
                    let cause = match asked {
                        Some(port) => node_ports::taken(&at, port),
                        None => field::cause(
                            "FieldValueInvalid",
                            &at,
                            "Internal error: failed to allocate a nodePort: range is full".into(),
                        ),
                    };
                    let keys: Vec<String> =
                        taken.iter().map(|p| node_ports::port_key(&self.etcd_prefix, *p)).collect();
                    release_all(self.storage.as_ref(), &keys).await;
                    return Err(ApiError::Invalid {
                        kind: "Service".into(),
                        name: name.to_string(),
                        causes: vec![cause],
                    });
                }
                Err(e) => {
                    let keys: Vec<String> =
                        taken.iter().map(|p| node_ports::port_key(&self.etcd_prefix, *p)).collect();
                    release_all(self.storage.as_ref(), &keys).await;
                    return Err(e);
                }
            };
            match index {
                Some(i) => service["spec"]["ports"][i]["nodePort"] = json!(port),
                None => service["spec"]["healthCheckNodePort"] = json!(port),
            }
            taken.push(port);
        }
        taken.sort_unstable();
        taken.dedup();
        Ok(taken)
    }

    /// Takes `asked`, or a free port from a random point of the range;
    /// None when it is another Service's (or the range is full). A port
    /// this Service already holds (one node port for TCP and UDP) is
    /// taken again.
    async fn take_node_port(
        &self,
        namespace: &str,
        name: &str,
        asked: Option<i64>,
    ) -> Result<Option<u16>, ApiError> {
        let candidates: Vec<u16> = match asked {
            Some(port) => u16::try_from(port).into_iter().collect(),
            None => self.node_ports.candidates().collect(),
        };
        let holder = node_ports::holder(namespace, name);
        let record = Bytes::from(serde_json::to_vec(&holder).map_err(|e| ApiError::Internal(e.to_string()))?);
        for port in candidates {
            let key = node_ports::port_key(&self.etcd_prefix, port);
            match self.storage.create(&key, record.clone(), None).await {
                Ok(_) => return Ok(Some(port)),
                Err(StorageError::AlreadyExists { .. }) if asked.is_some() => {
                    let current = self.storage.get(&key).await.map_err(|e| self.storage_error(e, name))?;
                    let ours =
                        current.and_then(|o| serde_json::from_slice::<Value>(&o.value).ok()) == Some(holder);
                    return Ok(ours.then_some(port));
                }
                Err(StorageError::AlreadyExists { .. }) => {}
                Err(e) => return Err(self.storage_error(e, name)),
            }
        }
        Ok(None)
    }

    fn storage_error(&self, e: StorageError, name: &str) -> ApiError {
        ApiError::from_storage(e, &self.resource.qualified_name(), name)
    }

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

/// Frees a Service's cluster IP and node ports.
async fn release_all(storage: &dyn Storage, keys: &[String]) {
    for key in keys {
        if let Err(e) = storage.delete(key, &Preconditions::default()).await
            && !matches!(e, StorageError::NotFound { .. })
        {
            tracing::warn!(%key, error = %e, "could not free a service address or node port");
        }
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
