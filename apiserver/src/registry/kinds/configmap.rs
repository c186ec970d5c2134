//! ConfigMaps: plain data, no spec, so no generation.

use k8s_openapi::api::core::v1 as core;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::ConfigMap>(
        Resource::new("", "ConfigMap", "configmaps").short_names(&["cm"]),
        ConfigMapStrategy,
    )
}

#[derive(Debug)]
struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
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
