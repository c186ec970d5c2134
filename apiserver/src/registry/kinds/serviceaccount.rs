//! ServiceAccounts.

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::Kind;
use crate::openapi::OpenApiResource;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::new(
        Resource::new("", "ServiceAccount", "serviceaccounts").short_names(&["sa"]),
        ServiceAccountStrategy,
    )
}

#[derive(Debug)]
struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn roundtrip(&self, object: Value) -> Result<Value, String> {
        super::roundtrip::<core::ServiceAccount>(object)
    }

    fn openapi(&self) -> Option<OpenApiResource> {
        Some(OpenApiResource::of::<core::ServiceAccount>(&[]))
    }

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
