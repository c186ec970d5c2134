//! storage.k8s.io/v1 CSIStorageCapacities: how much storage of a class a CSI driver can still
//! provision in a topology segment, published by the driver's external provisioner for the
//! scheduler. What a capacity is for (its class and topology) never changes; the amounts do.

use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::metadata::dns_subdomain_errors;
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "CSIStorageCapacity.storage.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<storage::CSIStorageCapacity>(
        Resource::new("storage.k8s.io", "CSIStorageCapacity", "csistoragecapacities"),
        CapacityStrategy,
    )
}

#[derive(Debug)]
struct CapacityStrategy;

impl Strategy for CapacityStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGE_V1_CSI_STORAGE_CAPACITY)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(object))
    }

    /// kube's ValidateCSIStorageCapacityUpdate: the inputs of the driver's GetCapacity call
    /// (class and topology) are immutable.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut causes = causes(new);
        causes.extend(field::immutable("nodeTopology", &new["nodeTopology"], &old["nodeTopology"]));
        causes.extend(field::immutable(
            "storageClassName",
            &new["storageClassName"],
            &old["storageClassName"],
        ));
        field::refuse(KIND, new, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's ValidateCSIStorageCapacity: a class name that is a DNS subdomain, a valid topology
/// selector, and a capacity that is not negative.
fn causes(capacity: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let class = capacity["storageClassName"].as_str().unwrap_or_default();
    for why in dns_subdomain_errors(class) {
        causes.push(field::invalid("storageClassName", &json!(class), &why));
    }
    for (at, message) in crate::selector::object::problems(&capacity["nodeTopology"], "nodeTopology") {
        causes.push(field::cause("FieldValueInvalid", &at, message));
    }
    if let Some(amount) = capacity["capacity"].as_str().filter(|a| a.starts_with('-')) {
        causes.push(field::invalid("capacity", &json!(amount), "must be greater than or equal to 0"));
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("StorageClassName", "string", "The class whose storage is counted."),
        table::col("Capacity", "string", "What can still be provisioned."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![
        table::name(object),
        table::s(table::str_at(object, &["storageClassName"])),
        table::s(table::str_or(object, &["capacity"], "<unset>")),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capacity_keeps_its_class_and_topology() {
        let strategy = CapacityStrategy;
        let made = json!({"metadata": {"name": "csisc-1", "namespace": "kube-system"}, "storageClassName": "fast",
            "nodeTopology": {"matchLabels": {"zone": "a"}}, "capacity": "100Gi"});
        assert!(strategy.validate(&made).is_ok());
        let mut grown = made.clone();
        grown["capacity"] = json!("200Gi");
        assert!(strategy.validate_update(&grown, &made).is_ok());
        let mut moved = made.clone();
        moved["storageClassName"] = json!("slow");
        let err = strategy.validate_update(&moved, &made).unwrap_err().to_string();
        assert!(err.contains("storageClassName: Invalid value: \"slow\": field is immutable"), "{err}");
        let negative = json!({"metadata": {"name": "n"}, "storageClassName": "fast", "capacity": "-1Gi"});
        assert!(strategy.validate(&negative).is_err());
    }
}
