//! v1 ResourceQuotas: per-namespace limits on how many objects of each
//! resource and how much compute its pods may claim. `spec.hard` is what
//! the administrator allows; `status` (hard and used) is written by the
//! ResourceQuota admission plugin as writes are admitted and by the quota
//! controller, through the status subresource.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::Kind;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::runtime::quantity::Quantity;
use crate::selector::go_quote;
use crate::table::{self, Printer};

/// The scopes kube knows.
pub const SCOPES: [&str; 7] = [
    "BestEffort",
    "CrossNamespacePodAffinity",
    "NotBestEffort",
    "NotTerminating",
    "PriorityClass",
    "Terminating",
    "VolumeAttributesClass",
];

pub fn kind() -> Kind {
    Kind::typed::<core::ResourceQuota>(
        Resource::new("", "ResourceQuota", "resourcequotas")
            .short_names(&["quota"])
            .with_status()
            .returns_deleted_object(),
        ResourceQuotaStrategy,
    )
}

#[derive(Debug)]
struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_RESOURCE_QUOTA)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    /// A new quota starts without status: the controller fills it.
    fn prepare_for_create(&self, object: &mut Value) {
        meta::remove_field(object, "status");
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        for (field, list) in [
            ("spec.hard", &object["spec"]["hard"]),
            ("status.hard", &object["status"]["hard"]),
            ("status.used", &object["status"]["used"]),
        ] {
            causes.extend(resource_list_causes(field, list));
        }
        for (i, scope) in object["spec"]["scopes"].as_array().into_iter().flatten().enumerate() {
            let scope = scope.as_str().unwrap_or_default();
            if !SCOPES.contains(&scope) {
                let supported: Vec<String> = SCOPES.iter().map(|s| go_quote(s)).collect();
                causes.push(Cause {
                    reason: "FieldValueNotSupported",
                    field: format!("spec.scopes[{i}]"),
                    message: format!(
                        "Unsupported value: {}: supported values: {}",
                        go_quote(scope),
                        supported.join(", ")
                    ),
                });
            }
        }
        super::field::refuse("ResourceQuota", object, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// Each name a qualified name, each amount a quantity not below zero.
fn resource_list_causes(field: &str, list: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (name, amount) in list.as_object().into_iter().flatten() {
        let at = format!("{field}[{name}]");
        for why in
            crate::selector::validation::qualified_name_errors(name.strip_prefix("count/").unwrap_or(name))
        {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: at.clone(),
                message: format!("Invalid value: {}: {why}", go_quote(name)),
            });
        }
        let text = amount.as_str().map(str::to_string).unwrap_or_else(|| amount.to_string());
        match Quantity::parse(&text) {
            Ok(q) if q.milli_value() < 0 => causes.push(Cause {
                reason: "FieldValueInvalid",
                field: at,
                message: format!("Invalid value: {}: must be greater than or equal to 0", go_quote(&text)),
            }),
            Ok(_) => {}
            Err(why) => causes.push(Cause {
                reason: "FieldValueInvalid",
                field: at,
                message: format!("Invalid value: {}: {why}", go_quote(&text)),
            }),
        }
    }
    causes
}

/// kube's printer: `resource: used/hard` pairs, requests and counts in
/// one column, `limits.*` in the other.
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::AGE,
        table::col(
            "Request",
            "string",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        table::col(
            "Limit",
            "string",
            "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        ),
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let hard = object["status"]["hard"].as_object().cloned().unwrap_or_default();
    let used = &object["status"]["used"];
    let (mut requests, mut limits) = (Vec::new(), Vec::new());
    for (name, amount) in &hard {
        let pair =
            format!("{name}: {}/{}", used[name].as_str().unwrap_or("0"), amount.as_str().unwrap_or_default());
        if name.starts_with("limits.") { limits.push(pair) } else { requests.push(pair) }
    }
    vec![table::name(object), table::age(object, now), json!(requests.join(", ")), json!(limits.join(", "))]
}
