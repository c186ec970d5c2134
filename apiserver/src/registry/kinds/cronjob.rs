//! batch/v1 CronJobs.

use k8s_openapi::api::batch::v1 as batch;
use serde_json::Value;

use super::Kind;
use crate::openapi::OpenApiResource;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::new(
        Resource::new("batch", "CronJob", "cronjobs").short_names(&["cj"]).in_all().with_status(),
        CronJobStrategy,
    )
}

#[derive(Debug)]
struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn roundtrip(&self, object: Value) -> Result<Value, String> {
        super::roundtrip::<batch::CronJob>(object)
    }

    fn openapi(&self) -> Option<OpenApiResource> {
        Some(OpenApiResource::of::<batch::CronJob>(&["status"]))
    }

    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::BATCH_V1_CRON_JOB)
    }

    fn printer(&self) -> &'static Printer {
        &table::CRONJOB
    }
}
