//! batch/v1 Jobs.

use k8s_openapi::api::batch::v1 as batch;
use serde_json::Value;

use super::Kind;
use crate::openapi::OpenApiResource;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::new(Resource::new("batch", "Job", "jobs").in_all().with_status(), JobStrategy)
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &["metadata.name", "metadata.namespace", "status.successful"],
    refusal: Refusal::Job,
    aliases: &[],
    cluster_scoped: false,
    value: |object, field| {
        (field == "status.successful").then(|| attrs::integer(object, &["status", "succeeded"]))
    },
};

#[derive(Debug)]
struct JobStrategy;

impl Strategy for JobStrategy {
    fn roundtrip(&self, object: Value) -> Result<Value, String> {
        super::roundtrip::<batch::Job>(object)
    }

    fn openapi(&self) -> Option<OpenApiResource> {
        Some(OpenApiResource::of::<batch::Job>(&["status"]))
    }

    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::BATCH_V1_JOB)
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::JOB
    }
}
