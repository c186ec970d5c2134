//! coordination.k8s.io Leases (leader election, node heartbeats).

use k8s_openapi::api::coordination::v1 as coordination;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<coordination::Lease>(Resource::new("coordination.k8s.io", "Lease", "leases"), LeaseStrategy)
}

#[derive(Debug)]
struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::COORDINATION_V1_LEASE)
    }

    fn printer(&self) -> &'static Printer {
        &table::LEASE
    }
}
