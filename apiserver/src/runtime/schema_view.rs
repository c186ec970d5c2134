//! A read-only view over one node of an `openAPIV3Schema` as a
//! CustomResourceDefinition stores it (JSON): the keywords pruning,
//! defaulting and validation walk. The CRD's own validation has made sure
//! the schema is structural, but nothing here relies on it: a keyword of the
//! wrong shape reads as absent.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy)]
pub struct Node<'a>(pub &'a Value);

/// An absent schema: allows and keeps nothing in particular.
static EMPTY: Value = Value::Null;

impl<'a> Node<'a> {
    pub fn empty() -> Node<'static> {
        Node(&EMPTY)
    }

    fn get(&self, keyword: &str) -> Option<&'a Value> {
        self.0.get(keyword)
    }

    /// `type`, "" when unset (int-or-string and preserve-unknown nodes).
    pub fn type_(&self) -> &'a str {
        self.get("type").and_then(Value::as_str).unwrap_or("")
    }

    pub fn format(&self) -> &'a str {
        self.get("format").and_then(Value::as_str).unwrap_or("")
    }

    fn flag(&self, keyword: &str) -> bool {
        self.get(keyword).and_then(Value::as_bool).unwrap_or(false)
    }

    pub fn nullable(&self) -> bool {
        self.flag("nullable")
    }

    pub fn preserves_unknown_fields(&self) -> bool {
        self.flag("x-kubernetes-preserve-unknown-fields")
    }

    pub fn int_or_string(&self) -> bool {
        self.flag("x-kubernetes-int-or-string")
    }

    pub fn embedded_resource(&self) -> bool {
        self.flag("x-kubernetes-embedded-resource")
    }

    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.get("properties").and_then(Value::as_object)
    }

    pub fn property(&self, name: &str) -> Option<Node<'a>> {
        self.properties().and_then(|p| p.get(name)).map(Node)
    }

    /// `additionalProperties` as a schema (`true` is no schema: see
    /// [`Node::allows_additional`]).
    pub fn additional_properties(&self) -> Option<Node<'a>> {
        self.get("additionalProperties").filter(|v| v.is_object()).map(Node)
    }

    /// `additionalProperties: true`.
    pub fn allows_additional(&self) -> bool {
        self.get("additionalProperties").and_then(Value::as_bool).unwrap_or(false)
    }

    pub fn items(&self) -> Option<Node<'a>> {
        self.get("items").filter(|v| v.is_object()).map(Node)
    }

    pub fn default(&self) -> Option<&'a Value> {
        self.get("default")
    }

    pub fn required(&self) -> impl Iterator<Item = &'a str> {
        self.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
    }

    pub fn enum_values(&self) -> Option<&'a Vec<Value>> {
        self.get("enum").and_then(Value::as_array)
    }

    pub fn number(&self, keyword: &str) -> Option<f64> {
        self.get(keyword).and_then(Value::as_f64)
    }

    pub fn count(&self, keyword: &str) -> Option<u64> {
        self.get(keyword).and_then(Value::as_u64)
    }

    pub fn is_set(&self, keyword: &str) -> bool {
        self.flag(keyword)
    }

    pub fn string(&self, keyword: &str) -> Option<&'a str> {
        self.get(keyword).and_then(Value::as_str)
    }

    /// `x-kubernetes-list-type`: "atomic" when unset.
    pub fn list_type(&self) -> &'a str {
        self.string("x-kubernetes-list-type").unwrap_or("atomic")
    }

    pub fn list_map_keys(&self) -> Vec<&'a str> {
        self.get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    }

    /// `allOf`, `anyOf`, `oneOf` and `not` schemas, which constrain values
    /// but never add fields (structural schemas keep types out of them).
    pub fn junctors(&self) -> impl Iterator<Item = (&'static str, &'a Value)> {
        ["allOf", "anyOf", "oneOf", "not"].into_iter().filter_map(|k| self.get(k).map(|v| (k, v)))
    }

    /// The schema an object's field `name` is described by: its property,
    /// else `additionalProperties`.
    pub fn field(&self, name: &str) -> Option<Node<'a>> {
        self.property(name).or_else(|| self.additional_properties())
    }
}

/// `spec.replicas`, `spec.items[2]`, `spec.labels[app]`: kube's field paths.
#[derive(Debug, Clone, Default)]
pub struct Path(String);

impl Path {
    pub fn root() -> Path {
        Path(String::new())
    }

    pub fn child(&self, name: &str) -> Path {
        if self.0.is_empty() { Path(name.to_string()) } else { Path(format!("{}.{name}", self.0)) }
    }

    pub fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    pub fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}
