//! A CustomResourceDefinition's checks, in kube's words
//! (apiextensions-apiserver's `ValidateCustomResourceDefinition`): the name
//! is `<plural>.<group>`, the group a domain, the scope known, the names DNS
//! labels, exactly one storage version, a structural schema for every
//! version, printer columns and scale paths well formed; on update, group
//! and plural never change (scope and kind neither once established).
//!
//! kube's v1 → internal conversion moves a schema, subresources and
//! columns shared by every version to the top of the spec, so their
//! problems are reported under `spec.validation`, `spec.subresources` and
//! `spec.additionalPrinterColumns`, and only under `spec.versions[i]` when
//! the versions differ; the same paths are used here.

use serde_json::{Value, json};

use super::{rule_cost, structural};
use crate::errors::Cause;
use crate::registry::kinds::field::{cause, forbidden, invalid, not_supported, required};
use crate::registry::kinds::webhook_client;
use crate::registry::metadata::{dns_1035_errors, dns_subdomain_errors};
use crate::runtime::jsonpath::JsonPath;
use crate::runtime::meta;

const SCOPES: [&str; 2] = ["Cluster", "Namespaced"];
const COLUMN_TYPES: &str = "boolean,date,integer,number,string";
const COLUMN_FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
const APPROVAL: &str = "api-approved.kubernetes.io";
const STRATEGIES: [&str; 2] = ["None", "Webhook"];
/// The ConversionReview versions this server speaks.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

pub fn validate(crd: &Value) -> Vec<Cause> {
    validate_with(crd, Leniency::default())
}

/// What an update lets through that a create does not (kube's validation
/// options): review versions all unknown to this server, kept from
/// before; a caBundle that is not PEM, unless the CRD was established with
/// a good one.
#[derive(Debug, Clone, Copy, Default)]
struct Leniency {
    unknown_review_versions: bool,
    invalid_ca_bundle_checked: bool,
}

fn validate_with(crd: &Value, leniency: Leniency) -> Vec<Cause> {
    let spec = &crd["spec"];
    let mut causes = name_causes(crd);
    causes.extend(group_causes(spec));
    if let Some(scope) = spec["scope"].as_str().filter(|s| !s.is_empty()) {
        if !SCOPES.contains(&scope) {
            causes.push(not_supported("spec.scope", scope, &SCOPES));
        }
    } else {
        causes.push(required("spec.scope", ""));
    }
    causes.extend(version_causes(spec));
    causes.extend(names_causes(&spec["names"], "spec.names", true));
    causes.extend(shared_causes(spec));
    causes.extend(conversion_causes(spec, leniency));
    causes.extend(approval_causes(crd));
    if spec["preserveUnknownFields"] == json!(true) {
        causes.push(invalid(
            "spec.preserveUnknownFields",
            &json!(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    causes
}

/// On update, what may never change, besides everything checked on create.
pub fn validate_update(new: &Value, old: &Value, established: bool) -> Vec<Cause> {
    let old_conversion = &old["spec"]["conversion"];
    let old_versions = strings(&old_conversion["webhook"]["conversionReviewVersions"]);
    let old_bundle = old_conversion["webhook"]["clientConfig"]["caBundle"].as_str().unwrap_or_default();
    let leniency = Leniency {
        unknown_review_versions: !old_versions.is_empty()
            && !old_versions.iter().any(|v| REVIEW_VERSIONS.contains(v)),
        invalid_ca_bundle_checked: established
            && (old_bundle.is_empty() || webhook_client::ca_bundle_causes(old_bundle, "").is_empty()),
    };
    let mut causes = validate_with(new, leniency);
    // kube lets schemas left as they were keep rules it would now find too
    // costly on their own (their total is still checked).
    if schemas(new) == schemas(old) {
        causes.retain(|cause| !rule_cost::is_per_expression(cause));
    }
    let mut immutable = vec![("spec.group", "/spec/group"), ("spec.names.plural", "/spec/names/plural")];
    if established {
        immutable.insert(0, ("spec.names.kind", "/spec/names/kind"));
        immutable.insert(0, ("spec.scope", "/spec/scope"));
    }
    for (field, pointer) in immutable {
        let (now, before) = (new.pointer(pointer), old.pointer(pointer));
        if now != before {
            causes.push(invalid(field, now.unwrap_or(&Value::Null), "field is immutable"));
        }
    }
    causes
}

/// Each version's schema, by version name.
fn schemas(crd: &Value) -> Vec<(&Value, &Value)> {
    let versions = crd["spec"]["versions"].as_array().into_iter().flatten();
    versions.map(|v| (&v["name"], &v["schema"])).collect()
}

/// `spec.conversion`, reported under kube's internal field names
/// (`spec.conversion.webhookClientConfig`, `.conversionReviewVersions`):
/// a known strategy; a webhook exactly when the strategy is Webhook,
/// reached at a URL or a Service, speaking a review version this server
/// speaks.
fn conversion_causes(spec: &Value, leniency: Leniency) -> Vec<Cause> {
    let conversion = &spec["conversion"];
    if conversion.is_null() {
        return Vec::new();
    }
    let mut causes = Vec::new();
    let strategy = conversion["strategy"].as_str().unwrap_or_default();
    if strategy != "None" && spec["preserveUnknownFields"] == json!(true) {
        causes.push(invalid(
            "spec.conversion.strategy",
            &json!(strategy),
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    match strategy {
        "" => causes.push(required("spec.conversion.strategy", "")),
        s if !STRATEGIES.contains(&s) => {
            causes.push(not_supported("spec.conversion.strategy", s, &STRATEGIES))
        }
        _ => {}
    }
    let webhook = &conversion["webhook"];
    let config = &webhook["clientConfig"];
    let versions = &webhook["conversionReviewVersions"];
    let at = "spec.conversion.webhookClientConfig";
    if strategy != "Webhook" {
        if config.is_object() {
            causes.push(forbidden(at, "should not be set when strategy is not set to Webhook"));
        }
        if !strings(versions).is_empty() {
            causes.push(forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        return causes;
    }
    if !config.is_object() {
        causes.push(required(at, "required when strategy is set to Webhook"));
    } else {
        causes.extend(client_config_causes(config, at, leniency));
    }
    causes.extend(review_version_causes(versions, leniency));
    causes
}

fn client_config_causes(config: &Value, at: &str, leniency: Leniency) -> Vec<Cause> {
    let service = &config["service"];
    let mut causes = match (config["url"].as_str(), service.is_object()) {
        (Some(url), false) => webhook_client::url_causes(url, &format!("{at}.url")),
        (None, true) => {
            let text = |key: &str| service[key].as_str().unwrap_or_default();
            let port = service["port"].as_i64().unwrap_or(443);
            // kube hands the CRD's Service name and namespace over in each
            // other's place, so a missing namespace is reported as a
            // missing name and the other way round.
            let (namespace, name) = (text("name"), text("namespace"));
            webhook_client::service_causes(
                &format!("{at}.service"),
                namespace,
                name,
                service["path"].as_str(),
                port,
            )
        }
        _ => vec![required(at, "exactly one of url or service is required")],
    };
    let bundle = config["caBundle"].as_str().unwrap_or_default();
    if !bundle.is_empty() && leniency.invalid_ca_bundle_checked {
        causes.extend(webhook_client::ca_bundle_causes(bundle, &format!("{at}.caBundle")));
    }
    causes
}

/// kube's `validateConversionReviewVersions`: some, no duplicates, each a
/// DNS-1035 label, and one this server speaks (unless an update keeps
/// ones it never spoke).
fn review_version_causes(value: &Value, leniency: Leniency) -> Vec<Cause> {
    let at = "spec.conversion.conversionReviewVersions";
    let versions = strings(value);
    if versions.is_empty() {
        return vec![required(at, "")];
    }
    let mut causes = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        let field = format!("{at}[{i}]");
        if versions[..i].contains(version) {
            causes.push(invalid(&field, &json!(version), "duplicate version"));
            continue;
        }
        for why in dns_1035_errors(version) {
            causes.push(invalid(&field, &json!(version), &why));
        }
    }
    if !leniency.unknown_review_versions && !versions.iter().any(|v| REVIEW_VERSIONS.contains(v)) {
        causes.push(invalid(at, value, "must include at least one of v1, v1beta1"));
    }
    causes
}

fn name_causes(crd: &Value) -> Vec<Cause> {
    let spec = &crd["spec"];
    let name = meta::name_of(crd);
    let wanted = format!(
        "{}.{}",
        spec["names"]["plural"].as_str().unwrap_or(""),
        spec["group"].as_str().unwrap_or("")
    );
    if name.is_empty() || name == wanted {
        return Vec::new();
    }
    vec![invalid("metadata.name", &json!(name), r#"must be spec.names.plural+"."+spec.group"#)]
}

fn group_causes(spec: &Value) -> Vec<Cause> {
    let group = spec["group"].as_str().unwrap_or_default();
    if group.is_empty() {
        return vec![required("spec.group", "")];
    }
    let errors = dns_subdomain_errors(group);
    if !errors.is_empty() {
        return vec![invalid("spec.group", &json!(group), &errors.join(","))];
    }
    if !group.contains('.') {
        return vec![invalid("spec.group", &json!(group), "should be a domain with at least one dot")];
    }
    Vec::new()
}

/// Groups kube keeps for itself need their API review's approval.
fn approval_causes(crd: &Value) -> Vec<Cause> {
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let protected =
        ["k8s.io", "kubernetes.io"].iter().any(|g| group == *g || group.ends_with(&format!(".{g}")));
    let annotated = crd["metadata"]["annotations"][APPROVAL].as_str().is_some_and(|a| !a.is_empty());
    if !protected || annotated {
        return Vec::new();
    }
    vec![required(
        &format!("metadata.annotations[{APPROVAL}]"),
        &format!(
            "protected groups must have approval annotation {APPROVAL:?}, see https://github.com/kubernetes/enhancements/pull/1111"
        ),
    )]
}

fn version_causes(spec: &Value) -> Vec<Cause> {
    let versions = spec["versions"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut causes = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        if version["schema"]["openAPIV3Schema"].is_null() {
            causes.push(required(&format!("spec.versions[{i}].schema.openAPIV3Schema"), ""));
        }
    }
    let mut seen = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        let name = version["name"].as_str().unwrap_or_default();
        let errors = dns_1035_errors(name);
        if !errors.is_empty() {
            causes.push(invalid(&format!("spec.versions[{i}].name"), &json!(name), &errors.join(",")));
        }
        causes.extend(own_causes(versions, i));
        seen.push(name);
    }
    let unique = seen.iter().enumerate().all(|(i, name)| !seen[..i].contains(name));
    let storage = versions.iter().filter(|v| v["storage"] == json!(true)).count();
    let shown = internal_versions(versions);
    let versions_invalid =
        |why: &str| cause("FieldValueInvalid", "spec.versions", format!("Invalid value: {shown}: {why}"));
    if !unique {
        causes.push(versions_invalid("must contain unique version names"));
    }
    if storage != 1 {
        causes.push(versions_invalid("must have exactly one version marked as storage version"));
    }
    causes
}

/// The versions as kube prints them in an error: JSON of its internal
/// type, whose fields have no JSON names and keep their declared order
/// (the per-version schema, subresources and columns are shown as moved to
/// the top of the spec).
fn internal_versions(versions: &[Value]) -> String {
    let shown: Vec<String> = versions
        .iter()
        .map(|v| {
            format!(
                r#"{{"Name":{},"Served":{},"Storage":{},"Deprecated":{},"DeprecationWarning":{},"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}}"#,
                json!(v["name"].as_str().unwrap_or_default()),
                v["served"] == json!(true),
                v["storage"] == json!(true),
                v["deprecated"] == json!(true),
                v["deprecationWarning"],
            )
        })
        .collect();
    format!("[{}]", shown.join(","))
}

/// Names checks (also applied to `status.acceptedNames`, where nothing is
/// required).
pub fn names_causes(names: &Value, at: &str, required_names: bool) -> Vec<Cause> {
    let text = |key: &str| names[key].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    if required_names {
        for key in ["plural", "singular", "kind", "listKind"] {
            if text(key).is_empty() {
                causes.push(required(&format!("{at}.{key}"), ""));
            }
        }
    }
    for key in ["plural", "singular"] {
        let errors = dns_1035_errors(text(key));
        if !text(key).is_empty() && !errors.is_empty() {
            causes.push(invalid(&format!("{at}.{key}"), &json!(text(key)), &errors.join(",")));
        }
    }
    for key in ["kind", "listKind"] {
        let errors = dns_1035_errors(&text(key).to_lowercase());
        if !text(key).is_empty() && !errors.is_empty() {
            let why = format!("may have mixed case, but should otherwise match: {}", errors.join(","));
            causes.push(invalid(&format!("{at}.{key}"), &json!(text(key)), &why));
        }
    }
    for (i, short) in strings(&names["shortNames"]).iter().enumerate() {
        let errors = dns_1035_errors(short);
        if !errors.is_empty() {
            causes.push(invalid(&format!("{at}.shortNames[{i}]"), &json!(short), &errors.join(",")));
        }
    }
    if !text("kind").is_empty() && text("kind") == text("listKind") {
        causes.push(invalid(
            &format!("{at}.listKind"),
            &json!(text("listKind")),
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in strings(&names["categories"]).iter().enumerate() {
        let errors = dns_1035_errors(category);
        if !errors.is_empty() {
            causes.push(invalid(&format!("{at}.categories[{i}]"), &json!(category), &errors.join(",")));
        }
    }
    causes
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// Whether every version has the same `key`: kube then moves it to the top
/// of the spec and reports it there, once.
fn shared(versions: &[Value], key: &str) -> bool {
    versions.windows(2).all(|pair| pair[0][key] == pair[1][key])
}

/// What version `i` has of its own (not shared with every other version),
/// under `spec.versions[i]`.
fn own_causes(versions: &[Value], i: usize) -> Vec<Cause> {
    let version = &versions[i];
    let at = format!("spec.versions[{i}]");
    let mut causes = Vec::new();
    if !shared(versions, "schema") {
        let status_enabled = if shared(versions, "subresources") {
            versions.iter().any(|v| v["subresources"]["status"].is_object())
        } else {
            version["subresources"]["status"].is_object()
        };
        causes.extend(schema_causes(version, &format!("{at}.schema"), status_enabled));
    }
    if !shared(versions, "subresources") {
        causes.extend(scale_causes(&version["subresources"]["scale"], &format!("{at}.subresources")));
    }
    if !shared(versions, "additionalPrinterColumns") {
        causes.extend(columns_causes(version, &format!("{at}.additionalPrinterColumns")));
    }
    causes
}

/// What every version shares, reported once under the top of the spec;
/// the status subresource of any version restricts a shared schema's root.
fn shared_causes(spec: &Value) -> Vec<Cause> {
    let versions = spec["versions"].as_array().map(Vec::as_slice).unwrap_or_default();
    let Some(first) = versions.first() else { return Vec::new() };
    let mut causes = Vec::new();
    if shared(versions, "schema") {
        let status_enabled = versions.iter().any(|v| v["subresources"]["status"].is_object());
        causes.extend(schema_causes(first, "spec.validation", status_enabled));
    }
    if shared(versions, "subresources") {
        causes.extend(scale_causes(&first["subresources"]["scale"], "spec.subresources"));
    }
    if shared(versions, "additionalPrinterColumns") {
        causes.extend(columns_causes(first, "spec.additionalPrinterColumns"));
    }
    causes
}

fn schema_causes(version: &Value, at: &str, status_enabled: bool) -> Vec<Cause> {
    match version["schema"]["openAPIV3Schema"].as_object() {
        Some(schema) => structural::schema_causes(
            &Value::Object(schema.clone()),
            &format!("{at}.openAPIV3Schema"),
            status_enabled,
        ),
        None => Vec::new(),
    }
}

fn columns_causes(version: &Value, at: &str) -> Vec<Cause> {
    let columns = version["additionalPrinterColumns"].as_array().into_iter().flatten();
    columns.enumerate().flat_map(|(j, column)| column_causes(column, &format!("{at}[{j}]"))).collect()
}

fn column_causes(column: &Value, at: &str) -> Vec<Cause> {
    let text = |key: &str| column[key].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    if text("name").is_empty() {
        causes.push(required(&format!("{at}.name"), ""));
    }
    let why = format!("must be one of {COLUMN_TYPES}");
    match text("type") {
        "" => causes.push(required(&format!("{at}.type"), &why)),
        t if !COLUMN_TYPES.split(',').any(|c| c == t) => {
            causes.push(invalid(&format!("{at}.type"), &json!(t), &why))
        }
        _ => {}
    }
    let format = text("format");
    if !format.is_empty() && !COLUMN_FORMATS.split(',').any(|f| f == format) {
        causes.push(invalid(
            &format!("{at}.format"),
            &json!(format),
            &format!("must be one of {COLUMN_FORMATS}"),
        ));
    }
    let path = text("jsonPath");
    if path.is_empty() {
        causes.push(required(&format!("{at}.JSONPath"), ""));
    } else if let Some(cause) = simple_path_cause(path, &format!("{at}.JSONPath")) {
        causes.push(cause);
    } else if let Err(why) = JsonPath::parse(path) {
        // kube would take it and print nothing in the column; rtcd cannot
        // evaluate it at all, so says so up front.
        causes.push(invalid(&format!("{at}.JSONPath"), &json!(path), &why));
    }
    causes
}

/// kube's `validateSimpleJSONPath`.
fn simple_path_cause(path: &str, at: &str) -> Option<Cause> {
    if path.is_empty() {
        return Some(invalid(at, &json!(path), "must not be empty"));
    }
    (!path.starts_with('.')).then(|| invalid(at, &json!(path), "must be a simple json path starting with ."))
}

fn scale_causes(scale: &Value, at: &str) -> Vec<Cause> {
    if !scale.is_object() {
        return Vec::new();
    }
    let mut causes = Vec::new();
    let paths = [
        ("specReplicasPath", ".spec.", "should be a json path under .spec"),
        ("statusReplicasPath", ".status.", "should be a json path under .status"),
    ];
    for (key, under, why) in paths {
        let field = format!("{at}.scale.{key}");
        match scale[key].as_str().unwrap_or_default() {
            "" => causes.push(required(&field, "")),
            path => match simple_path_cause(path, &field) {
                Some(cause) => causes.push(cause),
                None if !path.starts_with(under) => causes.push(invalid(&field, &json!(path), why)),
                None => {}
            },
        }
    }
    if let Some(path) = scale["labelSelectorPath"].as_str().filter(|p| !p.is_empty()) {
        let field = format!("{at}.scale.labelSelectorPath");
        match simple_path_cause(path, &field) {
            Some(cause) => causes.push(cause),
            None if !path.starts_with(".spec.") && !path.starts_with(".status.") => causes.push(invalid(
                &field,
                &json!(path),
                "should be a json path under either .spec or .status",
            )),
            None => {}
        }
    }
    causes
}
