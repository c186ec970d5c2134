//! core/v1 PersistentVolumes: a piece of storage in the cluster, bound to
//! a claim by kube-controller-manager. kube's defaults (Pending, retained
//! after its claim, a filesystem), the time of each phase change, and its
//! checks of capacity, access modes and volume source.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::persistentvolumeclaim::{VOLUME_MODES, access_mode_causes, access_modes_text, class_of};
use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy, defaults};
use crate::runtime::meta;
use crate::table::{self, Printer};

const KIND: &str = "PersistentVolume";
const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
/// The fields of a PersistentVolumeSource: exactly one says what it is.
const SOURCES: [&str; 22] = [
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
];

pub fn kind() -> Kind {
    Kind::typed::<core::PersistentVolume>(
        Resource::new("", "PersistentVolume", "persistentvolumes")
            .cluster_scoped()
            .short_names(&["pv"])
            .with_status()
            .returns_deleted_object(),
        VolumeStrategy,
    )
}

#[derive(Debug)]
struct VolumeStrategy;

impl Strategy for VolumeStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_PERSISTENT_VOLUME)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    /// kube's `SetDefaults_PersistentVolume`.
    fn set_defaults(&self, object: &mut Value) {
        if let Some(status) = defaults::object_at(object, "status") {
            defaults::string(status, "phase", "Pending");
        }
        if let Some(spec) = defaults::object_at(object, "spec") {
            defaults::string(spec, "persistentVolumeReclaimPolicy", "Retain");
            defaults::pointer(spec, "volumeMode", json!("Filesystem"));
        }
    }

    /// A new volume is Pending from now.
    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({"phase": "Pending", "lastPhaseTransitionTime": meta::now()});
    }

    /// A status write that changes the phase records when.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let phase = &new["status"]["phase"];
        if !phase.is_null() && *phase != old["status"]["phase"] && new["status"].is_object() {
            new["status"]["lastPhaseTransitionTime"] = json!(meta::now());
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidatePersistentVolumeSpec`, for what clients get wrong most.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let modes = table::arr_at(spec, &["accessModes"]);
    if modes.is_empty() {
        causes.push(field::required("spec.accessModes", ""));
    }
    causes.extend(access_mode_causes(modes, "spec.accessModes"));
    if table::len_at(spec, &["capacity"]) == 0 {
        causes.push(field::required("spec.capacity", ""));
    }
    if let Some(policy) =
        spec["persistentVolumeReclaimPolicy"].as_str().filter(|p| !RECLAIM_POLICIES.contains(p))
    {
        causes.push(field::not_supported("spec.persistentVolumeReclaimPolicy", policy, &RECLAIM_POLICIES));
    }
    if let Some(mode) = spec["volumeMode"].as_str().filter(|m| !VOLUME_MODES.contains(m)) {
        causes.push(field::not_supported("spec.volumeMode", mode, &VOLUME_MODES));
    }
    let given: Vec<&str> = SOURCES.iter().copied().filter(|s| spec[*s].is_object()).collect();
    match given.as_slice() {
        [] => causes.push(field::required("spec", "must specify a volume type")),
        [_] => {}
        [_, extra, ..] => {
            causes
                .push(field::forbidden(&format!("spec.{extra}"), "may not specify more than 1 volume type"));
        }
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Capacity", "string", "The storage the volume provides."),
        table::col("Access Modes", "string", "How the volume may be mounted."),
        table::col("Reclaim Policy", "string", "What becomes of the volume when its claim goes."),
        table::col("Status", "string", "The volume's phase."),
        table::col("Claim", "string", "The claim bound to the volume."),
        table::col("StorageClass", "string", "The storage class of the volume."),
        table::col("VolumeAttributesClass", "string", "The volume attributes class of the volume."),
        table::col("Reason", "string", "Why the volume is in its phase."),
        table::AGE,
        table::wide("VolumeMode", "string", "Whether the volume is a filesystem or a block device."),
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let claim = match table::at(object, &["spec", "claimRef"]) {
        Some(claim) => {
            format!("{}/{}", table::str_at(claim, &["namespace"]), table::str_at(claim, &["name"]))
        }
        None => String::new(),
    };
    let phase = if meta::is_being_deleted(object) {
        "Terminating"
    } else {
        table::str_at(object, &["status", "phase"])
    };
    vec![
        table::name(object),
        table::s(table::str_at(object, &["spec", "capacity", "storage"])),
        table::s(access_modes_text(table::arr_at(object, &["spec", "accessModes"]))),
        table::s(table::str_at(object, &["spec", "persistentVolumeReclaimPolicy"])),
        table::s(phase),
        table::s(claim),
        table::s(class_of(object)),
        table::s(table::str_or(object, &["spec", "volumeAttributesClassName"], "<unset>")),
        table::s(table::str_at(object, &["status", "reason"])),
        table::age(object, now),
        table::s(table::str_or(object, &["spec", "volumeMode"], "<unset>")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_volume_is_defaulted_and_needs_one_source() {
        let strategy = VolumeStrategy;
        let mut pv = json!({"metadata": {"name": "pv-1"}, "spec": {"capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}}});
        strategy.set_defaults(&mut pv);
        assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
        assert_eq!(pv["status"]["phase"], "Pending");
        assert!(strategy.validate(&pv).is_ok());
        let err = strategy.validate(&json!({"metadata": {"name": "x"}, "spec": {}})).unwrap_err().to_string();
        assert!(err.contains("spec.accessModes: Required value"), "{err}");
        assert!(err.contains("spec.capacity: Required value"), "{err}");
        assert!(err.contains("spec: Required value: must specify a volume type"), "{err}");
        pv["spec"]["nfs"] = json!({"server": "nfs", "path": "/"});
        let err = strategy.validate(&pv).unwrap_err().to_string();
        assert!(err.contains("spec.nfs: Forbidden: may not specify more than 1 volume type"), "{err}");
    }

    #[test]
    fn volumes_print_as_kube_prints_them() {
        let pv = json!({"metadata": {"name": "pv-1"}, "spec": {"capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": "default", "name": "data"}, "storageClassName": "manual"},
            "status": {"phase": "Bound"}});
        let cells = PRINTER.cells(&pv, 0);
        assert_eq!(
            cells[..9],
            [
                json!("pv-1"),
                json!("5Gi"),
                json!("RWO,RWX"),
                json!("Retain"),
                json!("Bound"),
                json!("default/data"),
                json!("manual"),
                json!("<unset>"),
                json!("")
            ]
        );
        assert_eq!(cells[10], json!("<unset>"));
    }
}
