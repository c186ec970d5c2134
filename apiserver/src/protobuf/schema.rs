// @generated: do not edit. The protobuf messages reachable from the kinds `super::decode`
// accepts (244 of them), each as a table of its fields: number, JSON name, type, and when Go's
// encoding/json writes it.
//
// Generated from the Kubernetes API definitions that the k8s-pb crate's (0.9) types are built
// from, taken at a newer commit so that fields added since k8s-pb 0.9 (Kubernetes 1.35) decode:
//   kubernetes/api           10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2
//   kubernetes/apimachinery  eed236ceee2c19c2753a3d93ac0631dc20750454
// Each package's generated.proto gives field numbers and types; the Go struct tags give JSON
// names, omitempty/omitzero, pointer or value, and embedded (inline) structs. The generator
// checks every field against k8s-pb 0.9.0 (same number and type wherever k8s-pb has the field)
// and every JSON name against k8s-openapi 0.29 (v1_37): it must be one of that type's fields.
//
// To regenerate (the generator, a Python script, is kept outside the repository), with git
// directories of the two repositories:
//   python3 gen.py <api.git> <api-commit> <apimachinery.git> <apimachinery-commit> \
//     <k8s-pb-0.9.0/src> <k8s-openapi-0.29.0/src/v1_37> apiserver/src/protobuf/schema.rs
// It starts from the kinds in `super::KINDS` and meta/v1 DeleteOptions (its ROOTS list), and
// stops on anything it cannot map: a protobuf type without a `Type` variant, a Go type with its
// own JSON form other than Time, MicroTime, FieldsV1, IntOrString and Quantity (converted by
// hand in `super`), a JSON name k8s-openapi does not know, a recursive message. One row per
// field, so rustfmt leaves this file alone (`#[rustfmt::skip]` on the module).

use super::{Card, Field, Message, Presence, Type};

pub(super) static APPS_V1_DAEMON_SET: Message = Message {
    name: "k8s.io.api.apps.v1.DaemonSet",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&APPS_V1_DAEMON_SET_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&APPS_V1_DAEMON_SET_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_DAEMON_SET_CONDITION: Message = Message {
    name: "k8s.io.api.apps.v1.DaemonSetCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static APPS_V1_DAEMON_SET_SPEC: Message = Message {
    name: "k8s.io.api.apps.v1.DaemonSetSpec",
    fields: &[
        Field { number: 1, json: "selector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "template", ty: Type::Message(&CORE_V1_POD_TEMPLATE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "updateStrategy", ty: Type::Message(&APPS_V1_DAEMON_SET_UPDATE_STRATEGY), card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "minReadySeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "revisionHistoryLimit", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_DAEMON_SET_STATUS: Message = Message {
    name: "k8s.io.api.apps.v1.DaemonSetStatus",
    fields: &[
        Field { number: 1, json: "currentNumberScheduled", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "numberMisscheduled", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "desiredNumberScheduled", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "numberReady", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "updatedNumberScheduled", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "numberAvailable", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 8, json: "numberUnavailable", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "collisionCount", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "conditions", ty: Type::Message(&APPS_V1_DAEMON_SET_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static APPS_V1_DAEMON_SET_UPDATE_STRATEGY: Message = Message {
    name: "k8s.io.api.apps.v1.DaemonSetUpdateStrategy",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "rollingUpdate", ty: Type::Message(&APPS_V1_ROLLING_UPDATE_DAEMON_SET), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_DEPLOYMENT: Message = Message {
    name: "k8s.io.api.apps.v1.Deployment",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&APPS_V1_DEPLOYMENT_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&APPS_V1_DEPLOYMENT_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_CONDITION: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "lastUpdateTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_SPEC: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentSpec",
    fields: &[
        Field { number: 1, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "selector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "template", ty: Type::Message(&CORE_V1_POD_TEMPLATE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "strategy", ty: Type::Message(&APPS_V1_DEPLOYMENT_STRATEGY), card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "minReadySeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "revisionHistoryLimit", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "paused", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "progressDeadlineSeconds", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_STATUS: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentStatus",
    fields: &[
        Field { number: 1, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "updatedReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "availableReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "unavailableReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "conditions", ty: Type::Message(&APPS_V1_DEPLOYMENT_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 7, json: "readyReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 8, json: "collisionCount", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "terminatingReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_DEPLOYMENT_STRATEGY: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentStrategy",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "rollingUpdate", ty: Type::Message(&APPS_V1_ROLLING_UPDATE_DEPLOYMENT), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_REPLICA_SET: Message = Message {
    name: "k8s.io.api.apps.v1.ReplicaSet",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&APPS_V1_REPLICA_SET_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&APPS_V1_REPLICA_SET_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_REPLICA_SET_CONDITION: Message = Message {
    name: "k8s.io.api.apps.v1.ReplicaSetCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static APPS_V1_REPLICA_SET_SPEC: Message = Message {
    name: "k8s.io.api.apps.v1.ReplicaSetSpec",
    fields: &[
        Field { number: 1, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "selector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "template", ty: Type::Message(&CORE_V1_POD_TEMPLATE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "minReadySeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static APPS_V1_REPLICA_SET_STATUS: Message = Message {
    name: "k8s.io.api.apps.v1.ReplicaSetStatus",
    fields: &[
        Field { number: 1, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fullyLabeledReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "readyReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "availableReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "conditions", ty: Type::Message(&APPS_V1_REPLICA_SET_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 7, json: "terminatingReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_ROLLING_UPDATE_DAEMON_SET: Message = Message {
    name: "k8s.io.api.apps.v1.RollingUpdateDaemonSet",
    fields: &[
        Field { number: 1, json: "maxUnavailable", ty: Type::IntOrString, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "maxSurge", ty: Type::IntOrString, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "k8s.io.api.apps.v1.RollingUpdateDeployment",
    fields: &[
        Field { number: 1, json: "maxUnavailable", ty: Type::IntOrString, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "maxSurge", ty: Type::IntOrString, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_ROLLING_UPDATE_STATEFUL_SET_STRATEGY: Message = Message {
    name: "k8s.io.api.apps.v1.RollingUpdateStatefulSetStrategy",
    fields: &[
        Field { number: 1, json: "partition", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "maxUnavailable", ty: Type::IntOrString, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSet",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&APPS_V1_STATEFUL_SET_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&APPS_V1_STATEFUL_SET_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET_CONDITION: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSetCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET_ORDINALS: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSetOrdinals",
    fields: &[
        Field { number: 1, json: "start", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET_PERSISTENT_VOLUME_CLAIM_RETENTION_POLICY: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
    fields: &[
        Field { number: 1, json: "whenDeleted", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "whenScaled", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET_SPEC: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSetSpec",
    fields: &[
        Field { number: 1, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "selector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "template", ty: Type::Message(&CORE_V1_POD_TEMPLATE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "volumeClaimTemplates", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "serviceName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "podManagementPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "updateStrategy", ty: Type::Message(&APPS_V1_STATEFUL_SET_UPDATE_STRATEGY), card: Card::Single, presence: Presence::Always },
        Field { number: 8, json: "revisionHistoryLimit", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "minReadySeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 10, json: "persistentVolumeClaimRetentionPolicy", ty: Type::Message(&APPS_V1_STATEFUL_SET_PERSISTENT_VOLUME_CLAIM_RETENTION_POLICY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "ordinals", ty: Type::Message(&APPS_V1_STATEFUL_SET_ORDINALS), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET_STATUS: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSetStatus",
    fields: &[
        Field { number: 1, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "readyReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "currentReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "updatedReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "currentRevision", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "updateRevision", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "collisionCount", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "conditions", ty: Type::Message(&APPS_V1_STATEFUL_SET_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 11, json: "availableReplicas", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static APPS_V1_STATEFUL_SET_UPDATE_STRATEGY: Message = Message {
    name: "k8s.io.api.apps.v1.StatefulSetUpdateStrategy",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "rollingUpdate", ty: Type::Message(&APPS_V1_ROLLING_UPDATE_STATEFUL_SET_STRATEGY), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static AUTOSCALING_V1_SCALE: Message = Message {
    name: "k8s.io.api.autoscaling.v1.Scale",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&AUTOSCALING_V1_SCALE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&AUTOSCALING_V1_SCALE_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static AUTOSCALING_V1_SCALE_SPEC: Message = Message {
    name: "k8s.io.api.autoscaling.v1.ScaleSpec",
    fields: &[
        Field { number: 1, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static AUTOSCALING_V1_SCALE_STATUS: Message = Message {
    name: "k8s.io.api.autoscaling.v1.ScaleStatus",
    fields: &[
        Field { number: 1, json: "replicas", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "selector", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_CRON_JOB: Message = Message {
    name: "k8s.io.api.batch.v1.CronJob",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&BATCH_V1_CRON_JOB_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&BATCH_V1_CRON_JOB_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static BATCH_V1_CRON_JOB_SPEC: Message = Message {
    name: "k8s.io.api.batch.v1.CronJobSpec",
    fields: &[
        Field { number: 1, json: "schedule", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "startingDeadlineSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "concurrencyPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "suspend", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "jobTemplate", ty: Type::Message(&BATCH_V1_JOB_TEMPLATE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "successfulJobsHistoryLimit", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "failedJobsHistoryLimit", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "timeZone", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static BATCH_V1_CRON_JOB_STATUS: Message = Message {
    name: "k8s.io.api.batch.v1.CronJobStatus",
    fields: &[
        Field { number: 1, json: "active", ty: Type::Message(&CORE_V1_OBJECT_REFERENCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "lastScheduleTime", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "lastSuccessfulTime", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static BATCH_V1_JOB: Message = Message {
    name: "k8s.io.api.batch.v1.Job",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&BATCH_V1_JOB_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&BATCH_V1_JOB_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static BATCH_V1_JOB_CONDITION: Message = Message {
    name: "k8s.io.api.batch.v1.JobCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastProbeTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_JOB_SCHEDULING_CONFIGURATION: Message = Message {
    name: "k8s.io.api.batch.v1.JobSchedulingConfiguration",
    fields: &[
        Field { number: 1, json: "schedulingPolicy", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_SCHEDULING_POLICY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "schedulingConstraints", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_SCHEDULING_CONSTRAINTS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "disruptionMode", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_DISRUPTION_MODE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "resourceClaims", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_RESOURCE_CLAIM), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_JOB_SPEC: Message = Message {
    name: "k8s.io.api.batch.v1.JobSpec",
    fields: &[
        Field { number: 1, json: "parallelism", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "completions", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "activeDeadlineSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "selector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "manualSelector", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "template", ty: Type::Message(&CORE_V1_POD_TEMPLATE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "backoffLimit", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "ttlSecondsAfterFinished", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "completionMode", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "suspend", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "podFailurePolicy", ty: Type::Message(&BATCH_V1_POD_FAILURE_POLICY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "backoffLimitPerIndex", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 13, json: "maxFailedIndexes", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 14, json: "podReplacementPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 15, json: "managedBy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 16, json: "successPolicy", ty: Type::Message(&BATCH_V1_SUCCESS_POLICY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 17, json: "scheduling", ty: Type::Message(&BATCH_V1_JOB_SCHEDULING_CONFIGURATION), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static BATCH_V1_JOB_STATUS: Message = Message {
    name: "k8s.io.api.batch.v1.JobStatus",
    fields: &[
        Field { number: 1, json: "conditions", ty: Type::Message(&BATCH_V1_JOB_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "startTime", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "completionTime", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "active", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "succeeded", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "failed", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "completedIndexes", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 8, json: "uncountedTerminatedPods", ty: Type::Message(&BATCH_V1_UNCOUNTED_TERMINATED_PODS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "ready", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "failedIndexes", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "terminating", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static BATCH_V1_JOB_TEMPLATE_SPEC: Message = Message {
    name: "k8s.io.api.batch.v1.JobTemplateSpec",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&BATCH_V1_JOB_SPEC), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicy",
    fields: &[
        Field { number: 1, json: "rules", ty: Type::Message(&BATCH_V1_POD_FAILURE_POLICY_RULE), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
    fields: &[
        Field { number: 1, json: "containerName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "operator", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "values", ty: Type::Int32, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicyOnPodConditionsPattern",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static BATCH_V1_POD_FAILURE_POLICY_RULE: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicyRule",
    fields: &[
        Field { number: 1, json: "action", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "onExitCodes", ty: Type::Message(&BATCH_V1_POD_FAILURE_POLICY_ON_EXIT_CODES_REQUIREMENT), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "onPodConditions", ty: Type::Message(&BATCH_V1_POD_FAILURE_POLICY_ON_POD_CONDITIONS_PATTERN), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_SUCCESS_POLICY: Message = Message {
    name: "k8s.io.api.batch.v1.SuccessPolicy",
    fields: &[
        Field { number: 1, json: "rules", ty: Type::Message(&BATCH_V1_SUCCESS_POLICY_RULE), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static BATCH_V1_SUCCESS_POLICY_RULE: Message = Message {
    name: "k8s.io.api.batch.v1.SuccessPolicyRule",
    fields: &[
        Field { number: 1, json: "succeededIndexes", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "succeededCount", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static BATCH_V1_UNCOUNTED_TERMINATED_PODS: Message = Message {
    name: "k8s.io.api.batch.v1.UncountedTerminatedPods",
    fields: &[
        Field { number: 1, json: "succeeded", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "failed", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static COORDINATION_V1_LEASE: Message = Message {
    name: "k8s.io.api.coordination.v1.Lease",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&COORDINATION_V1_LEASE_SPEC), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static COORDINATION_V1_LEASE_SPEC: Message = Message {
    name: "k8s.io.api.coordination.v1.LeaseSpec",
    fields: &[
        Field { number: 1, json: "holderIdentity", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "leaseDurationSeconds", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "acquireTime", ty: Type::MicroTime, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "renewTime", ty: Type::MicroTime, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "leaseTransitions", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "strategy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "preferredHolder", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_AFFINITY: Message = Message {
    name: "k8s.io.api.core.v1.Affinity",
    fields: &[
        Field { number: 1, json: "nodeAffinity", ty: Type::Message(&CORE_V1_NODE_AFFINITY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "podAffinity", ty: Type::Message(&CORE_V1_POD_AFFINITY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "podAntiAffinity", ty: Type::Message(&CORE_V1_POD_ANTI_AFFINITY), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_APP_ARMOR_PROFILE: Message = Message {
    name: "k8s.io.api.core.v1.AppArmorProfile",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "localhostProfile", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_ATTACHED_VOLUME: Message = Message {
    name: "k8s.io.api.core.v1.AttachedVolume",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "devicePath", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.AWSElasticBlockStoreVolumeSource",
    fields: &[
        Field { number: 1, json: "volumeID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "partition", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_AZURE_DISK_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.AzureDiskVolumeSource",
    fields: &[
        Field { number: 1, json: "diskName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "diskURI", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "cachingMode", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "kind", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_AZURE_FILE_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.AzureFileVolumeSource",
    fields: &[
        Field { number: 1, json: "secretName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "shareName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CAPABILITIES: Message = Message {
    name: "k8s.io.api.core.v1.Capabilities",
    fields: &[
        Field { number: 1, json: "add", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "drop", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CEPH_FS_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.CephFSVolumeSource",
    fields: &[
        Field { number: 1, json: "monitors", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "path", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "user", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "secretFile", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CINDER_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.CinderVolumeSource",
    fields: &[
        Field { number: 1, json: "volumeID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CLIENT_IP_CONFIG: Message = Message {
    name: "k8s.io.api.core.v1.ClientIPConfig",
    fields: &[
        Field { number: 1, json: "timeoutSeconds", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CLUSTER_TRUST_BUNDLE_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.ClusterTrustBundleProjection",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "signerName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "labelSelector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "user", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONFIG_MAP: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMap",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "data", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 3, json: "binaryData", ty: Type::Bytes, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 4, json: "immutable", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_ENV_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapEnvSource",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_KEY_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapKeySelector",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_NODE_CONFIG_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapNodeConfigSource",
    fields: &[
        Field { number: 1, json: "namespace", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "uid", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "resourceVersion", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "kubeletConfigKey", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapProjection",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "items", ty: Type::Message(&CORE_V1_KEY_TO_PATH), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONFIG_MAP_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapVolumeSource",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "items", ty: Type::Message(&CORE_V1_KEY_TO_PATH), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "defaultMode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "defaultUser", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONTAINER: Message = Message {
    name: "k8s.io.api.core.v1.Container",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "image", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "command", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "args", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "workingDir", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "ports", ty: Type::Message(&CORE_V1_CONTAINER_PORT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 7, json: "env", ty: Type::Message(&CORE_V1_ENV_VAR), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 8, json: "resources", ty: Type::Message(&CORE_V1_RESOURCE_REQUIREMENTS), card: Card::Single, presence: Presence::Always },
        Field { number: 9, json: "volumeMounts", ty: Type::Message(&CORE_V1_VOLUME_MOUNT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 10, json: "livenessProbe", ty: Type::Message(&CORE_V1_PROBE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "readinessProbe", ty: Type::Message(&CORE_V1_PROBE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "lifecycle", ty: Type::Message(&CORE_V1_LIFECYCLE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 13, json: "terminationMessagePath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 14, json: "imagePullPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 15, json: "securityContext", ty: Type::Message(&CORE_V1_SECURITY_CONTEXT), card: Card::Single, presence: Presence::Pointer },
        Field { number: 16, json: "stdin", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 17, json: "stdinOnce", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 18, json: "tty", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 19, json: "envFrom", ty: Type::Message(&CORE_V1_ENV_FROM_SOURCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 20, json: "terminationMessagePolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 21, json: "volumeDevices", ty: Type::Message(&CORE_V1_VOLUME_DEVICE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 22, json: "startupProbe", ty: Type::Message(&CORE_V1_PROBE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 23, json: "resizePolicy", ty: Type::Message(&CORE_V1_CONTAINER_RESIZE_POLICY), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 24, json: "restartPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 25, json: "restartPolicyRules", ty: Type::Message(&CORE_V1_CONTAINER_RESTART_RULE), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CONTAINER_EXTENDED_RESOURCE_REQUEST: Message = Message {
    name: "k8s.io.api.core.v1.ContainerExtendedResourceRequest",
    fields: &[
        Field { number: 1, json: "containerName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "resourceName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "requestName", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_CONTAINER_IMAGE: Message = Message {
    name: "k8s.io.api.core.v1.ContainerImage",
    fields: &[
        Field { number: 1, json: "names", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "sizeBytes", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CONTAINER_PORT: Message = Message {
    name: "k8s.io.api.core.v1.ContainerPort",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "hostPort", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "containerPort", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "protocol", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "hostIP", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CONTAINER_RESIZE_POLICY: Message = Message {
    name: "k8s.io.api.core.v1.ContainerResizePolicy",
    fields: &[
        Field { number: 1, json: "resourceName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "restartPolicy", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_CONTAINER_RESTART_RULE: Message = Message {
    name: "k8s.io.api.core.v1.ContainerRestartRule",
    fields: &[
        Field { number: 1, json: "action", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "exitCodes", ty: Type::Message(&CORE_V1_CONTAINER_RESTART_RULE_ON_EXIT_CODES), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONTAINER_RESTART_RULE_ON_EXIT_CODES: Message = Message {
    name: "k8s.io.api.core.v1.ContainerRestartRuleOnExitCodes",
    fields: &[
        Field { number: 1, json: "operator", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "values", ty: Type::Int32, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE: Message = Message {
    name: "k8s.io.api.core.v1.ContainerState",
    fields: &[
        Field { number: 1, json: "waiting", ty: Type::Message(&CORE_V1_CONTAINER_STATE_WAITING), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "running", ty: Type::Message(&CORE_V1_CONTAINER_STATE_RUNNING), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "terminated", ty: Type::Message(&CORE_V1_CONTAINER_STATE_TERMINATED), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE_RUNNING: Message = Message {
    name: "k8s.io.api.core.v1.ContainerStateRunning",
    fields: &[
        Field { number: 1, json: "startedAt", ty: Type::Time, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE_TERMINATED: Message = Message {
    name: "k8s.io.api.core.v1.ContainerStateTerminated",
    fields: &[
        Field { number: 1, json: "exitCode", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "signal", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "startedAt", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "finishedAt", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "containerID", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CONTAINER_STATE_WAITING: Message = Message {
    name: "k8s.io.api.core.v1.ContainerStateWaiting",
    fields: &[
        Field { number: 1, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_CONTAINER_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.ContainerStatus",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "state", ty: Type::Message(&CORE_V1_CONTAINER_STATE), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastState", ty: Type::Message(&CORE_V1_CONTAINER_STATE), card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "ready", ty: Type::Bool, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "restartCount", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "image", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "imageID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 8, json: "containerID", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "started", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "allocatedResources", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 11, json: "resources", ty: Type::Message(&CORE_V1_RESOURCE_REQUIREMENTS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "volumeMounts", ty: Type::Message(&CORE_V1_VOLUME_MOUNT_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 13, json: "user", ty: Type::Message(&CORE_V1_CONTAINER_USER), card: Card::Single, presence: Presence::Pointer },
        Field { number: 14, json: "allocatedResourcesStatus", ty: Type::Message(&CORE_V1_RESOURCE_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 15, json: "stopSignal", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CONTAINER_USER: Message = Message {
    name: "k8s.io.api.core.v1.ContainerUser",
    fields: &[
        Field { number: 1, json: "linux", ty: Type::Message(&CORE_V1_LINUX_CONTAINER_USER), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_CSI_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.CSIVolumeSource",
    fields: &[
        Field { number: 1, json: "driver", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "volumeAttributes", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 5, json: "nodePublishSecretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_DAEMON_ENDPOINT: Message = Message {
    name: "k8s.io.api.core.v1.DaemonEndpoint",
    fields: &[
        Field { number: 1, json: "Port", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_DOWNWARD_API_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.DownwardAPIProjection",
    fields: &[
        Field { number: 1, json: "items", ty: Type::Message(&CORE_V1_DOWNWARD_API_VOLUME_FILE), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_DOWNWARD_API_VOLUME_FILE: Message = Message {
    name: "k8s.io.api.core.v1.DownwardAPIVolumeFile",
    fields: &[
        Field { number: 1, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fieldRef", ty: Type::Message(&CORE_V1_OBJECT_FIELD_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "resourceFieldRef", ty: Type::Message(&CORE_V1_RESOURCE_FIELD_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "mode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "user", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_DOWNWARD_API_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.DownwardAPIVolumeSource",
    fields: &[
        Field { number: 1, json: "items", ty: Type::Message(&CORE_V1_DOWNWARD_API_VOLUME_FILE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "defaultMode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "defaultUser", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_EMPTY_DIR_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EmptyDirVolumeSource",
    fields: &[
        Field { number: 1, json: "medium", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "sizeLimit", ty: Type::Quantity, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "mode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_ENDPOINTS: Message = Message {
    name: "k8s.io.api.core.v1.Endpoints",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "subsets", ty: Type::Message(&CORE_V1_ENDPOINT_SUBSET), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_ENDPOINT_ADDRESS: Message = Message {
    name: "k8s.io.api.core.v1.EndpointAddress",
    fields: &[
        Field { number: 1, json: "ip", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "targetRef", ty: Type::Message(&CORE_V1_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "hostname", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "nodeName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_ENDPOINT_PORT: Message = Message {
    name: "k8s.io.api.core.v1.EndpointPort",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "port", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "protocol", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "appProtocol", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_ENDPOINT_SUBSET: Message = Message {
    name: "k8s.io.api.core.v1.EndpointSubset",
    fields: &[
        Field { number: 1, json: "addresses", ty: Type::Message(&CORE_V1_ENDPOINT_ADDRESS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "notReadyAddresses", ty: Type::Message(&CORE_V1_ENDPOINT_ADDRESS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "ports", ty: Type::Message(&CORE_V1_ENDPOINT_PORT), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_ENV_FROM_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EnvFromSource",
    fields: &[
        Field { number: 1, json: "prefix", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "configMapRef", ty: Type::Message(&CORE_V1_CONFIG_MAP_ENV_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "secretRef", ty: Type::Message(&CORE_V1_SECRET_ENV_SOURCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_ENV_VAR: Message = Message {
    name: "k8s.io.api.core.v1.EnvVar",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "value", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "valueFrom", ty: Type::Message(&CORE_V1_ENV_VAR_SOURCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_ENV_VAR_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EnvVarSource",
    fields: &[
        Field { number: 1, json: "fieldRef", ty: Type::Message(&CORE_V1_OBJECT_FIELD_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "resourceFieldRef", ty: Type::Message(&CORE_V1_RESOURCE_FIELD_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "configMapKeyRef", ty: Type::Message(&CORE_V1_CONFIG_MAP_KEY_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "secretKeyRef", ty: Type::Message(&CORE_V1_SECRET_KEY_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "fileKeyRef", ty: Type::Message(&CORE_V1_FILE_KEY_SELECTOR), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_EPHEMERAL_CONTAINER: Message = Message {
    name: "k8s.io.api.core.v1.EphemeralContainer",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_EPHEMERAL_CONTAINER_COMMON), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "targetContainerName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_EPHEMERAL_CONTAINER_COMMON: Message = Message {
    name: "k8s.io.api.core.v1.EphemeralContainerCommon",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "image", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "command", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "args", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "workingDir", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "ports", ty: Type::Message(&CORE_V1_CONTAINER_PORT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 7, json: "env", ty: Type::Message(&CORE_V1_ENV_VAR), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 8, json: "resources", ty: Type::Message(&CORE_V1_RESOURCE_REQUIREMENTS), card: Card::Single, presence: Presence::Always },
        Field { number: 9, json: "volumeMounts", ty: Type::Message(&CORE_V1_VOLUME_MOUNT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 10, json: "livenessProbe", ty: Type::Message(&CORE_V1_PROBE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "readinessProbe", ty: Type::Message(&CORE_V1_PROBE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "lifecycle", ty: Type::Message(&CORE_V1_LIFECYCLE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 13, json: "terminationMessagePath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 14, json: "imagePullPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 15, json: "securityContext", ty: Type::Message(&CORE_V1_SECURITY_CONTEXT), card: Card::Single, presence: Presence::Pointer },
        Field { number: 16, json: "stdin", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 17, json: "stdinOnce", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 18, json: "tty", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 19, json: "envFrom", ty: Type::Message(&CORE_V1_ENV_FROM_SOURCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 20, json: "terminationMessagePolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 21, json: "volumeDevices", ty: Type::Message(&CORE_V1_VOLUME_DEVICE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 22, json: "startupProbe", ty: Type::Message(&CORE_V1_PROBE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 23, json: "resizePolicy", ty: Type::Message(&CORE_V1_CONTAINER_RESIZE_POLICY), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 24, json: "restartPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 25, json: "restartPolicyRules", ty: Type::Message(&CORE_V1_CONTAINER_RESTART_RULE), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_EPHEMERAL_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EphemeralVolumeSource",
    fields: &[
        Field { number: 1, json: "volumeClaimTemplate", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_TEMPLATE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_EVENT: Message = Message {
    name: "k8s.io.api.core.v1.Event",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "involvedObject", ty: Type::Message(&CORE_V1_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "source", ty: Type::Message(&CORE_V1_EVENT_SOURCE), card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "firstTimestamp", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "lastTimestamp", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 8, json: "count", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 10, json: "eventTime", ty: Type::MicroTime, card: Card::Single, presence: Presence::Always },
        Field { number: 11, json: "series", ty: Type::Message(&CORE_V1_EVENT_SERIES), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "action", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 13, json: "related", ty: Type::Message(&CORE_V1_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 14, json: "reportingComponent", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 15, json: "reportingInstance", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_EVENT_SERIES: Message = Message {
    name: "k8s.io.api.core.v1.EventSeries",
    fields: &[
        Field { number: 1, json: "count", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "lastObservedTime", ty: Type::MicroTime, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_EVENT_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EventSource",
    fields: &[
        Field { number: 1, json: "component", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "host", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_EVICTION_RESPONDER: Message = Message {
    name: "k8s.io.api.core.v1.EvictionResponder",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "priority", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_EXEC_ACTION: Message = Message {
    name: "k8s.io.api.core.v1.ExecAction",
    fields: &[
        Field { number: 1, json: "command", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_FC_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.FCVolumeSource",
    fields: &[
        Field { number: 1, json: "targetWWNs", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "lun", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "wwids", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_FILE_KEY_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.FileKeySelector",
    fields: &[
        Field { number: 1, json: "volumeName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_FLEX_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.FlexVolumeSource",
    fields: &[
        Field { number: 1, json: "driver", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "options", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_FLOCKER_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.FlockerVolumeSource",
    fields: &[
        Field { number: 1, json: "datasetName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "datasetUUID", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_GCE_PERSISTENT_DISK_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.GCEPersistentDiskVolumeSource",
    fields: &[
        Field { number: 1, json: "pdName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "partition", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_GIT_REPO_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.GitRepoVolumeSource",
    fields: &[
        Field { number: 1, json: "repository", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "revision", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "directory", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_GLUSTERFS_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.GlusterfsVolumeSource",
    fields: &[
        Field { number: 1, json: "endpoints", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_GRPC_ACTION: Message = Message {
    name: "k8s.io.api.core.v1.GRPCAction",
    fields: &[
        Field { number: 1, json: "port", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "service", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "mode", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_HOST_ALIAS: Message = Message {
    name: "k8s.io.api.core.v1.HostAlias",
    fields: &[
        Field { number: 1, json: "ip", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "hostnames", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_HOST_IP: Message = Message {
    name: "k8s.io.api.core.v1.HostIP",
    fields: &[
        Field { number: 1, json: "ip", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_HOST_PATH_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.HostPathVolumeSource",
    fields: &[
        Field { number: 1, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_HTTP_GET_ACTION: Message = Message {
    name: "k8s.io.api.core.v1.HTTPGetAction",
    fields: &[
        Field { number: 1, json: "path", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "port", ty: Type::IntOrString, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "host", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "scheme", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "httpHeaders", ty: Type::Message(&CORE_V1_HTTP_HEADER), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 6, json: "protocol", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_HTTP_HEADER: Message = Message {
    name: "k8s.io.api.core.v1.HTTPHeader",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "value", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_IMAGE_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ImageVolumeSource",
    fields: &[
        Field { number: 1, json: "reference", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "pullPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_IMAGE_VOLUME_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.ImageVolumeStatus",
    fields: &[
        Field { number: 1, json: "imageRef", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_ISCSI_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ISCSIVolumeSource",
    fields: &[
        Field { number: 1, json: "targetPortal", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "iqn", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lun", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "iscsiInterface", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "portals", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 8, json: "chapAuthDiscovery", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 10, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "chapAuthSession", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 12, json: "initiatorName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_KEY_TO_PATH: Message = Message {
    name: "k8s.io.api.core.v1.KeyToPath",
    fields: &[
        Field { number: 1, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "mode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "user", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_LIFECYCLE: Message = Message {
    name: "k8s.io.api.core.v1.Lifecycle",
    fields: &[
        Field { number: 1, json: "postStart", ty: Type::Message(&CORE_V1_LIFECYCLE_HANDLER), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "preStop", ty: Type::Message(&CORE_V1_LIFECYCLE_HANDLER), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "stopSignal", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_LIFECYCLE_HANDLER: Message = Message {
    name: "k8s.io.api.core.v1.LifecycleHandler",
    fields: &[
        Field { number: 1, json: "exec", ty: Type::Message(&CORE_V1_EXEC_ACTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "httpGet", ty: Type::Message(&CORE_V1_HTTP_GET_ACTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "tcpSocket", ty: Type::Message(&CORE_V1_TCP_SOCKET_ACTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "sleep", ty: Type::Message(&CORE_V1_SLEEP_ACTION), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_LINUX_CONTAINER_USER: Message = Message {
    name: "k8s.io.api.core.v1.LinuxContainerUser",
    fields: &[
        Field { number: 1, json: "uid", ty: Type::Int64, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "gid", ty: Type::Int64, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "supplementalGroups", ty: Type::Int64, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_LOAD_BALANCER_INGRESS: Message = Message {
    name: "k8s.io.api.core.v1.LoadBalancerIngress",
    fields: &[
        Field { number: 1, json: "ip", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "hostname", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "ipMode", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "ports", ty: Type::Message(&CORE_V1_PORT_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_LOAD_BALANCER_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.LoadBalancerStatus",
    fields: &[
        Field { number: 1, json: "ingress", ty: Type::Message(&CORE_V1_LOAD_BALANCER_INGRESS), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.LocalObjectReference",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_MODIFY_VOLUME_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.ModifyVolumeStatus",
    fields: &[
        Field { number: 1, json: "targetVolumeAttributesClassName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_NAMESPACE: Message = Message {
    name: "k8s.io.api.core.v1.Namespace",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_NAMESPACE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&CORE_V1_NAMESPACE_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_NAMESPACE_CONDITION: Message = Message {
    name: "k8s.io.api.core.v1.NamespaceCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NAMESPACE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.NamespaceSpec",
    fields: &[
        Field { number: 1, json: "finalizers", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NAMESPACE_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.NamespaceStatus",
    fields: &[
        Field { number: 1, json: "phase", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "conditions", ty: Type::Message(&CORE_V1_NAMESPACE_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NFS_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.NFSVolumeSource",
    fields: &[
        Field { number: 1, json: "server", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE: Message = Message {
    name: "k8s.io.api.core.v1.Node",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_NODE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&CORE_V1_NODE_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_NODE_ADDRESS: Message = Message {
    name: "k8s.io.api.core.v1.NodeAddress",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "address", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_NODE_AFFINITY: Message = Message {
    name: "k8s.io.api.core.v1.NodeAffinity",
    fields: &[
        Field { number: 1, json: "requiredDuringSchedulingIgnoredDuringExecution", ty: Type::Message(&CORE_V1_NODE_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "preferredDuringSchedulingIgnoredDuringExecution", ty: Type::Message(&CORE_V1_PREFERRED_SCHEDULING_TERM), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_ALLOCATABLE_MAPPED_RESOURCES: Message = Message {
    name: "k8s.io.api.core.v1.NodeAllocatableMappedResources",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "quantity", ty: Type::Quantity, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_ALLOCATABLE_OVERHEAD_RESOURCES: Message = Message {
    name: "k8s.io.api.core.v1.NodeAllocatableOverheadResources",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "perPod", ty: Type::Quantity, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "perContainer", ty: Type::Quantity, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_ALLOCATABLE_RESOURCE_CLAIM_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.NodeAllocatableResourceClaimStatus",
    fields: &[
        Field { number: 1, json: "resourceClaimName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "containers", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "mapping", ty: Type::Message(&CORE_V1_NODE_ALLOCATABLE_MAPPED_RESOURCES), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "overhead", ty: Type::Message(&CORE_V1_NODE_ALLOCATABLE_OVERHEAD_RESOURCES), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_CONDITION: Message = Message {
    name: "k8s.io.api.core.v1.NodeCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastHeartbeatTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_CONFIG_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.NodeConfigSource",
    fields: &[
        Field { number: 2, json: "configMap", ty: Type::Message(&CORE_V1_CONFIG_MAP_NODE_CONFIG_SOURCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_CONFIG_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.NodeConfigStatus",
    fields: &[
        Field { number: 1, json: "assigned", ty: Type::Message(&CORE_V1_NODE_CONFIG_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "active", ty: Type::Message(&CORE_V1_NODE_CONFIG_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "lastKnownGood", ty: Type::Message(&CORE_V1_NODE_CONFIG_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "error", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_DAEMON_ENDPOINTS: Message = Message {
    name: "k8s.io.api.core.v1.NodeDaemonEndpoints",
    fields: &[
        Field { number: 1, json: "kubeletEndpoint", ty: Type::Message(&CORE_V1_DAEMON_ENDPOINT), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_NODE_FEATURES: Message = Message {
    name: "k8s.io.api.core.v1.NodeFeatures",
    fields: &[
        Field { number: 1, json: "supplementalGroupsPolicy", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_POD_PREEMPTION_POLICY: Message = Message {
    name: "k8s.io.api.core.v1.NodePodPreemptionPolicy",
    fields: &[
        Field { number: 1, json: "disableResizePreemption", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_RUNTIME_HANDLER: Message = Message {
    name: "k8s.io.api.core.v1.NodeRuntimeHandler",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "features", ty: Type::Message(&CORE_V1_NODE_RUNTIME_HANDLER_FEATURES), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_RUNTIME_HANDLER_FEATURES: Message = Message {
    name: "k8s.io.api.core.v1.NodeRuntimeHandlerFeatures",
    fields: &[
        Field { number: 1, json: "recursiveReadOnlyMounts", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "userNamespaces", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.NodeSelector",
    fields: &[
        Field { number: 1, json: "nodeSelectorTerms", ty: Type::Message(&CORE_V1_NODE_SELECTOR_TERM), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_SELECTOR_REQUIREMENT: Message = Message {
    name: "k8s.io.api.core.v1.NodeSelectorRequirement",
    fields: &[
        Field { number: 1, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "operator", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "values", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_SELECTOR_TERM: Message = Message {
    name: "k8s.io.api.core.v1.NodeSelectorTerm",
    fields: &[
        Field { number: 1, json: "matchExpressions", ty: Type::Message(&CORE_V1_NODE_SELECTOR_REQUIREMENT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "matchFields", ty: Type::Message(&CORE_V1_NODE_SELECTOR_REQUIREMENT), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.NodeSpec",
    fields: &[
        Field { number: 1, json: "podCIDR", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "externalID", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "providerID", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "unschedulable", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "taints", ty: Type::Message(&CORE_V1_TAINT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 6, json: "configSource", ty: Type::Message(&CORE_V1_NODE_CONFIG_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "podCIDRs", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 8, json: "podPreemptionPolicy", ty: Type::Message(&CORE_V1_NODE_POD_PREEMPTION_POLICY), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.NodeStatus",
    fields: &[
        Field { number: 1, json: "capacity", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 2, json: "allocatable", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 3, json: "phase", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "conditions", ty: Type::Message(&CORE_V1_NODE_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "addresses", ty: Type::Message(&CORE_V1_NODE_ADDRESS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 6, json: "daemonEndpoints", ty: Type::Message(&CORE_V1_NODE_DAEMON_ENDPOINTS), card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "nodeInfo", ty: Type::Message(&CORE_V1_NODE_SYSTEM_INFO), card: Card::Single, presence: Presence::Always },
        Field { number: 8, json: "images", ty: Type::Message(&CORE_V1_CONTAINER_IMAGE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 9, json: "volumesInUse", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 10, json: "volumesAttached", ty: Type::Message(&CORE_V1_ATTACHED_VOLUME), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 11, json: "config", ty: Type::Message(&CORE_V1_NODE_CONFIG_STATUS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "runtimeHandlers", ty: Type::Message(&CORE_V1_NODE_RUNTIME_HANDLER), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 13, json: "features", ty: Type::Message(&CORE_V1_NODE_FEATURES), card: Card::Single, presence: Presence::Pointer },
        Field { number: 14, json: "declaredFeatures", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_NODE_SWAP_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.NodeSwapStatus",
    fields: &[
        Field { number: 1, json: "capacity", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_NODE_SYSTEM_INFO: Message = Message {
    name: "k8s.io.api.core.v1.NodeSystemInfo",
    fields: &[
        Field { number: 1, json: "machineID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "systemUUID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "bootID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "kernelVersion", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "osImage", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "containerRuntimeVersion", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 7, json: "kubeletVersion", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 8, json: "kubeProxyVersion", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 9, json: "operatingSystem", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 10, json: "architecture", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 11, json: "swap", ty: Type::Message(&CORE_V1_NODE_SWAP_STATUS), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_OBJECT_FIELD_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ObjectFieldSelector",
    fields: &[
        Field { number: 1, json: "apiVersion", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "fieldPath", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.ObjectReference",
    fields: &[
        Field { number: 1, json: "kind", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "namespace", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "uid", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "apiVersion", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "resourceVersion", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "fieldPath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM: Message = Message {
    name: "k8s.io.api.core.v1.PersistentVolumeClaim",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_CONDITION: Message = Message {
    name: "k8s.io.api.core.v1.PersistentVolumeClaimCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastProbeTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.PersistentVolumeClaimSpec",
    fields: &[
        Field { number: 1, json: "accessModes", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "resources", ty: Type::Message(&CORE_V1_VOLUME_RESOURCE_REQUIREMENTS), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "volumeName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "selector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "storageClassName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "volumeMode", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "dataSource", ty: Type::Message(&CORE_V1_TYPED_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "dataSourceRef", ty: Type::Message(&CORE_V1_TYPED_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "volumeAttributesClassName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.PersistentVolumeClaimStatus",
    fields: &[
        Field { number: 1, json: "phase", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "accessModes", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "capacity", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 4, json: "conditions", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "allocatedResources", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 7, json: "allocatedResourceStatuses", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 8, json: "currentVolumeAttributesClassName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "modifyVolumeStatus", ty: Type::Message(&CORE_V1_MODIFY_VOLUME_STATUS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "healthStatus", ty: Type::Message(&CORE_V1_VOLUME_HEALTH_STATUS), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_TEMPLATE: Message = Message {
    name: "k8s.io.api.core.v1.PersistentVolumeClaimTemplate",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_SPEC), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.PersistentVolumeClaimVolumeSource",
    fields: &[
        Field { number: 1, json: "claimName", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_PHOTON_PERSISTENT_DISK_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.PhotonPersistentDiskVolumeSource",
    fields: &[
        Field { number: 1, json: "pdID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD: Message = Message {
    name: "k8s.io.api.core.v1.Pod",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_POD_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&CORE_V1_POD_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_AFFINITY: Message = Message {
    name: "k8s.io.api.core.v1.PodAffinity",
    fields: &[
        Field { number: 1, json: "requiredDuringSchedulingIgnoredDuringExecution", ty: Type::Message(&CORE_V1_POD_AFFINITY_TERM), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "preferredDuringSchedulingIgnoredDuringExecution", ty: Type::Message(&CORE_V1_WEIGHTED_POD_AFFINITY_TERM), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_AFFINITY_TERM: Message = Message {
    name: "k8s.io.api.core.v1.PodAffinityTerm",
    fields: &[
        Field { number: 1, json: "labelSelector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "namespaces", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "topologyKey", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "namespaceSelector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "matchLabelKeys", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 6, json: "mismatchLabelKeys", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_ANTI_AFFINITY: Message = Message {
    name: "k8s.io.api.core.v1.PodAntiAffinity",
    fields: &[
        Field { number: 1, json: "requiredDuringSchedulingIgnoredDuringExecution", ty: Type::Message(&CORE_V1_POD_AFFINITY_TERM), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "preferredDuringSchedulingIgnoredDuringExecution", ty: Type::Message(&CORE_V1_WEIGHTED_POD_AFFINITY_TERM), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_CERTIFICATE_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.PodCertificateProjection",
    fields: &[
        Field { number: 1, json: "signerName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "keyType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "maxExpirationSeconds", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "credentialBundlePath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "keyPath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "certificateChainPath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "userAnnotations", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 8, json: "user", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_POD_CONDITION: Message = Message {
    name: "k8s.io.api.core.v1.PodCondition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "lastProbeTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_DNS_CONFIG: Message = Message {
    name: "k8s.io.api.core.v1.PodDNSConfig",
    fields: &[
        Field { number: 1, json: "nameservers", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "searches", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "options", ty: Type::Message(&CORE_V1_POD_DNS_CONFIG_OPTION), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_DNS_CONFIG_OPTION: Message = Message {
    name: "k8s.io.api.core.v1.PodDNSConfigOption",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "value", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_POD_EXTENDED_RESOURCE_CLAIM_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.PodExtendedResourceClaimStatus",
    fields: &[
        Field { number: 1, json: "requestMappings", ty: Type::Message(&CORE_V1_CONTAINER_EXTENDED_RESOURCE_REQUEST), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "resourceClaimName", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_IP: Message = Message {
    name: "k8s.io.api.core.v1.PodIP",
    fields: &[
        Field { number: 1, json: "ip", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_OS: Message = Message {
    name: "k8s.io.api.core.v1.PodOS",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_READINESS_GATE: Message = Message {
    name: "k8s.io.api.core.v1.PodReadinessGate",
    fields: &[
        Field { number: 1, json: "conditionType", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_RESOURCE_CLAIM: Message = Message {
    name: "k8s.io.api.core.v1.PodResourceClaim",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "resourceClaimName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "resourceClaimTemplateName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_POD_RESOURCE_CLAIM_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.PodResourceClaimStatus",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "resourceClaimName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_POD_SCHEDULING_GATE: Message = Message {
    name: "k8s.io.api.core.v1.PodSchedulingGate",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_SCHEDULING_GROUP: Message = Message {
    name: "k8s.io.api.core.v1.PodSchedulingGroup",
    fields: &[
        Field { number: 1, json: "podGroupName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_POD_SECURITY_CONTEXT: Message = Message {
    name: "k8s.io.api.core.v1.PodSecurityContext",
    fields: &[
        Field { number: 1, json: "seLinuxOptions", ty: Type::Message(&CORE_V1_SE_LINUX_OPTIONS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "runAsUser", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "runAsNonRoot", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "supplementalGroups", ty: Type::Int64, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 5, json: "fsGroup", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "runAsGroup", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "sysctls", ty: Type::Message(&CORE_V1_SYSCTL), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 8, json: "windowsOptions", ty: Type::Message(&CORE_V1_WINDOWS_SECURITY_CONTEXT_OPTIONS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "fsGroupChangePolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "seccompProfile", ty: Type::Message(&CORE_V1_SECCOMP_PROFILE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "appArmorProfile", ty: Type::Message(&CORE_V1_APP_ARMOR_PROFILE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "supplementalGroupsPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 13, json: "seLinuxChangePolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_POD_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.PodSpec",
    fields: &[
        Field { number: 1, json: "volumes", ty: Type::Message(&CORE_V1_VOLUME), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "containers", ty: Type::Message(&CORE_V1_CONTAINER), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "restartPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "terminationGracePeriodSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "activeDeadlineSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "dnsPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "nodeSelector", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 8, json: "serviceAccountName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "serviceAccount", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 10, json: "nodeName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 11, json: "hostNetwork", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 12, json: "hostPID", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 13, json: "hostIPC", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 14, json: "securityContext", ty: Type::Message(&CORE_V1_POD_SECURITY_CONTEXT), card: Card::Single, presence: Presence::Pointer },
        Field { number: 15, json: "imagePullSecrets", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 16, json: "hostname", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 17, json: "subdomain", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 18, json: "affinity", ty: Type::Message(&CORE_V1_AFFINITY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 19, json: "schedulerName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 20, json: "initContainers", ty: Type::Message(&CORE_V1_CONTAINER), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 21, json: "automountServiceAccountToken", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 22, json: "tolerations", ty: Type::Message(&CORE_V1_TOLERATION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 23, json: "hostAliases", ty: Type::Message(&CORE_V1_HOST_ALIAS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 24, json: "priorityClassName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 25, json: "priority", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 26, json: "dnsConfig", ty: Type::Message(&CORE_V1_POD_DNS_CONFIG), card: Card::Single, presence: Presence::Pointer },
        Field { number: 27, json: "shareProcessNamespace", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 28, json: "readinessGates", ty: Type::Message(&CORE_V1_POD_READINESS_GATE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 29, json: "runtimeClassName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 30, json: "enableServiceLinks", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 31, json: "preemptionPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 32, json: "overhead", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 33, json: "topologySpreadConstraints", ty: Type::Message(&CORE_V1_TOPOLOGY_SPREAD_CONSTRAINT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 34, json: "ephemeralContainers", ty: Type::Message(&CORE_V1_EPHEMERAL_CONTAINER), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 35, json: "setHostnameAsFQDN", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 36, json: "os", ty: Type::Message(&CORE_V1_POD_OS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 37, json: "hostUsers", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 38, json: "schedulingGates", ty: Type::Message(&CORE_V1_POD_SCHEDULING_GATE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 39, json: "resourceClaims", ty: Type::Message(&CORE_V1_POD_RESOURCE_CLAIM), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 40, json: "resources", ty: Type::Message(&CORE_V1_RESOURCE_REQUIREMENTS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 41, json: "hostnameOverride", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 43, json: "schedulingGroup", ty: Type::Message(&CORE_V1_POD_SCHEDULING_GROUP), card: Card::Single, presence: Presence::Pointer },
        Field { number: 44, json: "evictionResponders", ty: Type::Message(&CORE_V1_EVICTION_RESPONDER), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.PodStatus",
    fields: &[
        Field { number: 1, json: "phase", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "conditions", ty: Type::Message(&CORE_V1_POD_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "hostIP", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "podIP", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "startTime", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "containerStatuses", ty: Type::Message(&CORE_V1_CONTAINER_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 9, json: "qosClass", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 10, json: "initContainerStatuses", ty: Type::Message(&CORE_V1_CONTAINER_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 11, json: "nominatedNodeName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 12, json: "podIPs", ty: Type::Message(&CORE_V1_POD_IP), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 13, json: "ephemeralContainerStatuses", ty: Type::Message(&CORE_V1_CONTAINER_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 14, json: "resize", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 15, json: "resourceClaimStatuses", ty: Type::Message(&CORE_V1_POD_RESOURCE_CLAIM_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 16, json: "hostIPs", ty: Type::Message(&CORE_V1_HOST_IP), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 17, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 18, json: "extendedResourceClaimStatus", ty: Type::Message(&CORE_V1_POD_EXTENDED_RESOURCE_CLAIM_STATUS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 19, json: "allocatedResources", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 20, json: "resources", ty: Type::Message(&CORE_V1_RESOURCE_REQUIREMENTS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 21, json: "nodeAllocatableResourceClaimStatuses", ty: Type::Message(&CORE_V1_NODE_ALLOCATABLE_RESOURCE_CLAIM_STATUS), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 22, json: "volumeHealth", ty: Type::Message(&CORE_V1_POD_VOLUME_HEALTH), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_POD_TEMPLATE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.PodTemplateSpec",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_POD_SPEC), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_POD_VOLUME_HEALTH: Message = Message {
    name: "k8s.io.api.core.v1.PodVolumeHealth",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "healthConditions", ty: Type::Message(&CORE_V1_VOLUME_HEALTH_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_PORTWORX_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.PortworxVolumeSource",
    fields: &[
        Field { number: 1, json: "volumeID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_PORT_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.PortStatus",
    fields: &[
        Field { number: 1, json: "port", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "protocol", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "error", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_PREFERRED_SCHEDULING_TERM: Message = Message {
    name: "k8s.io.api.core.v1.PreferredSchedulingTerm",
    fields: &[
        Field { number: 1, json: "weight", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "preference", ty: Type::Message(&CORE_V1_NODE_SELECTOR_TERM), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_PROBE: Message = Message {
    name: "k8s.io.api.core.v1.Probe",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_PROBE_HANDLER), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "initialDelaySeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "timeoutSeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "periodSeconds", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "successThreshold", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "failureThreshold", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "terminationGracePeriodSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_PROBE_HANDLER: Message = Message {
    name: "k8s.io.api.core.v1.ProbeHandler",
    fields: &[
        Field { number: 1, json: "exec", ty: Type::Message(&CORE_V1_EXEC_ACTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "httpGet", ty: Type::Message(&CORE_V1_HTTP_GET_ACTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "tcpSocket", ty: Type::Message(&CORE_V1_TCP_SOCKET_ACTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "grpc", ty: Type::Message(&CORE_V1_GRPC_ACTION), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_PROJECTED_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ProjectedVolumeSource",
    fields: &[
        Field { number: 1, json: "sources", ty: Type::Message(&CORE_V1_VOLUME_PROJECTION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "defaultMode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "defaultUser", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_QUOBYTE_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.QuobyteVolumeSource",
    fields: &[
        Field { number: 1, json: "registry", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "volume", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "user", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "group", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "tenant", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_RBD_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.RBDVolumeSource",
    fields: &[
        Field { number: 1, json: "monitors", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "image", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "pool", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "user", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "keyring", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_RESOURCE_CLAIM: Message = Message {
    name: "k8s.io.api.core.v1.ResourceClaim",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "request", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_RESOURCE_FIELD_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ResourceFieldSelector",
    fields: &[
        Field { number: 1, json: "containerName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "resource", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "divisor", ty: Type::Quantity, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_RESOURCE_HEALTH: Message = Message {
    name: "k8s.io.api.core.v1.ResourceHealth",
    fields: &[
        Field { number: 1, json: "resourceID", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "health", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_RESOURCE_REQUIREMENTS: Message = Message {
    name: "k8s.io.api.core.v1.ResourceRequirements",
    fields: &[
        Field { number: 1, json: "limits", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 2, json: "requests", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 3, json: "claims", ty: Type::Message(&CORE_V1_RESOURCE_CLAIM), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_RESOURCE_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.ResourceStatus",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "resources", ty: Type::Message(&CORE_V1_RESOURCE_HEALTH), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_SCALE_IO_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ScaleIOVolumeSource",
    fields: &[
        Field { number: 1, json: "gateway", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "system", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "sslEnabled", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "protectionDomain", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "storagePool", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "storageMode", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 8, json: "volumeName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 10, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_SECCOMP_PROFILE: Message = Message {
    name: "k8s.io.api.core.v1.SeccompProfile",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "localhostProfile", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SECRET: Message = Message {
    name: "k8s.io.api.core.v1.Secret",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "data", ty: Type::Bytes, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 3, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "stringData", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 5, json: "immutable", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SECRET_ENV_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.SecretEnvSource",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SECRET_KEY_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.SecretKeySelector",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SECRET_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.SecretProjection",
    fields: &[
        Field { number: 1, json: "", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Inline },
        Field { number: 2, json: "items", ty: Type::Message(&CORE_V1_KEY_TO_PATH), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SECRET_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.SecretVolumeSource",
    fields: &[
        Field { number: 1, json: "secretName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "items", ty: Type::Message(&CORE_V1_KEY_TO_PATH), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "defaultMode", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "optional", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "defaultUser", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SECURITY_CONTEXT: Message = Message {
    name: "k8s.io.api.core.v1.SecurityContext",
    fields: &[
        Field { number: 1, json: "capabilities", ty: Type::Message(&CORE_V1_CAPABILITIES), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "privileged", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "seLinuxOptions", ty: Type::Message(&CORE_V1_SE_LINUX_OPTIONS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "runAsUser", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "runAsNonRoot", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "readOnlyRootFilesystem", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "allowPrivilegeEscalation", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "runAsGroup", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "procMount", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "windowsOptions", ty: Type::Message(&CORE_V1_WINDOWS_SECURITY_CONTEXT_OPTIONS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "seccompProfile", ty: Type::Message(&CORE_V1_SECCOMP_PROFILE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "appArmorProfile", ty: Type::Message(&CORE_V1_APP_ARMOR_PROFILE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SERVICE: Message = Message {
    name: "k8s.io.api.core.v1.Service",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "spec", ty: Type::Message(&CORE_V1_SERVICE_SPEC), card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "status", ty: Type::Message(&CORE_V1_SERVICE_STATUS), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_SERVICE_ACCOUNT: Message = Message {
    name: "k8s.io.api.core.v1.ServiceAccount",
    fields: &[
        Field { number: 1, json: "metadata", ty: Type::Message(&META_V1_OBJECT_META), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "secrets", ty: Type::Message(&CORE_V1_OBJECT_REFERENCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 3, json: "imagePullSecrets", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 4, json: "automountServiceAccountToken", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SERVICE_ACCOUNT_TOKEN_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.ServiceAccountTokenProjection",
    fields: &[
        Field { number: 1, json: "audience", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "expirationSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "path", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "user", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SERVICE_PORT: Message = Message {
    name: "k8s.io.api.core.v1.ServicePort",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "protocol", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "port", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "targetPort", ty: Type::IntOrString, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "nodePort", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "appProtocol", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SERVICE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.ServiceSpec",
    fields: &[
        Field { number: 1, json: "ports", ty: Type::Message(&CORE_V1_SERVICE_PORT), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "selector", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 3, json: "clusterIP", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "externalIPs", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 7, json: "sessionAffinity", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 8, json: "loadBalancerIP", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 9, json: "loadBalancerSourceRanges", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 10, json: "externalName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 11, json: "externalTrafficPolicy", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 12, json: "healthCheckNodePort", ty: Type::Int32, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 13, json: "publishNotReadyAddresses", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 14, json: "sessionAffinityConfig", ty: Type::Message(&CORE_V1_SESSION_AFFINITY_CONFIG), card: Card::Single, presence: Presence::Pointer },
        Field { number: 17, json: "ipFamilyPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 18, json: "clusterIPs", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 19, json: "ipFamilies", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 20, json: "allocateLoadBalancerNodePorts", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 21, json: "loadBalancerClass", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 22, json: "internalTrafficPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 23, json: "trafficDistribution", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SERVICE_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.ServiceStatus",
    fields: &[
        Field { number: 1, json: "loadBalancer", ty: Type::Message(&CORE_V1_LOAD_BALANCER_STATUS), card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "conditions", ty: Type::Message(&META_V1_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_SESSION_AFFINITY_CONFIG: Message = Message {
    name: "k8s.io.api.core.v1.SessionAffinityConfig",
    fields: &[
        Field { number: 1, json: "clientIP", ty: Type::Message(&CORE_V1_CLIENT_IP_CONFIG), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SE_LINUX_OPTIONS: Message = Message {
    name: "k8s.io.api.core.v1.SELinuxOptions",
    fields: &[
        Field { number: 1, json: "user", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "role", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "type", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "level", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_SLEEP_ACTION: Message = Message {
    name: "k8s.io.api.core.v1.SleepAction",
    fields: &[
        Field { number: 1, json: "seconds", ty: Type::Int64, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_STORAGE_OS_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.StorageOSVolumeSource",
    fields: &[
        Field { number: 1, json: "volumeName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "volumeNamespace", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "secretRef", ty: Type::Message(&CORE_V1_LOCAL_OBJECT_REFERENCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_SYSCTL: Message = Message {
    name: "k8s.io.api.core.v1.Sysctl",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "value", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_TAINT: Message = Message {
    name: "k8s.io.api.core.v1.Taint",
    fields: &[
        Field { number: 1, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "value", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "effect", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "timeAdded", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_TCP_SOCKET_ACTION: Message = Message {
    name: "k8s.io.api.core.v1.TCPSocketAction",
    fields: &[
        Field { number: 1, json: "port", ty: Type::IntOrString, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "host", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_TOLERATION: Message = Message {
    name: "k8s.io.api.core.v1.Toleration",
    fields: &[
        Field { number: 1, json: "key", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "operator", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "value", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "effect", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "tolerationSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_TOPOLOGY_SPREAD_CONSTRAINT: Message = Message {
    name: "k8s.io.api.core.v1.TopologySpreadConstraint",
    fields: &[
        Field { number: 1, json: "maxSkew", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "topologyKey", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "whenUnsatisfiable", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "labelSelector", ty: Type::Message(&META_V1_LABEL_SELECTOR), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "minDomains", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "nodeAffinityPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "nodeTaintsPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "matchLabelKeys", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_TYPED_LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.TypedLocalObjectReference",
    fields: &[
        Field { number: 1, json: "apiGroup", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "kind", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_TYPED_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.TypedObjectReference",
    fields: &[
        Field { number: 1, json: "apiGroup", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "kind", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "namespace", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_VOLUME: Message = Message {
    name: "k8s.io.api.core.v1.Volume",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "", ty: Type::Message(&CORE_V1_VOLUME_SOURCE), card: Card::Single, presence: Presence::Inline },
    ],
};

pub(super) static CORE_V1_VOLUME_DEVICE: Message = Message {
    name: "k8s.io.api.core.v1.VolumeDevice",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "devicePath", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_VOLUME_HEALTH_CONDITION: Message = Message {
    name: "k8s.io.api.core.v1.VolumeHealthCondition",
    fields: &[
        Field { number: 1, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "message", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_VOLUME_HEALTH_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.VolumeHealthStatus",
    fields: &[
        Field { number: 1, json: "healthConditions", ty: Type::Message(&CORE_V1_VOLUME_HEALTH_CONDITION), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 2, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_VOLUME_MOUNT: Message = Message {
    name: "k8s.io.api.core.v1.VolumeMount",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "mountPath", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "subPath", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "mountPropagation", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "subPathExpr", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "recursiveReadOnly", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "bindMountOptions", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_VOLUME_MOUNT_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.VolumeMountStatus",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "mountPath", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "readOnly", ty: Type::Bool, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "recursiveReadOnly", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "volumeStatus", ty: Type::Message(&CORE_V1_VOLUME_STATUS), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_VOLUME_PROJECTION: Message = Message {
    name: "k8s.io.api.core.v1.VolumeProjection",
    fields: &[
        Field { number: 1, json: "secret", ty: Type::Message(&CORE_V1_SECRET_PROJECTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "downwardAPI", ty: Type::Message(&CORE_V1_DOWNWARD_API_PROJECTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "configMap", ty: Type::Message(&CORE_V1_CONFIG_MAP_PROJECTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "serviceAccountToken", ty: Type::Message(&CORE_V1_SERVICE_ACCOUNT_TOKEN_PROJECTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "clusterTrustBundle", ty: Type::Message(&CORE_V1_CLUSTER_TRUST_BUNDLE_PROJECTION), card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "podCertificate", ty: Type::Message(&CORE_V1_POD_CERTIFICATE_PROJECTION), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_VOLUME_RESOURCE_REQUIREMENTS: Message = Message {
    name: "k8s.io.api.core.v1.VolumeResourceRequirements",
    fields: &[
        Field { number: 1, json: "limits", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 2, json: "requests", ty: Type::Quantity, card: Card::Map, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.VolumeSource",
    fields: &[
        Field { number: 1, json: "hostPath", ty: Type::Message(&CORE_V1_HOST_PATH_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "emptyDir", ty: Type::Message(&CORE_V1_EMPTY_DIR_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "gcePersistentDisk", ty: Type::Message(&CORE_V1_GCE_PERSISTENT_DISK_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "awsElasticBlockStore", ty: Type::Message(&CORE_V1_AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "gitRepo", ty: Type::Message(&CORE_V1_GIT_REPO_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "secret", ty: Type::Message(&CORE_V1_SECRET_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "nfs", ty: Type::Message(&CORE_V1_NFS_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "iscsi", ty: Type::Message(&CORE_V1_ISCSI_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 9, json: "glusterfs", ty: Type::Message(&CORE_V1_GLUSTERFS_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "persistentVolumeClaim", ty: Type::Message(&CORE_V1_PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "rbd", ty: Type::Message(&CORE_V1_RBD_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 12, json: "flexVolume", ty: Type::Message(&CORE_V1_FLEX_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 13, json: "cinder", ty: Type::Message(&CORE_V1_CINDER_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 14, json: "cephfs", ty: Type::Message(&CORE_V1_CEPH_FS_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 15, json: "flocker", ty: Type::Message(&CORE_V1_FLOCKER_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 16, json: "downwardAPI", ty: Type::Message(&CORE_V1_DOWNWARD_API_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 17, json: "fc", ty: Type::Message(&CORE_V1_FC_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 18, json: "azureFile", ty: Type::Message(&CORE_V1_AZURE_FILE_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 19, json: "configMap", ty: Type::Message(&CORE_V1_CONFIG_MAP_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 20, json: "vsphereVolume", ty: Type::Message(&CORE_V1_VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 21, json: "quobyte", ty: Type::Message(&CORE_V1_QUOBYTE_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 22, json: "azureDisk", ty: Type::Message(&CORE_V1_AZURE_DISK_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 23, json: "photonPersistentDisk", ty: Type::Message(&CORE_V1_PHOTON_PERSISTENT_DISK_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 24, json: "portworxVolume", ty: Type::Message(&CORE_V1_PORTWORX_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 25, json: "scaleIO", ty: Type::Message(&CORE_V1_SCALE_IO_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 26, json: "projected", ty: Type::Message(&CORE_V1_PROJECTED_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 27, json: "storageos", ty: Type::Message(&CORE_V1_STORAGE_OS_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 28, json: "csi", ty: Type::Message(&CORE_V1_CSI_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 29, json: "ephemeral", ty: Type::Message(&CORE_V1_EPHEMERAL_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 30, json: "image", ty: Type::Message(&CORE_V1_IMAGE_VOLUME_SOURCE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_VOLUME_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.VolumeStatus",
    fields: &[
        Field { number: 1, json: "image", ty: Type::Message(&CORE_V1_IMAGE_VOLUME_STATUS), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static CORE_V1_VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.VsphereVirtualDiskVolumeSource",
    fields: &[
        Field { number: 1, json: "volumePath", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "fsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "storagePolicyName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "storagePolicyID", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static CORE_V1_WEIGHTED_POD_AFFINITY_TERM: Message = Message {
    name: "k8s.io.api.core.v1.WeightedPodAffinityTerm",
    fields: &[
        Field { number: 1, json: "weight", ty: Type::Int32, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "podAffinityTerm", ty: Type::Message(&CORE_V1_POD_AFFINITY_TERM), card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static CORE_V1_WINDOWS_SECURITY_CONTEXT_OPTIONS: Message = Message {
    name: "k8s.io.api.core.v1.WindowsSecurityContextOptions",
    fields: &[
        Field { number: 1, json: "gmsaCredentialSpecName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "gmsaCredentialSpec", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "runAsUserName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "hostProcess", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static META_V1_CONDITION: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.Condition",
    fields: &[
        Field { number: 1, json: "type", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "status", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "observedGeneration", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "lastTransitionTime", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "reason", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "message", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static META_V1_DELETE_OPTIONS: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    fields: &[
        Field { number: 1, json: "gracePeriodSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "preconditions", ty: Type::Message(&META_V1_PRECONDITIONS), card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "orphanDependents", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 4, json: "propagationPolicy", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 5, json: "dryRun", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 6, json: "ignoreStoreReadErrorWithClusterBreakingPotential", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static META_V1_LABEL_SELECTOR: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector",
    fields: &[
        Field { number: 1, json: "matchLabels", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 2, json: "matchExpressions", ty: Type::Message(&META_V1_LABEL_SELECTOR_REQUIREMENT), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static META_V1_LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    fields: &[
        Field { number: 1, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "operator", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "values", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static META_V1_MANAGED_FIELDS_ENTRY: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    fields: &[
        Field { number: 1, json: "manager", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "operation", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "apiVersion", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "time", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
        Field { number: 6, json: "fieldsType", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "fieldsV1", ty: Type::FieldsV1, card: Card::Single, presence: Presence::Pointer },
        Field { number: 8, json: "subresource", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
    ],
};

pub(super) static META_V1_OBJECT_META: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 2, json: "generateName", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 3, json: "namespace", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 4, json: "selfLink", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 5, json: "uid", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 6, json: "resourceVersion", ty: Type::String, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 7, json: "generation", ty: Type::Int64, card: Card::Single, presence: Presence::OmitEmpty },
        Field { number: 8, json: "creationTimestamp", ty: Type::Time, card: Card::Single, presence: Presence::Always },
        Field { number: 9, json: "deletionTimestamp", ty: Type::Time, card: Card::Single, presence: Presence::Pointer },
        Field { number: 10, json: "deletionGracePeriodSeconds", ty: Type::Int64, card: Card::Single, presence: Presence::Pointer },
        Field { number: 11, json: "labels", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 12, json: "annotations", ty: Type::String, card: Card::Map, presence: Presence::OmitEmpty },
        Field { number: 13, json: "ownerReferences", ty: Type::Message(&META_V1_OWNER_REFERENCE), card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 14, json: "finalizers", ty: Type::String, card: Card::Repeated, presence: Presence::OmitEmpty },
        Field { number: 17, json: "managedFields", ty: Type::Message(&META_V1_MANAGED_FIELDS_ENTRY), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static META_V1_OWNER_REFERENCE: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference",
    fields: &[
        Field { number: 1, json: "kind", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 3, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 4, json: "uid", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 5, json: "apiVersion", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 6, json: "controller", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
        Field { number: 7, json: "blockOwnerDeletion", ty: Type::Bool, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static META_V1_PRECONDITIONS: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.Preconditions",
    fields: &[
        Field { number: 1, json: "uid", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "resourceVersion", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_TOPOLOGY_CONSTRAINT: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.TopologyConstraint",
    fields: &[
        Field { number: 1, json: "key", ty: Type::String, card: Card::Single, presence: Presence::Always },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_ALL_DISRUPTION_MODE: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupAllDisruptionMode",
    fields: &[

    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_BASIC_SCHEDULING_POLICY: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupBasicSchedulingPolicy",
    fields: &[

    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_DISRUPTION_MODE: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupDisruptionMode",
    fields: &[
        Field { number: 1, json: "single", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_SINGLE_DISRUPTION_MODE), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "all", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_ALL_DISRUPTION_MODE), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_GANG_SCHEDULING_POLICY: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy",
    fields: &[
        Field { number: 1, json: "minCount", ty: Type::Int32, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_RESOURCE_CLAIM: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupResourceClaim",
    fields: &[
        Field { number: 1, json: "name", ty: Type::String, card: Card::Single, presence: Presence::Always },
        Field { number: 2, json: "resourceClaimName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
        Field { number: 3, json: "resourceClaimTemplateName", ty: Type::String, card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_SCHEDULING_CONSTRAINTS: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints",
    fields: &[
        Field { number: 1, json: "topology", ty: Type::Message(&SCHEDULING_V1ALPHA3_TOPOLOGY_CONSTRAINT), card: Card::Repeated, presence: Presence::OmitEmpty },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_SCHEDULING_POLICY: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy",
    fields: &[
        Field { number: 1, json: "basic", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_BASIC_SCHEDULING_POLICY), card: Card::Single, presence: Presence::Pointer },
        Field { number: 2, json: "gang", ty: Type::Message(&SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_GANG_SCHEDULING_POLICY), card: Card::Single, presence: Presence::Pointer },
    ],
};

pub(super) static SCHEDULING_V1ALPHA3_WORKLOAD_POD_GROUP_SINGLE_DISRUPTION_MODE: Message = Message {
    name: "k8s.io.api.scheduling.v1alpha3.WorkloadPodGroupSingleDisruptionMode",
    fields: &[

    ],
};
