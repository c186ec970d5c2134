//! A custom resource version in the OpenAPI documents (what `kubectl
//! explain` reads and what tells kubectl to leave field validation to the
//! server): the version's schema under kube's name for it
//! (`com.example.v1.Widget`, the group reversed), with `apiVersion`, `kind`
//! and `metadata` described as on every object, and its list.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::openapi::{OpenApiResource, SchemaSource};
use crate::registry::Resource;

const OBJECT_META: &str = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

pub fn describe(resource: &Resource, schema: &Value) -> OpenApiResource {
    let reversed: Vec<&str> = resource.group.split('.').rev().collect();
    let prefix = format!("{}.{}", reversed.join("."), resource.version);
    let name = format!("{prefix}.{}", resource.kind);
    let list_kind = resource.list_kind();
    OpenApiResource {
        group: resource.group.clone(),
        version: resource.version.clone(),
        kind: resource.kind.clone(),
        list_kind: list_kind.clone(),
        plural: resource.plural.clone(),
        namespaced: resource.namespaced,
        subresources: resource.subresources(),
        schema: SchemaSource::Json { name: name.clone(), schema: Arc::new(object_schema(schema)) },
        list_schema: SchemaSource::Json {
            name: format!("{prefix}.{list_kind}"),
            schema: Arc::new(list_schema(&resource.kind, &list_kind, &name)),
        },
        strategic_patch: false,
    }
}

fn type_fields() -> (Value, Value) {
    let api_version = json!({"type": "string", "description":
        "The versioned schema of this representation of an object: its group and version, as `group/version`."});
    let kind = json!({"type": "string", "description":
        "The REST resource this object represents, in CamelCase."});
    (api_version, kind)
}

/// The version's schema with the fields every object has.
fn object_schema(schema: &Value) -> Value {
    let mut published = if schema.is_object() { schema.clone() } else { json!({"type": "object"}) };
    let (api_version, kind) = type_fields();
    let properties = &mut published["properties"];
    if !properties.is_object() {
        *properties = json!({});
    }
    properties["apiVersion"] = api_version;
    properties["kind"] = kind;
    properties["metadata"] =
        json!({"description": "Standard object's metadata.", "allOf": [{"$ref": OBJECT_META}]});
    published
}

fn list_schema(kind: &str, list_kind: &str, item: &str) -> Value {
    let (api_version, kind_field) = type_fields();
    json!({
        "description": format!("{list_kind} is a list of {kind} objects."),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": api_version,
            "kind": kind_field,
            "items": {"type": "array", "description": format!("The {kind} objects."),
                "items": {"$ref": format!("#/components/schemas/{item}")}},
            "metadata": {"description": "Standard list metadata.", "allOf": [{"$ref": LIST_META}]},
        },
    })
}
