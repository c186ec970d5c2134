//! core/v1 PersistentVolumeClaims: a pod's request for storage, bound to a
//! PersistentVolume by kube-controller-manager. kube's defaults (Pending, a
//! filesystem), its checks of access modes and the storage requested, and
//! its rule that a claim's spec only grows once bound.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::claim;
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "PersistentVolumeClaim";
pub const ACCESS_MODES: [&str; 4] = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
pub const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];

pub fn kind() -> Kind {
    Kind::typed::<core::PersistentVolumeClaim>(
        Resource::new("", "PersistentVolumeClaim", "persistentvolumeclaims")
            .short_names(&["pvc"])
            .with_status()
            .returns_deleted_object(),
        ClaimStrategy,
    )
}

#[derive(Debug)]
struct ClaimStrategy;

impl Strategy for ClaimStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_PERSISTENT_VOLUME_CLAIM)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn set_defaults(&self, object: &mut Value) {
        claim::claim(object);
    }

    /// A new claim has not been bound: its status is kube's empty one.
    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({"phase": "Pending"});
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        field::refuse(KIND, new, update_causes(new, old))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let modes = table::arr_at(spec, &["accessModes"]);
    if modes.is_empty() {
        causes.push(field::required("spec.accessModes", "at least 1 access mode is required"));
    }
    causes.extend(access_mode_causes(modes, "spec.accessModes"));
    match spec["resources"]["requests"]["storage"].as_str() {
        None => causes.push(field::required("spec.resources[storage]", "")),
        Some(size) if is_zero(size) => {
            causes.push(field::invalid("spec.resources[storage]", &json!(size), "must be greater than zero"));
        }
        Some(_) => {}
    }
    if let Some(mode) = spec["volumeMode"].as_str().filter(|m| !VOLUME_MODES.contains(m)) {
        causes.push(field::not_supported("spec.volumeMode", mode, &VOLUME_MODES));
    }
    causes
}

/// kube's access mode check, shared with PersistentVolumes.
pub fn access_mode_causes(modes: &[Value], at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for mode in modes.iter().filter_map(Value::as_str) {
        if !ACCESS_MODES.contains(&mode) {
            causes.push(field::not_supported(at, mode, &ACCESS_MODES));
        }
    }
    let once_pod = modes.iter().any(|m| m == "ReadWriteOncePod");
    if once_pod && modes.len() > 1 {
        causes.push(field::forbidden(at, "may not use ReadWriteOncePod with other access modes"));
    }
    causes
}

/// A quantity that is zero however it is written (`0`, `0Gi`, `0.0`).
fn is_zero(quantity: &str) -> bool {
    let digits = quantity.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    !digits.is_empty() && digits.chars().all(|c| c == '0' || c == '.')
}

/// A claim's spec is fixed once created, but for the storage it requests
/// (growing a bound claim) and its volume attributes class.
fn update_causes(new: &Value, old: &Value) -> Vec<Cause> {
    let strip = |claim: &Value| {
        let mut spec = claim["spec"].clone();
        if let Some(requests) = spec["resources"]["requests"].as_object_mut() {
            requests.remove("storage");
        }
        if let Some(spec) = spec.as_object_mut() {
            spec.remove("volumeAttributesClassName");
            // Binding fills the volume in; kube's binder writes it once.
            if old["spec"]["volumeName"].as_str().is_none_or(str::is_empty) {
                spec.remove("volumeName");
            }
        }
        spec
    };
    let mut causes = Vec::new();
    if strip(new) != strip(old) {
        causes.push(field::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Status", "string", "The claim's phase: Pending, Bound or Lost."),
        table::col("Volume", "string", "The volume bound to the claim."),
        table::col("Capacity", "string", "The storage the bound volume provides."),
        table::col("Access Modes", "string", "How the bound volume may be mounted."),
        table::col("StorageClass", "string", "The storage class of the claim."),
        table::col("VolumeAttributesClass", "string", "The volume attributes class of the claim."),
        table::AGE,
        table::wide("VolumeMode", "string", "Whether the volume is a filesystem or a block device."),
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let volume = table::str_at(object, &["spec", "volumeName"]);
    let (capacity, modes) = match volume {
        "" => (String::new(), String::new()),
        _ => (
            table::str_at(object, &["status", "capacity", "storage"]).to_string(),
            access_modes_text(table::arr_at(object, &["status", "accessModes"])),
        ),
    };
    let phase = if crate::runtime::meta::is_being_deleted(object) {
        "Terminating"
    } else {
        table::str_at(object, &["status", "phase"])
    };
    vec![
        table::name(object),
        table::s(phase),
        table::s(volume),
        table::s(capacity),
        table::s(modes),
        table::s(class_of(object)),
        table::s(table::str_or(object, &["spec", "volumeAttributesClassName"], "<unset>")),
        table::age(object, now),
        table::s(table::str_or(object, &["spec", "volumeMode"], "<unset>")),
    ]
}

/// kube's storage class of a claim or volume: the beta annotation first,
/// then `spec.storageClassName`.
pub fn class_of(object: &Value) -> String {
    match object["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].as_str() {
        Some(class) => class.to_string(),
        None => table::str_at(object, &["spec", "storageClassName"]).to_string(),
    }
}

/// kube's short access modes (`RWO,ROX`), in kube's fixed order.
pub fn access_modes_text(modes: &[Value]) -> String {
    const SHORT: [(&str, &str); 4] = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ];
    let has = |mode: &str| modes.iter().any(|m| m == mode);
    SHORT.iter().filter(|(mode, _)| has(mode)).map(|(_, short)| *short).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(spec: Value) -> Value {
        json!({"metadata": {"name": "data"}, "spec": spec})
    }

    #[test]
    fn a_claim_asks_for_storage_and_a_mode() {
        let strategy = ClaimStrategy;
        let err = strategy.validate(&claim(json!({}))).unwrap_err().to_string();
        assert!(
            err.contains("spec.accessModes: Required value: at least 1 access mode is required"),
            "{err}"
        );
        assert!(err.contains("spec.resources[storage]: Required value"), "{err}");
        let zero = claim(
            json!({"accessModes": ["ReadWriteOnce", "ReadWriteOncePod"], "resources": {"requests": {"storage": "0Gi"}}}),
        );
        let err = strategy.validate(&zero).unwrap_err().to_string();
        assert!(
            err.contains("spec.resources[storage]: Invalid value: \"0Gi\": must be greater than zero"),
            "{err}"
        );
        assert!(err.contains("may not use ReadWriteOncePod with other access modes"), "{err}");
        let fine =
            claim(json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}));
        assert!(strategy.validate(&fine).is_ok());
    }

    #[test]
    fn a_claim_may_only_grow() {
        let strategy = ClaimStrategy;
        let old = claim(
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv-1"}),
        );
        let mut bigger = old.clone();
        bigger["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        assert!(strategy.validate_update(&bigger, &old).is_ok());
        let mut other = old.clone();
        other["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        let err = strategy.validate_update(&other, &old).unwrap_err().to_string();
        assert!(err.contains("spec: Forbidden: spec is immutable after creation"), "{err}");
    }

    #[test]
    fn claims_print_as_kube_prints_them() {
        let bound = json!({"metadata": {"name": "data"}, "spec": {"volumeName": "pv-1", "storageClassName": "fast",
            "volumeMode": "Filesystem"},
            "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadOnlyMany", "ReadWriteOnce"]}});
        let cells = PRINTER.cells(&bound, 0);
        assert_eq!(
            cells[..7],
            [
                json!("data"),
                json!("Bound"),
                json!("pv-1"),
                json!("1Gi"),
                json!("RWO,ROX"),
                json!("fast"),
                json!("<unset>")
            ]
        );
        assert_eq!(cells[8], json!("Filesystem"));
    }
}
