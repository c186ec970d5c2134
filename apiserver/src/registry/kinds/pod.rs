//! Pods: created Pending (nothing schedules or runs them here); selectable
//! by node, phase, IP and the other fields kubelets and controllers use.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::Pod>(
        Resource::new("", "Pod", "pods").short_names(&["po"]).in_all().with_status(),
        PodStrategy,
    )
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &[
        "metadata.name",
        "metadata.namespace",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    ],
    refusal: Refusal::NotSupported,
    // Old v1 clients ask for pods by `spec.host`.
    aliases: &[("spec.host", "spec.nodeName")],
    cluster_scoped: false,
    value: field_value,
};

fn field_value(object: &Value, field: &str) -> Option<String> {
    match field {
        "spec.nodeName" | "spec.host" => Some(attrs::text(object, &["spec", "nodeName"])),
        "spec.restartPolicy" => Some(attrs::text(object, &["spec", "restartPolicy"])),
        "spec.schedulerName" => Some(attrs::text(object, &["spec", "schedulerName"])),
        "spec.serviceAccountName" => Some(attrs::text(object, &["spec", "serviceAccountName"])),
        "spec.hostNetwork" => Some(attrs::boolean(object, &["spec", "hostNetwork"])),
        "status.phase" => Some(attrs::text(object, &["status", "phase"])),
        "status.podIP" => Some(pod_ip(object)),
        "status.nominatedNodeName" => Some(attrs::text(object, &["status", "nominatedNodeName"])),
        _ => None,
    }
}

/// kube reads the primary IP from `status.podIPs[0]`; v1 objects written
/// with only `status.podIP` convert to that same list.
fn pod_ip(object: &Value) -> String {
    object["status"]["podIPs"][0]["ip"]
        .as_str()
        .map_or_else(|| attrs::text(object, &["status", "podIP"]), str::to_string)
}

#[derive(Debug)]
struct PodStrategy;

impl Strategy for PodStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_POD)
    }

    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::POD
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::FieldSelector;

    fn sel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap()
    }

    #[test]
    fn pod_fields() {
        let running = json!({
            "metadata": {"name": "p1", "namespace": "default"},
            "spec": {"nodeName": "node-a", "restartPolicy": "Always", "hostNetwork": true},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}
        });
        let pending =
            json!({"metadata": {"name": "p2", "namespace": "default"}, "status": {"phase": "Pending"}});
        let f = sel("status.phase=Running");
        assert!(f.matches(&FIELDS, &running));
        assert!(!f.matches(&FIELDS, &pending));
        assert!(sel("status.phase!=Running").matches(&FIELDS, &pending));
        assert!(sel("status.phase!=Succeeded,status.phase!=Failed").matches(&FIELDS, &running));
        assert!(sel("spec.nodeName=node-a").matches(&FIELDS, &running));
        assert!(sel("spec.host=node-a").matches(&FIELDS, &running));
        assert!(sel("spec.nodeName=").matches(&FIELDS, &pending));
        assert!(sel("spec.hostNetwork=true").matches(&FIELDS, &running));
        assert!(sel("spec.hostNetwork=false").matches(&FIELDS, &pending));
        assert!(sel("status.podIP=10.0.0.1").matches(&FIELDS, &running));
        // Accepted, but kube has no such attribute: it reads as "".
        assert!(!sel("status.podIPs=10.0.0.1").matches(&FIELDS, &running));
        assert!(sel("status.podIPs=").matches(&FIELDS, &running));
        assert_eq!(FIELDS.value(&running, "status.podIPs"), None);
        let legacy = json!({"status": {"podIP": "10.0.0.9"}});
        assert_eq!(FIELDS.value(&legacy, "status.podIP").as_deref(), Some("10.0.0.9"));
    }
}
