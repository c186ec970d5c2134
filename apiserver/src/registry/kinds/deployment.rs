//! apps/v1 Deployments, with kube's defaults (one replica, a 25%/25%
//! rolling update, ten old ReplicaSets kept, a ten-minute progress
//! deadline); scaled through their scale subresource.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, pod_spec};
use crate::registry::{Resource, Strategy};

use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<apps::Deployment>(
        Resource::new("apps", "Deployment", "deployments")
            .short_names(&["deploy"])
            .in_all()
            .with_status()
            .with_scale(),
        DeploymentStrategy,
    )
}

#[derive(Debug)]
struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_DEPLOYMENT)
    }

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn printer(&self) -> &'static Printer {
        &table::DEPLOYMENT
    }
}

/// kube's `SetDefaults_Deployment`, then the pod template's.
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::pointer(spec, "replicas", json!(1));
    defaults::rolling_update(spec, "strategy", json!("25%"), json!("25%"));
    defaults::pointer(spec, "revisionHistoryLimit", json!(10));
    defaults::pointer(spec, "progressDeadlineSeconds", json!(600));
    pod_spec::template_of(spec);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds::tests::golden;

    #[test]
    fn a_minimal_deployment_is_defaulted_as_kube_stores_it() {
        golden(&kind(), "deployment");
    }

    #[test]
    fn a_recreate_strategy_gets_no_rolling_update() {
        let mut d = json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "template": {}}});
        set_defaults(&mut d);
        assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_eq!(d["spec"]["replicas"], 0);
    }
}
