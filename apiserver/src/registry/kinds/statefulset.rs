//! apps/v1 StatefulSets, with kube's defaults (one replica, ordered pod
//! management, rolling updates from partition 0, claims retained); scaled
//! through their scale subresource.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, claim, pod_spec};
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

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn printer(&self) -> &'static Printer {
        &table::STATEFULSET
    }
}

/// kube's `SetDefaults_StatefulSet` (with StatefulSetAutoDeletePVC, GA),
/// then the pod template's and the claim templates'.
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::string(spec, "podManagementPolicy", "OrderedReady");
    if let Some(strategy) = defaults::object_at(spec, "updateStrategy") {
        if !defaults::is_set(strategy, "type") {
            strategy["type"] = json!("RollingUpdate");
            defaults::pointer(strategy, "rollingUpdate", json!({}));
        }
        if strategy["type"] == "RollingUpdate"
            && let Some(rolling) = defaults::present(strategy, "rollingUpdate")
        {
            defaults::pointer(rolling, "partition", json!(0));
        }
    }
    if let Some(policy) = defaults::object_at(spec, "persistentVolumeClaimRetentionPolicy") {
        defaults::string(policy, "whenDeleted", "Retain");
        defaults::string(policy, "whenScaled", "Retain");
    }
    defaults::pointer(spec, "replicas", json!(1));
    defaults::pointer(spec, "revisionHistoryLimit", json!(10));
    pod_spec::template_of(spec);
    defaults::items(spec, "volumeClaimTemplates").for_each(claim::claim);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds::tests::golden;

    #[test]
    fn a_minimal_statefulset_is_defaulted_as_kube_stores_it() {
        golden(&kind(), "statefulset");
    }

    #[test]
    fn an_on_delete_strategy_gets_no_partition() {
        let mut s = json!({"spec": {"updateStrategy": {"type": "OnDelete"}}});
        set_defaults(&mut s);
        assert_eq!(s["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
        let mut given = json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}}});
        set_defaults(&mut given);
        assert_eq!(
            given["spec"]["updateStrategy"]["rollingUpdate"],
            json!({"maxUnavailable": 2, "partition": 0})
        );
    }
}
