//! The patch metadata strategic merge patch needs for the built-in kinds.
//!
//! kube-apiserver reads it from the `patchStrategy` / `patchMergeKey` struct
//! tags of the Go types in k8s.io/api; we have no Go types, so the tags that
//! matter are written down here as a small static tree of [`TypeNode`]s, one
//! per Go struct that carries (or leads to) a tag. A field that is not listed
//! is plain: objects under it merge key by key and lists under it are replaced
//! whole, which is exactly what an untagged Go field gets.
//!
//! Each entry was checked against the tags in k8s.io/api (core/v1, apps/v1,
//! batch/v1) and k8s.io/apimachinery (meta/v1 ObjectMeta). Notably untagged,
//! hence replaced whole: `tolerations`, `args`/`command`, `envFrom`,
//! `node.spec.taints`, `namespace.spec.finalizers`, `serviceAccount.imagePullSecrets`,
//! `endpoints.subsets`, `statefulSet.spec.volumeClaimTemplates`, `managedFields`.

/// How a list-valued field is combined with the live list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// No `patchStrategy` tag: the patch's list replaces the live one.
    Replace,
    /// `patchStrategy:"merge"` with `patchMergeKey`: items are objects
    /// identified by the value of this key.
    MergeByKey(&'static str),
    /// `patchStrategy:"merge"` on a list of primitives: a set union that
    /// keeps order (`metadata.finalizers`, `node.spec.podCIDRs`).
    MergeSet,
}

/// The patch metadata of one field of a [`TypeNode`].
#[derive(Debug)]
pub struct FieldMeta {
    /// The JSON name of the field.
    pub name: &'static str,
    /// How the field is patched when it holds a list.
    pub list: ListStrategy,
    /// `patchStrategy` includes `retainKeys`. Clients (kubectl) use it to
    /// decide when to send a `$retainKeys` directive; the server honours the
    /// directive wherever it appears, as kube-apiserver does, so this is a
    /// record of the tag rather than a gate.
    pub retain_keys: bool,
    /// The type of the field's value; for a list, the type of each item.
    /// `None` means plain (nothing tagged below).
    pub node: Option<&'static TypeNode>,
}

/// A Go struct as far as strategic merge patch cares: its tagged fields and
/// the fields that lead to tagged structs.
#[derive(Debug)]
pub struct TypeNode {
    /// The Go type name, for error messages and debugging.
    pub name: &'static str,
    /// The fields with patch metadata; every other field is plain.
    pub fields: &'static [FieldMeta],
}

impl TypeNode {
    /// The metadata of field `name`, if it has any.
    pub fn field(&self, name: &str) -> Option<&FieldMeta> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A type with no tagged fields anywhere below it (maps, labels, data...).
pub static PLAIN: TypeNode = TypeNode { name: "", fields: &[] };

/// A struct-valued field leading to `node`.
const fn object(name: &'static str, node: &'static TypeNode) -> FieldMeta {
    FieldMeta { name, list: ListStrategy::Replace, retain_keys: false, node: Some(node) }
}

/// A `patchStrategy:"merge"` list of objects keyed by `key`, items plain.
const fn keyed(name: &'static str, key: &'static str) -> FieldMeta {
    FieldMeta { name, list: ListStrategy::MergeByKey(key), retain_keys: false, node: None }
}

/// A `patchStrategy:"merge"` list of objects keyed by `key`, items of type `node`.
const fn keyed_of(name: &'static str, key: &'static str, node: &'static TypeNode) -> FieldMeta {
    FieldMeta { name, list: ListStrategy::MergeByKey(key), retain_keys: false, node: Some(node) }
}

/// A `patchStrategy:"merge,retainKeys"` list of objects keyed by `key`.
const fn keyed_retain(name: &'static str, key: &'static str) -> FieldMeta {
    FieldMeta { name, list: ListStrategy::MergeByKey(key), retain_keys: true, node: None }
}

/// A `patchStrategy:"merge"` list of primitives.
const fn set(name: &'static str) -> FieldMeta {
    FieldMeta { name, list: ListStrategy::MergeSet, retain_keys: false, node: None }
}

/// A struct-valued field tagged `patchStrategy:"retainKeys"`.
const fn retain(name: &'static str) -> FieldMeta {
    FieldMeta { name, list: ListStrategy::Replace, retain_keys: true, node: None }
}

// ---- meta/v1 -------------------------------------------------------------

/// metav1.ObjectMeta.
pub static OBJECT_META: TypeNode =
    TypeNode { name: "ObjectMeta", fields: &[set("finalizers"), keyed("ownerReferences", "uid")] };

/// Any object whose only tagged fields are in its metadata.
static METADATA_ONLY: TypeNode = TypeNode { name: "Object", fields: &[object("metadata", &OBJECT_META)] };

/// A status whose only tagged field is `conditions` keyed by `type`
/// (Namespace, Service, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job).
static CONDITIONS_STATUS: TypeNode = TypeNode { name: "Status", fields: &[keyed("conditions", "type")] };

// ---- core/v1 Pod ---------------------------------------------------------

/// core/v1 Container; also EphemeralContainer, whose inlined
/// EphemeralContainerCommon carries the same tags.
pub static CONTAINER: TypeNode = TypeNode {
    name: "Container",
    fields: &[
        keyed("ports", "containerPort"),
        keyed("env", "name"),
        keyed("volumeMounts", "mountPath"),
        keyed("volumeDevices", "devicePath"),
    ],
};

/// core/v1 PodSpec.
pub static POD_SPEC: TypeNode = TypeNode {
    name: "PodSpec",
    fields: &[
        keyed_retain("volumes", "name"),
        keyed_of("initContainers", "name", &CONTAINER),
        keyed_of("containers", "name", &CONTAINER),
        keyed_of("ephemeralContainers", "name", &CONTAINER),
        keyed("imagePullSecrets", "name"),
        keyed("hostAliases", "ip"),
        keyed("topologySpreadConstraints", "topologyKey"),
        keyed("schedulingGates", "name"),
        keyed_retain("resourceClaims", "name"),
        keyed("evictionResponders", "name"),
    ],
};

/// core/v1 NodeAllocatableResourceClaimStatus (inside PodStatus).
static NODE_ALLOCATABLE_CLAIM_STATUS: TypeNode = TypeNode {
    name: "NodeAllocatableResourceClaimStatus",
    fields: &[keyed("mapping", "name"), keyed("overhead", "name")],
};

/// core/v1 PodStatus.
static POD_STATUS: TypeNode = TypeNode {
    name: "PodStatus",
    fields: &[
        keyed("conditions", "type"),
        keyed("hostIPs", "ip"),
        keyed("podIPs", "ip"),
        keyed_retain("resourceClaimStatuses", "name"),
        keyed_of("nodeAllocatableResourceClaimStatuses", "resourceClaimName", &NODE_ALLOCATABLE_CLAIM_STATUS),
    ],
};

/// core/v1 Pod.
static POD: TypeNode = TypeNode {
    name: "Pod",
    fields: &[object("metadata", &OBJECT_META), object("spec", &POD_SPEC), object("status", &POD_STATUS)],
};

/// core/v1 PodTemplateSpec, shared by every workload kind.
pub static POD_TEMPLATE_SPEC: TypeNode = TypeNode {
    name: "PodTemplateSpec",
    fields: &[object("metadata", &OBJECT_META), object("spec", &POD_SPEC)],
};

// ---- core/v1, everything else -------------------------------------------

/// core/v1 Namespace.
static NAMESPACE: TypeNode = TypeNode {
    name: "Namespace",
    fields: &[object("metadata", &OBJECT_META), object("status", &CONDITIONS_STATUS)],
};

/// core/v1 ServiceAccount (`imagePullSecrets` is untagged here, unlike PodSpec).
static SERVICE_ACCOUNT: TypeNode = TypeNode {
    name: "ServiceAccount",
    fields: &[object("metadata", &OBJECT_META), keyed("secrets", "name")],
};

/// core/v1 ServiceSpec.
static SERVICE_SPEC: TypeNode = TypeNode { name: "ServiceSpec", fields: &[keyed("ports", "port")] };

/// core/v1 Service.
static SERVICE: TypeNode = TypeNode {
    name: "Service",
    fields: &[
        object("metadata", &OBJECT_META),
        object("spec", &SERVICE_SPEC),
        object("status", &CONDITIONS_STATUS),
    ],
};

/// core/v1 NodeSpec.
static NODE_SPEC: TypeNode = TypeNode { name: "NodeSpec", fields: &[set("podCIDRs")] };

/// core/v1 NodeStatus.
static NODE_STATUS: TypeNode =
    TypeNode { name: "NodeStatus", fields: &[keyed("conditions", "type"), keyed("addresses", "type")] };

/// core/v1 Node.
static NODE: TypeNode = TypeNode {
    name: "Node",
    fields: &[object("metadata", &OBJECT_META), object("spec", &NODE_SPEC), object("status", &NODE_STATUS)],
};

// ---- apps/v1 -------------------------------------------------------------

/// apps/v1 DeploymentSpec: the pod template, and `strategy` with retainKeys
/// so switching `type` to Recreate can drop `rollingUpdate`.
static DEPLOYMENT_SPEC: TypeNode = TypeNode {
    name: "DeploymentSpec",
    fields: &[object("template", &POD_TEMPLATE_SPEC), retain("strategy")],
};

/// ReplicaSetSpec, StatefulSetSpec, DaemonSetSpec: only the template is tagged.
static WORKLOAD_SPEC: TypeNode =
    TypeNode { name: "WorkloadSpec", fields: &[object("template", &POD_TEMPLATE_SPEC)] };

/// apps/v1 Deployment.
static DEPLOYMENT: TypeNode = TypeNode {
    name: "Deployment",
    fields: &[
        object("metadata", &OBJECT_META),
        object("spec", &DEPLOYMENT_SPEC),
        object("status", &CONDITIONS_STATUS),
    ],
};

/// apps/v1 ReplicaSet, StatefulSet and DaemonSet.
static WORKLOAD: TypeNode = TypeNode {
    name: "Workload",
    fields: &[
        object("metadata", &OBJECT_META),
        object("spec", &WORKLOAD_SPEC),
        object("status", &CONDITIONS_STATUS),
    ],
};

// ---- batch/v1 ------------------------------------------------------------

/// batch/v1 JobSchedulingConfiguration.
static JOB_SCHEDULING: TypeNode =
    TypeNode { name: "JobSchedulingConfiguration", fields: &[keyed("resourceClaims", "name")] };

/// batch/v1 JobSpec.
static JOB_SPEC: TypeNode = TypeNode {
    name: "JobSpec",
    fields: &[object("template", &POD_TEMPLATE_SPEC), object("scheduling", &JOB_SCHEDULING)],
};

/// batch/v1 Job.
static JOB: TypeNode = TypeNode {
    name: "Job",
    fields: &[
        object("metadata", &OBJECT_META),
        object("spec", &JOB_SPEC),
        object("status", &CONDITIONS_STATUS),
    ],
};

/// batch/v1 JobTemplateSpec.
static JOB_TEMPLATE_SPEC: TypeNode = TypeNode {
    name: "JobTemplateSpec",
    fields: &[object("metadata", &OBJECT_META), object("spec", &JOB_SPEC)],
};

/// batch/v1 CronJobSpec.
static CRON_JOB_SPEC: TypeNode =
    TypeNode { name: "CronJobSpec", fields: &[object("jobTemplate", &JOB_TEMPLATE_SPEC)] };

/// batch/v1 CronJob.
static CRON_JOB: TypeNode =
    TypeNode { name: "CronJob", fields: &[object("metadata", &OBJECT_META), object("spec", &CRON_JOB_SPEC)] };

/// The patch metadata of a built-in kind (`group` is `""` for core), or
/// `None` if strategic merge patch is not supported for it — kube answers
/// 415 for custom resources, which have no Go types to read tags from.
pub fn for_kind(group: &str, kind: &str) -> Option<&'static TypeNode> {
    let node = match (group, kind) {
        ("", "Namespace") => &NAMESPACE,
        ("", "ConfigMap" | "Secret" | "Endpoints" | "Event") => &METADATA_ONLY,
        ("", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("", "Service") => &SERVICE,
        ("", "Pod") => &POD,
        ("", "Node") => &NODE,
        ("apps", "Deployment") => &DEPLOYMENT,
        ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet") => &WORKLOAD,
        ("batch", "Job") => &JOB,
        ("batch", "CronJob") => &CRON_JOB,
        ("coordination.k8s.io", "Lease") => &METADATA_ONLY,
        _ => return None,
    };
    Some(node)
}
