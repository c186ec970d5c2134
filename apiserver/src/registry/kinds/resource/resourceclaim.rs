//! resource.k8s.io/v1 ResourceClaims: a request for devices, written by a
//! user or by kube-controller-manager from a pod's ResourceClaimTemplate.
//! The spec never changes once made; kube-scheduler allocates devices and
//! reserves the claim for pods through `status`, the drivers report on the
//! devices there too.

use k8s_openapi::api::resource::v1 as resource;
use serde_json::{Value, json};

use super::admin_access::AdminAccess;
use super::claim_spec;
use super::device_config::{RequestNames, items};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults;
use crate::registry::kinds::{Kind, KindContext, field};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "ResourceClaim.resource.k8s.io";
/// Consumers a claim may be reserved for at once.
const MAX_RESERVED_FOR: usize = 256;
const MAX_DEVICE_CONDITIONS: usize = 8;

pub fn kind(context: &KindContext) -> Kind {
    Kind::typed::<resource::ResourceClaim>(
        Resource::new("resource.k8s.io", "ResourceClaim", "resourceclaims")
            .with_status()
            .returns_deleted_object(),
        ResourceClaimStrategy,
    )
    .with_hooks(AdminAccess::new(context, KIND, "/spec/devices/requests"))
}

#[derive(Debug)]
struct ResourceClaimStrategy;

impl Strategy for ResourceClaimStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::RESOURCE_V1_RESOURCE_CLAIM)
    }

    /// kube's claim strategy never touches `generation`: the spec cannot
    /// change.
    fn tracks_generation(&self) -> bool {
        false
    }

    fn set_defaults(&self, object: &mut Value) {
        if let Some(spec) = defaults::present(object, "spec") {
            claim_spec::set_defaults(spec);
        }
        let results = object.pointer_mut("/status/allocation/devices").and_then(|d| d.get_mut("results"));
        for result in results.and_then(Value::as_array_mut).into_iter().flatten() {
            claim_spec::set_toleration_defaults(result);
        }
    }

    /// Devices the new allocation no longer holds lose their reported status
    /// (kube's `dropDeallocatedStatusDevices`).
    fn prepare_subresource_update(&self, subresource: &str, new: &mut Value, _old: &Value) {
        if subresource != "status" {
            return;
        }
        let allocated = allocated_devices(&new["status"]);
        if let Some(devices) = new.pointer_mut("/status/devices").and_then(Value::as_array_mut) {
            devices.retain(|status| allocated.contains(&device_id(status)));
            if devices.is_empty() {
                defaults::remove(&mut new["status"], "devices");
            }
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, claim_spec::causes(&object["spec"], "spec"))
    }

    /// kube's `ValidateResourceClaimUpdate`: the spec is immutable.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, new, field::immutable("spec", &new["spec"], &old["spec"]).into_iter().collect())
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, new, status_causes(new, old))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidateResourceClaimStatusUpdate`: an allocation is made once
/// (and may be cleared), reservations need one and stop growing once the
/// claim is deleted, reported devices are allocated ones.
fn status_causes(claim: &Value, old: &Value) -> Vec<Cause> {
    let (status, old_status) = (&claim["status"], &old["status"]);
    let mut causes = reserved_for_causes(&status["reservedFor"]);
    let allocation = &status["allocation"];
    let reserved = !items(&status["reservedFor"]).is_empty();
    if reserved && allocation.is_null() {
        causes
            .push(field::forbidden("status.reservedFor", "may not be specified when `allocated` is not set"));
    }
    if claim["metadata"]["deletionTimestamp"].is_string() {
        let was: Vec<&Value> = items(&old_status["reservedFor"]).iter().map(|r| &r["uid"]).collect();
        if items(&status["reservedFor"]).iter().any(|r| !was.contains(&&r["uid"])) {
            causes.push(field::forbidden(
                "status.reservedFor",
                "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
            ));
        }
    }
    match (&old_status["allocation"], allocation) {
        (Value::Null, Value::Null) => {}
        (Value::Null, new) => causes.extend(allocation_causes(new, &claim["spec"])),
        (_, Value::Null) => {}
        (was, now) if was != now => {
            causes.push(field::invalid("status.allocation", now, "field is immutable"))
        }
        _ => {}
    }
    causes.extend(device_status_causes(status));
    causes
}

fn reserved_for_causes(reserved_for: &Value) -> Vec<Cause> {
    let entries = items(reserved_for);
    if entries.len() > MAX_RESERVED_FOR {
        return vec![field::too_many("status.reservedFor", entries.len(), MAX_RESERVED_FOR)];
    }
    let mut causes = Vec::new();
    let mut uids = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("status.reservedFor[{i}]");
        for key in ["resource", "name", "uid"] {
            if entry[key].as_str().unwrap_or_default().is_empty() {
                causes.push(field::required(&format!("{at}.{key}"), ""));
            }
        }
        let uid = entry["uid"].as_str().unwrap_or_default();
        if !uid.is_empty() && uids.contains(&uid) {
            causes.push(field::duplicate(&at, uid));
        }
        uids.push(uid);
    }
    causes
}

/// A new allocation: each result for one of the claim's requests, from a
/// driver's pool, naming a device.
fn allocation_causes(allocation: &Value, spec: &Value) -> Vec<Cause> {
    let names = RequestNames::of(&spec["devices"]["requests"]);
    let at = "status.allocation.devices.results";
    let results = items(&allocation["devices"]["results"]);
    if results.len() > claim_spec::MAX_REQUESTS {
        return vec![field::too_many(at, results.len(), claim_spec::MAX_REQUESTS)];
    }
    let mut causes = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let request = result["request"].as_str().unwrap_or_default();
        if !names.contains(request) {
            causes.push(field::invalid(
                &format!("{at}.request"),
                &json!(request),
                "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
            ));
        }
        causes.extend(super::device_config::driver_causes(&result["driver"], &format!("{at}.driver")));
        causes.extend(super::resourceslice::pool_name_causes(&result["pool"], &format!("{at}.pool")));
        let device = result["device"].as_str().unwrap_or_default();
        causes.extend(field::required_dns_label(device, &format!("{at}.device")));
        causes.extend(claim_spec::toleration_causes(&result["tolerations"], &format!("{at}.tolerations")));
    }
    causes
}

/// `status.devices`: what drivers report, only for allocated devices, once
/// each.
fn device_status_causes(status: &Value) -> Vec<Cause> {
    let allocated = allocated_devices(status);
    let mut causes = Vec::new();
    let mut seen = Vec::new();
    for (i, device) in items(&status["devices"]).iter().enumerate() {
        let at = format!("status.devices[{i}]");
        let id = device_id(device);
        if seen.contains(&id) {
            causes.push(field::cause(
                "FieldValueDuplicate",
                &at,
                format!("Duplicate value: {}", id_text(&id)),
            ));
            continue;
        }
        if !allocated.contains(&id) {
            causes.push(field::invalid(
                &at,
                &json!(id_text(&id)),
                "must be an allocated device in the claim",
            ));
        }
        let conditions = items(&device["conditions"]);
        if conditions.len() > MAX_DEVICE_CONDITIONS {
            causes.push(field::too_many(
                &format!("{at}.conditions"),
                conditions.len(),
                MAX_DEVICE_CONDITIONS,
            ));
        }
        seen.push(id);
    }
    causes
}

/// A device as allocation and status name it: driver, pool, device, share.
type DeviceId = [String; 4];

fn device_id(entry: &Value) -> DeviceId {
    ["driver", "pool", "device", "shareID"].map(|key| entry[key].as_str().unwrap_or_default().to_string())
}

fn id_text(id: &DeviceId) -> String {
    let [driver, pool, device, share] = id;
    match share.as_str() {
        "" => format!("{driver}/{pool}/{device}"),
        share => format!("{driver}/{pool}/{device}/{share}"),
    }
}

fn allocated_devices(status: &Value) -> Vec<DeviceId> {
    items(&status["allocation"]["devices"]["results"]).iter().map(device_id).collect()
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("State", "string", "A summary of the current state (allocated, pending, reserved, etc.)."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![table::name(object), table::s(state(object)), table::age(object, now)]
}

/// kube's `resourceClaimState`: deleted, pending, allocated, reserved.
fn state(claim: &Value) -> String {
    let deleted = claim["metadata"]["deletionTimestamp"].is_string();
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if claim["status"]["allocation"].is_null() {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if !items(&claim["status"]["reservedFor"]).is_empty() {
            states.push("reserved");
        }
    }
    states.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> Value {
        json!({"metadata": {"name": "gpu", "namespace": "ns"}, "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}
        ]}}})
    }

    fn allocated(mut claim: Value) -> Value {
        claim["status"] = json!({"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
        ]}}});
        claim
    }

    #[test]
    fn the_spec_never_changes() {
        let strategy = ResourceClaimStrategy;
        let old = claim();
        assert!(strategy.validate(&old).is_ok());
        let mut new = old.clone();
        new["spec"]["devices"]["requests"][0]["exactly"]["count"] = json!(2);
        let err = strategy.validate_update(&new, &old).unwrap_err().to_string();
        assert!(err.contains("spec: Invalid value: "), "{err}");
        assert!(err.ends_with("field is immutable"), "{err}");
    }

    #[test]
    fn an_allocation_is_made_once_and_reservations_need_one() {
        let strategy = ResourceClaimStrategy;
        let old = claim();
        let mut reserved = old.clone();
        reserved["status"] = json!({"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]});
        let err =
            strategy.validate_subresource_update(Some("status"), &reserved, &old).unwrap_err().to_string();
        assert!(
            err.contains("status.reservedFor: Forbidden: may not be specified when `allocated` is not set"),
            "{err}"
        );

        let new = allocated(old.clone());
        assert!(strategy.validate_subresource_update(Some("status"), &new, &old).is_ok());
        let mut moved = new.clone();
        moved["status"]["allocation"]["devices"]["results"][0]["device"] = json!("gpu-1");
        let err = strategy.validate_subresource_update(Some("status"), &moved, &new).unwrap_err().to_string();
        assert!(err.contains("status.allocation: Invalid value: "), "{err}");
        let mut wrong = allocated(old.clone());
        wrong["status"]["allocation"]["devices"]["results"][0]["request"] = json!("tpu");
        let err = strategy.validate_subresource_update(Some("status"), &wrong, &old).unwrap_err().to_string();
        assert!(
            err.contains("status.allocation.devices.results[0].request: Invalid value: \"tpu\""),
            "{err}"
        );
    }

    #[test]
    fn device_status_is_for_allocated_devices_and_goes_with_them() {
        let strategy = ResourceClaimStrategy;
        let old = allocated(claim());
        let mut new = old.clone();
        new["status"]["devices"] =
            json!([{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-9"}]);
        let err = strategy.validate_subresource_update(Some("status"), &new, &old).unwrap_err().to_string();
        assert!(
            err.contains("status.devices[0]: Invalid value: \"gpu.example.com/node-1/gpu-9\": must be an allocated device in the claim"),
            "{err}"
        );
        let mut reported = old.clone();
        reported["status"]["devices"] =
            json!([{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]);
        let mut deallocated = reported.clone();
        deallocated["status"]["allocation"] = Value::Null;
        strategy.prepare_subresource_update("status", &mut deallocated, &reported);
        assert!(deallocated["status"].get("devices").is_none(), "{deallocated}");
    }

    #[test]
    fn state_reads_as_kubectl_prints_it() {
        assert_eq!(state(&claim()), "pending");
        let mut reserved = allocated(claim());
        reserved["status"]["reservedFor"] = json!([{"resource": "pods", "name": "p", "uid": "u1"}]);
        assert_eq!(state(&reserved), "allocated,reserved");
        reserved["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(state(&reserved), "deleted,allocated,reserved");
    }
}
