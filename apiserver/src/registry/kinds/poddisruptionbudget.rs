//! policy/v1 PodDisruptionBudgets: how many of a set of pods may be down at
//! once for voluntary disruptions (drains, evictions). Nothing here evicts
//! or computes `status`; the kind is stored, validated, listed and printed
//! as kube does, so tools that create PDBs (Helm charts, operators,
//! `kubectl create pdb`) work.

use k8s_openapi::api::policy::v1 as policy;
use serde_json::{Value, json};

use super::Kind;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<policy::PodDisruptionBudget>(
        Resource::new("policy", "PodDisruptionBudget", "poddisruptionbudgets")
            .short_names(&["pdb"])
            .with_status(),
        PodDisruptionBudgetStrategy,
    )
}

#[derive(Debug)]
struct PodDisruptionBudgetStrategy;

impl Strategy for PodDisruptionBudgetStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::POLICY_V1_POD_DISRUPTION_BUDGET)
    }

    /// kube resets the status of a new budget to its zero value, whose
    /// counts Go writes even when 0.
    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] =
            json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0});
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let spec = &object["spec"];
        let mut causes = Vec::new();
        if !spec["minAvailable"].is_null() && !spec["maxUnavailable"].is_null() {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: "spec".into(),
                message: format!("Invalid value: {spec}: minAvailable and maxUnavailable cannot be both set"),
            });
        }
        for field in ["minAvailable", "maxUnavailable"] {
            causes.extend(int_or_percent(&spec[field], &format!("spec.{field}")));
        }
        super::field::refuse("PodDisruptionBudget", object, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's checks of an int-or-percent budget: not negative, and a percent
/// is digits then `%`, at most 100%.
fn int_or_percent(value: &Value, field: &str) -> Vec<Cause> {
    let invalid = |message: String| Cause { reason: "FieldValueInvalid", field: field.to_string(), message };
    match value {
        Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => {
            vec![invalid(format!("Invalid value: {n}: must be greater than or equal to 0"))]
        }
        Value::String(text) => {
            let Some(digits) =
                text.strip_suffix('%').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            else {
                return vec![invalid(format!(
                    "Invalid value: \"{text}\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
                ))];
            };
            match digits.parse::<u64>() {
                Ok(percent) if percent <= 100 => Vec::new(),
                _ => vec![invalid(format!("Invalid value: \"{text}\": must not be greater than 100%"))],
            }
        }
        _ => Vec::new(),
    }
}

/// kube's printer: the budget as given (N/A when unset), and how many pods
/// may be disrupted now.
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Min Available", "string", "The minimum number of pods that must be available."),
        table::col("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
        table::col(
            "Allowed Disruptions",
            "integer",
            "Calculated number of pods that may be disrupted at this time.",
        ),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let budget = |field: &str| match &object["spec"][field] {
        Value::Null => "N/A".to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    vec![
        table::name(object),
        table::s(budget("minAvailable")),
        table::s(budget("maxUnavailable")),
        table::n(table::int_at(object, &["status", "disruptionsAllowed"])),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_print_as_kube_prints_them() {
        let pdb = json!({"metadata": {"name": "web"}, "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 2}});
        let cells = PRINTER.cells(&pdb, 0);
        assert_eq!(cells[..4], [json!("web"), json!("50%"), json!("N/A"), json!(2)]);
        let names: Vec<String> = PRINTER.columns().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]);
    }

    #[test]
    fn a_new_budget_starts_from_a_zero_status() {
        let mut pdb =
            json!({"metadata": {"name": "p"}, "spec": {"minAvailable": 1}, "status": {"expectedPods": 9}});
        PodDisruptionBudgetStrategy.prepare_for_create(&mut pdb);
        assert_eq!(
            pdb["status"],
            json!({"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0})
        );
    }

    #[test]
    fn both_budgets_or_bad_percents_are_invalid() {
        let strategy = PodDisruptionBudgetStrategy;
        let both = json!({"metadata": {"name": "p"}, "spec": {"minAvailable": 1, "maxUnavailable": 1}});
        let err = strategy.validate(&both).unwrap_err();
        assert_eq!(err.code(), 422);
        assert!(err.to_string().contains("minAvailable and maxUnavailable cannot be both set"), "{err}");
        let over = json!({"metadata": {"name": "p"}, "spec": {"maxUnavailable": "150%"}});
        assert!(strategy.validate(&over).unwrap_err().to_string().contains("must not be greater than 100%"));
        let negative = json!({"metadata": {"name": "p"}, "spec": {"minAvailable": -1}});
        assert!(strategy.validate(&negative).is_err());
        let fine = json!({"metadata": {"name": "p"}, "spec": {"minAvailable": "30%"}});
        assert!(strategy.validate(&fine).is_ok());
    }
}
