//! batch/v1 Jobs, with kube's defaults (one pod to completion, six
//! retries) and the selector kube generates from the Job's uid.

use k8s_openapi::api::batch::v1 as batch;

use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, pod_spec};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
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

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn prepare_for_create(&self, object: &mut Value) {
        if object["spec"]["manualSelector"] != json!(true) {
            generate_selector(object);
        }
        copy_template_labels(object);
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::JOB
    }
}

/// The labels kube puts on a Job's pods to find them again: the Job's name
/// and uid, under their current and legacy keys.
const NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
const UID_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];

/// kube's `SetDefaults_Job` (with JobPodReplacementPolicy, GA), then the pod
/// template's and the failure policy's.
fn set_defaults(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        spec["completions"] = json!(1);
    }
    defaults::pointer(spec, "parallelism", json!(1));
    // With a retry budget per index, the Job-wide one is unlimited.
    let backoff = if spec["backoffLimitPerIndex"].is_null() { 6 } else { i32::MAX };
    defaults::pointer(spec, "backoffLimit", json!(backoff));
    defaults::pointer(spec, "completionMode", json!("NonIndexed"));
    defaults::pointer(spec, "suspend", json!(false));
    let replacement = if spec["podFailurePolicy"].is_null() { "TerminatingOrFailed" } else { "Failed" };
    defaults::pointer(spec, "podReplacementPolicy", json!(replacement));
    defaults::pointer(spec, "manualSelector", json!(false));
    job_spec(spec);
    copy_template_labels(object);
}

/// What a Job's spec shares with a CronJob's job template: the failure
/// policy's condition patterns match `True` unless told, and the pod
/// template.
pub fn job_spec(spec: &mut Value) {
    if let Some(policy) = defaults::present(spec, "podFailurePolicy") {
        for rule in defaults::items(policy, "rules") {
            for pattern in defaults::items(rule, "onPodConditions") {
                defaults::string(pattern, "status", "True");
            }
        }
    }
    pod_spec::template_of(spec);
}

/// A Job without labels of its own carries its pod template's.
fn copy_template_labels(object: &mut Value) {
    let template_labels = &object["spec"]["template"]["metadata"]["labels"];
    let own = object["metadata"]["labels"].as_object().is_some_and(|labels| !labels.is_empty());
    if !own && template_labels.is_object() && object["metadata"].is_object() {
        object["metadata"]["labels"] = template_labels.clone();
    }
}

/// kube's generated selector: the pods are labelled with the Job's name and
/// uid (labels already there are left for validation to judge), and the
/// Job selects them by uid.
fn generate_selector(object: &mut Value) {
    let name = json!(meta::name_of(object));
    let uid = json!(meta::uid_of(object));
    let Some(spec) = defaults::present(object, "spec") else { return };
    let template_labels = defaults::object_at(spec, "template")
        .and_then(|template| defaults::object_at(template, "metadata"))
        .and_then(|metadata| defaults::object_at(metadata, "labels"))
        .and_then(Value::as_object_mut);
    if let Some(labels) = template_labels {
        for key in NAME_LABELS {
            labels.entry(key).or_insert_with(|| name.clone());
        }
        for key in UID_LABELS {
            labels.entry(key).or_insert_with(|| uid.clone());
        }
    }
    let match_labels = defaults::object_at(spec, "selector")
        .and_then(|selector| defaults::object_at(selector, "matchLabels"))
        .and_then(Value::as_object_mut);
    if let Some(match_labels) = match_labels {
        match_labels.entry(UID_LABELS[1]).or_insert(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds::tests::golden;

    #[test]
    fn a_minimal_job_is_defaulted_and_selected_as_kube_does() {
        golden(&kind(), "job");
    }

    #[test]
    fn parallel_and_indexed_jobs_keep_what_they_chose() {
        let mut j = json!({"metadata": {"name": "j", "labels": {"team": "a"}}, "spec": {"parallelism": 3,
            "backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 5,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
            "template": {"metadata": {"labels": {"app": "x"}}}}});
        set_defaults(&mut j);
        let spec = &j["spec"];
        assert_eq!((spec["parallelism"].clone(), spec["completions"].clone()), (json!(3), json!(5)));
        assert_eq!(spec["backoffLimit"], i32::MAX);
        assert_eq!(spec["podReplacementPolicy"], "Failed");
        assert_eq!(spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"], "True");
        assert_eq!(j["metadata"]["labels"], json!({"team": "a"}));
        let mut only_parallel = json!({"spec": {"parallelism": 2}});
        set_defaults(&mut only_parallel);
        assert!(only_parallel["spec"].get("completions").is_none());
    }

    #[test]
    fn a_manual_selector_is_left_alone() {
        let mut j = json!({"metadata": {"name": "j", "uid": "u"}, "spec": {"manualSelector": true,
            "selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "x"}}}}});
        JobStrategy.prepare_for_create(&mut j);
        assert_eq!(j["spec"]["selector"], json!({"matchLabels": {"app": "x"}}));
        assert_eq!(j["metadata"]["labels"], json!({"app": "x"}));
    }
}
