//! batch/v1 CronJobs, with kube's defaults (concurrent runs allowed, not
//! suspended, three successful and one failed Job kept).

use k8s_openapi::api::batch::v1 as batch;

use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults;
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

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn printer(&self) -> &'static Printer {
        &table::CRONJOB
    }
}

/// kube's `SetDefaults_CronJob`, then the job template's spec (not a Job's
/// own defaults: those come when the Job is made).
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::string(spec, "concurrencyPolicy", "Allow");
    defaults::pointer(spec, "suspend", json!(false));
    defaults::pointer(spec, "successfulJobsHistoryLimit", json!(3));
    defaults::pointer(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(job_spec) =
        defaults::object_at(spec, "jobTemplate").and_then(|t| defaults::object_at(t, "spec"))
    {
        super::job::job_spec(job_spec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds::tests::golden;

    #[test]
    fn a_minimal_cronjob_is_defaulted_as_kube_stores_it() {
        golden(&kind(), "cronjob");
    }
}
