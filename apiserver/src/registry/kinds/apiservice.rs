//! apiregistration.k8s.io/v1 APIServices: which server serves an API
//! group version. A local one (no `spec.service`) is served by this server
//! itself; kube's autoregistration keeps one for every built-in and custom
//! resource group version (`controllers::apiservices`). One naming a
//! Service hands its group version to an extension API server.

use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use serde_json::{Value, json};

use super::Kind;
use super::field::{invalid, not_supported, refuse as refuse_with, required};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::TypeNode;
use crate::registry::metadata::{dns_1035_errors, dns_subdomain_errors};
use crate::registry::strategy::NameRule;
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::table::{self, Printer};

pub const GROUP: &str = "apiregistration.k8s.io";
/// The condition kube's availability controllers keep.
pub const AVAILABLE: &str = "Available";
const CONDITION_STATUSES: [&str; 3] = ["True", "False", "Unknown"];

pub fn kind() -> Kind {
    let resource = Resource::new(GROUP, "APIService", "apiservices")
        .cluster_scoped()
        .in_api_extensions()
        .stored_under("apiregistration.k8s.io/apiservices")
        .with_status();
    Kind::typed::<APIService>(resource, ApiServiceStrategy)
}

/// The APIService's name for `group`/`version`: `version.group`.
pub fn name_for(group: &str, version: &str) -> String {
    format!("{version}.{group}")
}

/// Whether `service` is served by this server itself.
pub fn is_local(service: &Value) -> bool {
    service["spec"]["service"].is_null()
}

/// The `Available` condition, if set.
pub fn available(service: &Value) -> Option<&Value> {
    service["status"]["conditions"].as_array()?.iter().find(|c| c["type"] == AVAILABLE)
}

#[derive(Debug)]
struct ApiServiceStrategy;

fn refuse(object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    refuse_with("APIService.apiregistration.k8s.io", object, causes)
}

impl Strategy for ApiServiceStrategy {
    /// kubectl's client-side apply patches a built-in kind strategically.
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        crate::patch::strategic_schema::for_kind(GROUP, "APIService")
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    /// kube's v1 default: a Service's port is 443.
    fn set_defaults(&self, object: &mut Value) {
        if let Some(service) = object.pointer_mut("/spec/service").filter(|s| s.is_object())
            && service["port"].is_null()
        {
            service["port"] = json!(443);
        }
    }

    /// Status is the availability controllers' to write.
    fn prepare_for_create(&self, object: &mut Value) {
        if object.is_object() {
            object["status"] = json!({});
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if new.is_object() {
            new["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        refuse(object, spec_causes(object))
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Result<(), ApiError> {
        refuse(new, status_causes(&new["status"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidateAPIService`.
fn spec_causes(object: &Value) -> Vec<Cause> {
    let spec = &object["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let version = spec["version"].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    let name = meta::name_of(object);
    let wanted = name_for(group, version);
    if !name.is_empty() && name != wanted {
        let why = format!("must be `spec.version+\".\"+spec.group`: {}", crate::selector::go_quote(&wanted));
        causes.push(invalid("metadata.name", &json!(name), &why));
    }
    if group.is_empty() && version != "v1" {
        causes.push(required("spec.group", "only v1 may have an empty group and it better be legacy kube"));
    }
    if !group.is_empty() {
        causes
            .extend(dns_subdomain_errors(group).iter().map(|why| invalid("spec.group", &json!(group), why)));
    }
    causes.extend(dns_1035_errors(version).iter().map(|why| invalid("spec.version", &json!(version), why)));
    let group_priority = spec["groupPriorityMinimum"].as_i64().unwrap_or(0);
    if group_priority <= 0 || group_priority > 20000 {
        let why = "must be positive and less than 20000";
        causes.push(invalid("spec.groupPriorityMinimum", &json!(group_priority), why));
    }
    let version_priority = spec["versionPriority"].as_i64().unwrap_or(0);
    if version_priority <= 0 || version_priority > 1000 {
        let why = "must be positive and less than 1000";
        causes.push(invalid("spec.versionPriority", &json!(version_priority), why));
    }
    let ca_bundle = spec["caBundle"].as_str().unwrap_or_default();
    let skip_verify = spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false);
    let service = &spec["service"];
    if service.is_null() {
        if !ca_bundle.is_empty() {
            // kube counts the decoded bytes.
            let bytes = ca_bundle_bytes(ca_bundle);
            let why = "local APIServices may not have a caBundle";
            causes.push(invalid("spec.caBundle", &json!(format!("{bytes} bytes")), why));
        }
        if skip_verify {
            let why = "local APIServices may not have insecureSkipTLSVerify";
            causes.push(invalid("spec.insecureSkipTLSVerify", &json!(true), why));
        }
        return causes;
    }
    if service["namespace"].as_str().unwrap_or_default().is_empty() {
        causes.push(required("spec.service.namespace", ""));
    }
    if service["name"].as_str().unwrap_or_default().is_empty() {
        causes.push(required("spec.service.name", ""));
    }
    let port = service["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&port) {
        let why = "port is not valid: must be between 1 and 65535, inclusive";
        causes.push(invalid("spec.service.port", &json!(port), why));
    }
    if skip_verify && !ca_bundle.is_empty() {
        causes.push(invalid(
            "spec.insecureSkipTLSVerify",
            &json!(true),
            "may not be true if caBundle is present",
        ));
    }
    causes
}

/// The bytes a base64 `caBundle` holds.
fn ca_bundle_bytes(encoded: &str) -> usize {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(encoded).map_or(encoded.len(), |b| b.len())
}

/// kube's `ValidateAPIServiceStatus`: each condition's status is one of
/// kube's three.
fn status_causes(status: &Value) -> Vec<Cause> {
    let conditions = status["conditions"].as_array().into_iter().flatten().enumerate();
    conditions
        .filter_map(|(i, condition)| {
            let status = condition["status"].as_str().unwrap_or_default();
            (!CONDITION_STATUSES.contains(&status)).then(|| {
                not_supported(&format!("status.conditions[{i}].status"), status, &CONDITION_STATUSES)
            })
        })
        .collect()
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Service", "string", "The reference to the service that hosts this API endpoint."),
        table::col("Available", "string", "Whether this service is available."),
        table::AGE,
    ],
    cells,
};

/// `Local` or `namespace/name`; `True`, or the status with its reason.
fn cells(object: &Value, now: i64) -> Vec<Value> {
    let service = &object["spec"]["service"];
    let shown_service = match service.is_null() {
        true => "Local".to_string(),
        false => format!(
            "{}/{}",
            service["namespace"].as_str().unwrap_or_default(),
            service["name"].as_str().unwrap_or_default()
        ),
    };
    let available = match available(object) {
        None => "Unknown".to_string(),
        Some(c) if c["status"] == "True" => "True".to_string(),
        Some(c) => match (c["status"].as_str().unwrap_or_default(), c["reason"].as_str().unwrap_or_default())
        {
            (status, "") => status.to_string(),
            (status, reason) => format!("{status} ({reason})"),
        },
    };
    vec![table::name(object), table::s(&shown_service), table::s(&available), table::age(object, now)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name}, "spec": spec})
    }

    fn messages(object: &Value) -> Vec<String> {
        match ApiServiceStrategy.validate(object) {
            Ok(()) => Vec::new(),
            Err(ApiError::Invalid { causes, .. }) => {
                causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn local_and_remote_services_pass() {
        let local = service(
            "v1.apps",
            json!({"group": "apps", "version": "v1",
            "groupPriorityMinimum": 17800, "versionPriority": 15}),
        );
        assert_eq!(messages(&local), Vec::<String>::new());
        let core =
            service("v1.", json!({"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1}));
        assert_eq!(messages(&core), Vec::<String>::new());
        let mut remote = service(
            "v1beta1.metrics.k8s.io",
            json!({"group": "metrics.k8s.io", "version": "v1beta1",
            "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": true,
            "service": {"namespace": "kube-system", "name": "metrics-server"}}),
        );
        ApiServiceStrategy.set_defaults(&mut remote);
        assert_eq!(remote["spec"]["service"]["port"], 443);
        assert_eq!(messages(&remote), Vec::<String>::new());
    }

    #[test]
    fn bad_services_are_refused_with_kubes_texts() {
        let misnamed = service(
            "v1.other",
            json!({"group": "apps", "version": "v1",
            "groupPriorityMinimum": 0, "versionPriority": 1001}),
        );
        assert_eq!(
            messages(&misnamed),
            [
                r#"metadata.name: Invalid value: "v1.other": must be `spec.version+"."+spec.group`: "v1.apps""#,
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
            ]
        );
        let empty_group =
            service("v2.", json!({"version": "v2", "groupPriorityMinimum": 1, "versionPriority": 1}));
        assert_eq!(
            messages(&empty_group),
            ["spec.group: Required value: only v1 may have an empty group and it better be legacy kube"]
        );
        let local_with_tls = service(
            "v1.x.io",
            json!({"group": "x.io", "version": "v1",
            "groupPriorityMinimum": 1, "versionPriority": 1, "caBundle": "AAEC", "insecureSkipTLSVerify": true}),
        );
        assert_eq!(
            messages(&local_with_tls),
            [
                r#"spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle"#,
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
        let remote = service(
            "v1.x.io",
            json!({"group": "x.io", "version": "v1",
            "groupPriorityMinimum": 1, "versionPriority": 1, "caBundle": "AAEC", "insecureSkipTLSVerify": true,
            "service": {"port": 70000}}),
        );
        assert_eq!(
            messages(&remote),
            [
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
            ]
        );
    }

    #[test]
    fn status_and_columns_are_kubes() {
        let mut object = service(
            "v1beta1.metrics.k8s.io",
            json!({"group": "metrics.k8s.io", "version": "v1beta1",
            "groupPriorityMinimum": 100, "versionPriority": 100,
            "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}}),
        );
        object["status"] =
            json!({"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]});
        assert_eq!(
            PRINTER.cells(&object, 0)[1..3],
            [json!("kube-system/metrics-server"), json!("False (MissingEndpoints)")]
        );
        object["status"]["conditions"][0]["status"] = json!("Maybe");
        let refused =
            ApiServiceStrategy.validate_subresource_update(Some("status"), &object, &object).unwrap_err();
        let ApiError::Invalid { causes, .. } = refused else { panic!() };
        assert_eq!(
            causes[0].message,
            r#"Unsupported value: "Maybe": supported values: "True", "False", "Unknown""#
        );
        let local = service("v1.apps", json!({"group": "apps", "version": "v1"}));
        assert_eq!(PRINTER.cells(&local, 0)[1..3], [json!("Local"), json!("Unknown")]);
    }
}
