//! apps/v1 Deployments: `spec.replicas` defaults to 1; scaled through their
//! scale subresource.

use k8s_openapi::api::apps::v1 as apps;
use serde_json::Value;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};

use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<apps::Deployment>(
        Resource::new("apps", "Deployment", "deployments")
            .short_names(&["deploy"])
            .in_all()
            .with_status()
            .with_scale(),
        DeploymentStrategy,
    )
}

#[derive(Debug)]
struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::APPS_V1_DEPLOYMENT)
    }

    fn prepare_for_create(&self, object: &mut Value) {
        super::default_replicas(object);
    }

    fn printer(&self) -> &'static Printer {
        &table::DEPLOYMENT
    }
}
