//! apiextensions.k8s.io/v1 CustomResourceDefinitions: the kind itself.
//! Storing one serves nothing yet; the `customresourcedefinitions`
//! controller accepts its names, marks it Established and serves its
//! versions (see the custom resource module). Deleting one marks it with the
//! cleanup finalizer and a Terminating condition; the controller deletes
//! its objects, stops serving it and lets it go.

mod rule_cost;
mod structural;
mod validation;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use super::Kind;
use crate::errors::ApiError;
use crate::patch::strategic_schema::{FieldMeta, ListStrategy, TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;

pub const GROUP: &str = "apiextensions.k8s.io";
/// The finalizer a CRD being deleted carries until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
const QUALIFIED_KIND: &str = "CustomResourceDefinition.apiextensions.k8s.io";

pub fn kind() -> Kind {
    let resource = Resource::new(GROUP, "CustomResourceDefinition", "customresourcedefinitions")
        .cluster_scoped()
        .short_names(&["crd", "crds"])
        .in_api_extensions()
        .stored_under("apiextensions.k8s.io/customresourcedefinitions")
        .with_status();
    Kind::typed::<CustomResourceDefinition>(resource, CrdStrategy)
}

/// The storage version's name.
pub fn storage_version(crd: &Value) -> Option<&str> {
    crd["spec"]["versions"].as_array()?.iter().find(|v| v["storage"] == json!(true))?["name"].as_str()
}

/// Whether a condition of `type_` is True.
pub fn condition_is_true(crd: &Value, type_: &str) -> bool {
    condition(crd, type_).is_some_and(|c| c["status"] == "True")
}

/// The condition of `type_`, if the CRD has one.
pub fn condition<'a>(crd: &'a Value, type_: &str) -> Option<&'a Value> {
    conditions(crd).iter().find(|c| c["type"] == type_)
}

fn conditions(crd: &Value) -> &[Value] {
    crd["status"]["conditions"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// Sets a condition, its transition time kept unless its status changes
/// (kube's `SetCRDCondition`).
pub fn set_condition(crd: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    let condition = json!({"type": type_, "status": status, "reason": reason, "message": message});
    crate::runtime::conditions::set(crd, condition, &meta::now());
}

/// Strategic merge patch: kube's type has no merge keys anywhere but in
/// metadata.
static CRD_PATCH: TypeNode = TypeNode {
    name: "CustomResourceDefinition",
    fields: &[FieldMeta {
        name: "metadata",
        list: ListStrategy::Replace,
        retain_keys: false,
        replace: false,
        node: Some(&nodes::META_V1_OBJECT_META),
    }],
};

#[derive(Debug)]
struct CrdStrategy;

impl CrdStrategy {
    fn refuse(crd: &Value, causes: Vec<crate::errors::Cause>) -> Result<(), ApiError> {
        if causes.is_empty() {
            return Ok(());
        }
        Err(ApiError::Invalid { kind: QUALIFIED_KIND.into(), name: meta::name_of(crd).into(), causes })
    }
}

impl Strategy for CrdStrategy {
    fn builtin_finalizer_rule(&self) -> bool {
        false
    }

    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&CRD_PATCH)
    }

    /// kube's v1 defaults: singular and listKind from the kind, conversion
    /// None, a conversion webhook's Service on port 443; and numbers in schemas as Go writes them (`10`, not `10.0`).
    fn set_defaults(&self, crd: &mut Value) {
        let Some(spec) = crd.get_mut("spec").filter(|s| s.is_object()) else { return };
        if let Some(names) = spec.get_mut("names").filter(|n| n.is_object())
            && let Some(kind) = names["kind"].as_str().map(str::to_string)
        {
            if names["singular"].as_str().unwrap_or_default().is_empty() {
                names["singular"] = json!(kind.to_lowercase());
            }
            if names["listKind"].as_str().unwrap_or_default().is_empty() {
                names["listKind"] = json!(format!("{kind}List"));
            }
        }
        if spec["conversion"].is_null() {
            spec["conversion"] = json!({"strategy": "None"});
        }
        if let Some(service) =
            spec.pointer_mut("/conversion/webhook/clientConfig/service").filter(|s| s.is_object())
            && service["port"].is_null()
        {
            service["port"] = json!(443);
        }
        for version in spec.get_mut("versions").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(schema) = version.get_mut("schema") {
                integral_numbers(schema);
            }
        }
    }

    /// Status starts empty but for the storage version.
    fn prepare_for_create(&self, crd: &mut Value) {
        let stored: Vec<&str> = storage_version(crd).into_iter().collect();
        crd["status"] = json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored});
    }

    /// A new storage version joins those objects may be stored in.
    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        let Some(storage) = storage_version(new).map(str::to_string) else { return };
        let stored = &mut new["status"]["storedVersions"];
        match stored.as_array_mut() {
            Some(list) if !list.iter().any(|v| v == &json!(storage)) => list.push(json!(storage)),
            Some(_) => {}
            None => *stored = json!([storage]),
        }
    }

    fn validate(&self, crd: &Value) -> Result<(), ApiError> {
        Self::refuse(crd, validation::validate(crd))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let established = condition_is_true(old, "Established");
        Self::refuse(new, validation::validate_update(new, old, established))
    }

    /// Its objects go first: the controller deletes them, then lifts the
    /// cleanup finalizer.
    fn delete_is_graceful(&self) -> bool {
        true
    }

    fn prepare_for_delete(&self, crd: &mut Value) {
        let finalizers = &mut crd["metadata"]["finalizers"];
        match finalizers.as_array_mut() {
            Some(list) if !list.iter().any(|f| f == CLEANUP_FINALIZER) => list.push(json!(CLEANUP_FINALIZER)),
            Some(_) => {}
            None => *finalizers = json!([CLEANUP_FINALIZER]),
        }
        set_condition(
            crd,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
    }
}

/// Floats with no fraction back to integers in a schema's number-valued
/// keywords, at every node (the typed decoding reads them as f64).
fn integral_numbers(schema: &mut Value) {
    let Some(fields) = schema.as_object_mut() else { return };
    for key in ["maximum", "minimum", "multipleOf"] {
        if let Some(f) =
            fields.get(key).and_then(Value::as_f64).filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
        {
            fields.insert(key.to_string(), json!(f as i64));
        }
    }
    for key in ["properties", "patternProperties", "definitions"] {
        if let Some(map) = fields.get_mut(key).and_then(Value::as_object_mut) {
            map.values_mut().for_each(integral_numbers);
        }
    }
    for key in ["items", "additionalProperties", "not", "openAPIV3Schema"] {
        if let Some(nested) = fields.get_mut(key) {
            integral_numbers(nested);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = fields.get_mut(key).and_then(Value::as_array_mut) {
            list.iter_mut().for_each(integral_numbers);
        }
    }
}

#[cfg(test)]
mod tests;
