//! apps/v1 StatefulSets: `spec.replicas` defaults to 1; scaled through their
//! scale subresource.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::Value;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};

use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<apps::StatefulSet>(
        Resource::new("apps", "StatefulSet", "statefulsets")
            .short_names(&["sts"])
            .in_all()
            .with_status()
            .with_scale(),
        StatefulSetStrategy,
    )
}

#[derive(Debug)]
struct StatefulSetStrategy;

impl Strategy for StatefulSetStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_STATEFUL_SET)
    }

    fn prepare_for_create(&self, object: &mut Value) {
        super::default_replicas(object);
    }

    fn printer(&self) -> &'static Printer {
        &table::STATEFULSET
    }
}
