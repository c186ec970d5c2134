//! JSON in the order kube writes it. Go's encoding/json writes a struct's fields in their
//! declaration order and a map's keys sorted; objects here are `serde_json` maps, which
//! serialize sorted. [`KubeOrder`] serializes a value with the structs every answer shares in
//! Go's order: an object's `kind`, `apiVersion`, `metadata` first and its `status` last,
//! ObjectMeta and ListMeta, a list's `items`, and a `Status` with its details and causes
//! throughout (so error bodies are kube's bytes). Other fields stay sorted: each kind's own
//! structs are not described here yet.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// `value` to serialize in kube's order (an object, a list, a Status, a watch event's object).
pub struct KubeOrder<'a>(pub &'a Value);

impl Serialize for KubeOrder<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Placed { value: self.0, place: Place::Top }.serialize(serializer)
    }
}

/// `value` as kube's bytes: in kube's order, with the newline its encoder ends a body with.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&KubeOrder(value)).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Which Go struct an object is, as far as this module knows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// An API object, a list, a Status: has `kind` and `apiVersion`.
    Top,
    ObjectMeta,
    ListMeta,
    StatusDetails,
    StatusCause,
    /// Anything else: written as it is (sorted).
    Other,
}

/// TypeMeta and ObjectMeta/ListMeta come first in every kind.
const TOP: &[&str] = &["kind", "apiVersion", "metadata"];
const STATUS: &[&str] = &["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"];
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
const LIST_META: &[&str] = &["selfLink", "resourceVersion", "continue", "remainingItemCount"];
const STATUS_DETAILS: &[&str] = &["name", "group", "kind", "uid", "causes", "retryAfterSeconds"];
const STATUS_CAUSE: &[&str] = &["reason", "message", "field"];

struct Placed<'a> {
    value: &'a Value,
    place: Place,
}

impl Serialize for Placed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Object(map) if self.place != Place::Other => self.serialize_object(map, serializer),
            other => other.serialize(serializer),
        }
    }
}

impl Placed<'_> {
    fn serialize_object<S: Serializer>(
        &self,
        map: &Map<String, Value>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let is_status = self.place == Place::Top && map.get("kind").and_then(Value::as_str) == Some("Status");
        let first: &[&str] = match self.place {
            Place::Top if is_status => STATUS,
            Place::Top => TOP,
            Place::ObjectMeta => OBJECT_META,
            Place::ListMeta => LIST_META,
            Place::StatusDetails => STATUS_DETAILS,
            Place::StatusCause => STATUS_CAUSE,
            Place::Other => &[],
        };
        // A kind's status comes last (Go declares it last).
        let last = if self.place == Place::Top && !is_status { Some("status") } else { None };
        let mut out = serializer.serialize_map(Some(map.len()))?;
        let known = first.iter().filter_map(|key| map.get_key_value(*key));
        let rest = map.iter().filter(|(key, _)| !first.contains(&key.as_str()) && Some(key.as_str()) != last);
        let tail = last.and_then(|key| map.get_key_value(key));
        for (key, value) in known.chain(rest).chain(tail) {
            out.serialize_entry(key, &Child { value, place: self.child(key, map) })?;
        }
        out.end()
    }

    /// What the field `key` of this object is.
    fn child(&self, key: &str, map: &Map<String, Value>) -> ChildPlace {
        match (self.place, key) {
            (Place::Top, "metadata") if map.contains_key("items") => ChildPlace::One(Place::ListMeta),
            (Place::Top, "metadata") => ChildPlace::One(Place::ObjectMeta),
            (Place::Top, "items") => ChildPlace::Each(Place::Top),
            (Place::Top, "details") => ChildPlace::One(Place::StatusDetails),
            (Place::StatusDetails, "causes") => ChildPlace::Each(Place::StatusCause),
            _ => ChildPlace::One(Place::Other),
        }
    }
}

/// A field's value: one struct, or a list of them.
#[derive(Clone, Copy)]
enum ChildPlace {
    One(Place),
    Each(Place),
}

struct Child<'a> {
    value: &'a Value,
    place: ChildPlace,
}

impl Serialize for Child<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (self.place, self.value) {
            (ChildPlace::Each(place), Value::Array(items)) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Placed { value: item, place })?;
                }
                out.end()
            }
            (ChildPlace::Each(_), other) => other.serialize(serializer),
            (ChildPlace::One(place), value) => Placed { value, place }.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(value: &Value) -> String {
        String::from_utf8(to_vec(value)).unwrap()
    }

    #[test]
    fn a_status_is_kubes_bytes() {
        let status = json!({"apiVersion": "v1", "code": 422, "kind": "Status", "metadata": {},
            "message": "m", "reason": "Invalid", "status": "Failure",
            "details": {"causes": [{"field": "spec", "message": "Required value", "reason": "FieldValueRequired"}],
                        "kind": "pods", "name": "p"}});
        assert_eq!(
            text(&status),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"m\",\
             \"reason\":\"Invalid\",\"details\":{\"name\":\"p\",\"kind\":\"pods\",\"causes\":[{\"reason\":\
             \"FieldValueRequired\",\"message\":\"Required value\",\"field\":\"spec\"}]},\"code\":422}\n"
        );
    }

    #[test]
    fn objects_and_lists_lead_with_type_and_metadata_and_end_with_status() {
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
            "metadata": {"uid": "u", "name": "n", "resourceVersion": "5", "labels": {"b": "1", "a": "2"}}});
        let list = json!({"apiVersion": "v1", "items": [namespace.clone()], "kind": "NamespaceList",
            "metadata": {"resourceVersion": "7", "continue": "c"}});
        let one = "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n\",\"uid\":\"u\",\
                   \"resourceVersion\":\"5\",\"labels\":{\"a\":\"2\",\"b\":\"1\"}},\"spec\":{\"finalizers\":\
                   [\"kubernetes\"]},\"status\":{\"phase\":\"Active\"}}";
        assert_eq!(text(&namespace), format!("{one}\n"));
        assert_eq!(
            text(&list),
            format!(
                "{{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{{\"resourceVersion\":\"7\",\
                 \"continue\":\"c\"}},\"items\":[{one}]}}\n"
            )
        );
    }

    #[test]
    fn other_values_are_written_as_they_are() {
        assert_eq!(text(&json!([{"b": 1, "a": 2}])), "[{\"a\":2,\"b\":1}]\n");
        assert_eq!(text(&json!("x")), "\"x\"\n");
    }
}
