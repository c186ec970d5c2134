//! The resources this server serves: one table, read by discovery, the
//! request router, the storage keys, the object codec and the OpenAPI
//! documents.

use k8s_openapi::api::{
    apps::v1 as apps, batch::v1 as batch, coordination::v1 as coordination, core::v1 as core,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::openapi::OpenApiResource;

/// One kind of object and everything the server needs to know to serve it.
#[derive(Debug)]
pub struct Resource {
    /// API group; "" for the core (legacy) group.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// The plural resource name in URLs (`configmaps`).
    pub plural: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
    /// Where objects live under the etcd prefix: kube-apiserver's own
    /// choices, so an etcd written by one reads the same in the other.
    pub storage_prefix: &'static str,
    pub has_status: bool,
    pub has_scale: bool,
    /// Objects that etcd removes after this many seconds (Events).
    pub ttl_seconds: Option<i64>,
    /// The kind's OpenAPI description, from its k8s-openapi type.
    pub openapi: fn(&'static [&'static str]) -> OpenApiResource,
    /// Decodes JSON into the typed object and back: the typed object's JSON
    /// (unknown fields dropped) or the decoder's message.
    pub roundtrip: fn(Value) -> Result<Value, String>,
}

impl Resource {
    /// `v1` or `apps/v1`, as in `apiVersion`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `configmaps` or `deployments.apps`, as kube names a resource in errors.
    pub fn qualified_name(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// Whether the object has a `spec` whose changes bump `generation`.
    pub fn tracks_generation(&self) -> bool {
        !matches!(self.plural, "configmaps" | "secrets" | "serviceaccounts" | "endpoints" | "events")
    }

    /// `singularName` in discovery: the kind in lower case.
    pub fn singular(&self) -> String {
        self.kind.to_lowercase()
    }

    /// Subresources served besides the object itself.
    pub fn subresources(&self) -> impl Iterator<Item = &'static str> {
        self.subresource_names().iter().copied()
    }

    pub fn subresource_names(&self) -> &'static [&'static str] {
        match (self.has_status, self.has_scale) {
            (true, true) => &["status", "scale"],
            (true, false) => &["status"],
            (false, true) => &["scale"],
            (false, false) => &[],
        }
    }
}

/// The typed decode both ways: what kube's strict decoder and its
/// re-encoding do to a body.
fn roundtrip<T: DeserializeOwned + Serialize>(value: Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// How long Events live (kube-apiserver's `--event-ttl` default: 1h).
const EVENT_TTL_SECONDS: i64 = 3600;

/// The optional `ttl:` of a resource! entry.
macro_rules! ttl {
    () => {
        None
    };
    ($ttl:expr) => {
        Some($ttl)
    };
}

macro_rules! resource {
    ($group:expr, $kind:ident, $ty:ty, $plural:expr, $namespaced:expr, $short:expr, $prefix:expr, status: $status:expr, scale: $scale:expr $(, ttl: $ttl:expr)?) => {
        Resource {
            group: $group,
            version: "v1",
            kind: stringify!($kind),
            plural: $plural,
            namespaced: $namespaced,
            short_names: $short,
            storage_prefix: $prefix,
            has_status: $status,
            has_scale: $scale,
            ttl_seconds: ttl!($($ttl)?),
            openapi: OpenApiResource::of::<$ty>,
            roundtrip: roundtrip::<$ty>,
        }
    };
}

/// Every resource served, in discovery order.
pub static RESOURCES: &[Resource] = &[
    resource!("", Namespace, core::Namespace, "namespaces", false, &["ns"], "namespaces", status: true, scale: false),
    resource!("", ConfigMap, core::ConfigMap, "configmaps", true, &["cm"], "configmaps", status: false, scale: false),
    resource!("", Secret, core::Secret, "secrets", true, &[], "secrets", status: false, scale: false),
    resource!("", ServiceAccount, core::ServiceAccount, "serviceaccounts", true, &["sa"], "serviceaccounts", status: false, scale: false),
    resource!("", Service, core::Service, "services", true, &["svc"], "services/specs", status: true, scale: false),
    resource!("", Endpoints, core::Endpoints, "endpoints", true, &["ep"], "services/endpoints", status: false, scale: false),
    resource!("", Pod, core::Pod, "pods", true, &["po"], "pods", status: true, scale: false),
    resource!("", Event, core::Event, "events", true, &["ev"], "events", status: false, scale: false, ttl: EVENT_TTL_SECONDS),
    resource!("", Node, core::Node, "nodes", false, &["no"], "minions", status: true, scale: false),
    resource!("apps", Deployment, apps::Deployment, "deployments", true, &["deploy"], "deployments", status: true, scale: true),
    resource!("apps", ReplicaSet, apps::ReplicaSet, "replicasets", true, &["rs"], "replicasets", status: true, scale: true),
    resource!("apps", StatefulSet, apps::StatefulSet, "statefulsets", true, &["sts"], "statefulsets", status: true, scale: true),
    resource!("apps", DaemonSet, apps::DaemonSet, "daemonsets", true, &["ds"], "daemonsets", status: true, scale: false),
    resource!("batch", Job, batch::Job, "jobs", true, &[], "jobs", status: true, scale: false),
    resource!("batch", CronJob, batch::CronJob, "cronjobs", true, &["cj"], "cronjobs", status: true, scale: false),
    resource!("coordination.k8s.io", Lease, coordination::Lease, "leases", true, &[], "leases", status: false, scale: false),
];

/// The resource served at `group`/`version` under `plural`.
pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static Resource> {
    RESOURCES.iter().find(|r| r.group == group && r.version == version && r.plural == plural)
}

/// The API groups served (besides core), each with its one version.
pub fn groups() -> Vec<&'static str> {
    let mut groups: Vec<&str> = RESOURCES.iter().map(|r| r.group).filter(|g| !g.is_empty()).collect();
    groups.dedup();
    groups
}

/// The resources of one group version.
pub fn in_group_version<'a>(
    group: &'a str,
    version: &'a str,
) -> impl Iterator<Item = &'static Resource> + 'a {
    RESOURCES.iter().filter(move |r| r.group == group && r.version == version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_resource_is_found_by_its_url_name() {
        for r in RESOURCES {
            assert!(std::ptr::eq(find(r.group, r.version, r.plural).unwrap(), r));
        }
        assert_eq!(find("", "v1", "endpoints").unwrap().singular(), "endpoints");
        assert_eq!(groups(), vec!["apps", "batch", "coordination.k8s.io"]);
    }

    #[test]
    fn roundtrip_drops_unknown_fields_and_rejects_wrong_types() {
        let cm = find("", "v1", "configmaps").unwrap();
        let out = (cm.roundtrip)(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}, "bogus": 1
        }))
        .unwrap();
        assert_eq!(out["data"]["k"], "v");
        assert!(out.get("bogus").is_none());
        let err = (cm.roundtrip)(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "data": 5}));
        assert!(err.is_err());
    }
}
