//! storage.k8s.io/v1 CSINodes: the CSI drivers a node's kubelet has
//! registered, with the node's id in each and its topology keys. Written
//! by kubelets; validated as kube does (named drivers, once each, with a
//! node id).

use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "CSINode.storage.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<storage::CSINode>(
        Resource::new("storage.k8s.io", "CSINode", "csinodes").cluster_scoped(),
        CsiNodeStrategy,
    )
}

#[derive(Debug)]
struct CsiNodeStrategy;

impl Strategy for CsiNodeStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGE_V1_CSI_NODE)
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, driver_causes(table::arr_at(object, &["spec", "drivers"])))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

fn driver_causes(drivers: &[Value]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (i, driver) in drivers.iter().enumerate() {
        let at = format!("spec.drivers[{i}]");
        let name = table::str_at(driver, &["name"]);
        if name.is_empty() {
            causes.push(field::required(&format!("{at}.name"), ""));
        } else if seen.contains(&name) {
            causes.push(field::cause(
                "FieldValueDuplicate",
                &format!("{at}.name"),
                format!("Duplicate value: {}", crate::selector::go_quote(name)),
            ));
        }
        seen.push(name);
        if table::str_at(driver, &["nodeID"]).is_empty() {
            causes.push(field::required(&format!("{at}.nodeID"), ""));
        }
        if let Some(count) = table::opt_int_at(driver, &["allocatable", "count"]).filter(|c| *c < 0) {
            causes.push(field::invalid(
                &format!("{at}.allocatable.count"),
                &json!(count),
                "must be greater than or equal to 0",
            ));
        }
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Drivers", "integer", "How many CSI drivers are registered on the node."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![table::name(object), table::n(table::len_at(object, &["spec", "drivers"])), table::age(object, now)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_are_named_once_with_a_node_id() {
        let drivers =
            [json!({"name": "ebs.csi.aws.com", "nodeID": "i-1"}), json!({"name": "ebs.csi.aws.com"})];
        let messages: Vec<String> =
            driver_causes(&drivers).iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            messages,
            [
                "spec.drivers[1].name: Duplicate value: \"ebs.csi.aws.com\"",
                "spec.drivers[1].nodeID: Required value",
            ]
        );
        let node = json!({"metadata": {"name": "node-1"}, "spec": {"drivers": [drivers[0].clone()]}});
        assert_eq!(PRINTER.cells(&node, 0)[..2], [json!("node-1"), json!(1)]);
    }
}
