//! Namespaces: cluster-scoped; created Active with the `kubernetes`
//! finalizer in `spec.finalizers` (cleared by the namespace controller once
//! their contents are gone); deleting one always marks it Terminating first.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{NAMESPACE_FINALIZE, NameRule, Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::Namespace>(
        Resource::new("", "Namespace", "namespaces")
            .cluster_scoped()
            .short_names(&["ns"])
            .with_status()
            .returns_deleted_object()
            .with_actions(&[NAMESPACE_FINALIZE]),
        NamespaceStrategy,
    )
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &["status.phase", "metadata.name"],
    refusal: Refusal::NotSupported,
    aliases: &[],
    cluster_scoped: true,
    value: |object, field| (field == "status.phase").then(|| attrs::text(object, &["status", "phase"])),
};

#[derive(Debug)]
struct NamespaceStrategy;

/// kube's immutable label naming the namespace, which lets selectors (a
/// webhook's namespaceSelector, a NetworkPolicy) pick namespaces by name.
pub const NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn label_with_name(object: &mut Value) {
    let name = crate::runtime::meta::name_of(object).to_string();
    if name.is_empty() || !object["metadata"].is_object() {
        return;
    }
    if !object["metadata"]["labels"].is_object() {
        object["metadata"]["labels"] = json!({});
    }
    object["metadata"]["labels"][NAME_LABEL] = json!(name);
}

impl Strategy for NamespaceStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_NAMESPACE)
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn set_defaults(&self, object: &mut Value) {
        label_with_name(object);
    }

    fn prepare_for_create(&self, object: &mut Value) {
        object["spec"] = json!({"finalizers": ["kubernetes"]});
        object["status"] = json!({"phase": "Active"});
        label_with_name(object);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        new["spec"] = old["spec"].clone();
        label_with_name(new);
    }

    fn delete_is_graceful(&self) -> bool {
        true
    }

    fn prepare_for_delete(&self, object: &mut Value) {
        object["status"] = json!({"phase": "Terminating"});
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::NAMESPACE
    }
}
