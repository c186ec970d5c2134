//! events.k8s.io/v1 Events: the same objects as core v1 Events (stored once, in v1, under
//! `events/`), in the newer shape kube's event recorders write: `regarding` for
//! `involvedObject`, `note` for `message`, `reportingController` for `reportingComponent`, and the
//! legacy fields renamed `deprecated*`. Written through this API an Event must be a new-style one
//! (kube's strict validation: eventTime, reporting controller and instance, action, reason, no
//! deprecated fields); read through it, every Event shows in this shape.

use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::events::v1 as events;
use serde_json::{Map, Value, json};

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::storage::{ReadView, VersionView};
use crate::table::{self, Printer};

const KIND: &str = "Event.events.k8s.io";
const API_VERSION: &str = "events.k8s.io/v1";
/// How long Events live, as the core resource's (kube-apiserver's `--event-ttl` default).
const EVENT_TTL_SECONDS: i64 = 3600;

/// core v1 field → events.k8s.io/v1 field; the rest share their names.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

pub fn kind() -> Kind {
    let mut kind = Kind::typed::<events::Event>(
        Resource::new("events.k8s.io", "Event", "events")
            .short_names(&["ev"])
            .with_ttl(EVENT_TTL_SECONDS)
            .sharing_storage_of("", "events"),
        EventsStrategy,
    );
    kind.view = ReadView::new(Arc::new(CoreShape));
    kind
}

/// Reads core Events in this API's shape; stores this API's in the core one.
struct CoreShape;

#[async_trait]
impl VersionView for CoreShape {
    async fn read(&self, objects: Vec<Value>) -> Result<Vec<Value>, String> {
        Ok(objects.into_iter().map(|event| rename(event, API_VERSION, false)).collect())
    }

    async fn store(&self, object: Value) -> Result<Value, String> {
        Ok(rename(object, "v1", true))
    }
}

/// The event with its fields renamed one way or the other (`to_core`), as `api_version`.
fn rename(event: Value, api_version: &str, to_core: bool) -> Value {
    let Value::Object(fields) = event else { return event };
    let mut out = Map::new();
    for (key, value) in fields {
        let renamed = RENAMED
            .iter()
            .find(|(core, new)| if to_core { new == &key } else { core == &key })
            .map(|(core, new)| if to_core { *core } else { *new });
        out.insert(renamed.map_or(key, str::to_owned), value);
    }
    out.insert("apiVersion".into(), json!(api_version));
    out.insert("kind".into(), json!("Event"));
    Value::Object(out)
}

#[derive(Debug)]
struct EventsStrategy;

impl Strategy for EventsStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::EVENTS_V1_EVENT)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(object))
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> Result<(), ApiError> {
        Ok(())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// Fields' length limits (kube's ReportingInstanceLengthLimit, ActionLengthLimit,
/// ReasonLengthLimit, NoteLengthLimit).
const LIMITS: &[(&str, usize)] =
    &[("reportingInstance", 128), ("action", 128), ("reason", 128), ("note", 1024)];

/// kube's ValidateEventCreate for events.k8s.io/v1: a new-style event, in full.
fn causes(event: &Value) -> Vec<Cause> {
    let text = |key: &str| event[key].as_str().unwrap_or_default();
    let mut causes = Vec::new();
    if event["eventTime"].is_null() {
        causes.push(field::required("eventTime", ""));
    }
    if !matches!(text("type"), "Normal" | "Warning") {
        causes.push(field::invalid("type", &json!(""), &format!("has invalid value: {}", text("type"))));
    }
    for deprecated in ["deprecatedFirstTimestamp", "deprecatedLastTimestamp"] {
        if !event[deprecated].is_null() {
            causes.push(field::invalid(deprecated, &json!(""), "needs to be unset"));
        }
    }
    if event["deprecatedCount"].as_i64().is_some_and(|c| c != 0) {
        causes.push(field::invalid("deprecatedCount", &json!(""), "needs to be unset"));
    }
    let source = &event["deprecatedSource"];
    if ["component", "host"].iter().any(|k| source[k].as_str().is_some_and(|s| !s.is_empty())) {
        causes.push(field::invalid("deprecatedSource", &json!(""), "needs to be unset"));
    }
    if let Some(count) = event["series"]["count"].as_i64().filter(|c| *c < 2) {
        causes.push(field::invalid(
            "series.count",
            &json!(""),
            &format!("should be at least 2, got {count}"),
        ));
    }
    for required in ["reportingController", "reportingInstance", "action", "reason"] {
        if text(required).is_empty() {
            causes.push(field::required(required, ""));
        }
    }
    for (key, limit) in LIMITS {
        if text(key).chars().count() > *limit {
            causes.push(field::invalid(key, &json!(""), &format!("can have at most {limit} characters")));
        }
    }
    causes
}

/// Printed as kube prints every Event: the core columns, read from the core shape.
static PRINTER: Printer = Printer { columns: table::EVENT.columns, cells };

fn cells(event: &Value, now: i64) -> Vec<Value> {
    (table::EVENT.cells)(&rename(event.clone(), "v1", true), now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_style() -> Value {
        json!({
            "apiVersion": API_VERSION, "kind": "Event",
            "metadata": {"name": "web.1", "namespace": "default"},
            "eventTime": "2026-01-02T03:04:05.000000Z",
            "reportingController": "example.com/controller", "reportingInstance": "controller-0",
            "action": "Scaling", "reason": "Scaled", "type": "Normal", "note": "scaled to 3",
            "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"},
        })
    }

    #[test]
    fn the_two_shapes_are_one_event() {
        let core = rename(new_style(), "v1", true);
        assert_eq!(core["involvedObject"]["kind"], "Deployment");
        assert_eq!(
            (core["message"].as_str(), core["reportingComponent"].as_str()),
            (Some("scaled to 3"), Some("example.com/controller"))
        );
        assert!(core.get("note").is_none() && core["apiVersion"] == "v1");
        assert_eq!(rename(core, API_VERSION, false), new_style());
    }

    #[test]
    fn only_new_style_events_are_written_here() {
        assert!(EventsStrategy.validate(&new_style()).is_ok());
        let mut old_style = new_style();
        old_style["deprecatedCount"] = json!(3);
        old_style.as_object_mut().unwrap().remove("eventTime");
        old_style["type"] = json!("Bogus");
        let err = EventsStrategy.validate(&old_style).unwrap_err().to_string();
        for text in [
            "eventTime: Required value",
            "type: Invalid value: \"\": has invalid value: Bogus",
            "deprecatedCount: Invalid value: \"\": needs to be unset",
        ] {
            assert!(err.contains(text), "{text} in {err}");
        }
    }
}
