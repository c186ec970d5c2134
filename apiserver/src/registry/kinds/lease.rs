//! coordination.k8s.io Leases (leader election, node heartbeats).

use k8s_openapi::api::coordination::v1 as coordination;
use serde_json::Value;

use super::Kind;
use crate::openapi::OpenApiResource;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::new(Resource::new("coordination.k8s.io", "Lease", "leases"), LeaseStrategy)
}

#[derive(Debug)]
struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn roundtrip(&self, object: Value) -> Result<Value, String> {
        super::roundtrip::<coordination::Lease>(object)
    }

    fn openapi(&self) -> Option<OpenApiResource> {
        Some(OpenApiResource::of::<coordination::Lease>(&[]))
    }

    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::COORDINATION_V1_LEASE)
    }

    fn printer(&self) -> &'static Printer {
        &table::LEASE
    }
}
