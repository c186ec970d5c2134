//! Services get a cluster IP from `--service-cluster-ip-range`, as
//! kube-apiserver's allocator gives them (Kubernetes 1.33+): each IP in use
//! is an IPAddress object under `/registry/ipaddresses/<ip>` naming its
//! Service, created if absent, so two Services never share one, and deleted
//! with the Service.

use std::net::Ipv4Addr;

use serde_json::{Value, json};

use crate::errors::ApiError;
use crate::registry::Resource;
use crate::registry::metadata::invalid;
use crate::runtime::meta;

/// An IPv4 range to allocate from (`10.0.0.0/24`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    base: u32,
    size: u32,
}

/// The range as a canonical CIDR (`10.0.0.0/24`), as the default
/// ServiceCIDR holds it.
impl std::fmt::Display for IpRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.base), 32 - self.size.trailing_zeros())
    }
}

impl IpRange {
    pub fn parse(cidr: &str) -> Result<IpRange, String> {
        let (addr, bits) = cidr.split_once('/').ok_or_else(|| format!("{cidr:?} is not a CIDR"))?;
        let addr: Ipv4Addr = addr.parse().map_err(|_| format!("{cidr:?}: not an IPv4 address"))?;
        let bits: u32 = bits.parse().map_err(|_| format!("{cidr:?}: bad prefix length"))?;
        if !(8..=30).contains(&bits) {
            return Err(format!("{cidr:?}: the prefix length must be between 8 and 30"));
        }
        let size = 1u32 << (32 - bits);
        Ok(IpRange { base: u32::from(addr) & !(size - 1), size })
    }

    /// The addresses to hand out: not the network or broadcast address.
    fn usable(&self) -> u32 {
        self.size - 2
    }

    /// The `n`th usable address, starting at `start` and wrapping.
    fn nth(&self, start: u32, n: u32) -> Ipv4Addr {
        Ipv4Addr::from(self.base + 1 + (start + n) % self.usable())
    }

    /// The first usable address: the `kubernetes` Service's.
    pub fn first(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.base + 1)
    }

    pub(super) fn contains(&self, ip: Ipv4Addr) -> bool {
        let ip = u32::from(ip);
        ip > self.base && ip < self.base + self.size - 1
    }

    /// Candidate addresses in the order to try them: from a random point,
    /// all of them once.
    pub fn candidates(&self) -> impl Iterator<Item = Ipv4Addr> + '_ {
        let seed = uuid::Uuid::new_v4().as_u128() as u32;
        let start = seed % self.usable();
        (0..self.usable()).map(move |n| self.nth(start, n))
    }
}

/// What a new Service asks of the allocator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterIp {
    /// Headless (`None`) or ExternalName: no address.
    NoAddress,
    Any,
    Exactly(Ipv4Addr),
}

/// Fills a new Service's defaults; what address it needs.
pub fn prepare(resource: &Resource, service: &mut Value, range: &IpRange) -> Result<ClusterIp, ApiError> {
    let name = meta::name_of(service).to_string();
    let spec = &mut service["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    if spec["type"] == "ExternalName" {
        return Ok(ClusterIp::NoAddress);
    }
    match spec["clusterIP"].as_str().unwrap_or_default() {
        "" => Ok(ClusterIp::Any),
        "None" => Ok(ClusterIp::NoAddress),
        given => {
            let invalid =
                |message: String| invalid(resource, &name, "FieldValueInvalid", "spec.clusterIPs", &message);
            let ip: Ipv4Addr = given
                .parse()
                .map_err(|_| invalid(format!("Invalid value: \"{given}\": must be a valid IP address")))?;
            if !range.contains(ip) {
                return Err(invalid(format!(
                    "Invalid value: [\"{given}\"]: failed to allocate IP {given}: the provided IP ({given}) is not in the valid range"
                )));
            }
            Ok(ClusterIp::Exactly(ip))
        }
    }
}

/// Writes the allocated address into the Service.
pub fn assign(service: &mut Value, ip: Ipv4Addr) {
    let spec = &mut service["spec"];
    spec["clusterIP"] = json!(ip.to_string());
    spec["clusterIPs"] = json!([ip.to_string()]);
    spec["ipFamilies"] = json!(["IPv4"]);
    spec["ipFamilyPolicy"] = json!("SingleStack");
}

/// The key of an allocated address.
pub fn address_key(etcd_prefix: &str, ip: Ipv4Addr) -> String {
    format!("{etcd_prefix}/ipaddresses/{ip}")
}

/// The IPAddress object recording who holds `ip`.
pub fn address_object(ip: Ipv4Addr, namespace: &str, service: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {
            "name": ip.to_string(),
            "labels": {"ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"},
            "uid": uuid::Uuid::new_v4().to_string(),
            "creationTimestamp": meta::now(),
        },
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": namespace, "name": service}},
    })
}

/// The address a stored Service holds, if any.
pub fn held_address(service: &Value) -> Option<Ipv4Addr> {
    service["spec"]["clusterIP"].as_str().and_then(|ip| ip.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_reads_back_as_its_canonical_cidr() {
        assert_eq!(IpRange::parse("10.96.3.7/12").unwrap().to_string(), "10.96.0.0/12");
    }

    #[test]
    fn ranges_hand_out_every_usable_address_once() {
        let range = IpRange::parse("10.0.0.0/29").unwrap();
        let mut all: Vec<Ipv4Addr> = range.candidates().collect();
        all.sort();
        let want: Vec<Ipv4Addr> = (1..=6).map(|i| Ipv4Addr::new(10, 0, 0, i)).collect();
        assert_eq!(all, want);
        assert!(IpRange::parse("10.0.0.0").is_err());
        assert!(IpRange::parse("10.0.0.0/31").is_err());
    }

    #[test]
    fn services_get_checked_addresses() {
        let services = &Resource::new("", "Service", "services");
        let range = IpRange::parse("10.0.0.0/24").unwrap();
        let mut svc = json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}});
        assert_eq!(prepare(services, &mut svc, &range).unwrap(), ClusterIp::Any);
        let mut headless = json!({"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}});
        assert_eq!(prepare(services, &mut headless, &range).unwrap(), ClusterIp::NoAddress);
        let mut fixed = json!({"metadata": {"name": "f"}, "spec": {"clusterIP": "10.0.0.9"}});
        assert_eq!(
            prepare(services, &mut fixed, &range).unwrap(),
            ClusterIp::Exactly(Ipv4Addr::new(10, 0, 0, 9))
        );
        let mut outside = json!({"metadata": {"name": "o"}, "spec": {"clusterIP": "192.168.0.1"}});
        assert_eq!(prepare(services, &mut outside, &range).unwrap_err().code(), 422);
    }
}
