//! networking.k8s.io/v1 IPAddresses: one object per Service IP in use,
//! named by the address, naming the object that holds it. rtcd-apiserver's
//! cluster IP allocator writes them (`service/allocator.rs`) when it hands
//! an address out and deletes them with the Service; one created by hand
//! reserves its address, as on kube.

use k8s_openapi::api::networking::v1 as networking;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::metadata::{dns_subdomain_errors, path_segment_errors};
use crate::registry::{NameRule, Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "IPAddress.networking.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<networking::IPAddress>(
        Resource::new("networking.k8s.io", "IPAddress", "ipaddresses").cluster_scoped().short_names(&["ip"]),
        IpAddressStrategy,
    )
}

#[derive(Debug)]
struct IpAddressStrategy;

impl Strategy for IpAddressStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::NETWORKING_V1_IP_ADDRESS)
    }

    fn name_rule(&self) -> NameRule {
        NameRule::IpAddress
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, parent_causes(&object["spec"]["parentRef"]))
    }

    /// kube's `ValidateIPAddressUpdate`: who holds the address never changes.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let (now, was) = (&new["spec"]["parentRef"], &old["spec"]["parentRef"]);
        field::refuse(KIND, new, field::immutable("spec.parentRef", now, was).into_iter().collect())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `validateIPAddressParentReference`: a resource and a name, an
/// optional group and namespace, each a valid path segment.
fn parent_causes(parent: &Value) -> Vec<Cause> {
    if !parent.is_object() {
        return vec![field::required("spec.parentRef", "")];
    }
    let mut causes = Vec::new();
    let group = parent["group"].as_str().unwrap_or_default();
    for why in dns_subdomain_errors(group).iter().filter(|_| !group.is_empty()) {
        causes.push(field::invalid("spec.parentRef.group", &json!(group), why));
    }
    for (key, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let at = format!("spec.parentRef.{key}");
        match parent[key].as_str().unwrap_or_default() {
            "" if required => causes.push(field::required(&at, "")),
            "" => {}
            value => {
                for why in path_segment_errors(value) {
                    causes.push(field::invalid(&at, &json!(value), &why));
                }
            }
        }
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[table::NAME, table::col("ParentRef", "string", "The object that holds the address.")],
    cells,
};

/// kube prints the holder as `resource[.group]/[namespace/]name`.
fn cells(object: &Value, _now: i64) -> Vec<Value> {
    let parent = &object["spec"]["parentRef"];
    let holder = match parent.as_object() {
        None => "<none>".to_string(),
        Some(_) => {
            let text = |key: &str| parent[key].as_str().unwrap_or_default().to_string();
            let mut holder = match text("group").as_str() {
                "" => text("resource"),
                group => format!("{}.{group}", text("resource")),
            }
            .to_lowercase();
            if !text("namespace").is_empty() {
                holder = format!("{holder}/{}", text("namespace"));
            }
            format!("{holder}/{}", text("name"))
        }
    };
    vec![table::name(object), table::s(holder)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_its_holder_which_never_changes() {
        let strategy = IpAddressStrategy;
        let held = json!({"metadata": {"name": "10.96.0.10"}, "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "kube-system", "name": "kube-dns"}}});
        assert!(strategy.validate(&held).is_ok());
        assert_eq!(cells(&held, 0)[1], json!("services/kube-system/kube-dns"));
        let err = strategy
            .validate(&json!({"metadata": {"name": "10.96.0.11"}, "spec": {}}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("spec.parentRef: Required value"), "{err}");
        let err = strategy
            .validate(
                &json!({"metadata": {"name": "10.96.0.11"}, "spec": {"parentRef": {"resource": "services"}}}),
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("spec.parentRef.name: Required value"), "{err}");
        let mut moved = held.clone();
        moved["spec"]["parentRef"]["name"] = json!("other");
        let err = strategy.validate_update(&moved, &held).unwrap_err().to_string();
        assert!(
            err.contains("spec.parentRef: Invalid value: ") && err.ends_with("field is immutable"),
            "{err}"
        );
    }
}
