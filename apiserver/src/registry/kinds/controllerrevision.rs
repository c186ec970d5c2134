//! apps/v1 ControllerRevisions: the immutable snapshots of a StatefulSet's
//! or DaemonSet's pod template that their controllers roll between. Stored
//! and validated as kube does (data given once, a revision number that is
//! not negative); nothing here makes them.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::Value;

use super::{Kind, field};
use crate::errors::ApiError;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "ControllerRevision.apps";

pub fn kind() -> Kind {
    Kind::typed::<apps::ControllerRevision>(
        Resource::new("apps", "ControllerRevision", "controllerrevisions"),
        ControllerRevisionStrategy,
    )
}

#[derive(Debug)]
struct ControllerRevisionStrategy;

impl Strategy for ControllerRevisionStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_CONTROLLER_REVISION)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        if object["data"].is_null() {
            causes.push(field::required("data", "data is mandatory"));
        }
        if let Some(revision) = object["revision"].as_i64().filter(|r| *r < 0) {
            causes.push(field::invalid("revision", &revision.into(), "must be greater than or equal to 0"));
        }
        field::refuse(KIND, object, causes)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        field::refuse(KIND, new, field::immutable("data", &new["data"], &old["data"]).into_iter().collect())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Controller", "string", "The object whose revision this is (its controller reference)."),
        table::col("Revision", "integer", "The revision number, counting up from 1."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![
        table::name(object),
        table::s(controller_of(object)),
        table::n(table::int_at(object, &["revision"])),
        table::age(object, now),
    ]
}

/// The controller reference as kube prints a resource name:
/// `statefulset.apps/web` (`<none>` without one).
fn controller_of(object: &Value) -> String {
    let owners = table::arr_at(object, &["metadata", "ownerReferences"]);
    let Some(owner) = owners.iter().find(|o| o["controller"] == true) else { return "<none>".into() };
    let kind = table::str_at(owner, &["kind"]).to_lowercase();
    let group = table::str_at(owner, &["apiVersion"]).rsplit_once('/').map_or("", |(group, _)| group);
    let name = table::str_at(owner, &["name"]);
    if group.is_empty() { format!("{kind}/{name}") } else { format!("{kind}.{group}/{name}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn revisions_print_their_controller() {
        let revision = json!({"metadata": {"name": "web-7d9", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u", "controller": true}]},
            "data": {}, "revision": 3});
        assert_eq!(
            PRINTER.cells(&revision, 0)[..3],
            [json!("web-7d9"), json!("statefulset.apps/web"), json!(3)]
        );
        assert_eq!(controller_of(&json!({"metadata": {}})), "<none>");
    }

    #[test]
    fn data_is_required_and_fixed_and_revisions_are_not_negative() {
        let strategy = ControllerRevisionStrategy;
        let err =
            strategy.validate(&json!({"metadata": {"name": "r"}, "revision": -1})).unwrap_err().to_string();
        assert!(err.contains("data: Required value: data is mandatory"), "{err}");
        assert!(err.contains("revision: Invalid value: -1: must be greater than or equal to 0"), "{err}");
        let old = json!({"metadata": {"name": "r"}, "data": {"a": 1}, "revision": 1});
        let new = json!({"metadata": {"name": "r"}, "data": {"a": 2}, "revision": 1});
        assert!(strategy.validate_update(&new, &old).unwrap_err().to_string().contains("field is immutable"));
    }
}
