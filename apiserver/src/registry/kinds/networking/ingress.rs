//! networking.k8s.io/v1 Ingresses: HTTP routes from hosts and paths to
//! Services, served by whichever controller implements their class. Stored,
//! validated and printed as kube does (rules or a default backend, a path
//! type on every path, one kind of backend); `status` is the controller's.

use k8s_openapi::api::networking::v1 as networking;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::metadata::{dns_1035_errors, dns_subdomain_errors};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "Ingress.networking.k8s.io";
const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
/// kube's load balancer column width outside `-o wide`.
const ADDRESS_WIDTH: usize = 16;

pub fn kind() -> Kind {
    Kind::typed::<networking::Ingress>(
        Resource::new("networking.k8s.io", "Ingress", "ingresses").short_names(&["ing"]).with_status(),
        IngressStrategy,
    )
}

#[derive(Debug)]
struct IngressStrategy;

impl Strategy for IngressStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::NETWORKING_V1_INGRESS)
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidateIngressSpec`: a default backend or rules; each rule's
/// host a DNS name (a leading `*.` allowed), each path typed and backed.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let rules = table::arr_at(spec, &["rules"]);
    let mut causes = Vec::new();
    if rules.is_empty() && spec["defaultBackend"].is_null() {
        causes.push(field::cause(
            "FieldValueInvalid",
            "spec",
            "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified".into(),
        ));
    }
    if spec["defaultBackend"].is_object() {
        causes.extend(backend_causes(&spec["defaultBackend"], "spec.defaultBackend"));
    }
    if let Some(class) = spec["ingressClassName"].as_str() {
        for why in dns_subdomain_errors(class) {
            causes.push(field::invalid("spec.ingressClassName", &json!(class), &why));
        }
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        if let Some(host) = rule["host"].as_str().filter(|h| !h.is_empty()) {
            causes.extend(host_causes(host, &format!("{at}.host")));
        }
        for (j, path) in table::arr_at(rule, &["http", "paths"]).iter().enumerate() {
            causes.extend(path_causes(path, &format!("{at}.http.paths[{j}]")));
        }
    }
    causes
}

/// A host is a DNS name, not an IP address; `*.` may lead it.
fn host_causes(host: &str, at: &str) -> Vec<Cause> {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return vec![field::invalid(at, &json!(host), "must be a DNS name, not an IP address")];
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    let errors = dns_subdomain_errors(name);
    errors.iter().map(|why| field::invalid(at, &json!(host), why)).collect()
}

fn path_causes(path: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    // The typed decoding writes a missing path type as "" (k8s-openapi has
    // it required), so both read as kube's missing one.
    match path["pathType"].as_str().filter(|kind| !kind.is_empty()) {
        None => causes.push(field::required(&format!("{at}.pathType"), "pathType must be specified")),
        Some(kind) if !PATH_TYPES.contains(&kind) => {
            causes.push(field::not_supported(&format!("{at}.pathType"), kind, &PATH_TYPES));
        }
        Some("Exact" | "Prefix") => {
            let text = path["path"].as_str().unwrap_or_default();
            if !text.starts_with('/') {
                causes.push(field::invalid(&format!("{at}.path"), &json!(text), "must be an absolute path"));
            }
        }
        Some(_) => {}
    }
    causes.extend(backend_causes(&path["backend"], &format!("{at}.backend")));
    causes
}

/// kube's `ValidateIngressBackend`: a Service (by name, and port by name
/// or number) or a resource, not both.
fn backend_causes(backend: &Value, at: &str) -> Vec<Cause> {
    let (service, resource) = (&backend["service"], &backend["resource"]);
    match (service.is_object(), resource.is_object()) {
        (true, true) => vec![field::invalid(at, &json!(""), "cannot set both resource and service backends")],
        (false, false) => vec![field::invalid(at, &json!(""), "resource or service backend is required")],
        (false, true) => {
            let mut causes = Vec::new();
            for key in ["kind", "name"] {
                if resource[key].as_str().is_none_or(str::is_empty) {
                    causes.push(field::required(&format!("{at}.resource.{key}"), ""));
                }
            }
            causes
        }
        (true, false) => service_causes(service, at),
    }
}

fn service_causes(service: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    match service["name"].as_str().unwrap_or_default() {
        "" => causes.push(field::required(&format!("{at}.service.name"), "")),
        name => {
            for why in dns_1035_errors(name) {
                causes.push(field::invalid(&format!("{at}.service.name"), &json!(name), &why));
            }
        }
    }
    let port = &service["port"];
    let name = port["name"].as_str().unwrap_or_default();
    let number = port["number"].as_i64().unwrap_or(0);
    match (name.is_empty(), number) {
        (false, n) if n != 0 => {
            causes.push(field::invalid(at, &json!(""), "cannot set both port name & port number"))
        }
        (true, 0) => causes.push(field::required(at, "port name or number is required")),
        (true, n) if !(1..=65535).contains(&n) => causes.push(field::invalid(
            &format!("{at}.service.port.number"),
            &n.into(),
            "must be between 1 and 65535, inclusive",
        )),
        _ => {}
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Class", "string", "The IngressClass that implements the ingress."),
        table::col("Hosts", "string", "The hosts the ingress's rules match."),
        table::col("Address", "string", "The load balancer addresses the ingress is reachable at."),
        table::col("Ports", "string", "The ports the ingress serves (443 with TLS)."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let class = table::at(object, &["spec", "ingressClassName"]).and_then(Value::as_str).unwrap_or("<none>");
    let ports = if table::len_at(object, &["spec", "tls"]) > 0 { "80, 443" } else { "80" };
    vec![
        table::name(object),
        table::s(class),
        table::s(hosts(table::arr_at(object, &["spec", "rules"]))),
        table::s(address(table::arr_at(object, &["status", "loadBalancer", "ingress"]))),
        table::s(ports),
        table::age(object, now),
    ]
}

/// The first three hosts, then how many rules more when a rule follows
/// the third host (kube counts every rule, named or not); `*` for none.
fn hosts(rules: &[Value]) -> String {
    const SHOWN: usize = 3;
    let mut named = Vec::new();
    let mut more = false;
    for rule in rules {
        if named.len() == SHOWN {
            more = true;
            break;
        }
        named.extend(Some(table::str_at(rule, &["host"])).filter(|h| !h.is_empty()));
    }
    match (named.is_empty(), more) {
        (true, _) => "*".to_string(),
        (false, true) => format!("{} + {} more...", named.join(","), rules.len() - SHOWN),
        (false, false) => named.join(","),
    }
}

/// The load balancer's IPs (else hostnames), sorted and deduplicated,
/// clipped to kube's column width.
fn address(points: &[Value]) -> String {
    let mut found: Vec<&str> = points
        .iter()
        .map(|p| match table::str_at(p, &["ip"]) {
            "" => table::str_at(p, &["hostname"]),
            ip => ip,
        })
        .filter(|a| !a.is_empty())
        .collect();
    found.sort_unstable();
    found.dedup();
    let text = found.join(",");
    if text.len() > ADDRESS_WIDTH {
        // Clipped by characters: a hostname a controller wrote may not be ASCII.
        format!("{}...", text.chars().take(ADDRESS_WIDTH - 3).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(spec: Value) -> Vec<String> {
        spec_causes(&spec).iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
    }

    #[test]
    fn an_ingress_needs_rules_or_a_default_backend() {
        assert_eq!(
            messages(json!({})),
            [
                "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"
            ]
        );
        let fine = json!({"ingressClassName": "nginx", "rules": [{"host": "*.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]});
        assert!(messages(fine).is_empty());
    }

    #[test]
    fn paths_and_backends_are_checked_as_kube_checks_them() {
        let spec = json!({"rules": [{"host": "10.0.0.1", "http": {"paths": [
            {"path": "/a", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
            {"path": "api", "pathType": "Exact", "backend": {"service": {"name": "Web", "port": {"name": "http", "number": 80}}}},
            {"path": "/", "pathType": "Prefix", "backend": {}},
        ]}}]});
        assert_eq!(
            messages(spec),
            [
                "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
                "spec.rules[0].http.paths[1].path: Invalid value: \"api\": must be an absolute path",
                "spec.rules[0].http.paths[1].backend.service.name: Invalid value: \"Web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                "spec.rules[0].http.paths[1].backend: Invalid value: \"\": cannot set both port name & port number",
                "spec.rules[0].http.paths[2].backend: Invalid value: \"\": resource or service backend is required",
            ]
        );
    }

    #[test]
    fn ingresses_print_class_hosts_address_and_ports() {
        let ingress = json!({"metadata": {"name": "web"}, "spec": {"ingressClassName": "nginx",
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}, {}, {"host": "c.example.com"}, {"host": "d.example.com"}],
            "tls": [{"hosts": ["a.example.com"]}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}, {"hostname": "lb.example.com"}]}}});
        let cells = PRINTER.cells(&ingress, 0);
        assert_eq!(
            cells[..5],
            [
                json!("web"),
                json!("nginx"),
                json!("a.example.com,b.example.com,c.example.com + 2 more..."),
                json!("192.0.2.10,lb..."),
                json!("80, 443"),
            ]
        );
        assert_eq!(
            hosts(&[json!({"host": "a"}), json!({"host": "b"}), json!({}), json!({"host": "c"})]),
            "a,b,c"
        );
        let bare = json!({"metadata": {"name": "default"}, "spec": {"defaultBackend": {}}});
        assert_eq!(PRINTER.cells(&bare, 0)[1..5], [json!("<none>"), json!("*"), json!(""), json!("80")]);
    }
}
