//! kube's defaulting (`pkg/apis/<group>/v1/defaults.go` and the
//! declarative `+default` markers of k8s.io/api), on JSON objects.
//!
//! kube defaults a typed Go object as it is decoded, so what counts as
//! "unset" follows the Go field's type: a pointer (`*int32`, `*bool`, a
//! struct pointer) is unset when absent or null, and an explicit `0` or
//! `false` stays; a plain string is unset when absent, null or empty; a plain
//! number when absent, null or 0. The helpers here say which one they apply,
//! so each kind's defaults read like kube's.
//!
//! * `pod_spec`: everything under a PodSpec (containers, probes, volumes),
//!   shared by Pods and every kind with a pod template.
//! * `claim`: PersistentVolumeClaims, alone or as templates.

pub mod claim;
pub mod pod_spec;

use serde_json::{Map, Value};

/// `object[field]` as an object to default inside: made `{}` when absent or
/// null (a Go value struct, or a pointer kube's defaulting allocates); None
/// when it holds something else, which decoding has already refused.
pub fn object_at<'a>(object: &'a mut Value, field: &str) -> Option<&'a mut Value> {
    let map = object.as_object_mut()?;
    let slot = map.entry(field).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    Some(slot).filter(|slot| slot.is_object())
}

/// `object[field]` if it is already an object (a Go pointer to a struct that
/// kube's defaulting only descends into when set).
pub fn present<'a>(object: &'a mut Value, field: &str) -> Option<&'a mut Value> {
    object.get_mut(field).filter(|value| value.is_object())
}

/// The items of the list `object[field]`, none when it is not a list.
pub fn items<'a>(object: &'a mut Value, field: &str) -> impl Iterator<Item = &'a mut Value> {
    object.get_mut(field).and_then(Value::as_array_mut).into_iter().flatten().filter(|item| item.is_object())
}

/// A pointer field: set when absent or null.
pub fn pointer(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        let slot = map.entry(field).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

/// A plain string field: set when absent, null or "".
pub fn string(object: &mut Value, field: &str, value: &str) {
    if object.get(field).and_then(Value::as_str).is_none_or(str::is_empty) && object.is_object() {
        object[field] = Value::String(value.to_string());
    }
}

/// A plain integer field: set when absent, null or 0.
pub fn integer(object: &mut Value, field: &str, value: i64) {
    if object.get(field).and_then(Value::as_i64).is_none_or(|n| n == 0) && object.is_object() {
        object[field] = Value::from(value);
    }
}

/// Takes `field` out of `object` (kube setting a pointer back to nil).
pub fn remove(object: &mut Value, field: &str) {
    if let Some(map) = object.as_object_mut() {
        map.remove(field);
    }
}

/// A workload's update strategy at `spec[field]` (a Go value struct): of
/// type RollingUpdate unless told, and then with these bounds unless told.
pub fn rolling_update(spec: &mut Value, field: &str, max_unavailable: Value, max_surge: Value) {
    let Some(strategy) = object_at(spec, field) else { return };
    string(strategy, "type", "RollingUpdate");
    if strategy["type"] == "RollingUpdate"
        && let Some(rolling) = object_at(strategy, "rollingUpdate")
    {
        pointer(rolling, "maxUnavailable", max_unavailable);
        pointer(rolling, "maxSurge", max_surge);
    }
}

/// Whether a plain string field holds something.
pub fn is_set(object: &Value, field: &str) -> bool {
    object.get(field).and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_helper_treats_unset_as_its_go_type_does() {
        let mut object = json!({"p": 0, "s": "", "n": 0, "kept": "x", "nil": null});
        pointer(&mut object, "p", json!(5));
        pointer(&mut object, "nil", json!(5));
        pointer(&mut object, "absent", json!(true));
        string(&mut object, "s", "d");
        string(&mut object, "kept", "d");
        integer(&mut object, "n", 7);
        assert_eq!(object, json!({"p": 0, "s": "d", "n": 7, "kept": "x", "nil": 5, "absent": true}));
    }

    #[test]
    fn objects_are_made_only_where_nothing_else_is() {
        let mut object = json!({"a": null, "b": 3});
        assert!(object_at(&mut object, "a").is_some());
        assert!(object_at(&mut object, "b").is_none());
        assert!(present(&mut object, "c").is_none());
        assert_eq!(object, json!({"a": {}, "b": 3}));
    }
}
