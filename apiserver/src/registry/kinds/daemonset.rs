//! apps/v1 DaemonSets.

use k8s_openapi::api::apps::v1 as apps;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<apps::DaemonSet>(
        Resource::new("apps", "DaemonSet", "daemonsets").short_names(&["ds"]).in_all().with_status(),
        DaemonSetStrategy,
    )
}

#[derive(Debug)]
struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_DAEMON_SET)
    }

    fn printer(&self) -> &'static Printer {
        &table::DAEMONSET
    }
}
