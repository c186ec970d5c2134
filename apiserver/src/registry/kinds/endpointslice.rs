//! discovery.k8s.io/v1 EndpointSlices: the addresses behind a Service, in
//! slices of at most a thousand, as kube-controller-manager's endpoint
//! slice controller writes them (and kube-proxy and DNS read them). kube's
//! defaults (unnamed TCP ports) and its checks of addresses and ports; the
//! address type never changes.

use k8s_openapi::api::discovery::v1 as discovery;
use serde_json::{Value, json};

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::metadata::dns_label_errors;
use crate::registry::{Resource, Strategy, defaults};
use crate::table::{self, Printer};

const KIND: &str = "EndpointSlice.discovery.k8s.io";
const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
/// How many ports and addresses the printer shows.
const SHOWN: usize = 3;

pub fn kind() -> Kind {
    Kind::typed::<discovery::EndpointSlice>(
        Resource::new("discovery.k8s.io", "EndpointSlice", "endpointslices"),
        EndpointSliceStrategy,
    )
}

#[derive(Debug)]
struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::DISCOVERY_V1_ENDPOINT_SLICE)
    }

    /// What a slice's generation counts: its addresses and ports.
    fn spec_changed(&self, old: &Value, new: &Value) -> bool {
        ["addressType", "endpoints", "ports"].iter().any(|key| old.get(key) != new.get(key))
    }

    /// kube's `SetDefaults_EndpointPort`.
    fn set_defaults(&self, object: &mut Value) {
        for port in defaults::items(object, "ports") {
            defaults::pointer(port, "name", json!(""));
            defaults::pointer(port, "protocol", json!("TCP"));
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(object))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        let changed = field::immutable("addressType", &new["addressType"], &old["addressType"]);
        field::refuse(KIND, new, changed.into_iter().collect())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

fn causes(slice: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let address_type = slice["addressType"].as_str().unwrap_or_default();
    match address_type {
        "" => causes.push(field::required("addressType", "")),
        kind if !ADDRESS_TYPES.contains(&kind) => {
            causes.push(field::not_supported("addressType", kind, &ADDRESS_TYPES))
        }
        _ => {}
    }
    let endpoints = table::arr_at(slice, &["endpoints"]);
    if endpoints.len() > MAX_ENDPOINTS {
        causes.push(field::too_many("endpoints", endpoints.len(), MAX_ENDPOINTS));
    }
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = format!("endpoints[{i}].addresses");
        let addresses = table::arr_at(endpoint, &["addresses"]);
        if addresses.is_empty() {
            causes.push(field::required(&at, "must contain at least 1 address"));
        } else if addresses.len() > MAX_ADDRESSES {
            causes.push(field::too_many(&at, addresses.len(), MAX_ADDRESSES));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or_default();
            if let Some(why) = address_error(address_type, address) {
                causes.push(field::invalid(&format!("{at}[{j}]"), &json!(address), why));
            }
        }
    }
    for (i, port) in table::arr_at(slice, &["ports"]).iter().enumerate() {
        let at = format!("ports[{i}]");
        if let Some(name) = port["name"].as_str().filter(|n| !n.is_empty()) {
            for why in dns_label_errors(name) {
                causes.push(field::invalid(&format!("{at}.name"), &json!(name), &why));
            }
        }
        if let Some(protocol) = port["protocol"].as_str().filter(|p| !PROTOCOLS.contains(p)) {
            causes.push(field::not_supported(&format!("{at}.protocol"), protocol, &PROTOCOLS));
        }
        if let Some(number) = port["port"].as_i64().filter(|p| !(1..=65535).contains(p)) {
            causes.push(field::invalid(
                &format!("{at}.port"),
                &json!(number),
                "must be between 1 and 65535, inclusive",
            ));
        }
    }
    causes
}

/// Why `address` is not one of `kind`, if it is not.
fn address_error(kind: &str, address: &str) -> Option<&'static str> {
    match kind {
        "IPv4" if address.parse::<std::net::Ipv4Addr>().is_err() => Some("must be a valid IPv4 address"),
        "IPv6" if address.parse::<std::net::Ipv6Addr>().is_err() => Some("must be a valid IPv6 address"),
        "FQDN" if !crate::registry::metadata::dns_subdomain_errors(address).is_empty() => {
            Some("must be a valid DNS subdomain")
        }
        _ => None,
    }
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("AddressType", "string", "The kind of addresses the slice holds."),
        table::col("Ports", "string", "The first ports of the slice."),
        table::col("Endpoints", "string", "The first addresses of the slice."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let ports: Vec<String> = table::arr_at(object, &["ports"])
        .iter()
        .map(|p| match (table::opt_int_at(p, &["port"]), table::str_at(p, &["name"])) {
            (Some(port), _) => port.to_string(),
            (None, "") if p["name"].is_null() => "*".to_string(),
            (None, name) => name.to_string(),
        })
        .collect();
    let addresses: Vec<String> = table::arr_at(object, &["endpoints"])
        .iter()
        .flat_map(|e| table::arr_at(e, &["addresses"]).iter().filter_map(Value::as_str).map(str::to_string))
        .collect();
    vec![
        table::name(object),
        table::s(table::str_at(object, &["addressType"])),
        table::s(first_few(&ports)),
        table::s(first_few(&addresses)),
        table::age(object, now),
    ]
}

/// kube's `listWithMoreString`: the first three, `+ N more...`, or
/// `<unset>` for none.
fn first_few(items: &[String]) -> String {
    match items.len() {
        0 => "<unset>".to_string(),
        n if n > SHOWN => format!("{} + {} more...", items[..SHOWN].join(","), n - SHOWN),
        _ => items.join(","),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(body: Value) -> Value {
        let mut object = json!({"metadata": {"name": "web-abc12"}});
        object.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
        object
    }

    #[test]
    fn ports_default_and_slices_print_as_kube_prints_them() {
        let mut s = slice(
            json!({"addressType": "IPv4", "ports": [{"port": 80}, {"port": 443, "name": "https"}],
            "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}, {"addresses": ["10.0.0.3"]}, {"addresses": ["10.0.0.4"]}]}),
        );
        EndpointSliceStrategy.set_defaults(&mut s);
        assert_eq!(s["ports"][0], json!({"port": 80, "name": "", "protocol": "TCP"}));
        assert!(EndpointSliceStrategy.validate(&s).is_ok());
        assert_eq!(
            PRINTER.cells(&s, 0)[..4],
            [
                json!("web-abc12"),
                json!("IPv4"),
                json!("80,443"),
                json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...")
            ]
        );
        let empty = slice(json!({"addressType": "IPv4"}));
        assert_eq!(PRINTER.cells(&empty, 0)[2..4], [json!("<unset>"), json!("<unset>")]);
    }

    #[test]
    fn addresses_match_their_type_and_the_type_never_changes() {
        let bad = slice(
            json!({"addressType": "IPv4", "endpoints": [{"addresses": ["fd00::1"]}, {"addresses": []}],
            "ports": [{"port": 0, "protocol": "ICMP"}]}),
        );
        let messages: Vec<String> =
            causes(&bad).iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            messages,
            [
                "endpoints[0].addresses[0]: Invalid value: \"fd00::1\": must be a valid IPv4 address",
                "endpoints[1].addresses: Required value: must contain at least 1 address",
                "ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            ]
        );
        let old = slice(json!({"addressType": "IPv4"}));
        let new = slice(json!({"addressType": "IPv6"}));
        let err = EndpointSliceStrategy.validate_update(&new, &old).unwrap_err().to_string();
        assert!(err.contains("addressType: Invalid value: \"IPv6\": field is immutable"), "{err}");
    }
}
