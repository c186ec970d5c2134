//! core/v1 Events: removed by storage an hour after they are written
//! (kube-apiserver's `--event-ttl` default), selectable by the object they
//! are about.

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

/// How long Events live (kube-apiserver's `--event-ttl` default: 1h).
const EVENT_TTL_SECONDS: i64 = 3600;

pub fn kind() -> Kind {
    Kind::typed::<core::Event>(
        Resource::new("", "Event", "events").short_names(&["ev"]).with_ttl(EVENT_TTL_SECONDS),
        EventStrategy,
    )
}

const LABELS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
];

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: LABELS,
    refusal: Refusal::NotSupported,
    aliases: &[],
    cluster_scoped: false,
    value: field_value,
};

fn field_value(object: &Value, field: &str) -> Option<String> {
    match field {
        "source" => {
            // kube falls back to the reporting controller for newer events.
            let component = attrs::text(object, &["source", "component"]);
            if component.is_empty() {
                Some(attrs::text(object, &["reportingComponent"]))
            } else {
                Some(component)
            }
        }
        "reason" | "reportingComponent" | "type" => Some(attrs::text(object, &[field])),
        _ => {
            let sub = field.strip_prefix("involvedObject.")?;
            LABELS.contains(&field).then(|| attrs::text(object, &["involvedObject", sub]))
        }
    }
}

#[derive(Debug)]
struct EventStrategy;

impl Strategy for EventStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_EVENT)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::EVENT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::FieldSelector;
    use serde_json::json;

    fn sel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap()
    }

    #[test]
    fn event_fields() {
        let event = json!({
            "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p1", "uid": "u-1"},
            "reason": "Scheduled", "type": "Normal", "reportingComponent": "default-scheduler"
        });
        assert!(
            sel("involvedObject.kind=Pod,involvedObject.name=p1,involvedObject.uid=u-1")
                .matches(&FIELDS, &event)
        );
        assert!(sel("involvedObject.namespace=").matches(&FIELDS, &event));
        // `source` falls back to reportingComponent when source.component is empty.
        assert!(sel("source=default-scheduler").matches(&FIELDS, &event));
        let kubelet = json!({"source": {"component": "kubelet"}, "reportingComponent": "x"});
        assert_eq!(FIELDS.value(&kubelet, "source").as_deref(), Some("kubelet"));
        assert_eq!(FIELDS.value(&event, "involvedObject.bogus"), None);
    }
}
