//! storage.k8s.io/v1 VolumeAttributesClasses: named sets of a CSI driver's volume attributes
//! (IOPS, throughput) that claims ask for and may change to; the driver and its parameters
//! never change once made. Applying them is the external resizer's and the driver's work.

use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy};
use crate::selector::validation::qualified_name_errors;
use crate::table::{self, Printer};

const KIND: &str = "VolumeAttributesClass.storage.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<storage::VolumeAttributesClass>(
        Resource::new("storage.k8s.io", "VolumeAttributesClass", "volumeattributesclasses")
            .cluster_scoped()
            .short_names(&["vac"]),
        VolumeAttributesClassStrategy,
    )
}

#[derive(Debug)]
struct VolumeAttributesClassStrategy;

impl Strategy for VolumeAttributesClassStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGE_V1_VOLUME_ATTRIBUTES_CLASS)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(object))
    }

    /// kube's ValidateVolumeAttributesClassUpdate: neither the driver nor
    /// its parameters change.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        for key in ["driverName", "parameters"] {
            if new[key] != old[key] {
                causes.push(field::forbidden(key, &format!("updates to {key} are forbidden.")));
            }
        }
        causes.extend(self::causes(new));
        field::refuse(KIND, new, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's ValidateVolumeAttributesClass: a driver that is a qualified name, and at least one
/// parameter, none with an empty key.
fn causes(class: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match class["driverName"].as_str().unwrap_or_default() {
        "" => causes.push(field::required("driverName", "")),
        driver => {
            for why in qualified_name_errors(&driver.to_lowercase()) {
                causes.push(field::invalid("driverName", &json!(driver), &why));
            }
        }
    }
    let parameters = class["parameters"].as_object();
    if parameters.is_none_or(|p| p.is_empty()) {
        causes.push(field::required("parameters", "must contain at least one key/value pair"));
    }
    if parameters.is_some_and(|p| p.contains_key("")) {
        causes.push(field::invalid("parameters", &json!(""), "field can not be empty."));
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("DriverName", "string", "The CSI driver that applies the class's attributes."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![table::name(object), table::s(table::str_at(object, &["driverName"])), table::age(object, now)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_names_a_driver_and_its_parameters_and_keeps_them() {
        let strategy = VolumeAttributesClassStrategy;
        let gold = json!({"metadata": {"name": "gold"}, "driverName": "ebs.csi.aws.com", "parameters": {"iops": "6000"}});
        assert!(strategy.validate(&gold).is_ok());
        let empty = json!({"metadata": {"name": "empty"}, "driverName": "ebs.csi.aws.com"});
        let err = strategy.validate(&empty).unwrap_err().to_string();
        assert!(
            err.contains("parameters: Required value: must contain at least one key/value pair"),
            "{err}"
        );
        let mut changed = gold.clone();
        changed["parameters"]["iops"] = json!("9000");
        let err = strategy.validate_update(&changed, &gold).unwrap_err().to_string();
        assert!(err.contains("parameters: Forbidden: updates to parameters are forbidden."), "{err}");
    }
}
