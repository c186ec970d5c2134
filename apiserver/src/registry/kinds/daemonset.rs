//! apps/v1 DaemonSets.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::Value;

use super::Kind;
use crate::openapi::OpenApiResource;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::new(
        Resource::new("apps", "DaemonSet", "daemonsets").short_names(&["ds"]).in_all().with_status(),
        DaemonSetStrategy,
    )
}

#[derive(Debug)]
struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
    fn roundtrip(&self, object: Value) -> Result<Value, String> {
        super::roundtrip::<apps::DaemonSet>(object)
    }

    fn openapi(&self) -> Option<OpenApiResource> {
        Some(OpenApiResource::of::<apps::DaemonSet>(&["status"]))
    }

    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_DAEMON_SET)
    }

    fn printer(&self) -> &'static Printer {
        &table::DAEMONSET
    }
}
