//! The shape of a kind as field ownership needs it, read from its OpenAPI
//! schema (as kube's type converter reads kube's): which objects are structs
//! (named fields) or maps (any key), which lists are atomic, sets or
//! associative by key fields, and which values are owned whole.
//!
//! Schemas may be recursive (a CRD's `JSONSchemaProps`), so types live in
//! one table and refer to each other by index.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

pub type TypeId = usize;

#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// A string, number, boolean or int-or-string: owned whole.
    Scalar,
    /// Nothing known: an object is a map of more of the same, a list is
    /// atomic, anything else a scalar (kube's "deduced" type). Objects with
    /// no fields named, preserved unknown fields, and (outside the strict
    /// check of an applied configuration) fields a schema does not name are
    /// walked this way.
    Deduced,
    /// An object: named `fields`, and `elem` for any other key (a map, or a
    /// struct that keeps unknown fields). `atomic` ones are owned whole.
    Map {
        fields: BTreeMap<String, TypeId>,
        elem: Option<TypeId>,
        atomic: bool,
    },
    List {
        elem: TypeId,
        kind: ListKind,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ListKind {
    /// Owned whole (a list without a list type).
    Atomic,
    /// Items are scalars, each owned by its value.
    Set,
    /// Items are objects found by these key fields; a missing key field
    /// takes its schema default when it has one.
    Map(Vec<(String, Option<Value>)>),
}

#[derive(Debug, Clone)]
pub struct Schema {
    types: Vec<Type>,
    root: TypeId,
}

const OBJECT_META: &str = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The type every [`Schema`] has at index 0 (for values nothing describes).
pub const DEDUCED: TypeId = 0;

impl Schema {
    /// A schema that knows nothing (kinds without an OpenAPI schema).
    pub fn deduced() -> Schema {
        Schema { types: vec![Type::Deduced], root: DEDUCED }
    }

    /// The schema of `root`, whose `$ref`s point into `definitions`
    /// (`#/components/schemas/<name>`).
    pub fn from_openapi(root: &Value, definitions: &Map<String, Value>) -> Schema {
        let mut builder = Builder { definitions, types: vec![Type::Deduced], by_ref: HashMap::new() };
        let root = builder.convert(root);
        Schema { types: builder.types, root }
    }

    pub fn root(&self) -> TypeId {
        self.root
    }

    pub fn get(&self, id: TypeId) -> &Type {
        self.types.get(id).unwrap_or(&Type::Deduced)
    }

    /// The type of field or key `name` of a map type, if it may have one.
    pub fn field_type(&self, id: TypeId, name: &str) -> Option<TypeId> {
        match self.get(id) {
            Type::Map { fields, elem, .. } => fields.get(name).copied().or(*elem),
            Type::Deduced => Some(DEDUCED),
            _ => None,
        }
    }

    /// Whether `name` is a declared field of a struct type (not a map key).
    pub fn is_named_field(&self, id: TypeId, name: &str) -> bool {
        matches!(self.get(id), Type::Map { fields, .. } if fields.contains_key(name))
    }
}

struct Builder<'a> {
    definitions: &'a Map<String, Value>,
    types: Vec<Type>,
    /// Definitions already converted (or being converted), by name.
    by_ref: HashMap<String, TypeId>,
}

impl Builder<'_> {
    fn push(&mut self, t: Type) -> TypeId {
        self.types.push(t);
        self.types.len() - 1
    }

    fn convert(&mut self, schema: &Value) -> TypeId {
        if let Some(name) = reference(schema) {
            if let Some(&id) = self.by_ref.get(name) {
                return id;
            }
            // Reserved before converting, so a schema that refers to itself
            // finds its own index.
            let id = self.push(Type::Deduced);
            self.by_ref.insert(name.to_string(), id);
            let converted = match self.definitions.get(name) {
                Some(definition) => self.convert_inline(definition),
                None => Type::Deduced,
            };
            self.types[id] = converted;
            return id;
        }
        let converted = self.convert_inline(schema);
        self.push(converted)
    }

    fn convert_inline(&mut self, schema: &Value) -> Type {
        if let Some(name) = reference(schema) {
            let id = self.convert(&serde_json::json!({ "$ref": format!("#/components/schemas/{name}") }));
            return self.types[id].clone();
        }
        if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return Type::Scalar;
        }
        let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        let kind = schema.get("type").and_then(Value::as_str);
        match kind {
            Some("array") => {
                let items = schema.get("items").cloned().unwrap_or(Value::Null);
                let elem = if items.is_null() { DEDUCED } else { self.convert(&items) };
                let kind = list_kind(schema, &self.resolved(&items));
                Type::List { elem, kind }
            }
            Some("string" | "integer" | "number" | "boolean") => Type::Scalar,
            _ => {
                let atomic = schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic");
                let embedded = schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
                let properties = schema.get("properties").and_then(Value::as_object);
                let additional = schema.get("additionalProperties");
                if properties.is_none() && additional.is_none() && !embedded {
                    // No fields named and none typed: nothing to go by, but
                    // an atomic one is still owned whole.
                    return match atomic {
                        true => Type::Map { fields: BTreeMap::new(), elem: Some(DEDUCED), atomic },
                        false => Type::Deduced,
                    };
                }
                let mut fields = BTreeMap::new();
                for (name, field) in properties.into_iter().flatten() {
                    let id = self.convert(field);
                    fields.insert(name.clone(), id);
                }
                if embedded {
                    // An embedded object has what every object has, as kube's
                    // CRD schemas say for server-side apply.
                    let string = serde_json::json!({"type": "string"});
                    let meta = serde_json::json!({"$ref": OBJECT_META});
                    for (name, field) in [("apiVersion", &string), ("kind", &string), ("metadata", &meta)] {
                        if !fields.contains_key(name) {
                            let id = self.convert(field);
                            fields.insert(name.to_string(), id);
                        }
                    }
                }
                let elem = match additional {
                    Some(Value::Object(_)) => additional.map(|a| self.convert(a)),
                    Some(Value::Bool(true)) => Some(DEDUCED),
                    _ if preserve => Some(DEDUCED),
                    _ => None,
                };
                Type::Map { fields, elem, atomic }
            }
        }
    }

    /// `schema` with a `$ref` (or a one-`$ref` `allOf`) followed.
    fn resolved(&self, schema: &Value) -> Value {
        match reference(schema) {
            Some(name) => self.definitions.get(name).cloned().unwrap_or(Value::Null),
            None => schema.clone(),
        }
    }
}

/// The definition a schema refers to: `$ref`, or `allOf: [{$ref}]` as
/// OpenAPI 3.0 writes a reference with a description beside it.
fn reference(schema: &Value) -> Option<&str> {
    let target = schema.get("$ref").or_else(|| match schema.get("allOf")?.as_array()?.as_slice() {
        [only] => only.get("$ref"),
        _ => None,
    })?;
    target.as_str()?.strip_prefix("#/components/schemas/")
}

/// How a list's items are owned: `x-kubernetes-list-type`, else what
/// strategic merge patch's tags say (merge by key, merge as a set), else
/// atomic.
fn list_kind(schema: &Value, items: &Value) -> ListKind {
    let keys = |names: Vec<&str>| {
        ListKind::Map(
            names
                .into_iter()
                .map(|k| (k.to_string(), items.pointer(&format!("/properties/{k}/default")).cloned()))
                .collect(),
        )
    };
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => return ListKind::Set,
        Some("map") => {
            let names = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            return keys(names);
        }
        Some(_) => return ListKind::Atomic,
        None => {}
    }
    let strategy = schema.get("x-kubernetes-patch-strategy").and_then(Value::as_str).unwrap_or_default();
    if strategy.split(',').any(|s| s == "merge") {
        return match schema.get("x-kubernetes-patch-merge-key").and_then(Value::as_str) {
            Some(key) => keys(vec![key]),
            None => ListKind::Set,
        };
    }
    ListKind::Atomic
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn structs_maps_lists_and_references() {
        let definitions = json!({
            "Item": {"type": "object", "properties": {
                "name": {"type": "string"},
                "protocol": {"type": "string", "default": "TCP"},
            }},
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}},
        });
        let root = json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "items": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/Item"}]},
                      "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "protocol"]},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"},
            "args": {"type": "array", "items": {"type": "string"}},
            "node": {"$ref": "#/components/schemas/Node"},
            "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "port": {"x-kubernetes-int-or-string": true},
        }});
        let schema = Schema::from_openapi(&root, definitions.as_object().unwrap());
        let root = schema.root();
        let labels = schema.field_type(root, "labels").unwrap();
        assert!(matches!(schema.get(labels), Type::Map { fields, elem: Some(_), .. } if fields.is_empty()));
        assert!(schema.is_named_field(root, "labels") && !schema.is_named_field(labels, "app"));
        let items = schema.field_type(root, "items").unwrap();
        let Type::List { kind: ListKind::Map(keys), .. } = schema.get(items) else { panic!() };
        assert_eq!(keys, &vec![("name".to_string(), None), ("protocol".to_string(), Some(json!("TCP")))]);
        let tags = schema.field_type(root, "tags").unwrap();
        assert!(matches!(schema.get(tags), Type::List { kind: ListKind::Set, .. }));
        let args = schema.field_type(root, "args").unwrap();
        assert!(matches!(schema.get(args), Type::List { kind: ListKind::Atomic, .. }));
        let node = schema.field_type(root, "node").unwrap();
        assert_eq!(schema.field_type(node, "child"), Some(node), "recursion resolves to itself");
        assert_eq!(schema.get(schema.field_type(root, "raw").unwrap()), &Type::Deduced);
        assert_eq!(schema.get(schema.field_type(root, "port").unwrap()), &Type::Scalar);
        assert_eq!(schema.field_type(root, "unknown"), None);
        let embedded = json!({"type": "object", "x-kubernetes-embedded-resource": true,
                              "x-kubernetes-preserve-unknown-fields": true});
        let blob = json!({"type": "object", "x-kubernetes-map-type": "atomic",
                          "x-kubernetes-preserve-unknown-fields": true});
        let schema = Schema::from_openapi(&embedded, &serde_json::Map::new());
        for field in ["apiVersion", "kind", "metadata"] {
            assert!(schema.is_named_field(schema.root(), field), "{field}");
        }
        let schema = Schema::from_openapi(&blob, &serde_json::Map::new());
        assert!(matches!(schema.get(schema.root()), Type::Map { atomic: true, .. }));
    }
}
