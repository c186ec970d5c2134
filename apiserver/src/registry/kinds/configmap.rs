//! ConfigMaps: plain data, no spec, so no generation.

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::Kind;
use crate::openapi::OpenApiResource;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::new(Resource::new("", "ConfigMap", "configmaps").short_names(&["cm"]), ConfigMapStrategy)
}

#[derive(Debug)]
struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn roundtrip(&self, object: Value) -> Result<Value, String> {
        super::roundtrip::<core::ConfigMap>(object)
    }

    fn openapi(&self) -> Option<OpenApiResource> {
        Some(OpenApiResource::of::<core::ConfigMap>(&[]))
    }

    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_CONFIG_MAP)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn printer(&self) -> &'static Printer {
        &table::CONFIGMAP
    }
}
