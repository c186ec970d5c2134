//! storage.k8s.io/v1 VolumeAttachments: a request that a volume be
//! attached to a node, made by kube-controller-manager and carried out by
//! the CSI driver's attacher, which reports in `status`. Its spec never
//! changes.

use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "VolumeAttachment.storage.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<storage::VolumeAttachment>(
        Resource::new("storage.k8s.io", "VolumeAttachment", "volumeattachments")
            .cluster_scoped()
            .with_status(),
        VolumeAttachmentStrategy,
    )
}

#[derive(Debug)]
struct VolumeAttachmentStrategy;

impl Strategy for VolumeAttachmentStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGE_V1_VOLUME_ATTACHMENT)
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        let causes = field::immutable("spec", &new["spec"], &old["spec"]).into_iter().collect();
        field::refuse(KIND, new, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// An attacher, a node, and exactly one volume: a PersistentVolume by name
/// or an inline volume spec.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["attacher", "nodeName"] {
        if table::str_at(spec, &[key]).is_empty() {
            causes.push(field::required(&format!("spec.{key}"), ""));
        }
    }
    let source = &spec["source"];
    let named = source["persistentVolumeName"].as_str().is_some_and(|n| !n.is_empty());
    if named == source["inlineVolumeSpec"].is_object() {
        causes.push(field::required(
            "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        ));
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Attacher", "string", "The CSI driver that attaches the volume."),
        table::col("PV", "string", "The PersistentVolume attached."),
        table::col("Node", "string", "The node the volume is attached to."),
        table::col("Attached", "boolean", "Whether the attacher reports the volume attached."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![
        table::name(object),
        table::s(table::str_at(object, &["spec", "attacher"])),
        table::s(table::str_at(object, &["spec", "source", "persistentVolumeName"])),
        table::s(table::str_at(object, &["spec", "nodeName"])),
        json!(table::bool_at(object, &["status", "attached"]).unwrap_or(false)),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attachment_names_one_volume_and_never_changes() {
        let strategy = VolumeAttachmentStrategy;
        let attachment = json!({"metadata": {"name": "csi-1"}, "spec": {"attacher": "ebs.csi.aws.com",
            "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}, "status": {"attached": true}});
        assert!(strategy.validate(&attachment).is_ok());
        assert_eq!(
            PRINTER.cells(&attachment, 0)[..5],
            [json!("csi-1"), json!("ebs.csi.aws.com"), json!("pv-1"), json!("node-1"), json!(true)]
        );
        let err = strategy
            .validate(&json!({"metadata": {"name": "x"}, "spec": {"source": {}}}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("spec.attacher: Required value"), "{err}");
        assert!(err.contains("spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"), "{err}");
        let mut moved = attachment.clone();
        moved["spec"]["nodeName"] = json!("node-2");
        assert!(
            strategy
                .validate_update(&moved, &attachment)
                .unwrap_err()
                .to_string()
                .contains("field is immutable")
        );
    }
}
