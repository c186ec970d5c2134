//! batch/v1 CronJobs.

use k8s_openapi::api::batch::v1 as batch;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<batch::CronJob>(
        Resource::new("batch", "CronJob", "cronjobs").short_names(&["cj"]).in_all().with_status(),
        CronJobStrategy,
    )
}

#[derive(Debug)]
struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::BATCH_V1_CRON_JOB)
    }

    fn printer(&self) -> &'static Printer {
        &table::CRONJOB
    }
}
