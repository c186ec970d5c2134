//! apps/v1 ReplicaSets: `spec.replicas` defaults to 1; scaled through their
//! scale subresource.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, pod_spec};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<apps::ReplicaSet>(
        Resource::new("apps", "ReplicaSet", "replicasets")
            .short_names(&["rs"])
            .in_all()
            .with_status()
            .with_scale(),
        ReplicaSetStrategy,
    )
}

/// apps/v1 does not accept `status.replicas` (kube's metadata-only
/// default), though kube's attributes carry it.
pub static FIELDS: FieldLabels = FieldLabels {
    value: |object, field| {
        (field == "status.replicas").then(|| attrs::integer(object, &["status", "replicas"]))
    },
    ..FieldLabels::METADATA_ONLY
};

#[derive(Debug)]
struct ReplicaSetStrategy;

impl Strategy for ReplicaSetStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_REPLICA_SET)
    }

    /// kube's `SetDefaults_ReplicaSet` (one replica), then the pod
    /// template's.
    fn set_defaults(&self, object: &mut Value) {
        let Some(spec) = defaults::object_at(object, "spec") else { return };
        defaults::pointer(spec, "replicas", json!(1));
        pod_spec::template_of(spec);
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::REPLICASET
    }
}
