//! apps/v1 DaemonSets, with kube's defaults (rolling updates one node at
//! a time, ten old revisions kept).

use k8s_openapi::api::apps::v1 as apps;

use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, pod_spec};
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

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn printer(&self) -> &'static Printer {
        &table::DAEMONSET
    }
}

/// kube's `SetDefaults_DaemonSet`, then the pod template's.
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::rolling_update(spec, "updateStrategy", json!(1), json!(0));
    defaults::pointer(spec, "revisionHistoryLimit", json!(10));
    pod_spec::template_of(spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds::tests::golden;

    #[test]
    fn a_minimal_daemonset_is_defaulted_as_kube_stores_it() {
        golden(&kind(), "daemonset");
    }
}
