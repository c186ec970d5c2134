//! resource.k8s.io/v1 DeviceClasses: named kinds of device (selectors over
//! the devices drivers publish, and configuration for them) that claims
//! ask for by name. Written by cluster admins or driver installs.

use k8s_openapi::api::resource::v1 as resource;
use serde_json::{Value, json};

use super::device_config;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy};
use crate::selector::validation::qualified_name_errors;
use crate::table::{self, Printer};

const KIND: &str = "DeviceClass.resource.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<resource::DeviceClass>(
        Resource::new("resource.k8s.io", "DeviceClass", "deviceclasses")
            .cluster_scoped()
            .returns_deleted_object(),
        DeviceClassStrategy,
    )
}

#[derive(Debug)]
struct DeviceClassStrategy;

impl Strategy for DeviceClassStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::RESOURCE_V1_DEVICE_CLASS)
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, spec_causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &table::DEFAULT
    }
}

/// kube's `validateDeviceClassSpec`: selectors, configuration and the
/// extended resource the class stands for.
fn spec_causes(spec: &Value) -> Vec<Cause> {
    let mut causes = device_config::selector_causes(&spec["selectors"], "spec.selectors");
    causes.extend(device_config::config_causes(&spec["config"], "spec.config", None));
    if let Some(name) = spec["extendedResourceName"].as_str()
        && !is_extended_resource_name(name)
    {
        causes.push(field::invalid(
            "spec.extendedResourceName",
            &json!(name),
            "must be a valid extended resource name",
        ));
    }
    causes
}

/// kube's `IsExtendedResourceName`: a qualified name with a domain outside
/// `kubernetes.io`, which is also a valid quota name once `requests.` is put
/// in front.
fn is_extended_resource_name(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native && name.split('/').count() == 2 && qualified_name_errors(&format!("requests.{name}")).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_selects_with_cel_and_configures_a_driver() {
        let strategy = DeviceClassStrategy;
        let gpu = json!({"metadata": {"name": "gpu.example.com"}, "spec": {
            "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"sharing": "time-slicing"}}}],
            "extendedResourceName": "example.com/gpu"
        }});
        assert!(strategy.validate(&gpu).is_ok());
        let mut bad = gpu.clone();
        bad["spec"]["config"][0]["opaque"] = json!({"driver": "gpu.example.com"});
        bad["spec"]["extendedResourceName"] = json!("cpu");
        let err = strategy.validate(&bad).unwrap_err().to_string();
        assert!(err.contains("spec.config[0].opaque.parameters: Required value"), "{err}");
        assert!(
            err.contains(
                "spec.extendedResourceName: Invalid value: \"cpu\": must be a valid extended resource name"
            ),
            "{err}"
        );
    }
}
