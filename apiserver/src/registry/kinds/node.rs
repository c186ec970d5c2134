//! Nodes: cluster-scoped and stored under `minions` as kube stores them;
//! their status is written with the object (kubelets do), not kept apart.

use k8s_openapi::api::core::v1 as core;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::Node>(
        Resource::new("", "Node", "nodes")
            .cluster_scoped()
            .short_names(&["no"])
            .stored_under("minions")
            .with_status(),
        NodeStrategy,
    )
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &["metadata.name", "spec.unschedulable"],
    refusal: Refusal::NotSupported,
    aliases: &[],
    cluster_scoped: true,
    value: |object, field| {
        (field == "spec.unschedulable").then(|| attrs::boolean(object, &["spec", "unschedulable"]))
    },
};

#[derive(Debug)]
struct NodeStrategy;

impl Strategy for NodeStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_NODE)
    }

    fn status_with_object(&self) -> bool {
        true
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::NODE
    }
}
