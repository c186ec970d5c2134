//! ServiceAccounts.

use k8s_openapi::api::core::v1 as core;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, SERVICE_ACCOUNT_TOKEN, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::ServiceAccount>(
        Resource::new("", "ServiceAccount", "serviceaccounts")
            .short_names(&["sa"])
            .returns_deleted_object()
            .with_actions(&[SERVICE_ACCOUNT_TOKEN]),
        ServiceAccountStrategy,
    )
}

#[derive(Debug)]
struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_SERVICE_ACCOUNT)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn printer(&self) -> &'static Printer {
        &table::SERVICEACCOUNT
    }
}
