//! Where a Service is reached, as kube's aggregator resolves it: its
//! cluster IP and port (kube's default, which needs kube-proxy or the
//! like on this machine), or, with `--enable-aggregator-routing`, one of
//! its ready endpoints picked at random. Errors in kube's words.

use serde_json::{Value, json};

use super::target::ServiceRef;
use crate::cacher::{ListOptions, ReadAt};
use crate::errors::{ApiError, go_quote};
use crate::registry::Resources;

/// How requests find an extension server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Routing {
    /// The Service's cluster IP (an ExternalName Service's name).
    #[default]
    ClusterIp,
    /// A ready endpoint of the Service's EndpointSlices.
    Endpoints,
}

/// `host:port` to connect to for `service`.
pub async fn address(
    resources: &Resources,
    routing: Routing,
    service: &ServiceRef,
) -> Result<String, String> {
    let object = find_service(resources, service).await?;
    let kind = object["spec"]["type"].as_str().unwrap_or("ClusterIP");
    match routing {
        Routing::ClusterIp => cluster_address(&object, kind, service),
        Routing::Endpoints => endpoint_address(resources, &object, kind, service).await,
    }
}

async fn find_service(resources: &Resources, service: &ServiceRef) -> Result<Value, String> {
    let services = resources.store("", "services").map_err(|e| e.to_string())?;
    match services.get(Some(&service.namespace), &service.name, &ReadAt::default()).await {
        Ok(object) => Ok(object),
        // The lister's text.
        Err(ApiError::NotFound { .. }) => Err(format!("service {} not found", go_quote(&service.name))),
        Err(e) => Err(e.to_string()),
    }
}

/// kube's `ResolveCluster`.
fn cluster_address(object: &Value, kind: &str, service: &ServiceRef) -> Result<String, String> {
    match kind {
        "ClusterIP" if object["spec"]["clusterIP"] == "None" => {
            Err(r#"cannot route to service with ClusterIP "None""#.to_string())
        }
        "ClusterIP" | "LoadBalancer" | "NodePort" => {
            let port = service_port(object, service)?;
            let ip = object["spec"]["clusterIP"].as_str().unwrap_or_default();
            Ok(join_host_port(ip, port["port"].as_i64().unwrap_or_default()))
        }
        "ExternalName" => {
            let name = object["spec"]["externalName"].as_str().unwrap_or_default();
            Ok(join_host_port(name, i64::from(service.port)))
        }
        other => Err(format!("unsupported service type {}", go_quote(other))),
    }
}

/// kube's `ResolveEndpoint`: a random ready endpoint serving the Service
/// port's name.
async fn endpoint_address(
    resources: &Resources,
    object: &Value,
    kind: &str,
    service: &ServiceRef,
) -> Result<String, String> {
    if !matches!(kind, "ClusterIP" | "LoadBalancer" | "NodePort") {
        return Err(format!("unsupported service type {}", go_quote(kind)));
    }
    let port = service_port(object, service)?;
    let port_name = port["name"].as_str().unwrap_or_default();
    let slices =
        endpoint_slices(resources, &service.namespace, &service.name).await.map_err(|e| e.to_string())?;
    let ready: Vec<String> = slices.iter().flat_map(|slice| ready_endpoints(slice, port_name)).collect();
    if ready.is_empty() {
        return Err(format!("no endpoints available for service {}", go_quote(&service.name)));
    }
    Ok(ready[random_index(ready.len())].clone())
}

/// The Service's port numbered as the APIService asks.
fn service_port<'a>(object: &'a Value, service: &ServiceRef) -> Result<&'a Value, String> {
    let ports = object["spec"]["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
    ports.iter().find(|p| p["port"] == json!(service.port)).ok_or_else(|| {
        format!("no service port {} found for service {}", service.port, go_quote(&service.name))
    })
}

/// The EndpointSlices of Service `name` (labelled with its name).
pub async fn endpoint_slices(
    resources: &Resources,
    namespace: &str,
    name: &str,
) -> Result<Vec<Value>, ApiError> {
    let store = resources.store("discovery.k8s.io", "endpointslices")?;
    let mut options = ListOptions::default();
    options.filter.namespace = Some(namespace.to_string());
    let slices = store.list(&options).await?.items;
    Ok(slices.into_iter().filter(|s| s["metadata"]["labels"]["kubernetes.io/service-name"] == name).collect())
}

/// `host:port` of each endpoint of `slice` that is ready (or does not
/// say), on its port named `port_name` (which must have a number).
pub fn ready_endpoints(slice: &Value, port_name: &str) -> Vec<String> {
    let ports = slice["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
    let Some(port) =
        ports.iter().find(|p| p["name"].as_str() == Some(port_name)).and_then(|p| p["port"].as_i64())
    else {
        return Vec::new();
    };
    let endpoints = slice["endpoints"].as_array().map(Vec::as_slice).unwrap_or_default();
    endpoints
        .iter()
        .filter(|e| e["conditions"]["ready"] != json!(false))
        // kube uses the first address only.
        .filter_map(|e| e["addresses"][0].as_str())
        .map(|ip| join_host_port(ip, port))
        .collect()
}

/// Go's `net.JoinHostPort`: IPv6 addresses in brackets.
fn join_host_port(host: &str, port: i64) -> String {
    match host.contains(':') {
        true => format!("[{host}]:{port}"),
        false => format!("{host}:{port}"),
    }
}

/// Spreads requests over endpoints; no need for a good generator.
fn random_index(len: usize) -> usize {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
    nanos as usize % len.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(kind: &str) -> Value {
        json!({"spec": {"type": kind, "clusterIP": "10.0.0.7", "externalName": "ext.example.com",
            "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}})
    }

    fn reference(port: u16) -> ServiceRef {
        ServiceRef { namespace: "ns".into(), name: "api".into(), port }
    }

    #[test]
    fn cluster_routing_goes_to_the_cluster_ip_or_external_name() {
        assert_eq!(
            cluster_address(&service("ClusterIP"), "ClusterIP", &reference(443)).unwrap(),
            "10.0.0.7:443"
        );
        assert_eq!(
            cluster_address(&service("ExternalName"), "ExternalName", &reference(8443)).unwrap(),
            "ext.example.com:8443"
        );
        assert_eq!(
            cluster_address(&service("ClusterIP"), "ClusterIP", &reference(80)).unwrap_err(),
            r#"no service port 80 found for service "api""#
        );
        let mut headless = service("ClusterIP");
        headless["spec"]["clusterIP"] = json!("None");
        assert_eq!(
            cluster_address(&headless, "ClusterIP", &reference(443)).unwrap_err(),
            r#"cannot route to service with ClusterIP "None""#
        );
    }

    #[test]
    fn only_ready_endpoints_on_the_named_port_are_used() {
        let slice = json!({
            "ports": [{"name": "https", "port": 8443}],
            "endpoints": [
                {"addresses": ["10.1.0.1"], "conditions": {"ready": false}},
                {"addresses": ["10.1.0.2", "10.1.0.3"]},
                {"addresses": ["fd00::1"], "conditions": {"ready": true}},
            ],
        });
        assert_eq!(ready_endpoints(&slice, "https"), ["10.1.0.2:8443", "[fd00::1]:8443"]);
        assert!(ready_endpoints(&slice, "").is_empty(), "another port name");
    }
}
