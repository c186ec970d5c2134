//! storage.k8s.io/v1 StorageClasses: the kinds of volume a cluster offers,
//! each naming the provisioner that makes them. kube's defaults (volumes
//! deleted with their claim, bound at once); provisioner, parameters,
//! reclaim policy and binding mode never change.

use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy, defaults};
use crate::selector::validation::qualified_name_errors;
use crate::table::{self, Printer};

const KIND: &str = "StorageClass.storage.k8s.io";
const RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
const BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];
/// The annotations that make a class the default for claims without one.
pub const DEFAULT_ANNOTATIONS: [&str; 2] =
    ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"];

pub fn kind() -> Kind {
    Kind::typed::<storage::StorageClass>(
        Resource::new("storage.k8s.io", "StorageClass", "storageclasses")
            .cluster_scoped()
            .short_names(&["sc"]),
        StorageClassStrategy,
    )
}

#[derive(Debug)]
struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGE_V1_STORAGE_CLASS)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    /// kube's `SetDefaults_StorageClass`.
    fn set_defaults(&self, object: &mut Value) {
        defaults::pointer(object, "reclaimPolicy", json!("Delete"));
        defaults::pointer(object, "volumeBindingMode", json!("Immediate"));
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(object))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        let mut causes = Vec::new();
        for key in ["parameters", "provisioner", "reclaimPolicy"] {
            if new[key] != old[key] {
                causes.push(field::forbidden(key, &format!("updates to {key} are forbidden.")));
            }
        }
        causes.extend(field::immutable(
            "volumeBindingMode",
            &new["volumeBindingMode"],
            &old["volumeBindingMode"],
        ));
        field::refuse(KIND, new, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidateStorageClass`: a provisioner that is a qualified name,
/// a known reclaim policy and binding mode.
fn causes(class: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match class["provisioner"].as_str().unwrap_or_default() {
        "" => causes.push(field::required("provisioner", "")),
        provisioner => {
            for why in qualified_name_errors(&provisioner.to_lowercase()) {
                causes.push(field::invalid("provisioner", &json!(provisioner), &why));
            }
        }
    }
    if let Some(policy) = class["reclaimPolicy"].as_str().filter(|p| !RECLAIM_POLICIES.contains(p)) {
        causes.push(field::not_supported("reclaimPolicy", policy, &RECLAIM_POLICIES));
    }
    match class["volumeBindingMode"].as_str() {
        None => causes.push(field::required("volumeBindingMode", "")),
        Some(mode) if !BINDING_MODES.contains(&mode) => {
            causes.push(field::not_supported("volumeBindingMode", mode, &BINDING_MODES));
        }
        Some(_) => {}
    }
    causes
}

/// Whether a class is marked as the cluster's default.
pub fn is_default(class: &Value) -> bool {
    DEFAULT_ANNOTATIONS.iter().any(|key| class["metadata"]["annotations"][key] == "true")
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Provisioner", "string", "The driver that provisions volumes of the class."),
        table::col("ReclaimPolicy", "string", "What becomes of a volume when its claim goes."),
        table::col("VolumeBindingMode", "string", "When claims of the class are bound and provisioned."),
        table::col("AllowVolumeExpansion", "string", "Whether claims of the class may grow."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let name = table::str_at(object, &["metadata", "name"]);
    let name = if is_default(object) { format!("{name} (default)") } else { name.to_string() };
    vec![
        table::s(name),
        table::s(table::str_at(object, &["provisioner"])),
        table::s(table::str_or(object, &["reclaimPolicy"], "Delete")),
        table::s(table::str_or(object, &["volumeBindingMode"], "Immediate")),
        Value::Bool(table::bool_at(object, &["allowVolumeExpansion"]).unwrap_or(false)),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_is_defaulted_validated_and_printed_as_kube_does() {
        let strategy = StorageClassStrategy;
        let mut class = json!({"metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "ebs.csi.aws.com"});
        strategy.set_defaults(&mut class);
        assert_eq!(
            (class["reclaimPolicy"].clone(), class["volumeBindingMode"].clone()),
            (json!("Delete"), json!("Immediate"))
        );
        assert!(strategy.validate(&class).is_ok());
        assert_eq!(
            PRINTER.cells(&class, 0)[..5],
            [
                json!("fast (default)"),
                json!("ebs.csi.aws.com"),
                json!("Delete"),
                json!("Immediate"),
                json!(false),
            ]
        );
        let bad =
            json!({"metadata": {"name": "x"}, "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"});
        let err = strategy.validate(&bad).unwrap_err().to_string();
        assert!(err.contains("provisioner: Required value"), "{err}");
        assert!(
            err.contains(
                "reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\""
            ),
            "{err}"
        );
        assert!(err.contains("volumeBindingMode: Unsupported value: \"Later\""), "{err}");
    }

    #[test]
    fn what_a_class_provisions_never_changes() {
        let strategy = StorageClassStrategy;
        let old = json!({"metadata": {"name": "x"}, "provisioner": "a.example.com", "parameters": {"type": "gp3"},
            "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
        let mut new = old.clone();
        new["parameters"]["type"] = json!("io2");
        new["volumeBindingMode"] = json!("WaitForFirstConsumer");
        let err = strategy.validate_update(&new, &old).unwrap_err().to_string();
        assert!(err.contains("parameters: Forbidden: updates to parameters are forbidden."), "{err}");
        assert!(
            err.contains("volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable"),
            "{err}"
        );
        let mut labelled = old.clone();
        labelled["allowVolumeExpansion"] = json!(true);
        assert!(strategy.validate_update(&labelled, &old).is_ok());
    }
}
