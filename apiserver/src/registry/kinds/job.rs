//! batch/v1 Jobs.

use k8s_openapi::api::batch::v1 as batch;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<batch::Job>(Resource::new("batch", "Job", "jobs").in_all().with_status(), JobStrategy)
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
