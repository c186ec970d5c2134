//! core/v1 ReplicationControllers: the original replicated pod set, with
//! a plain label map for selector. kube's defaults (selector and labels
//! from the template's labels, one replica) and checks; scaled through
//! their scale subresource.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, pod_spec};
use crate::registry::{Resource, Strategy};
use crate::selector::go_quote;
use crate::table::{self, Printer};

const KIND: &str = "ReplicationController";

pub fn kind() -> Kind {
    Kind::typed::<core::ReplicationController>(
        Resource::new("", "ReplicationController", "replicationcontrollers")
            .short_names(&["rc"])
            .in_all()
            .with_status()
            .with_controller_scale(),
        ControllerStrategy,
    )
}

#[derive(Debug)]
struct ControllerStrategy;

impl Strategy for ControllerStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_REPLICATION_CONTROLLER)
    }

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `SetDefaults_ReplicationController` (the template's labels are
/// the selector and the labels when those are empty), one replica, then
/// the pod template's defaults.
fn set_defaults(object: &mut Value) {
    let template_labels = object["spec"]["template"]["metadata"]["labels"].clone();
    if template_labels.is_object() {
        let empty = |v: &Value| v.as_object().is_none_or(|m| m.is_empty());
        if empty(&object["spec"]["selector"]) && object["spec"].is_object() {
            object["spec"]["selector"] = template_labels.clone();
        }
        if empty(&object["metadata"]["labels"]) && object["metadata"].is_object() {
            object["metadata"]["labels"] = template_labels;
        }
    }
    let Some(spec) = defaults::present(object, "spec") else { return };
    defaults::pointer(spec, "replicas", json!(1));
    if let Some(template) = defaults::present(spec, "template") {
        pod_spec::template(template);
    }
}

/// kube's `ValidateReplicationControllerSpec`: a selector its template's
/// labels match, and replicas that are not negative.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let selector = spec["selector"].as_object().filter(|s| !s.is_empty());
    if selector.is_none() {
        causes.push(field::required("spec.selector", ""));
    }
    if let Some(replicas) = spec["replicas"].as_i64().filter(|r| *r < 0) {
        causes.push(field::invalid("spec.replicas", &replicas.into(), "must be greater than or equal to 0"));
    }
    let template = &spec["template"];
    if !template.is_object() {
        causes.push(field::required("spec.template", ""));
        return causes;
    }
    let labels = template["metadata"]["labels"].as_object();
    let matches = selector.is_some_and(|selector| {
        selector.iter().all(|(key, value)| labels.and_then(|l| l.get(key)) == Some(value))
    });
    if selector.is_some() && !matches {
        causes.push(field::cause(
            "FieldValueInvalid",
            "spec.template.metadata.labels",
            format!("Invalid value: {}: `selector` does not match template `labels`", go_map(labels)),
        ));
    }
    causes
}

/// A label map as Go's `%#v` prints it: `map[string]string{"app":"web"}`.
fn go_map(labels: Option<&serde_json::Map<String, Value>>) -> String {
    let Some(labels) = labels else { return "map[string]string(nil)".into() };
    let mut pairs: Vec<(&String, &Value)> = labels.iter().collect();
    pairs.sort_by_key(|(key, _)| *key);
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v.as_str().unwrap_or_default())))
        .collect();
    format!("map[string]string{{{}}}", pairs.join(", "))
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Desired", "integer", "How many pods the controller wants."),
        table::col("Current", "integer", "How many pods the controller has."),
        table::col("Ready", "integer", "How many of its pods are ready."),
        table::AGE,
        table::CONTAINERS,
        table::IMAGES,
        table::SELECTOR,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let [containers, images] = table::container_cells(table::at(object, &["spec", "template", "spec"]));
    vec![
        table::name(object),
        table::n(table::opt_int_at(object, &["spec", "replicas"]).unwrap_or(1)),
        table::n(table::int_at(object, &["status", "replicas"])),
        table::n(table::int_at(object, &["status", "readyReplicas"])),
        table::age(object, now),
        containers,
        images,
        table::s(table::format_labels(table::at(object, &["spec", "selector"]))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_and_labels_come_from_the_template() {
        let mut rc = json!({"metadata": {"name": "web"}, "spec": {"template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}});
        set_defaults(&mut rc);
        assert_eq!(rc["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(rc["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(rc["spec"]["replicas"], 1);
        assert_eq!(rc["spec"]["template"]["spec"]["restartPolicy"], "Always");
        assert!(spec_causes(&rc["spec"]).is_empty());
        let cells = PRINTER.cells(&rc, 0);
        assert_eq!(cells[..4], [json!("web"), json!(1), json!(0), json!(0)]);
        assert_eq!(cells[5..], [json!("c"), json!("nginx:1.27"), json!("app=web")]);
    }

    #[test]
    fn a_selector_its_template_does_not_match_is_refused() {
        let spec = json!({"selector": {"app": "db"}, "replicas": -1,
            "template": {"metadata": {"labels": {"app": "web", "tier": "front"}}}});
        let messages: Vec<String> =
            spec_causes(&spec).iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            messages,
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\", \"tier\":\"front\"}: `selector` does not match template `labels`",
            ]
        );
    }
}
