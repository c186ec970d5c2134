//! A ResourceClaim's spec, alone or inside a ResourceClaimTemplate: the
//! device requests (each `exactly` one kind of device or the
//! `firstAvailable` of several alternatives), the constraints between them
//! and their configuration, defaulted and checked as kube does.

use serde_json::{Value, json};

use super::device_config::{self, RequestNames, items};
use crate::errors::Cause;
use crate::registry::defaults;
use crate::registry::kinds::field;
use crate::selector::validation::{label_value_errors, qualified_name_errors};

/// Requests of one claim, and constraints of one claim.
pub const MAX_REQUESTS: usize = 32;
const MAX_CONSTRAINTS: usize = 32;
const MAX_FIRST_AVAILABLE: usize = 8;
const ALLOCATION_MODES: [&str; 2] = ["All", "ExactCount"];
const TOLERATION_OPERATORS: [&str; 2] = ["Equal", "Exists"];
pub const TAINT_EFFECTS: [&str; 3] = ["NoExecute", "NoSchedule", "None"];

/// kube's `SetDefaults_ExactDeviceRequest` / `SetDefaults_DeviceSubRequest`
/// and the tolerations' `+default` for `spec` (a claim's spec).
pub fn set_defaults(spec: &mut Value) {
    let Some(devices) = defaults::present(spec, "devices") else { return };
    for request in defaults::items(devices, "requests") {
        if let Some(exactly) = defaults::present(request, "exactly") {
            default_request(exactly);
        }
        for sub in defaults::items(request, "firstAvailable") {
            default_request(sub);
        }
    }
}

fn default_request(request: &mut Value) {
    defaults::string(request, "allocationMode", "ExactCount");
    if request["allocationMode"] == "ExactCount" {
        defaults::integer(request, "count", 1);
    }
    set_toleration_defaults(request);
}

/// Tolerations say `Equal` unless they say otherwise.
pub fn set_toleration_defaults(holder: &mut Value) {
    for toleration in defaults::items(holder, "tolerations") {
        defaults::string(toleration, "operator", "Equal");
    }
}

/// `ValidateResourceClaimSpec` for the spec at `at` (`spec`, or a
/// template's `spec.spec`).
pub fn causes(spec: &Value, at: &str) -> Vec<Cause> {
    let devices = &spec["devices"];
    let at = format!("{at}.devices");
    let mut causes = request_causes(&devices["requests"], &format!("{at}.requests"));
    let names = RequestNames::of(&devices["requests"]);
    causes.extend(constraint_causes(&devices["constraints"], &format!("{at}.constraints"), &names));
    causes.extend(device_config::config_causes(&devices["config"], &format!("{at}.config"), Some(&names)));
    causes
}

fn request_causes(requests: &Value, at: &str) -> Vec<Cause> {
    let requests = items(requests);
    if requests.len() > MAX_REQUESTS {
        return vec![field::too_many(at, requests.len(), MAX_REQUESTS)];
    }
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let name = request["name"].as_str().unwrap_or_default();
        if seen.contains(&name) {
            causes.push(field::duplicate(&at, name));
        }
        seen.push(name);
        causes.extend(field::required_dns_label(name, &format!("{at}.name")));
        let exactly = request["exactly"].is_object();
        let first_available = !items(&request["firstAvailable"]).is_empty();
        match (exactly, first_available) {
            (false, false) => {
                causes.push(field::required(&at, "exactly one of `exactly` or `firstAvailable` is required"))
            }
            (true, true) => causes.push(field::invalid(
                &at,
                &Value::Null,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
            )),
            (true, false) => {
                causes.extend(exact_request_causes(&request["exactly"], &format!("{at}.exactly")))
            }
            (false, true) => causes
                .extend(first_available_causes(&request["firstAvailable"], &format!("{at}.firstAvailable"))),
        }
    }
    causes
}

fn first_available_causes(subrequests: &Value, at: &str) -> Vec<Cause> {
    let subrequests = items(subrequests);
    if subrequests.len() > MAX_FIRST_AVAILABLE {
        return vec![field::too_many(at, subrequests.len(), MAX_FIRST_AVAILABLE)];
    }
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (j, sub) in subrequests.iter().enumerate() {
        let at = format!("{at}[{j}]");
        let name = sub["name"].as_str().unwrap_or_default();
        if seen.contains(&name) {
            causes.push(field::duplicate(&at, name));
        }
        seen.push(name);
        causes.extend(field::required_dns_label(name, &format!("{at}.name")));
        causes.extend(exact_request_causes(sub, &at));
    }
    causes
}

/// What `exactly` and each `firstAvailable` alternative share: a class,
/// selectors, how many devices, tolerations.
fn exact_request_causes(request: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let class = request["deviceClassName"].as_str().unwrap_or_default();
    causes.extend(field::required_dns_subdomain(class, &format!("{at}.deviceClassName")));
    causes.extend(device_config::selector_causes(&request["selectors"], &format!("{at}.selectors")));
    let count = request["count"].as_i64().unwrap_or(0);
    match request["allocationMode"].as_str().unwrap_or_default() {
        "All" if count != 0 => causes.push(field::invalid(
            &format!("{at}.count"),
            &json!(count),
            "must not be specified when allocationMode is 'All'",
        )),
        "All" => {}
        "ExactCount" if count <= 0 => {
            causes.push(field::invalid(&format!("{at}.count"), &json!(count), "must be greater than zero"))
        }
        "ExactCount" => {}
        other => causes.push(field::not_supported(&format!("{at}.allocationMode"), other, &ALLOCATION_MODES)),
    }
    causes.extend(toleration_causes(&request["tolerations"], &format!("{at}.tolerations")));
    causes
}

/// A request's (or an allocation result's) tolerations of device taints.
pub fn toleration_causes(tolerations: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (k, toleration) in items(tolerations).iter().enumerate() {
        let at = format!("{at}[{k}]");
        let key = toleration["key"].as_str().unwrap_or_default();
        if !key.is_empty() {
            for why in qualified_name_errors(key) {
                causes.push(field::invalid(&format!("{at}.key"), &json!(key), &why));
            }
        }
        let value = toleration["value"].as_str().unwrap_or_default();
        match toleration["operator"].as_str().unwrap_or_default() {
            "Exists" if !value.is_empty() => causes.push(field::invalid(
                &format!("{at}.value"),
                &json!(value),
                "must be empty for operator `Exists`",
            )),
            "Exists" => {}
            "Equal" => {
                for why in label_value_errors(value) {
                    causes.push(field::invalid(&format!("{at}.value"), &json!(value), &why));
                }
            }
            "" => causes.push(field::required(&format!("{at}.operator"), "")),
            other => {
                causes.push(field::not_supported(&format!("{at}.operator"), other, &TOLERATION_OPERATORS))
            }
        }
        match toleration["effect"].as_str().unwrap_or_default() {
            "" => {}
            effect if TAINT_EFFECTS.contains(&effect) => {}
            other => causes.push(field::not_supported(&format!("{at}.effect"), other, &TAINT_EFFECTS)),
        }
    }
    causes
}

fn constraint_causes(constraints: &Value, at: &str, names: &RequestNames) -> Vec<Cause> {
    let constraints = items(constraints);
    if constraints.len() > MAX_CONSTRAINTS {
        return vec![field::too_many(at, constraints.len(), MAX_CONSTRAINTS)];
    }
    let mut causes = Vec::new();
    for (i, constraint) in constraints.iter().enumerate() {
        let at = format!("{at}[{i}]");
        causes.extend(names.reference_causes(&constraint["requests"], &format!("{at}.requests")));
        let matched = constraint["matchAttribute"].as_str();
        let distinct = constraint["distinctAttribute"].as_str();
        match (matched, distinct) {
            (None, None) => causes.push(field::required(
                &at,
                "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set",
            )),
            (matched, distinct) => {
                for (key, name) in [("matchAttribute", matched), ("distinctAttribute", distinct)] {
                    if let Some(name) = name {
                        causes.extend(device_config::fully_qualified_name_causes(name, &format!("{at}.{key}")));
                    }
                }
            }
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(causes: Vec<Cause>) -> Vec<String> {
        causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
    }

    #[test]
    fn requests_are_defaulted_to_one_device() {
        let mut spec = json!({"devices": {"requests": [
            {"name": "a", "exactly": {"deviceClassName": "gpu", "tolerations": [{"key": "k", "value": "v"}]}},
            {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
            {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}]}
        ]}});
        set_defaults(&mut spec);
        let requests = &spec["devices"]["requests"];
        assert_eq!(requests[0]["exactly"]["allocationMode"], "ExactCount");
        assert_eq!(requests[0]["exactly"]["count"], 1);
        assert_eq!(requests[0]["exactly"]["tolerations"][0]["operator"], "Equal");
        assert!(requests[1]["exactly"].get("count").is_none(), "All asks for no count");
        assert_eq!(requests[2]["firstAvailable"][0]["count"], 1);
        assert!(causes(&spec, "spec").is_empty(), "{:?}", texts(causes(&spec, "spec")));
    }

    #[test]
    fn each_request_is_exactly_one_thing() {
        let spec = json!({"devices": {"requests": [
            {"name": "a"},
            {"name": "a", "exactly": {"deviceClassName": "gpu", "allocationMode": "All", "count": 2},
             "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}]},
            {"name": "Bad_Name", "exactly": {"allocationMode": "Some", "count": 1}}
        ]}});
        let got = texts(causes(&spec, "spec"));
        assert_eq!(
            got,
            [
                "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required",
                "spec.devices.requests[1]: Duplicate value: \"a\"",
                "spec.devices.requests[1]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
                "spec.devices.requests[2].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.devices.requests[2].exactly.deviceClassName: Required value",
                "spec.devices.requests[2].exactly.allocationMode: Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\"",
            ]
        );
        let all = json!({"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "gpu", "allocationMode": "All", "count": 2}}]}});
        assert_eq!(
            texts(causes(&all, "spec")),
            [
                "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"
            ]
        );
    }

    #[test]
    fn constraints_name_requests_and_an_attribute() {
        let spec = json!({"devices": {
            "requests": [{"name": "a", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}],
            "constraints": [{"requests": ["a", "b"]}, {"matchAttribute": "gpu.example.com/numa"}]
        }});
        assert_eq!(
            texts(causes(&spec, "spec")),
            [
                "spec.devices.constraints[0].requests[1]: Invalid value: \"b\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
                "spec.devices.constraints[0]: Required value: exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set",
            ]
        );
    }

    #[test]
    fn tolerations_follow_kube_rules() {
        let tolerations = json!([
            {"key": "k", "operator": "Exists", "value": "v"},
            {"key": "k", "operator": "Less"},
            {"key": "k", "operator": "Equal", "effect": "Evict"}
        ]);
        assert_eq!(
            texts(toleration_causes(&tolerations, "t")),
            [
                "t[0].value: Invalid value: \"v\": must be empty for operator `Exists`",
                "t[1].operator: Unsupported value: \"Less\": supported values: \"Equal\", \"Exists\"",
                "t[2].effect: Unsupported value: \"Evict\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"",
            ]
        );
    }
}
