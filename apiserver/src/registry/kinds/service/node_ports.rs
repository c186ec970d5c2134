//! Node ports for NodePort and LoadBalancer Services, from
//! `--service-node-port-range` (kube's 30000-32767), as kube-apiserver's
//! port allocator hands them out: each port of such a Service gets one
//! (asked for, or a free one at random), a LoadBalancer with
//! `externalTrafficPolicy: Local` a health check port too, and they are
//! freed with the Service. Each port in use is a key under
//! `/registry/services/nodeports/<port>` naming its Service, created if
//! absent, so two Services never share one.

use serde_json::{Value, json};

use crate::errors::Cause;
use crate::registry::kinds::field;

/// A range of ports (`30000-32767`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub first: u16,
    pub last: u16,
}

impl Default for PortRange {
    /// kube's default range.
    fn default() -> PortRange {
        PortRange { first: 30000, last: 32767 }
    }
}

impl PortRange {
    /// `first-last`, or a single port; kube's flag syntax.
    pub fn parse(text: &str) -> Result<PortRange, String> {
        let (first, last) = text.split_once('-').unwrap_or((text, text));
        let port = |p: &str| p.trim().parse::<u16>().map_err(|_| format!("{text:?} is not a port range"));
        let (first, last) = (port(first)?, port(last)?);
        if first == 0 || first > last {
            return Err(format!("{text:?} is not a port range"));
        }
        Ok(PortRange { first, last })
    }

    pub fn contains(&self, port: i64) -> bool {
        (i64::from(self.first)..=i64::from(self.last)).contains(&port)
    }

    /// Every port of the range once, from a random point.
    pub fn candidates(&self) -> impl Iterator<Item = u16> + '_ {
        let size = u32::from(self.last - self.first) + 1;
        let start = uuid::Uuid::new_v4().as_u128() as u32 % size;
        (0..size).map(move |n| self.first + ((start + n) % size) as u16)
    }
}

/// What a Service needs from the allocator: the node ports its ports ask
/// for (`Some`) or need (`None`), by index, and whether it needs a health
/// check port (given or not).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wanted {
    pub ports: Vec<(usize, Option<i64>)>,
    pub health_check: Option<Option<i64>>,
}

/// Which node ports a Service of its type must hold.
pub fn wanted(service: &Value) -> Wanted {
    let spec = &service["spec"];
    let kind = spec["type"].as_str().unwrap_or_default();
    let balancer = kind == "LoadBalancer";
    let ports = spec["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
    let needs_ports = kind == "NodePort" || (balancer && spec["allocateLoadBalancerNodePorts"] != false);
    let given = |port: &Value| port["nodePort"].as_i64().filter(|p| *p != 0);
    let mut wanted = Wanted::default();
    for (i, port) in ports.iter().enumerate() {
        // A port given without being needed is still held (kube allocates
        // what a Service names even when it would not have picked one).
        if needs_ports || given(port).is_some() {
            wanted.ports.push((i, given(port)));
        }
    }
    if balancer && spec["externalTrafficPolicy"] == "Local" {
        wanted.health_check = Some(spec["healthCheckNodePort"].as_i64().filter(|p| *p != 0));
    }
    wanted
}

/// Node ports on a Service whose type may not have them (kube's
/// validation of ClusterIP and ExternalName Services).
pub fn misplaced(service: &Value) -> Vec<Cause> {
    let spec = &service["spec"];
    let kind = spec["type"].as_str().unwrap_or_default();
    if kind != "ClusterIP" && kind != "ExternalName" {
        return Vec::new();
    }
    let ports = spec["ports"].as_array().map(Vec::as_slice).unwrap_or_default();
    ports
        .iter()
        .enumerate()
        .filter(|(_, port)| port["nodePort"].as_i64().is_some_and(|p| p != 0))
        .map(|(i, _)| {
            field::forbidden(
                &format!("spec.ports[{i}].nodePort"),
                &format!("may not be used when `type` is '{kind}'"),
            )
        })
        .collect()
}

/// The ports a stored Service holds, health check port included.
pub fn held(service: &Value) -> Vec<u16> {
    let spec = &service["spec"];
    let ports = spec["ports"].as_array().into_iter().flatten().map(|p| &p["nodePort"]);
    let mut held: Vec<u16> = ports
        .chain(std::iter::once(&spec["healthCheckNodePort"]))
        .filter_map(|p| p.as_u64().and_then(|p| u16::try_from(p).ok()))
        .filter(|p| *p != 0)
        .collect();
    held.sort_unstable();
    held.dedup();
    held
}

/// kube's `patchAllocatedValues`: a replacing Service that needs node
/// ports keeps the ones its ports had (matched by port name) where it names
/// none, unless another of its ports now names that one; and its health
/// check port.
pub fn keep_allocated(new: &mut Value, old: &Value) {
    let (old_wants, new_wants) = (wanted(old), wanted(new));
    if !old_wants.ports.is_empty() && !new_wants.ports.is_empty() {
        let named = |service: &Value| -> Vec<i64> {
            let ports = service["spec"]["ports"].as_array().into_iter().flatten();
            ports.filter_map(|p| p["nodePort"].as_i64()).filter(|p| *p != 0).collect()
        };
        let old_named = named(old);
        let used: Vec<i64> = named(new).into_iter().filter(|p| old_named.contains(p)).collect();
        let by_name: Vec<(String, i64)> = old["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (p["name"].as_str().unwrap_or_default().to_string(), p["nodePort"].as_i64().unwrap_or(0))
            })
            .collect();
        let ports = new["spec"]["ports"].as_array_mut().into_iter().flatten().filter(|p| p.is_object());
        for port in ports.filter(|p| p["nodePort"].as_i64().is_none_or(|n| n == 0)) {
            let name = port["name"].as_str().unwrap_or_default();
            let kept = by_name.iter().find(|(n, _)| n == name).map(|(_, p)| *p).filter(|p| *p != 0);
            if let Some(kept) = kept.filter(|p| !used.contains(p)) {
                port["nodePort"] = json!(kept);
            }
        }
    }
    if old_wants.health_check.is_some()
        && new_wants.health_check == Some(None)
        && let Some(port) = old["spec"]["healthCheckNodePort"].as_i64()
    {
        new["spec"]["healthCheckNodePort"] = json!(port);
    }
}

/// The key recording who holds `port`.
pub fn port_key(etcd_prefix: &str, port: u16) -> String {
    format!("{etcd_prefix}/services/nodeports/{port}")
}

/// What the key holds: the Service, so a repeat of its own port (TCP and
/// UDP on one node port) is told apart from another Service's.
pub fn holder(namespace: &str, name: &str) -> Value {
    json!({"namespace": namespace, "name": name})
}

/// kube's refusal of a port outside the range.
pub fn out_of_range(field: &str, port: i64, range: &PortRange) -> Cause {
    field::invalid(
        field,
        &json!(port),
        &format!(
            "provided port is not in the valid range. The range of valid ports is {}-{}",
            range.first, range.last
        ),
    )
}

/// kube's refusal of a port another Service holds.
pub fn taken(field: &str, port: i64) -> Cause {
    field::invalid(field, &json!(port), "provided port is already allocated")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_as_kubes_flag_and_hand_out_every_port_once() {
        assert_eq!(PortRange::parse("30000-32767").unwrap(), PortRange::default());
        assert_eq!(PortRange::parse("31000").unwrap(), PortRange { first: 31000, last: 31000 });
        assert!(PortRange::parse("32767-30000").is_err());
        assert!(PortRange::parse("0-10").is_err());
        let range = PortRange::parse("30000-30009").unwrap();
        let mut all: Vec<u16> = range.candidates().collect();
        all.sort_unstable();
        assert_eq!(all, (30000..=30009).collect::<Vec<u16>>());
    }

    #[test]
    fn what_each_type_of_service_holds() {
        let service = |spec: Value| json!({"spec": spec});
        let node_port =
            service(json!({"type": "NodePort", "ports": [{"port": 80}, {"port": 443, "nodePort": 30443}]}));
        assert_eq!(
            wanted(&node_port),
            Wanted { ports: vec![(0, None), (1, Some(30443))], health_check: None }
        );
        let local = service(
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 80}]}),
        );
        assert_eq!(wanted(&local), Wanted { ports: vec![(0, None)], health_check: Some(None) });
        let no_ports = service(
            json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false, "ports": [{"port": 80}]}),
        );
        assert_eq!(wanted(&no_ports), Wanted::default());
        assert_eq!(
            wanted(&service(json!({"type": "ClusterIP", "ports": [{"port": 80}]}))),
            Wanted::default()
        );
        let misused = service(json!({"type": "ClusterIP", "ports": [{"port": 80, "nodePort": 30080}]}));
        assert_eq!(misplaced(&misused)[0].message, "Forbidden: may not be used when `type` is 'ClusterIP'");
        let stored = service(
            json!({"ports": [{"nodePort": 30080}, {"nodePort": 30080}], "healthCheckNodePort": 31000}),
        );
        assert_eq!(held(&stored), [30080, 31000]);
    }

    #[test]
    fn a_replacing_service_keeps_its_node_ports() {
        let old = json!({"spec": {"type": "NodePort", "ports": [
            {"name": "http", "port": 80, "nodePort": 30080}, {"name": "https", "port": 443, "nodePort": 30443}]}});
        // kubectl apply of a manifest that names no node ports; the second
        // port now asks for the first one's.
        let mut new = json!({"spec": {"type": "NodePort", "ports": [
            {"name": "http", "port": 8080}, {"name": "https", "port": 443, "nodePort": 30080}]}});
        keep_allocated(&mut new, &old);
        assert!(new["spec"]["ports"][0].get("nodePort").is_none(), "30080 is taken by the other port now");
        assert_eq!(new["spec"]["ports"][1]["nodePort"], 30080);
        let mut same = json!({"spec": {"type": "NodePort", "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}});
        keep_allocated(&mut same, &old);
        assert_eq!(
            (same["spec"]["ports"][0]["nodePort"].clone(), same["spec"]["ports"][1]["nodePort"].clone()),
            (json!(30080), json!(30443))
        );
        let mut cluster_ip = json!({"spec": {"type": "ClusterIP", "ports": [{"name": "http", "port": 80}]}});
        keep_allocated(&mut cluster_ip, &old);
        assert!(cluster_ip["spec"]["ports"][0].get("nodePort").is_none(), "a ClusterIP Service holds none");
    }
}
