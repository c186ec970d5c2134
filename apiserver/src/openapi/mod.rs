//! The OpenAPI v3 documents kube-apiserver publishes, built from `k8s-openapi`'s schemas.
//!
//! * `GET /openapi/v3` is [`OpenApiDocs::root`]: one entry per group-version, each pointing at
//!   `/openapi/v3/<api/v1 | apis/<group>/<version>>?hash=<HASH>`, the hash being of that document's
//!   bytes, so clients (kubectl caches these on disk) can key their caches on the URL.
//! * `GET /openapi/v3/<gv>` is [`OpenApiDocs::group_version`]: the paths of that group-version's
//!   resources, with the operations and vendor extensions kubectl reads, and `components.schemas`
//!   holding every schema those paths reference, named as kube names them
//!   (`io.k8s.api.apps.v1.Deployment`), with `#/components/schemas/...` references.
//!
//! What kubectl reads from them:
//! * `kubectl create/apply/replace` (`--validate=strict`, the default) looks for a PATCH
//!   operation whose `x-kubernetes-group-version-kind` is the object's GVK and which takes the
//!   `fieldValidation` query parameter; finding it, it leaves validation to the server.
//! * `kubectl apply` (client-side) needs that PATCH operation to accept
//!   `application/strategic-merge-patch+json`, then computes its patch from the kind's schema,
//!   reading `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key` on list fields.
//!   `k8s-openapi`'s schemas carry none of those (nor `x-kubernetes-list-type`); they are added
//!   here from [`schemas::LIST_PATCH_METADATA`].
//! * `kubectl explain` finds the path of the resource, takes the GVK of one of its operations,
//!   then the schema whose `x-kubernetes-group-version-kind` array holds that GVK, and walks
//!   `properties`, `items`, `additionalProperties`, `$ref` and `allOf`, printing `description`s.
//!
//! Schemas come from `k8s-openapi` (feature `schemars`, schemars 1.x, used through
//! `k8s_openapi::schemars` so the versions always agree) with schemars' OpenAPI 3.0 settings: a
//! `$ref` with sibling keywords (a field's own `description`) becomes `allOf: [{$ref}]` beside
//! them, as kube writes it. `k8s-openapi` has no schema for lists (`List<T>` is generic), so
//! [`ListOf`] makes `<Kind>List` schemas.

mod paths;
mod schemas;
pub mod v2;

use std::any::TypeId;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::{JsonSchema, Schema, SchemaGenerator};
use k8s_openapi::{ListableResource, NamespaceResourceScope, Resource};
use serde_json::{Map, Value, json};

pub use schemas::ListOf;

/// Adds the schema of a type (and of everything it references) to the generator's definitions
/// and returns a `{"$ref": "#/components/schemas/<name>"}` schema pointing at it.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// Where a resource's schema comes from.
#[derive(Clone, Debug)]
pub enum SchemaSource {
    /// A Rust type's `JsonSchema` (see [`SchemaFn`]).
    Type(SchemaFn),
    /// A schema given as JSON (a custom resource's), put in `components.schemas` under `name`. It
    /// may refer to ObjectMeta and ListMeta, which are put there beside it.
    Json { name: String, schema: Arc<Value> },
}

impl SchemaSource {
    /// Adds the schema (and what it refers to) to the generator's definitions; a `$ref` to it.
    fn reference(&self, generator: &mut SchemaGenerator) -> Value {
        match self {
            SchemaSource::Type(schema) => schema(generator).to_value(),
            SchemaSource::Json { name, schema } => {
                generator.subschema_for::<ObjectMeta>();
                generator.subschema_for::<ListMeta>();
                generator.definitions_mut().insert(name.clone(), (**schema).clone());
                json!({ "$ref": format!("#/components/schemas/{name}") })
            }
        }
    }
}

/// One served resource, as the OpenAPI documents (and the resource registry) need it.
#[derive(Clone, Debug)]
pub struct OpenApiResource {
    /// API group; `""` for the core (legacy) group served under `/api`.
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The kind of its lists (`DeploymentList`).
    pub list_kind: String,
    /// The resource name in URLs (`deployments`).
    pub plural: String,
    pub namespaced: bool,
    /// Subresources served; `status` (same kind) and `scale` (`autoscaling/v1` `Scale`) get
    /// paths in the documents, others are not described.
    pub subresources: &'static [&'static str],
    /// The kind's schema.
    pub schema: SchemaSource,
    /// The `<Kind>List` schema.
    pub list_schema: SchemaSource,
    /// Whether PATCH takes strategic merge patches (kinds with Go types; not custom resources).
    pub strategic_patch: bool,
}

impl OpenApiResource {
    /// The row for a `k8s-openapi` type: group, version, kind, plural and scope come from its
    /// `Resource` impl, the schemas from its `JsonSchema` impl and [`ListOf`].
    pub fn of<T>(subresources: &'static [&'static str]) -> Self
    where
        T: Resource + ListableResource + JsonSchema + 'static,
    {
        Self {
            group: T::GROUP.to_string(),
            version: T::VERSION.to_string(),
            kind: T::KIND.to_string(),
            list_kind: T::LIST_KIND.to_string(),
            plural: T::URL_PATH_SEGMENT.to_string(),
            namespaced: TypeId::of::<T::Scope>() == TypeId::of::<NamespaceResourceScope>(),
            subresources,
            schema: SchemaSource::Type(SchemaGenerator::subschema_for::<T>),
            list_schema: SchemaSource::Type(SchemaGenerator::subschema_for::<ListOf<T>>),
            strategic_patch: true,
        }
    }

    /// The kind's schema (a `$ref`) and every schema it refers to, as the documents publish
    /// them (with kube's list and patch extensions): what field ownership reads a kind's shape
    /// from.
    pub fn schema_with_definitions(&self) -> (Value, Map<String, Value>) {
        let mut generator = SchemaSettings::openapi3().with(|s| s.meta_schema = None).into_generator();
        let root = self.schema.reference(&mut generator);
        let mut definitions = generator.take_definitions(true);
        schemas::finish(&mut definitions, &[], &[]);
        (root, definitions)
    }

    /// `api/v1` or `apis/<group>/<version>`: the key in `/openapi/v3` and the URL path below it.
    pub fn group_version_path(&self) -> String {
        group_version_path(&self.group, &self.version)
    }
}

/// `api/v1` for the core group, `apis/<group>/<version>` otherwise.
pub fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") }
}

/// The serialized documents, built once at startup.
#[derive(Debug, Clone)]
pub struct OpenApiDocs {
    root: Vec<u8>,
    group_versions: BTreeMap<String, GroupVersionDoc>,
    /// `/openapi/v2`, made from the group-version documents when first asked for: most
    /// clients never ask.
    swagger: OnceLock<SwaggerDoc>,
}

/// The Swagger 2.0 document in both of its encodings.
#[derive(Debug, Clone)]
pub struct SwaggerDoc {
    /// Shared, not copied, by every answer (megabytes).
    pub json: bytes::Bytes,
    /// gnostic's `openapi.v2.Document` ([`v2::gnostic`]).
    pub protobuf: bytes::Bytes,
    /// SHA-512 of the JSON as uppercase hex (kube's ETag for both encodings).
    pub etag: String,
}

#[derive(Debug, Clone)]
struct GroupVersionDoc {
    json: Vec<u8>,
    hash: String,
}

impl OpenApiDocs {
    /// Builds the root document and one document per group-version of `resources`.
    pub fn build(resources: &[OpenApiResource]) -> Self {
        let mut by_group_version: BTreeMap<String, Vec<&OpenApiResource>> = BTreeMap::new();
        for resource in resources {
            by_group_version.entry(resource.group_version_path()).or_default().push(resource);
        }
        // DeleteOptions and WatchEvent are registered in every group-version the server has.
        let mut all_group_versions: Vec<(&str, &str)> =
            resources.iter().map(|r| (r.group.as_str(), r.version.as_str())).collect();
        all_group_versions.sort_unstable();
        all_group_versions.dedup();

        let mut group_versions = BTreeMap::new();
        let mut root_paths = Map::new();
        for (path, members) in &by_group_version {
            let doc = group_version_document(&members[..], &all_group_versions);
            let json = to_json_bytes(&doc);
            let hash = fnv1a_128_hex(&json);
            root_paths.insert(
                path.clone(),
                json!({ "serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}") }),
            );
            group_versions.insert(path.clone(), GroupVersionDoc { json, hash });
        }
        let root = to_json_bytes(&json!({ "paths": root_paths }));
        Self { root, group_versions, swagger: OnceLock::new() }
    }

    /// `GET /openapi/v2`.
    pub fn swagger(&self) -> &SwaggerDoc {
        self.swagger.get_or_init(|| {
            let parsed: Vec<Value> = self
                .group_versions
                .values()
                .filter_map(|doc| serde_json::from_slice(&doc.json).ok())
                .collect();
            let document = v2::document(&parsed);
            let json = to_json_bytes(&document);
            let etag = ring::digest::digest(&ring::digest::SHA512, &json)
                .as_ref()
                .iter()
                .map(|byte| format!("{byte:02X}"))
                .collect();
            SwaggerDoc { protobuf: v2::gnostic::encode(&document).into(), json: json.into(), etag }
        })
    }

    /// `GET /openapi/v3`.
    pub fn root(&self) -> &[u8] {
        &self.root
    }

    /// `GET /openapi/v3/<path>`, `path` being `api/v1` or `apis/<group>/<version>` (surrounding
    /// slashes are ignored).
    pub fn group_version(&self, path: &str) -> Option<&[u8]> {
        self.group_versions.get(path.trim_matches('/')).map(|doc| &doc.json[..])
    }

    /// The `hash` the root document gives for `path`: uppercase hex, usable as an ETag. A request
    /// whose `hash` query parameter equals it may be answered with long-lived caching headers.
    pub fn group_version_hash(&self, path: &str) -> Option<&str> {
        self.group_versions.get(path.trim_matches('/')).map(|doc| &doc.hash[..])
    }

    /// The group-version paths served, sorted.
    pub fn group_version_paths(&self) -> impl Iterator<Item = &str> {
        self.group_versions.keys().map(String::as_str)
    }
}

/// One group-version's document.
fn group_version_document(resources: &[&OpenApiResource], all_group_versions: &[(&str, &str)]) -> Value {
    let mut generator = SchemaSettings::openapi3().with(|s| s.meta_schema = None).into_generator();
    let (paths, schema_gvks) = paths::build(resources, &mut generator);
    let mut definitions = generator.take_definitions(true);
    schemas::finish(&mut definitions, &schema_gvks, all_group_versions);
    json!({
        "openapi": "3.0.0",
        "info": { "title": "rtcd-apiserver", "version": "unversioned" },
        "paths": paths,
        "components": { "schemas": definitions },
    })
}

fn to_json_bytes(value: &Value) -> Vec<u8> {
    // Serializing a `Value` cannot fail (its map keys are strings).
    serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec())
}

/// FNV-1a (128-bit) of `bytes`, as 32 uppercase hex digits: stable across builds and platforms.
fn fnv1a_128_hex(bytes: &[u8]) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let hash = bytes.iter().fold(OFFSET, |hash, &byte| (hash ^ u128::from(byte)).wrapping_mul(PRIME));
    format!("{hash:032X}")
}

/// A group, version and kind, as kube's `x-kubernetes-group-version-kind` writes it. The key
/// set and order must be the same on operations and schemas: `kubectl explain` compares them
/// as whole objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Gvk<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
}

impl Gvk<'_> {
    fn to_value(self) -> Value {
        json!({ "group": self.group, "kind": self.kind, "version": self.version })
    }
}

#[cfg(test)]
mod tests;
