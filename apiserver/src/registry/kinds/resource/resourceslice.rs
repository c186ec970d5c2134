//! resource.k8s.io/v1 ResourceSlices: the devices a DRA driver publishes,
//! one pool per node (or per set of nodes), for kube-scheduler to allocate
//! from. Written by the drivers' kubelet plugins and controllers; the
//! driver, the pool and the node never change once published.

use k8s_openapi::api::resource::v1 as resource;
use serde_json::{Value, json};

use super::claim_spec::TAINT_EFFECTS;
use super::device_config::{self, items};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults;
use crate::registry::kinds::{Kind, field};
use crate::registry::metadata::dns_subdomain_errors;
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::selector::validation::{label_value_errors, qualified_name_errors};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

const KIND: &str = "ResourceSlice.resource.k8s.io";
const MAX_DEVICES: usize = 128;
/// Attributes and capacities of one device together.
const MAX_ATTRIBUTES_AND_CAPACITIES: usize = 32;
const MAX_ATTRIBUTE_VALUE_BYTES: usize = 64;
const MAX_POOL_NAME: usize = 253;
const MAX_TAINTS: usize = 16;
/// The ways a slice says which nodes reach its devices; exactly one is set.
const NODE_SELECTION: [&str; 4] = ["nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"];
const ONE_NODE_SELECTION: &str =
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";

pub fn kind() -> Kind {
    Kind::typed::<resource::ResourceSlice>(
        Resource::new("resource.k8s.io", "ResourceSlice", "resourceslices")
            .cluster_scoped()
            .returns_deleted_object(),
        ResourceSliceStrategy,
    )
}

/// What kubelets and drivers select slices by (kube's resource v1
/// conversion funcs).
pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &["metadata.name", "spec.nodeName", "spec.driver"],
    refusal: Refusal::ForKind("resource.k8s.io/v1, Kind=ResourceSlice"),
    aliases: &[],
    cluster_scoped: true,
    value: |object, field| match field {
        "spec.nodeName" => Some(attrs::text(object, &["spec", "nodeName"])),
        "spec.driver" => Some(attrs::text(object, &["spec", "driver"])),
        _ => None,
    },
};

#[derive(Debug)]
struct ResourceSliceStrategy;

impl Strategy for ResourceSliceStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::RESOURCE_V1_RESOURCE_SLICE)
    }

    /// kube's `SetDefaults_DeviceTaint`: a taint without a time was added now.
    fn set_defaults(&self, object: &mut Value) {
        let Some(spec) = defaults::present(object, "spec") else { return };
        for device in defaults::items(spec, "devices") {
            for taint in defaults::items(device, "taints") {
                defaults::pointer(taint, "timeAdded", json!(meta::now()));
            }
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    /// kube's `ValidateResourceSliceUpdate`: the driver, the pool's name and
    /// the node stay; the devices may change.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut causes = spec_causes(&new["spec"]);
        for (at, path) in [
            ("spec.driver", "/spec/driver"),
            ("spec.pool.name", "/spec/pool/name"),
            ("spec.nodeName", "/spec/nodeName"),
        ] {
            let (now, was) =
                (new.pointer(path).unwrap_or(&Value::Null), old.pointer(path).unwrap_or(&Value::Null));
            causes.extend(field::immutable(at, now, was));
        }
        field::refuse(KIND, new, causes)
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = device_config::driver_causes(&spec["driver"], "spec.driver");
    causes.extend(pool_causes(&spec["pool"]));
    causes.extend(node_selection_causes(spec));
    if !spec["sharedCounters"].is_null() && !spec["devices"].is_null() {
        causes.push(field::invalid(
            "spec",
            &json!(""),
            "only one of `sharedCounters` or `devices` is allowed",
        ));
    }
    causes.extend(devices_causes(&spec["devices"]));
    causes
}

fn pool_causes(pool: &Value) -> Vec<Cause> {
    let mut causes = pool_name_causes(&pool["name"], "spec.pool.name");
    let generation = pool["generation"].as_i64().unwrap_or(0);
    if generation < 0 {
        causes.push(field::invalid(
            "spec.pool.generation",
            &json!(generation),
            "must be greater than or equal to zero",
        ));
    }
    let count = pool["resourceSliceCount"].as_i64().unwrap_or(0);
    if count <= 0 {
        causes.push(field::invalid(
            "spec.pool.resourceSliceCount",
            &json!(count),
            "must be greater than zero",
        ));
    }
    causes
}

/// A pool's name: DNS subdomains separated by slashes, 253 bytes at most.
pub fn pool_name_causes(name: &Value, at: &str) -> Vec<Cause> {
    let name = name.as_str().unwrap_or_default();
    if name.is_empty() {
        return vec![field::required(at, "")];
    }
    if name.len() > MAX_POOL_NAME {
        return vec![field::too_long(at, MAX_POOL_NAME)];
    }
    let mut causes = Vec::new();
    for part in name.split('/') {
        for why in dns_subdomain_errors(part) {
            causes.push(field::invalid(at, &json!(part), &why));
        }
    }
    causes
}

/// Exactly one of the four node selections, each in its own form.
fn node_selection_causes(spec: &Value) -> Vec<Cause> {
    let set: Vec<&str> = NODE_SELECTION.iter().copied().filter(|key| !spec[*key].is_null()).collect();
    let mut causes = Vec::new();
    match set.as_slice() {
        [] => causes.push(field::required("spec", ONE_NODE_SELECTION)),
        [_] => {}
        many => {
            let named: Vec<String> = many.iter().map(|key| format!("`{key}`")).collect();
            causes.push(field::invalid(
                "spec",
                &json!(format!("{{{}}}", named.join(", "))),
                &format!("{ONE_NODE_SELECTION}, but multiple fields are set"),
            ));
        }
    }
    match spec["nodeName"].as_str() {
        Some("") => causes.push(field::invalid(
            "spec.nodeName",
            &json!(""),
            "must be either unset or set to a non-empty string",
        )),
        Some(node) => {
            for why in dns_subdomain_errors(node) {
                causes.push(field::invalid("spec.nodeName", &json!(node), &why));
            }
        }
        None => {}
    }
    for key in ["allNodes", "perDeviceNodeSelection"] {
        if spec[key] == json!(false) {
            causes.push(field::invalid(
                &format!("spec.{key}"),
                &json!(false),
                "must be either unset or set to true",
            ));
        }
    }
    let terms = items(&spec["nodeSelector"]["nodeSelectorTerms"]);
    if spec["nodeSelector"].is_object() && terms.len() != 1 {
        causes.push(field::invalid(
            "spec.nodeSelector.nodeSelectorTerms",
            &Value::Array(terms.to_vec()),
            "must have exactly one node selector term",
        ));
    }
    causes
}

fn devices_causes(devices: &Value) -> Vec<Cause> {
    let devices = items(devices);
    if devices.len() > MAX_DEVICES {
        return vec![field::too_many("spec.devices", devices.len(), MAX_DEVICES)];
    }
    let mut causes = Vec::new();
    let mut names = Vec::new();
    for (i, device) in devices.iter().enumerate() {
        let at = format!("spec.devices[{i}]");
        let name = device["name"].as_str().unwrap_or_default();
        if names.contains(&name) {
            causes.push(field::duplicate(&at, name));
        }
        names.push(name);
        causes.extend(device_causes(device, &at));
    }
    causes
}

/// One device: a DNS-label name, attributes each of one type, capacities,
/// taints.
fn device_causes(device: &Value, at: &str) -> Vec<Cause> {
    let name = device["name"].as_str().unwrap_or_default();
    let mut causes = field::required_dns_label(name, &format!("{at}.name"));
    let attributes = device["attributes"].as_object();
    let capacity = device["capacity"].as_object();
    let total = attributes.map_or(0, |a| a.len()) + capacity.map_or(0, |c| c.len());
    if total > MAX_ATTRIBUTES_AND_CAPACITIES {
        causes.push(field::invalid(
            at,
            &json!(total),
            &format!("the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"),
        ));
    }
    for (key, attribute) in attributes.into_iter().flatten() {
        let at = format!("{at}.attributes[{key}]");
        causes.extend(device_config::qualified_name_causes(key, &at));
        causes.extend(attribute_causes(attribute, &at));
    }
    for key in capacity.into_iter().flatten().map(|(key, _)| key) {
        causes.extend(device_config::qualified_name_causes(key, &format!("{at}.capacity[{key}]")));
    }
    causes.extend(taint_causes(&device["taints"], &format!("{at}.taints")));
    causes
}

/// An attribute holds exactly one value: an int, a bool, a string or a
/// semantic version.
fn attribute_causes(attribute: &Value, at: &str) -> Vec<Cause> {
    const TYPES: [&str; 8] = ["int", "bool", "string", "version", "ints", "bools", "strings", "versions"];
    let set = TYPES.iter().filter(|key| !attribute[**key].is_null()).count();
    if set != 1 {
        let shown = if set == 0 { json!("") } else { attribute.clone() };
        return vec![field::invalid(at, &shown, "exactly one value must be specified")];
    }
    let mut causes = Vec::new();
    if let Some(text) = attribute["string"].as_str()
        && text.len() > MAX_ATTRIBUTE_VALUE_BYTES
    {
        causes.push(field::too_long(&format!("{at}.string"), MAX_ATTRIBUTE_VALUE_BYTES));
    }
    if let Some(version) = attribute["version"].as_str() {
        let at = format!("{at}.version");
        if version.len() > MAX_ATTRIBUTE_VALUE_BYTES {
            causes.push(field::too_long(&at, MAX_ATTRIBUTE_VALUE_BYTES));
        } else if !is_semver(version) {
            causes.push(field::invalid(
                &at,
                &json!(version),
                "must be a string compatible with semver.org spec 2.0.0",
            ));
        }
    }
    for key in ["ints", "bools", "strings", "versions"] {
        if attribute[key].as_array().is_some_and(Vec::is_empty) {
            causes.push(field::invalid(&format!("{at}.{key}"), &json!([]), "must not be empty if specified"));
        }
    }
    causes
}

/// A semantic version as semver.org 2.0.0 writes it:
/// `MAJOR.MINOR.PATCH[-pre.release][+build.meta]`, no leading zeros.
fn is_semver(version: &str) -> bool {
    let (rest, build) = match version.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let numeric = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
    };
    let identifier =
        |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|part| numeric(part))
        && pre.is_none_or(|pre| {
            pre.split('.')
                .all(|id| identifier(id) && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id)))
        })
        && build.is_none_or(|build| build.split('.').all(identifier))
}

/// A device's taints: a key, a value that is a label value, a known effect.
fn taint_causes(taints: &Value, at: &str) -> Vec<Cause> {
    let taints = items(taints);
    if taints.len() > MAX_TAINTS {
        return vec![field::too_many(at, taints.len(), MAX_TAINTS)];
    }
    let mut causes = Vec::new();
    for (k, taint) in taints.iter().enumerate() {
        let at = format!("{at}[{k}]");
        let key = taint["key"].as_str().unwrap_or_default();
        for why in qualified_name_errors(key) {
            causes.push(field::invalid(&format!("{at}.key"), &json!(key), &why));
        }
        let value = taint["value"].as_str().unwrap_or_default();
        for why in label_value_errors(value) {
            causes.push(field::invalid(&format!("{at}.value"), &json!(value), &why));
        }
        match taint["effect"].as_str().unwrap_or_default() {
            "" => causes.push(field::required(&format!("{at}.effect"), "")),
            effect if TAINT_EFFECTS.contains(&effect) => {}
            other => causes.push(field::not_supported(&format!("{at}.effect"), other, &TAINT_EFFECTS)),
        }
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Node", "string", "The node whose devices the slice publishes, if it is one node's."),
        table::col("Driver", "string", "The DRA driver that publishes the devices."),
        table::col("Pool", "string", "The pool the slice belongs to."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![
        table::name(object),
        table::s(table::str_at(object, &["spec", "nodeName"])),
        table::s(table::str_at(object, &["spec", "driver"])),
        table::s(table::str_at(object, &["spec", "pool", "name"])),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice() -> Value {
        json!({"metadata": {"name": "node-1-gpu"}, "spec": {
            "driver": "gpu.example.com", "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"}, "gpu.example.com/numa": {"int": 0}},
                         "capacity": {"memory": {"value": "40Gi"}}}]
        }})
    }

    #[test]
    fn a_slice_names_one_node_selection_and_well_formed_devices() {
        let strategy = ResourceSliceStrategy;
        assert!(strategy.validate(&slice()).is_ok());
        let mut two = slice();
        two["spec"]["allNodes"] = json!(true);
        let err = strategy.validate(&two).unwrap_err().to_string();
        assert!(
            err.contains("spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"),
            "{err}"
        );
        let mut none = slice();
        none["spec"].as_object_mut().unwrap().remove("nodeName");
        let err = strategy.validate(&none).unwrap_err().to_string();
        assert!(err.contains("spec: Required value: exactly one of `nodeName`"), "{err}");
        let mut bad = slice();
        bad["spec"]["devices"][0]["attributes"]["model"] = json!({"string": "A100", "int": 1});
        bad["spec"]["devices"][0]["attributes"]["driverVersion"] = json!({"version": "1.02.3"});
        bad["spec"]["pool"]["resourceSliceCount"] = json!(0);
        let err = strategy.validate(&bad).unwrap_err().to_string();
        assert!(err.contains("spec.devices[0].attributes[model]: Invalid value: {\"int\":1,\"string\":\"A100\"}: exactly one value must be specified"), "{err}");
        assert!(err.contains("spec.devices[0].attributes[driverVersion].version: Invalid value: \"1.02.3\": must be a string compatible with semver.org spec 2.0.0"), "{err}");
        assert!(
            err.contains("spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
            "{err}"
        );
    }

    #[test]
    fn driver_pool_and_node_stay() {
        let strategy = ResourceSliceStrategy;
        let old = slice();
        let mut new = old.clone();
        new["spec"]["devices"][0]["name"] = json!("gpu-1");
        assert!(strategy.validate_update(&new, &old).is_ok(), "devices may change");
        new["spec"]["nodeName"] = json!("node-2");
        let err = strategy.validate_update(&new, &old).unwrap_err().to_string();
        assert!(err.contains("spec.nodeName: Invalid value: \"node-2\": field is immutable"), "{err}");
    }

    #[test]
    fn versions_are_semver() {
        for good in ["1.2.3", "0.0.0", "1.2.3-rc.1", "1.2.3+build.5", "10.20.30-alpha-1"] {
            assert!(is_semver(good), "{good}");
        }
        for bad in ["1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+"] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn taints_get_the_time_they_were_added() {
        let mut tainted = slice();
        tainted["spec"]["devices"][0]["taints"] = json!([{"key": "broken", "effect": "NoSchedule"}]);
        ResourceSliceStrategy.set_defaults(&mut tainted);
        assert!(tainted["spec"]["devices"][0]["taints"][0]["timeAdded"].is_string());
    }
}
