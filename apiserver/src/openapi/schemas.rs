//! `components.schemas`: list schemas `k8s-openapi` lacks, and the vendor extensions kube puts
//! on its schemas that `k8s-openapi`'s lack.

use std::borrow::Cow;
use std::marker::PhantomData;

use k8s_openapi::ListableResource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use super::Gvk;
use super::paths::{SchemaGvk, ref_name};

/// The schema of `<Kind>List` (`io.k8s.api.apps.v1.DeploymentList`): `k8s-openapi` models lists
/// as the generic `List<T>`, which has no `JsonSchema` impl. Only its schema is used; it is never
/// constructed.
#[derive(Debug)]
pub struct ListOf<T>(PhantomData<T>);

impl<T: JsonSchema + ListableResource> JsonSchema for ListOf<T> {
    fn schema_name() -> Cow<'static, str> {
        let item = T::schema_name();
        match item.rsplit_once('.') {
            Some((package, _)) => format!("{package}.{}", T::LIST_KIND).into(),
            None => T::LIST_KIND.into(),
        }
    }

    fn schema_id() -> Cow<'static, str> {
        format!("rtcd_apiserver::openapi::ListOf<{}>", T::schema_id()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let items = generator.subschema_for::<T>().to_value();
        // apiVersion and kind mean the same on a list as on its items: reuse their descriptions.
        let item_field = |generator: &SchemaGenerator, field: &str| {
            ref_name(&items)
                .and_then(|name| generator.definitions().get(name))
                .and_then(|definition| definition.pointer(&format!("/properties/{field}")))
                .cloned()
                .unwrap_or_else(|| json!({ "type": "string" }))
        };
        let api_version = item_field(generator, "apiVersion");
        let kind = item_field(generator, "kind");
        let mut metadata = generator.subschema_for::<meta::ListMeta>();
        metadata.insert(
            "description".into(),
            "Standard list metadata: the list's resourceVersion and, for a partial list, the continue \
             token of the next page."
                .into(),
        );
        let schema = json!({
            "description": format!("{} is a list of {} objects.", T::LIST_KIND, T::KIND),
            "type": "object",
            "properties": {
                "apiVersion": api_version,
                "items": {
                    "description": format!("The {} objects.", T::KIND),
                    "type": "array",
                    "items": items,
                },
                "kind": kind,
                "metadata": metadata,
            },
            "required": ["items"],
        });
        match schema {
            Value::Object(map) => Schema::from(map),
            _ => Schema::default(),
        }
    }
}

/// Post-processing of one document's definitions (after schemars' OpenAPI 3.0 transforms):
/// * `x-kubernetes-group-version-kind` on the top-level kinds (and on `DeleteOptions` and
///   `WatchEvent`, with every group-version of the server, as kube does);
/// * `metadata` is never required, nor is a kind's `spec` (`k8s-openapi` requires them where its
///   Rust fields are not `Option`s; kube's schemas do not);
/// * the list patch metadata of [`LIST_PATCH_METADATA`].
pub(super) fn finish(
    definitions: &mut Map<String, Value>,
    schema_gvks: &[SchemaGvk],
    all_group_versions: &[(&str, &str)],
) {
    let mut gvks: Vec<(String, Gvk<'_>)> =
        schema_gvks.iter().map(|(name, gvk)| (name.clone(), *gvk)).collect();
    for (group, version) in all_group_versions {
        let (group, version) = (*group, *version);
        gvks.push((
            meta::DeleteOptions::schema_name().into_owned(),
            Gvk { group, version, kind: "DeleteOptions" },
        ));
        gvks.push((
            meta::WatchEvent::<RawExtension>::schema_name().into_owned(),
            Gvk { group, version, kind: "WatchEvent" },
        ));
    }
    for (name, gvk) in gvks {
        let Some(Value::Object(definition)) = definitions.get_mut(&name) else { continue };
        let value = gvk.to_value();
        let entry = definition.entry("x-kubernetes-group-version-kind").or_insert_with(|| json!([]));
        match entry {
            Value::Array(array) if array.contains(&value) => {}
            Value::Array(array) => array.push(value),
            other => *other = json!([value]),
        }
    }

    for (name, definition) in definitions.iter_mut() {
        let Some(definition) = definition.as_object_mut() else { continue };
        let is_kind = schema_gvks.iter().any(|(kind_name, _)| kind_name == name);
        if let Some(Value::Array(required)) = definition.get_mut("required") {
            required.retain(|field| field != "metadata" && !(is_kind && field == "spec"));
            if required.is_empty() {
                definition.remove("required");
            }
        }
    }

    for patch in LIST_PATCH_METADATA {
        let Some(property) = definitions
            .get_mut(patch.schema)
            .and_then(|definition| definition.get_mut("properties"))
            .and_then(|properties| properties.get_mut(patch.property))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if let Some(strategy) = patch.strategy {
            property.insert("x-kubernetes-patch-strategy".into(), strategy.into());
        }
        if let Some(key) = patch.merge_key {
            property.insert("x-kubernetes-patch-merge-key".into(), key.into());
        }
        if let Some(list_type) = patch.list_type {
            property.insert("x-kubernetes-list-type".into(), list_type.into());
        }
        if !patch.map_keys.is_empty() {
            property.insert("x-kubernetes-list-map-keys".into(), json!(patch.map_keys));
        }
    }
}

/// Patch metadata of one field: what kube's Go struct tags (`patchStrategy`, `patchMergeKey`,
/// `+listType`, `+listMapKey`) publish as `x-kubernetes-*` extensions.
#[derive(Debug, Clone, Copy)]
pub(super) struct FieldPatchMetadata {
    pub(super) schema: &'static str,
    pub(super) property: &'static str,
    pub(super) strategy: Option<&'static str>,
    pub(super) merge_key: Option<&'static str>,
    pub(super) list_type: Option<&'static str>,
    pub(super) map_keys: &'static [&'static str],
}

impl FieldPatchMetadata {
    const fn field(schema: &'static str, property: &'static str) -> Self {
        Self { schema, property, strategy: None, merge_key: None, list_type: None, map_keys: &[] }
    }

    /// A list merged by `key` (strategic merge patch `merge` strategy with a merge key).
    const fn merge_by(schema: &'static str, property: &'static str, key: &'static str) -> Self {
        Self { strategy: Some("merge"), merge_key: Some(key), ..Self::field(schema, property) }
    }

    const fn strategy(self, strategy: &'static str) -> Self {
        Self { strategy: Some(strategy), ..self }
    }

    const fn list_type(self, list_type: &'static str) -> Self {
        Self { list_type: Some(list_type), ..self }
    }

    const fn map_keys(self, keys: &'static [&'static str]) -> Self {
        Self { list_type: Some("map"), map_keys: keys, ..self }
    }
}

/// Patch metadata `kubectl apply` needs for the kinds served here. Without it a strategic merge
/// patch replaces whole lists (e.g. all containers) instead of merging their items by key.
pub(super) const LIST_PATCH_METADATA: &[FieldPatchMetadata] = {
    use FieldPatchMetadata as F;
    &[
        // ObjectMeta
        F::field("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers")
            .strategy("merge")
            .list_type("set"),
        F::merge_by("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences", "uid")
            .map_keys(&["uid"]),
        // PodSpec
        F::merge_by("io.k8s.api.core.v1.PodSpec", "containers", "name"),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "initContainers", "name"),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "ephemeralContainers", "name"),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "volumes", "name").strategy("merge,retainKeys"),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "imagePullSecrets", "name"),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "hostAliases", "ip"),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "topologySpreadConstraints", "topologyKey")
            .map_keys(&["topologyKey", "whenUnsatisfiable"]),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "schedulingGates", "name").map_keys(&["name"]),
        F::merge_by("io.k8s.api.core.v1.PodSpec", "resourceClaims", "name")
            .strategy("merge,retainKeys")
            .map_keys(&["name"]),
        // Container and EphemeralContainer
        F::merge_by("io.k8s.api.core.v1.Container", "ports", "containerPort")
            .map_keys(&["containerPort", "protocol"]),
        F::merge_by("io.k8s.api.core.v1.Container", "env", "name"),
        F::merge_by("io.k8s.api.core.v1.Container", "volumeMounts", "mountPath"),
        F::merge_by("io.k8s.api.core.v1.Container", "volumeDevices", "devicePath"),
        F::field("io.k8s.api.core.v1.Container", "resizePolicy").list_type("atomic"),
        F::merge_by("io.k8s.api.core.v1.EphemeralContainer", "ports", "containerPort")
            .map_keys(&["containerPort", "protocol"]),
        F::merge_by("io.k8s.api.core.v1.EphemeralContainer", "env", "name"),
        F::merge_by("io.k8s.api.core.v1.EphemeralContainer", "volumeMounts", "mountPath"),
        F::merge_by("io.k8s.api.core.v1.EphemeralContainer", "volumeDevices", "devicePath"),
        F::field("io.k8s.api.core.v1.EphemeralContainer", "resizePolicy").list_type("atomic"),
        // PodStatus
        F::merge_by("io.k8s.api.core.v1.PodStatus", "conditions", "type"),
        F::merge_by("io.k8s.api.core.v1.PodStatus", "podIPs", "ip"),
        F::merge_by("io.k8s.api.core.v1.PodStatus", "hostIPs", "ip"),
        // Service, ServiceAccount, Namespace, Node
        F::merge_by("io.k8s.api.core.v1.ServiceSpec", "ports", "port").map_keys(&["port", "protocol"]),
        F::merge_by("io.k8s.api.core.v1.ServiceStatus", "conditions", "type").map_keys(&["type"]),
        F::merge_by("io.k8s.api.core.v1.ServiceAccount", "secrets", "name"),
        F::merge_by("io.k8s.api.core.v1.NamespaceStatus", "conditions", "type"),
        F::field("io.k8s.api.core.v1.NodeSpec", "podCIDRs").strategy("merge").list_type("set"),
        F::merge_by("io.k8s.api.core.v1.NodeStatus", "conditions", "type"),
        F::merge_by("io.k8s.api.core.v1.NodeStatus", "addresses", "type"),
        // apps/v1
        F::field("io.k8s.api.apps.v1.DeploymentSpec", "strategy").strategy("retainKeys"),
        F::merge_by("io.k8s.api.apps.v1.DeploymentStatus", "conditions", "type"),
        F::merge_by("io.k8s.api.apps.v1.ReplicaSetStatus", "conditions", "type"),
        F::merge_by("io.k8s.api.apps.v1.StatefulSetStatus", "conditions", "type"),
        F::merge_by("io.k8s.api.apps.v1.DaemonSetStatus", "conditions", "type"),
        // batch/v1
        F::merge_by("io.k8s.api.batch.v1.JobStatus", "conditions", "type").list_type("atomic"),
    ]
};
