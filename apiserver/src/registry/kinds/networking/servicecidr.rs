//! networking.k8s.io/v1 ServiceCIDRs: the ranges Service IPs come from.
//! rtcd-apiserver makes the default one, `kubernetes`, from
//! `--service-cluster-ip-range` (`controllers/bootstrap.rs`), ready at once,
//! and allocates from that range; more can be created and are stored and
//! validated (kube-controller-manager's servicecidrs controller reports on
//! them), but rtcd's allocator does not hand out their addresses yet.

use k8s_openapi::api::networking::v1 as networking;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy};
use crate::runtime::ip::cidr_errors;
use crate::table::{self, Printer};

const KIND: &str = "ServiceCIDR.networking.k8s.io";
/// The default ServiceCIDR's name, as kube-apiserver makes it.
pub const DEFAULT: &str = "kubernetes";

pub fn kind() -> Kind {
    Kind::typed::<networking::ServiceCIDR>(
        Resource::new("networking.k8s.io", "ServiceCIDR", "servicecidrs").cluster_scoped().with_status(),
        ServiceCidrStrategy,
    )
}

/// The default ServiceCIDR for `range`, ready as kube-apiserver's
/// default-servicecidr controller marks it.
pub fn default_object(range: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": DEFAULT},
        "spec": {"cidrs": [range]},
    })
}

/// The status of a default ServiceCIDR that serves addresses.
pub fn ready_status(now: &str) -> Value {
    json!({"conditions": [{
        "type": "Ready", "status": "True", "lastTransitionTime": now,
        "reason": "", "message": "Kubernetes default Service CIDR is ready",
    }]})
}

#[derive(Debug)]
struct ServiceCidrStrategy;

impl Strategy for ServiceCidrStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::NETWORKING_V1_SERVICE_CIDR)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, cidr_causes(&object["spec"]))
    }

    /// kube's `ValidateServiceCIDRUpdate`: the ranges never change.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        let (now, was) = (&new["spec"]["cidrs"], &old["spec"]["cidrs"]);
        field::refuse(KIND, new, field::immutable("spec.cidrs", now, was).into_iter().collect())
    }

    /// Through `/status` only the metadata rules apply (kube's
    /// `ValidateServiceCIDRStatusUpdate`).
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> Result<(), ApiError> {
        Ok(())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's `ValidateServiceCIDR`: one or two ranges, one per IP family, each
/// a canonical subnet.
fn cidr_causes(spec: &Value) -> Vec<Cause> {
    let cidrs = table::arr_at(spec, &["cidrs"]);
    let texts: Vec<&str> = cidrs.iter().map(|c| c.as_str().unwrap_or_default()).collect();
    match texts.len() {
        0 => return vec![field::required("spec.cidrs", "at least one CIDR required")],
        1 => {}
        2 if is_dual_stack(texts[0], texts[1]) => {}
        2 => {
            return vec![field::invalid(
                "spec.cidrs",
                spec,
                "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
            )];
        }
        _ => return vec![field::invalid("spec.cidrs", spec, "may only hold up to 2 values")],
    }
    let mut causes = Vec::new();
    for (i, cidr) in texts.iter().enumerate() {
        for why in cidr_errors(cidr) {
            causes.push(field::invalid(&format!("spec.cidrs[{i}]"), &json!(cidr), &why));
        }
    }
    causes
}

fn is_dual_stack(a: &str, b: &str) -> bool {
    let v4 = |cidr: &str| cidr.split('/').next().is_some_and(|ip| ip.parse::<std::net::Ipv4Addr>().is_ok());
    let v6 = |cidr: &str| cidr.split('/').next().is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok());
    (v4(a) && v6(b)) || (v6(a) && v4(b))
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("CIDRs", "string", "The ranges Service IPs are taken from."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let cidrs: Vec<&str> =
        table::arr_at(object, &["spec", "cidrs"]).iter().filter_map(Value::as_str).collect();
    vec![table::name(object), table::s(cidrs.join(",")), table::age(object, now)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_one_per_family_and_never_change() {
        let strategy = ServiceCidrStrategy;
        let default = default_object("10.96.0.0/12");
        assert!(strategy.validate(&default).is_ok());
        let dual =
            json!({"metadata": {"name": "dual"}, "spec": {"cidrs": ["10.100.0.0/16", "fd00:100::/112"]}});
        assert!(strategy.validate(&dual).is_ok());
        let two_v4 =
            json!({"metadata": {"name": "x"}, "spec": {"cidrs": ["10.100.0.0/16", "10.101.0.0/16"]}});
        let err = strategy.validate(&two_v4).unwrap_err().to_string();
        assert!(err.contains("may specify no more than one IP for each IP family"), "{err}");
        let sloppy = json!({"metadata": {"name": "x"}, "spec": {"cidrs": ["10.100.0.1/16"]}});
        let err = strategy.validate(&sloppy).unwrap_err().to_string();
        assert!(err.contains("spec.cidrs[0]: Invalid value: \"10.100.0.1/16\": must not have bits set beyond the prefix length"), "{err}");
        let err = strategy.validate_update(&dual, &default).unwrap_err().to_string();
        assert!(err.contains("spec.cidrs: Invalid value: ") && err.ends_with("field is immutable"), "{err}");
        assert!(strategy.validate_subresource_update(Some("status"), &default, &default).is_ok());
    }
}
