//! Endpoints, stored beside their Services as kube stores them.

use k8s_openapi::api::core::v1 as core;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::Endpoints>(
        Resource::new("", "Endpoints", "endpoints").short_names(&["ep"]).stored_under("services/endpoints"),
        EndpointsStrategy,
    )
}

#[derive(Debug)]
struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_ENDPOINTS)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn printer(&self) -> &'static Printer {
        &table::ENDPOINTS
    }
}
