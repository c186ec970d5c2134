//! networking.k8s.io/v1 NetworkPolicies: which traffic the selected pods
//! accept and send. kube's defaults (the policy types a policy implies, TCP
//! ports) and the checks of its rules' ports and peers.

use k8s_openapi::api::networking::v1 as networking;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy, defaults};
use crate::selector::go_quote;
use crate::table::{self, Printer};

const KIND: &str = "NetworkPolicy.networking.k8s.io";
const POLICY_TYPES: [&str; 2] = ["Egress", "Ingress"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

pub fn kind() -> Kind {
    Kind::typed::<networking::NetworkPolicy>(
        Resource::new("networking.k8s.io", "NetworkPolicy", "networkpolicies").short_names(&["netpol"]),
        NetworkPolicyStrategy,
    )
}

#[derive(Debug)]
struct NetworkPolicyStrategy;

impl Strategy for NetworkPolicyStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::NETWORKING_V1_NETWORK_POLICY)
    }

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `SetDefaults_NetworkPolicy` and `_NetworkPolicyPort`: a policy
/// without policy types governs ingress, and egress too when it has egress
/// rules; a port without a protocol is TCP.
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    if spec["policyTypes"].as_array().is_none_or(Vec::is_empty) {
        let has_egress = spec["egress"].as_array().is_some_and(|rules| !rules.is_empty());
        spec["policyTypes"] = if has_egress { json!(["Ingress", "Egress"]) } else { json!(["Ingress"]) };
    }
    for direction in ["ingress", "egress"] {
        for rule in defaults::items(spec, direction) {
            for port in defaults::items(rule, "ports") {
                defaults::pointer(port, "protocol", json!("TCP"));
            }
        }
    }
}

/// kube's `ValidateNetworkPolicySpec`, for what clients most often get
/// wrong: policy types, ports and peers.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let types = table::arr_at(spec, &["policyTypes"]);
    for (i, kind) in types.iter().enumerate() {
        let kind = kind.as_str().unwrap_or_default();
        if !POLICY_TYPES.contains(&kind) {
            causes.push(field::not_supported(&format!("spec.policyTypes[{i}]"), kind, &POLICY_TYPES));
        }
    }
    if types.len() > 2 {
        // kube's field error prints the Go slice with `%#v`.
        let shown: Vec<String> = types.iter().filter_map(Value::as_str).map(go_quote).collect();
        let message = format!(
            "Invalid value: []networking.PolicyType{{{}}}: may not specify more than two policyTypes",
            shown.join(", ")
        );
        causes.push(field::cause("FieldValueInvalid", "spec.policyTypes", message));
    }
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in table::arr_at(spec, &[direction]).iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in table::arr_at(rule, &["ports"]).iter().enumerate() {
                causes.extend(port_causes(port, &format!("{at}.ports[{j}]")));
            }
            for (j, peer) in table::arr_at(rule, &[peers]).iter().enumerate() {
                causes.extend(peer_causes(peer, &format!("{at}.{peers}[{j}]")));
            }
        }
    }
    causes
}

/// A port's protocol and number, and its range: `endPort` only with a
/// numeric `port` it is not below.
fn port_causes(port: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(protocol) = port["protocol"].as_str().filter(|p| !PROTOCOLS.contains(p)) {
        causes.push(field::not_supported(&format!("{at}.protocol"), protocol, &PROTOCOLS));
    }
    if let Some(number) = port["port"].as_i64().filter(|p| !(1..=65535).contains(p)) {
        causes.push(field::invalid(
            &format!("{at}.port"),
            &number.into(),
            "must be between 1 and 65535, inclusive",
        ));
    }
    if let Some(end) = port["endPort"].as_i64() {
        let why = match &port["port"] {
            Value::Number(start) if start.as_i64().is_some_and(|start| start > end) => {
                Some("must be greater than or equal to `port`")
            }
            Value::Number(_) => None,
            Value::String(_) => Some("may not be specified when `port` is non-numeric"),
            _ => Some("may not be specified when `port` is not specified"),
        };
        causes.extend(why.map(|why| field::invalid(&format!("{at}.endPort"), &end.into(), why)));
    }
    causes
}

/// A peer names pods and/or namespaces by selector, or an IP block alone.
fn peer_causes(peer: &Value, at: &str) -> Vec<Cause> {
    let block = &peer["ipBlock"];
    let mut causes =
        if block.is_null() { Vec::new() } else { ip_block_causes(block, &format!("{at}.ipBlock")) };
    let peers =
        ["podSelector", "namespaceSelector", "ipBlock"].iter().filter(|k| !peer[**k].is_null()).count();
    if peers == 0 {
        causes.push(field::required(at, "must specify a peer"));
    } else if peers > 1 && !block.is_null() {
        causes.push(field::forbidden(at, "may not specify both ipBlock and another peer"));
    }
    causes
}

fn ip_block_causes(block: &Value, at: &str) -> Vec<Cause> {
    let cidr = block["cidr"].as_str().unwrap_or_default();
    if cidr.is_empty() {
        return vec![field::required(&format!("{at}.cidr"), "")];
    }
    let mut causes = Vec::new();
    if !is_cidr(cidr) {
        causes.push(field::invalid(
            &format!("{at}.cidr"),
            &json!(cidr),
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        ));
    }
    for (i, except) in table::arr_at(block, &["except"]).iter().enumerate() {
        let except = except.as_str().unwrap_or_default();
        if !is_cidr(except) {
            causes.push(field::invalid(
                &format!("{at}.except[{i}]"),
                &json!(except),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ));
        }
    }
    causes
}

/// An address and a prefix length that fits it.
fn is_cidr(text: &str) -> bool {
    let Some((address, bits)) = text.split_once('/') else { return false };
    let Ok(bits) = bits.parse::<u8>() else { return false };
    match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => bits <= 32,
        Ok(std::net::IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Pod-Selector", "string", "The pods the policy applies to."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let selector = table::format_selector(table::at(object, &["spec", "podSelector"]));
    vec![table::name(object), table::s(selector), table::age(object, now)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_types_and_protocols_default_as_kube_does() {
        let mut ingress_only = json!({"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}});
        set_defaults(&mut ingress_only);
        assert_eq!(ingress_only["spec"]["policyTypes"], json!(["Ingress"]));
        assert_eq!(ingress_only["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");
        let mut both = json!({"spec": {"podSelector": {}, "egress": [{}]}});
        set_defaults(&mut both);
        assert_eq!(both["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        let mut chosen = json!({"spec": {"podSelector": {}, "egress": [{}], "policyTypes": ["Egress"]}});
        set_defaults(&mut chosen);
        assert_eq!(chosen["spec"]["policyTypes"], json!(["Egress"]));
    }

    #[test]
    fn bad_rules_are_refused_with_kubes_texts() {
        let spec = json!({"podSelector": {}, "policyTypes": ["Sideways"],
            "ingress": [{"from": [{}, {"ipBlock": {"cidr": "10.0.0.0/33"}, "podSelector": {}}, {"ipBlock": {"cidr": "nope"}}],
                "ports": [{"protocol": "ICMP"}, {"port": "http", "endPort": 90}]}]});
        let messages: Vec<String> =
            spec_causes(&spec).iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            messages,
            [
                "spec.policyTypes[0]: Unsupported value: \"Sideways\": supported values: \"Egress\", \"Ingress\"",
                "spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
                "spec.ingress[0].from[2].ipBlock.cidr: Invalid value: \"nope\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ]
        );
        let fine = json!({"podSelector": {"matchLabels": {"app": "db"}}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}], "ports": [{"port": 5432, "endPort": 5440}]}]});
        assert!(spec_causes(&fine).is_empty());
    }

    #[test]
    fn policies_print_their_pod_selector() {
        let policy =
            json!({"metadata": {"name": "db"}, "spec": {"podSelector": {"matchLabels": {"app": "db"}}}});
        assert_eq!(PRINTER.cells(&policy, 0)[..2], [json!("db"), json!("app=db")]);
        let all = json!({"metadata": {"name": "all"}, "spec": {"podSelector": {}}});
        assert_eq!(PRINTER.cells(&all, 0)[1], json!("<none>"));
    }
}
