//! scheduling.k8s.io/v1 PriorityClasses: the names pods give for their
//! priority, resolved to `spec.priority` by the Priority admission plugin.
//! The two system classes exist from the first start (the bootstrap
//! controller makes them) and cannot be deleted; other names may not start
//! with `system-` nor go above a billion; value and preemptionPolicy never
//! change.

use k8s_openapi::api::scheduling::v1 as scheduling;
use serde_json::{Value, json};

use super::Kind;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::table::{self, Printer};

/// kube's system classes: name, value, description.
pub const SYSTEM: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];
const SYSTEM_PREFIX: &str = "system-";
const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;
const POLICIES: [&str; 2] = ["Never", "PreemptLowerPriority"];

pub fn kind() -> Kind {
    Kind::typed::<scheduling::PriorityClass>(
        Resource::new("scheduling.k8s.io", "PriorityClass", "priorityclasses")
            .short_names(&["pc"])
            .cluster_scoped(),
        PriorityClassStrategy,
    )
}

/// A system class as the bootstrap controller creates it.
pub fn system_class(name: &str, value: i64, description: &str) -> Value {
    json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
        "value": value, "description": description, "preemptionPolicy": "PreemptLowerPriority"})
}

#[derive(Debug)]
struct PriorityClassStrategy;

fn refuse(object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    super::field::refuse("PriorityClass.scheduling.k8s.io", object, causes)
}

impl Strategy for PriorityClassStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::SCHEDULING_V1_PRIORITY_CLASS)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn set_defaults(&self, object: &mut Value) {
        if object["preemptionPolicy"].is_null() && object.is_object() {
            object["preemptionPolicy"] = json!("PreemptLowerPriority");
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        let name = meta::name_of(object);
        let value = object["value"].as_i64().unwrap_or_default();
        if name.starts_with(SYSTEM_PREFIX) {
            if let Err(why) =
                known_system_class(name, value, object["globalDefault"].as_bool().unwrap_or(false))
            {
                causes.push(Cause {
                    reason: "FieldValueForbidden",
                    field: "metadata.name".into(),
                    message: format!(
                        "Forbidden: priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"
                    ),
                });
            }
        } else if value > HIGHEST_USER_PRIORITY {
            causes.push(Cause {
                reason: "FieldValueForbidden",
                field: "value".into(),
                message: format!(
                    "Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"
                ),
            });
        }
        if let Some(policy) = object["preemptionPolicy"].as_str().filter(|p| !POLICIES.contains(p)) {
            causes.push(Cause {
                reason: "FieldValueNotSupported",
                field: "preemptionPolicy".into(),
                message: format!(
                    "Unsupported value: \"{policy}\": supported values: \"Never\", \"PreemptLowerPriority\""
                ),
            });
        }
        refuse(object, causes)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        if new["value"] != old["value"] {
            causes.push(Cause {
                reason: "FieldValueForbidden",
                field: "value".into(),
                message: "Forbidden: may not be changed in an update.".into(),
            });
        }
        if new["preemptionPolicy"] != old["preemptionPolicy"] {
            let shown =
                new["preemptionPolicy"].as_str().map(|p| format!("\"{p}\"")).unwrap_or_else(|| "null".into());
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: "preemptionPolicy".into(),
                message: format!("Invalid value: {shown}: field is immutable"),
            });
        }
        refuse(new, causes)?;
        self.validate(new)
    }

    /// kube's registry refuses to delete the system classes.
    fn check_delete(&self, name: &str) -> Result<(), ApiError> {
        if SYSTEM.iter().any(|(system, _, _)| *system == name) {
            return Err(ApiError::ForbiddenFor {
                qualified: "priorityclasses.scheduling.k8s.io".into(),
                name: name.into(),
                why: "this is a system priority class and cannot be deleted".into(),
                causes: Vec::new(),
            });
        }
        Ok(())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// Whether `name` is a system class with its own value and no global
/// default (kube's `IsKnownSystemPriorityClass`), and if not why.
fn known_system_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, system_value, _)) = SYSTEM.iter().find(|(system, _, _)| *system == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if value != *system_value {
        return Err(format!("value of {name} PriorityClass must be {system_value}"));
    }
    if global_default {
        return Err(format!("globalDefault of {name} PriorityClass must be false"));
    }
    Ok(())
}

/// kube's printer.
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Value", "integer", "The priority pods of this class get."),
        table::col("Global-Default", "boolean", "Whether pods naming no class get this one."),
        table::AGE,
        table::col("PreemptionPolicy", "string", "Whether pods of this class preempt lower-priority pods."),
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![
        table::name(object),
        table::n(table::int_at(object, &["value"])),
        json!(object["globalDefault"].as_bool().unwrap_or(false)),
        table::age(object, now),
        table::s(table::str_at(object, &["preemptionPolicy"])),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names_high_values_and_changes_are_refused_with_kubes_texts() {
        let class = |name: &str, value: i64| json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"});
        let message = |r: Result<(), ApiError>| r.unwrap_err().to_string();
        assert_eq!(
            message(PriorityClassStrategy.validate(&class("system-mine", 5))),
            "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
        );
        PriorityClassStrategy.validate(&class("system-node-critical", 2_000_001_000)).unwrap();
        assert!(
            message(PriorityClassStrategy.validate(&class("high", 2_000_000_000))).ends_with(
                "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
            )
        );
        let changed = PriorityClassStrategy.validate_update(&class("high", 2), &class("high", 1));
        assert!(message(changed).ends_with("value: Forbidden: may not be changed in an update."));
        let err = PriorityClassStrategy.check_delete("system-cluster-critical").unwrap_err();
        assert_eq!(
            err.to_string(),
            "priorityclasses.scheduling.k8s.io \"system-cluster-critical\" is forbidden: this is a system priority class and cannot be deleted"
        );
        let mut bare = json!({"metadata": {"name": "x"}, "value": 1});
        PriorityClassStrategy.set_defaults(&mut bare);
        assert_eq!(bare["preemptionPolicy"], "PreemptLowerPriority");
    }
}
