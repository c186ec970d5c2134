//! storage.k8s.io/v1 CSIDrivers: how kube should treat a CSI driver's
//! volumes (attach or not, pod info on mount, capacity, lifecycle modes).
//! kube's defaults; what attaching and fsGroup mean never changes.

use k8s_openapi::api::storage::v1 as storage;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy, defaults};
use crate::table::{self, Printer};

const KIND: &str = "CSIDriver.storage.k8s.io";
const LIFECYCLE_MODES: [&str; 2] = ["Ephemeral", "Persistent"];
const FS_GROUP_POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];
const IMMUTABLE: [&str; 3] = ["attachRequired", "fsGroupPolicy", "volumeLifecycleModes"];

pub fn kind() -> Kind {
    Kind::typed::<storage::CSIDriver>(
        Resource::new("storage.k8s.io", "CSIDriver", "csidrivers").cluster_scoped(),
        CsiDriverStrategy,
    )
}

#[derive(Debug)]
struct CsiDriverStrategy;

impl Strategy for CsiDriverStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::STORAGE_V1_CSI_DRIVER)
    }

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        let causes = IMMUTABLE
            .iter()
            .filter_map(|key| field::immutable(&format!("spec.{key}"), &new["spec"][key], &old["spec"][key]))
            .collect();
        field::refuse(KIND, new, causes)
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `SetDefaults_CSIDriver` (with SELinuxMountReadWriteOncePod on).
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::pointer(spec, "attachRequired", json!(true));
    defaults::pointer(spec, "podInfoOnMount", json!(false));
    defaults::pointer(spec, "storageCapacity", json!(false));
    defaults::pointer(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    if spec["volumeLifecycleModes"].as_array().is_none_or(Vec::is_empty) {
        spec["volumeLifecycleModes"] = json!(["Persistent"]);
    }
    defaults::pointer(spec, "requiresRepublish", json!(false));
    defaults::pointer(spec, "seLinuxMount", json!(false));
}

fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for mode in table::arr_at(spec, &["volumeLifecycleModes"]).iter().filter_map(Value::as_str) {
        if !LIFECYCLE_MODES.contains(&mode) {
            causes.push(field::not_supported("spec.volumeLifecycleModes", mode, &LIFECYCLE_MODES));
        }
    }
    if let Some(policy) = spec["fsGroupPolicy"].as_str().filter(|p| !FS_GROUP_POLICIES.contains(p)) {
        causes.push(field::not_supported("spec.fsGroupPolicy", policy, &FS_GROUP_POLICIES));
    }
    let mut audiences = Vec::new();
    for (i, request) in table::arr_at(spec, &["tokenRequests"]).iter().enumerate() {
        let audience = table::str_at(request, &["audience"]);
        if audiences.contains(&audience) {
            causes.push(field::cause(
                "FieldValueDuplicate",
                &format!("spec.tokenRequests[{i}].audience"),
                format!("Duplicate value: {}", crate::selector::go_quote(audience)),
            ));
        }
        audiences.push(audience);
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("AttachRequired", "boolean", "Whether volumes must be attached before they are mounted."),
        table::col("PodInfoOnMount", "boolean", "Whether the driver is told about the pod at mount."),
        table::col("StorageCapacity", "boolean", "Whether the scheduler considers the driver's capacity."),
        table::col("TokenRequests", "string", "The audiences of the tokens the driver is given."),
        table::col("RequiresRepublish", "boolean", "Whether volumes are published again periodically."),
        table::col("Modes", "string", "The volume lifecycle modes the driver supports."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let flag =
        |key: &str, default: bool| Value::Bool(table::bool_at(object, &["spec", key]).unwrap_or(default));
    let tokens = match table::at(object, &["spec", "tokenRequests"]) {
        Some(requests) => {
            let audiences: Vec<&str> =
                requests.as_array().into_iter().flatten().map(|r| table::str_at(r, &["audience"])).collect();
            audiences.join(",")
        }
        None => "<unset>".to_string(),
    };
    let modes: Vec<&str> =
        table::arr_at(object, &["spec", "volumeLifecycleModes"]).iter().filter_map(Value::as_str).collect();
    let modes = if modes.is_empty() { "<none>".to_string() } else { modes.join(",") };
    vec![
        table::name(object),
        flag("attachRequired", true),
        flag("podInfoOnMount", false),
        flag("storageCapacity", false),
        table::s(tokens),
        flag("requiresRepublish", false),
        table::s(modes),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_is_defaulted_and_printed_as_kube_does() {
        let mut driver = json!({"metadata": {"name": "ebs.csi.aws.com"}, "spec": {}});
        set_defaults(&mut driver);
        assert_eq!(
            driver["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": false, "seLinuxMount": false})
        );
        assert_eq!(
            PRINTER.cells(&driver, 0)[..7],
            [
                json!("ebs.csi.aws.com"),
                json!(true),
                json!(false),
                json!(false),
                json!("<unset>"),
                json!(false),
                json!("Persistent")
            ]
        );
    }

    #[test]
    fn modes_are_checked_and_attaching_never_changes() {
        let strategy = CsiDriverStrategy;
        let bad = json!({"metadata": {"name": "d"}, "spec": {"volumeLifecycleModes": ["Forever"],
            "tokenRequests": [{"audience": "a"}, {"audience": "a"}]}});
        let err = strategy.validate(&bad).unwrap_err().to_string();
        assert!(err.contains("spec.volumeLifecycleModes: Unsupported value: \"Forever\""), "{err}");
        assert!(err.contains("spec.tokenRequests[1].audience: Duplicate value: \"a\""), "{err}");
        let old = json!({"metadata": {"name": "d"}, "spec": {"attachRequired": true}});
        let new = json!({"metadata": {"name": "d"}, "spec": {"attachRequired": false}});
        let err = strategy.validate_update(&new, &old).unwrap_err().to_string();
        assert!(err.contains("spec.attachRequired: Invalid value: false: field is immutable"), "{err}");
    }
}
