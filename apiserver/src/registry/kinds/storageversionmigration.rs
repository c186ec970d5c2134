//! storagemigration.k8s.io/v1 StorageVersionMigrations: a request that
//! every object of one resource be rewritten in storage (after an
//! encryption key or storage version changed). kube-controller-manager's
//! storage-version-migrator does the rewriting and reports in `status`;
//! the server keeps the request and its status consistent.

use k8s_openapi::api::storagemigration::v1 as storagemigration;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::metadata::{dns_1035_errors, dns_subdomain_errors};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "StorageVersionMigration.storagemigration.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<storagemigration::StorageVersionMigration>(
        Resource::new("storagemigration.k8s.io", "StorageVersionMigration", "storageversionmigrations")
            .cluster_scoped()
            .with_status(),
        MigrationStrategy,
    )
}

#[derive(Debug)]
struct MigrationStrategy;

impl Strategy for MigrationStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGEMIGRATION_V1_STORAGE_VERSION_MIGRATION)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, resource_causes(&object["spec"]["resource"]))
    }

    /// kube's `ValidateStorageVersionMigrationUpdate`: the spec never changes.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let mut causes = resource_causes(&new["spec"]["resource"]);
        causes.extend(field::immutable("spec", &new["spec"], &old["spec"]));
        field::refuse(KIND, new, causes)
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, new, status_causes(&new["status"], &old["status"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// The resource to migrate: a DNS-1035 resource name in an optional group.
fn resource_causes(resource: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match resource["resource"].as_str().unwrap_or_default() {
        "" => causes.push(field::required("spec.resource.resource", "resource is required to be set")),
        name => {
            let errors = dns_1035_errors(name);
            if !errors.is_empty() {
                causes.push(field::invalid("spec.resource.resource", &json!(name), &errors.join(",")));
            }
        }
    }
    let group = resource["group"].as_str().unwrap_or_default();
    let errors = dns_subdomain_errors(group);
    if !group.is_empty() && !errors.is_empty() {
        causes.push(field::invalid("spec.resource.group", &json!(group), &errors.join(",")));
    }
    causes
}

/// kube's `ValidateStorageVersionMigrationStatusUpdate`: the migrated-at
/// resourceVersion is a number, set with the first status and kept; Succeeded and Failed exclude each
/// other and Running, and neither is taken back.
fn status_causes(status: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let version = status["resourceVersion"].as_str().unwrap_or_default();
    if !is_well_formed(version) {
        let why = format!("resource version is not well formed: {version}");
        causes.push(field::invalid("status.resourceVersion", &json!(version), &why));
    }
    let was = old["resourceVersion"].as_str().unwrap_or_default();
    if !was.is_empty() && was != version {
        causes.push(field::invalid("status.resourceVersion", &json!(version), "field is immutable"));
    }
    let conditions = &status["conditions"];
    let (succeeded, failed, running) =
        (holds(status, "Succeeded"), holds(status, "Failed"), holds(status, "Running"));
    let mut refuse = |why: &str| causes.push(field::invalid("status.conditions", conditions, why));
    if succeeded && failed {
        refuse("Both success and failed conditions cannot be true at the same time");
    }
    if succeeded && running {
        refuse("Running condition cannot be true when success condition is true");
    }
    if failed && running {
        refuse("Running condition cannot be true when failed condition is true");
    }
    if holds(old, "Succeeded") && !succeeded {
        refuse("Success condition cannot be set to false once it is true");
    }
    if holds(old, "Failed") && !failed {
        refuse("Failed condition cannot be set to false once it is true");
    }
    causes
}

/// kube's `resourceversion` rule: a positive integer without leading
/// zeros (an empty one is not, so every status names the version).
fn is_well_formed(version: &str) -> bool {
    !version.is_empty() && !version.starts_with('0') && version.bytes().all(|b| b.is_ascii_digit())
}

/// Whether the status has condition `kind` with status True.
fn holds(status: &Value, kind: &str) -> bool {
    table::arr_at(status, &["conditions"]).iter().any(|c| c["type"] == kind && c["status"] == "True")
}

static PRINTER: Printer = Printer {
    columns: &[table::NAME, table::col("Resource", "string", "Fully qualified resource to migrate")],
    cells,
};

fn cells(object: &Value, _now: i64) -> Vec<Value> {
    let resource = &object["spec"]["resource"];
    let text = |key: &str| resource[key].as_str().unwrap_or_default().to_string();
    vec![table::name(object), table::s(format!("{}.{}", text("resource"), text("group")))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_migration_names_a_resource_and_reports_one_outcome() {
        let strategy = MigrationStrategy;
        let secrets = json!({"metadata": {"name": "secrets"}, "spec": {"resource": {"group": "", "resource": "secrets"}}});
        assert!(strategy.validate(&secrets).is_ok());
        let err = strategy
            .validate(&json!({"metadata": {"name": "x"}, "spec": {"resource": {"group": "Bad_Group"}}}))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("spec.resource.resource: Required value: resource is required to be set"),
            "{err}"
        );
        assert!(err.contains("spec.resource.group: Invalid value: \"Bad_Group\""), "{err}");

        let mut done = secrets.clone();
        done["status"] =
            json!({"resourceVersion": "42", "conditions": [{"type": "Succeeded", "status": "True"}]});
        assert!(strategy.validate_subresource_update(Some("status"), &done, &secrets).is_ok());
        let mut undone = done.clone();
        undone["status"]["conditions"][0]["status"] = json!("False");
        let err =
            strategy.validate_subresource_update(Some("status"), &undone, &done).unwrap_err().to_string();
        assert!(err.contains("Success condition cannot be set to false once it is true"), "{err}");
        let err = strategy
            .validate_subresource_update(
                Some("status"),
                &json!({"metadata": {"name": "x"}, "status": {}}),
                &secrets,
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "status.resourceVersion: Invalid value: \"\": resource version is not well formed: "
            ),
            "{err}"
        );
        let mut moved = done.clone();
        moved["status"]["resourceVersion"] = json!("43");
        let err =
            strategy.validate_subresource_update(Some("status"), &moved, &done).unwrap_err().to_string();
        assert!(err.contains("status.resourceVersion: Invalid value: \"43\": field is immutable"), "{err}");
    }
}
