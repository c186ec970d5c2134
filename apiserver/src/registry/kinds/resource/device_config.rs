//! What DeviceClasses and claims both carry, checked as kube's
//! `pkg/apis/resource/validation` checks it: CEL device selectors, opaque
//! driver configuration, driver names and the qualified names of device
//! attributes and capacities.

use serde_json::{Value, json};

use crate::admission::cel;
use crate::errors::Cause;
use crate::registry::kinds::field;
use crate::registry::metadata::dns_subdomain_errors;

/// Selectors of one class or request.
pub const MAX_SELECTORS: usize = 32;
/// Configuration entries of one class or claim.
pub const MAX_CONFIGS: usize = 32;
const MAX_EXPRESSION_BYTES: usize = 10 * 1024;
const MAX_PARAMETERS_BYTES: usize = 10 * 1024;
const MAX_DRIVER_NAME: usize = 63;
const MAX_ID_BYTES: usize = 32;

/// `spec.selectors` (or a request's): each a CEL expression that compiles.
pub fn selector_causes(selectors: &Value, at: &str) -> Vec<Cause> {
    let selectors = items(selectors);
    if selectors.len() > MAX_SELECTORS {
        return vec![field::too_many(at, selectors.len(), MAX_SELECTORS)];
    }
    let mut causes = Vec::new();
    for (i, selector) in selectors.iter().enumerate() {
        let at = format!("{at}[{i}].cel");
        if !selector["cel"].is_object() {
            causes.push(field::required(&at, ""));
            continue;
        }
        let expression = selector["cel"]["expression"].as_str().unwrap_or_default();
        let at = format!("{at}.expression");
        if expression.len() > MAX_EXPRESSION_BYTES {
            causes.push(field::too_long(&at, MAX_EXPRESSION_BYTES));
        } else if let Err(why) = compile(expression) {
            causes.push(field::invalid(&at, &json!(expression), &format!("compilation failed: {why}")));
        }
    }
    causes
}

/// Whether the expression parses; an empty one does not (kube's compiler
/// refuses it as a syntax error too).
fn compile(expression: &str) -> Result<(), String> {
    if expression.trim().is_empty() {
        return Err("ERROR: <input>:1:1: Syntax error: mismatched input '<EOF>'".to_string());
    }
    cel::compile(expression).map(|_| ())
}

/// `spec.config` of a class, or of a claim where each entry may name the
/// requests it is for (`requests` holds the claim's request names).
pub fn config_causes(configs: &Value, at: &str, requests: Option<&RequestNames>) -> Vec<Cause> {
    let configs = items(configs);
    if configs.len() > MAX_CONFIGS {
        return vec![field::too_many(at, configs.len(), MAX_CONFIGS)];
    }
    let mut causes = Vec::new();
    for (i, config) in configs.iter().enumerate() {
        let at = format!("{at}[{i}]");
        if let Some(requests) = requests {
            causes.extend(requests.reference_causes(&config["requests"], &format!("{at}.requests")));
        }
        causes.extend(opaque_causes(&config["opaque"], &format!("{at}.opaque")));
    }
    causes
}

/// One `opaque` configuration: a driver and a JSON object of parameters.
pub fn opaque_causes(opaque: &Value, at: &str) -> Vec<Cause> {
    if !opaque.is_object() {
        return vec![field::required(at, "")];
    }
    let mut causes = driver_causes(&opaque["driver"], &format!("{at}.driver"));
    let at = format!("{at}.parameters");
    match &opaque["parameters"] {
        Value::Null => causes.push(field::required(&at, "")),
        Value::Object(_) if opaque["parameters"].to_string().len() > MAX_PARAMETERS_BYTES => {
            causes.push(field::too_long(&at, MAX_PARAMETERS_BYTES))
        }
        Value::Object(_) => {}
        _ => causes.push(field::invalid(&at, &json!("<value omitted>"), "must be a valid JSON object")),
    }
    causes
}

/// kube's `ValidateCSIDriverName`, which DRA driver names follow: at most
/// 63 bytes, a DNS subdomain once lowercased.
pub fn driver_causes(driver: &Value, at: &str) -> Vec<Cause> {
    let driver = driver.as_str().unwrap_or_default();
    if driver.is_empty() {
        return vec![field::required(at, "")];
    }
    if driver.len() > MAX_DRIVER_NAME {
        return vec![field::too_long(at, MAX_DRIVER_NAME)];
    }
    dns_subdomain_errors(&driver.to_lowercase())
        .iter()
        .map(|why| field::invalid(at, &json!(driver), why))
        .collect()
}

/// A device attribute's or capacity's name: a C identifier of at most 32
/// bytes, optionally behind a driver-like domain and one slash.
pub fn qualified_name_causes(name: &str, at: &str) -> Vec<Cause> {
    match name.split('/').collect::<Vec<_>>().as_slice() {
        [id] => identifier_causes(id, at),
        [domain, id] => domain_and_id_causes(domain, id, at),
        _ => vec![field::invalid(at, &json!(name), "must not contain more than one slash")],
    }
}

/// A name a constraint matches on: always a domain and an identifier.
pub fn fully_qualified_name_causes(name: &str, at: &str) -> Vec<Cause> {
    match name.split('/').collect::<Vec<_>>().as_slice() {
        [_] => vec![field::invalid(
            at,
            &json!(name),
            "a fully qualified name must be a domain and a name separated by a slash",
        )],
        [domain, id] => domain_and_id_causes(domain, id, at),
        _ => vec![field::invalid(at, &json!(name), "must not contain more than one slash")],
    }
}

fn domain_and_id_causes(domain: &str, id: &str, at: &str) -> Vec<Cause> {
    let mut causes = match domain {
        "" => vec![field::invalid(at, &json!(""), "the domain must not be empty")],
        domain => driver_causes(&json!(domain), at),
    };
    causes.extend(match id {
        "" => vec![field::invalid(at, &json!(""), "the name must not be empty")],
        id => identifier_causes(id, at),
    });
    causes
}

/// kube's `IsCIdentifier` with DRA's 32-byte limit.
fn identifier_causes(id: &str, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if id.len() > MAX_ID_BYTES {
        causes.push(field::too_long(at, MAX_ID_BYTES));
    }
    let mut chars = id.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !starts || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        causes.push(field::invalid(
            at,
            &json!(id),
            "a valid C identifier must start with alphabetic character or '_', followed by a string of \
             alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for \
             validation is '[A-Za-z_][A-Za-z0-9_]*')",
        ));
    }
    causes
}

/// The names of a claim's requests and of their subrequests, which its
/// constraints, configuration and allocation refer to.
#[derive(Debug, Default)]
pub struct RequestNames {
    names: Vec<String>,
}

impl RequestNames {
    pub fn of(requests: &Value) -> RequestNames {
        let mut names = Vec::new();
        for request in items(requests) {
            let name = request["name"].as_str().unwrap_or_default();
            names.push(name.to_string());
            for sub in items(&request["firstAvailable"]) {
                names.push(format!("{name}/{}", sub["name"].as_str().unwrap_or_default()));
            }
        }
        RequestNames { names }
    }

    pub fn contains(&self, reference: &str) -> bool {
        self.names.iter().any(|name| name == reference)
    }

    /// A list of request references: at most 32, no repeats, each naming a
    /// request (or `request/subrequest`) of the claim.
    pub fn reference_causes(&self, references: &Value, at: &str) -> Vec<Cause> {
        let references = items(references);
        if references.len() > super::claim_spec::MAX_REQUESTS {
            return vec![field::too_many(at, references.len(), super::claim_spec::MAX_REQUESTS)];
        }
        let mut causes = Vec::new();
        let mut seen = Vec::new();
        for (i, reference) in references.iter().enumerate() {
            let reference = reference.as_str().unwrap_or_default();
            let at = format!("{at}[{i}]");
            if seen.contains(&reference) {
                causes.push(field::duplicate(&at, reference));
                continue;
            }
            seen.push(reference);
            if !self.contains(reference) {
                causes.push(field::invalid(
                    &at,
                    &json!(reference),
                    "must be the name of a request in the claim or the name of a request and a subrequest \
                     separated by '/'",
                ));
            }
        }
        causes
    }
}

/// A list field's items (none when absent).
pub fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(causes: Vec<Cause>) -> Vec<String> {
        causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
    }

    #[test]
    fn selectors_must_be_cel_that_compiles() {
        let good = json!([{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]);
        assert!(selector_causes(&good, "spec.selectors").is_empty());
        let bad = json!([{}, {"cel": {"expression": "device.driver =="}}]);
        let got = texts(selector_causes(&bad, "spec.selectors"));
        assert_eq!(got[0], "spec.selectors[0].cel: Required value");
        assert!(
            got[1].starts_with(
                "spec.selectors[1].cel.expression: Invalid value: \"device.driver ==\": compilation failed: "
            ),
            "{got:?}"
        );
        let many = Value::Array(vec![good[0].clone(); 33]);
        assert_eq!(texts(selector_causes(&many, "s")), ["s: Too many: 33: must have at most 32 items"]);
    }

    #[test]
    fn opaque_configuration_names_a_driver_and_carries_an_object() {
        assert!(opaque_causes(&json!({"driver": "gpu.example.com", "parameters": {"a": 1}}), "o").is_empty());
        assert_eq!(
            texts(opaque_causes(&json!({"driver": "", "parameters": 5}), "o")),
            [
                "o.driver: Required value",
                "o.parameters: Invalid value: \"<value omitted>\": must be a valid JSON object"
            ]
        );
        assert_eq!(
            texts(opaque_causes(&json!({"driver": "Gpu.Example.com"}), "o")),
            ["o.parameters: Required value"]
        );
    }

    #[test]
    fn attribute_names_are_c_identifiers_behind_an_optional_domain() {
        assert!(qualified_name_causes("model", "a").is_empty());
        assert!(qualified_name_causes("gpu.example.com/numa_node", "a").is_empty());
        assert_eq!(
            texts(qualified_name_causes("/x", "a")),
            ["a: Invalid value: \"\": the domain must not be empty"]
        );
        assert_eq!(
            texts(qualified_name_causes("a/b/c", "a")),
            ["a: Invalid value: \"a/b/c\": must not contain more than one slash"]
        );
        assert!(texts(qualified_name_causes("9lives", "a"))[0].contains("a valid C identifier"));
        assert_eq!(
            texts(fully_qualified_name_causes("numa", "m")),
            [
                "m: Invalid value: \"numa\": a fully qualified name must be a domain and a name separated by a slash"
            ]
        );
    }

    #[test]
    fn references_name_requests_or_subrequests_once() {
        let names =
            RequestNames::of(&json!([{"name": "gpu", "firstAvailable": [{"name": "big"}]}, {"name": "nic"}]));
        assert!(names.reference_causes(&json!(["gpu", "gpu/big", "nic"]), "r").is_empty());
        assert_eq!(
            texts(names.reference_causes(&json!(["nic", "nic", "tpu"]), "r")),
            [
                "r[1]: Duplicate value: \"nic\"",
                "r[2]: Invalid value: \"tpu\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
            ]
        );
    }
}
