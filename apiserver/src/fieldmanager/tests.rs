use serde_json::{Value, json};

use super::*;

const NOW: &str = "2026-11-26T10:00:00Z";
const LATER: &str = "2026-11-26T11:00:00Z";

/// ConfigMap-like kind with a replicas field and keyed items, in `v1`.
fn manager() -> FieldManager {
    let source: SchemaSource = Arc::new(|| {
        let root = json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object", "properties": {
                "name": {"type": "string"},
                "namespace": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                "uid": {"type": "string"},
                "managedFields": {"type": "array", "items": {"type": "object"}},
            }},
            "data": {"type": "object", "additionalProperties": {"type": "string"}},
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {
                              "name": {"type": "string"}, "value": {"type": "string"}}}},
            }},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        }});
        Schema::from_openapi(&root, &serde_json::Map::new())
    });
    FieldManager::new("v1", "Thing", true, source)
}

fn config(body: Value) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t"}});
    for (k, v) in body.as_object().unwrap() {
        object[k] = v.clone();
    }
    object
}

fn entries(object: &Value) -> Vec<(String, String, Value)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_create_records_its_manager_as_kube_writes_it() {
    let mut object = config(json!({"metadata": {"name": "t", "labels": {"app": "x"}}, "data": {"a": "1"}}));
    manager().update(&json!({}), &mut object, "kubectl-create", None, NOW);
    let managed = &object["metadata"]["managedFields"];
    assert_eq!(
        managed,
        &json!([{
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": NOW,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
        }])
    );
}

#[test]
fn an_update_takes_the_fields_it_changes_and_leaves_times_alone_otherwise() {
    let fm = manager();
    let mut first = config(json!({"data": {"a": "1", "b": "2"}}));
    fm.update(&json!({}), &mut first, "one", None, NOW);
    let mut second = first.clone();
    second["data"]["a"] = json!("9");
    fm.update(&first, &mut second, "two", None, LATER);
    let got = entries(&second);
    assert_eq!(got[0], ("one".into(), "Update".into(), json!({"f:data": {".": {}, "f:b": {}}})));
    assert_eq!(got[1], ("two".into(), "Update".into(), json!({"f:data": {"f:a": {}}})));
    // Nothing changed: nothing recorded, no time moves.
    let mut again = second.clone();
    fm.update(&second, &mut again, "three", None, "2030-01-01T00:00:00Z");
    assert_eq!(again["metadata"]["managedFields"], second["metadata"]["managedFields"]);
}

#[test]
fn applies_conflict_with_other_managers_unless_forced() {
    let fm = manager();
    let live =
        fm.apply(&json!({}), &config(json!({"spec": {"replicas": 1}})), "alice", false, None, NOW).unwrap();
    let bob = config(json!({"spec": {"replicas": 2}}));
    let err = fm.apply(&live, &bob, "bob", false, None, LATER).unwrap_err();
    assert_eq!(err.code(), 409);
    assert_eq!(err.to_string(), "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas");
    let status = err.status();
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.replicas"}])
    );
    // The same value is no conflict: both own it.
    let shared =
        fm.apply(&live, &config(json!({"spec": {"replicas": 1}})), "bob", false, None, LATER).unwrap();
    assert_eq!(entries(&shared).len(), 2);
    // Forced, bob takes it and alice keeps nothing.
    let forced = fm.apply(&live, &bob, "bob", true, None, LATER).unwrap();
    assert_eq!(forced["spec"]["replicas"], 2);
    assert_eq!(entries(&forced), vec![("bob".into(), "Apply".into(), json!({"f:spec": {"f:replicas": {}}}))]);
}

#[test]
fn conflicts_with_updaters_name_their_version_and_list_by_manager() {
    let fm = manager();
    let mut live = config(json!({"data": {"a": "1", "b": "2"}, "spec": {"replicas": 1}}));
    fm.update(&json!({}), &mut live, "kubectl-client-side-apply", None, NOW);
    let mut live2 = live.clone();
    live2["spec"]["replicas"] = json!(5);
    fm.update(&live, &mut live2, "hpa", None, NOW);
    let err = fm
        .apply(
            &live2,
            &config(json!({"data": {"a": "x", "b": "y"}, "spec": {"replicas": 3}})),
            "kubectl",
            false,
            None,
            LATER,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 3 conflicts: conflicts with \"hpa\" using v1:\n- .spec.replicas\n\
         conflicts with \"kubectl-client-side-apply\" using v1:\n- .data.a\n- .data.b"
    );
}

#[test]
fn fields_an_applier_stops_applying_go_unless_someone_else_holds_them() {
    let fm = manager();
    let first =
        config(json!({"data": {"a": "1", "b": "2"}, "spec": {"items": [{"name": "x", "value": "1"}]}}));
    let live = fm.apply(&json!({}), &first, "alice", false, None, NOW).unwrap();
    // bob applies b too (same value: shared)
    let live = fm.apply(&live, &config(json!({"data": {"b": "2"}})), "bob", false, None, NOW).unwrap();
    let second = config(json!({"data": {"a": "1"}}));
    let after = fm.apply(&live, &second, "alice", false, None, LATER).unwrap();
    assert_eq!(after["data"], json!({"a": "1", "b": "2"}), "bob still holds b");
    assert!(after.get("spec").is_none(), "the item alice alone applied is gone: {after}");
    let alone = fm.apply(&after, &config(json!({})), "bob", false, None, LATER).unwrap();
    assert_eq!(alone["data"], json!({"a": "1"}));
}

#[test]
fn status_is_owned_only_through_its_subresource() {
    let fm = manager();
    let body = config(json!({"spec": {"replicas": 1}, "status": {"ready": true}}));
    let main = fm.apply(&json!({}), &body, "m", false, None, NOW).unwrap();
    assert_eq!(entries(&main)[0].2, json!({"f:spec": {"f:replicas": {}}}));
    let status = fm.apply(&main, &body, "s", false, Some("status"), NOW).unwrap();
    let managed = &status["metadata"]["managedFields"];
    let by_s = managed.as_array().unwrap().iter().find(|e| e["manager"] == "s").unwrap();
    assert_eq!(by_s["fieldsV1"], json!({"f:status": {"f:ready": {}}}));
    assert_eq!(by_s["subresource"], "status");
}

#[test]
fn bad_configurations_are_refused_with_kubes_texts() {
    let fm = manager();
    let wrong = json!({"apiVersion": "v2", "kind": "Thing", "metadata": {"name": "t"}});
    assert_eq!(
        fm.apply(&json!({}), &wrong, "m", false, None, NOW).unwrap_err().to_string(),
        "invalid object type: /v2, Kind=Thing"
    );
    let kindless = json!({"apiVersion": "v1", "metadata": {"name": "t"}});
    assert_eq!(
        fm.apply(&json!({}), &kindless, "m", false, None, NOW).unwrap_err().to_string(),
        "invalid object type: /v1, Kind="
    );
    let managed = config(json!({"metadata": {"name": "t", "managedFields": [{"manager": "x"}]}}));
    let err = fm.apply(&json!({}), &managed, "m", false, None, NOW).unwrap_err();
    assert_eq!((err.code(), err.to_string().as_str()), (400, "metadata.managedFields must be nil"));
    let unknown = config(json!({"spec": {"nope": 1}}));
    let err = fm.apply(&json!({}), &unknown, "m", false, None, NOW).unwrap_err();
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (/t; /v1, Kind=Thing): .spec.nope: field not declared in schema"
    );
    // kube answers these as plain errors: 500 without a reason.
    assert_eq!(err.code(), 500);
    assert!(err.status().get("reason").is_none());
}

#[test]
fn updaters_beyond_ten_fold_into_ancient_changes() {
    let fm = manager();
    let mut live = config(json!({}));
    for i in 0..12 {
        let mut next = live.clone();
        next["data"] = json!({});
        for j in 0..=i {
            next["data"][format!("k{j}")] = json!("v");
        }
        fm.update(&live, &mut next, &format!("m{i:02}"), None, &format!("2026-11-26T10:00:{i:02}Z"));
        live = next;
    }
    let names: Vec<String> = entries(&live).into_iter().map(|(n, _, _)| n).collect();
    assert_eq!(names.len(), 10);
    assert!(names.contains(&"ancient-changes".to_string()), "{names:?}");
    assert!(!names.contains(&"m00".to_string()) && names.contains(&"m11".to_string()));
    // Two more: still one bucket, holding what the folded ones had.
    for i in 12..14 {
        let mut next = live.clone();
        next["data"][format!("k{i}")] = json!("v");
        fm.update(&live, &mut next, &format!("m{i:02}"), None, &format!("2026-11-26T10:00:{i:02}Z"));
        live = next;
    }
    let all = entries(&live);
    assert_eq!(all.len(), 10);
    let buckets: Vec<&(String, String, Value)> =
        all.iter().filter(|(n, _, _)| n == "ancient-changes").collect();
    assert_eq!(buckets.len(), 1, "{all:?}");
    assert!(buckets[0].2["f:data"].get("f:k0").is_some(), "{:?}", buckets[0]);
}

#[test]
fn garbage_managed_fields_in_an_update_give_way_to_the_live_ones() {
    let fm = manager();
    let mut live = config(json!({"data": {"a": "1"}}));
    fm.update(&json!({}), &mut live, "one", None, NOW);
    let mut new = live.clone();
    new["metadata"]["managedFields"] =
        json!([{"manager": "x", "operation": "Update", "fieldsType": "FieldsV2"}]);
    fm.update(&live, &mut new, "two", None, LATER);
    assert_eq!(new["metadata"]["managedFields"], live["metadata"]["managedFields"]);
}

#[test]
fn managers_come_from_field_manager_or_the_user_agent() {
    assert_eq!(manager_name(Some("mine"), "kubectl/v1.37.0 (linux/amd64)"), "mine");
    assert_eq!(manager_name(None, "kubectl/v1.37.0 (linux/amd64) kubernetes/abc"), "kubectl");
    assert_eq!(manager_name(Some(""), "OpenAPI-Generator/33.1.0/python"), "OpenAPI-Generator");
    assert_eq!(manager_name(None, &"x".repeat(300)).len(), 128);
}

#[test]
fn an_apply_to_an_object_nobody_manages_conflicts_with_what_was_there() {
    let fm = manager();
    // Written by the server itself: no managers.
    let live = config(json!({"metadata": {"name": "t", "uid": "u1"}, "data": {"a": "1"}}));
    let err = fm.apply(&live, &config(json!({"data": {"a": "2"}})), "kubectl", false, None, NOW).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a"
    );
    // An update of it is not tracked either.
    let mut new = live.clone();
    new["data"]["a"] = json!("3");
    fm.update(&live, &mut new, "editor", None, NOW);
    assert!(new["metadata"].get("managedFields").is_none(), "{new}");
}

#[test]
fn clients_clear_managed_fields_with_one_empty_entry_or_none() {
    let fm = manager();
    let mut live = config(json!({"metadata": {"name": "t", "uid": "u1"}, "data": {"a": "1"}}));
    fm.update(&json!({}), &mut live, "one", None, NOW);
    let mut cleared = live.clone();
    cleared["metadata"]["managedFields"] = json!([{}]);
    cleared["data"]["b"] = json!("2");
    fm.update(&live, &mut cleared, "two", None, LATER);
    // Cleared, the object is one nobody manages: this update is not
    // recorded either (kube's rule for objects made before tracking).
    assert!(cleared["metadata"].get("managedFields").is_none(), "{cleared}");
    let mut emptied = live.clone();
    emptied["metadata"]["managedFields"] = json!([]);
    fm.update(&live, &mut emptied, "two", None, LATER);
    assert!(emptied["metadata"].get("managedFields").is_none());
    // Left out, they are kept.
    let mut kept = live.clone();
    kept["metadata"].as_object_mut().unwrap().remove("managedFields");
    fm.update(&live, &mut kept, "two", None, LATER);
    assert_eq!(kept["metadata"]["managedFields"], live["metadata"]["managedFields"]);
}

#[test]
fn kubectl_takes_over_from_its_client_side_apply() {
    let fm = manager();
    let last =
        r#"{"apiVersion":"v1","data":{"a":"1"},"kind":"Thing","metadata":{"annotations":{},"name":"t"}}"#;
    let annotation = "kubectl.kubernetes.io/last-applied-configuration";
    let mut live =
        config(json!({"metadata": {"name": "t", "annotations": {annotation: last}}, "data": {"a": "1"}}));
    fm.update(&json!({}), &mut live, "kubectl-client-side-apply", None, NOW);
    live["metadata"]["uid"] = json!("u1");
    let ssa = config(json!({"data": {"a": "2"}}));
    // Another manager would conflict...
    assert_eq!(fm.apply(&live, &ssa, "other", false, None, LATER).unwrap_err().code(), 409);
    // ...kubectl takes the field its client-side apply set, and the
    // annotation follows what it applied.
    let new = fm.apply(&live, &ssa, "kubectl", false, None, LATER).unwrap();
    assert_eq!(new["data"]["a"], "2");
    assert_eq!(entries(&new)[0], ("kubectl".into(), "Apply".into(), json!({"f:data": {"f:a": {}}})));
    let text = new["metadata"]["annotations"][annotation].as_str().unwrap();
    assert_eq!(
        text,
        "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"2\"},\"kind\":\"Thing\",\"metadata\":{\"name\":\"t\"}}\n"
    );
    // A field changed since the client-side apply is a conflict still.
    let mut edited = live.clone();
    edited["data"]["a"] = json!("edited");
    fm.update(&live, &mut edited, "editor", None, LATER);
    assert_eq!(fm.apply(&edited, &ssa, "kubectl", false, None, LATER).unwrap_err().code(), 409);
}

#[test]
fn a_null_in_an_apply_keeps_what_is_there() {
    let fm = manager();
    let live = fm
        .apply(
            &json!({}),
            &config(json!({"metadata": {"name": "t", "labels": {"a": "1"}}})),
            "a",
            false,
            None,
            NOW,
        )
        .unwrap();
    let nulled = config(json!({"metadata": {"name": "t", "labels": null}}));
    let after = fm.apply(&live, &nulled, "b", false, None, LATER).unwrap();
    assert_eq!(after["metadata"]["labels"], json!({"a": "1"}), "{after}");
}

#[test]
fn objects_too_deep_to_track_stay_untracked() {
    let fm = manager();
    let mut deep = json!("leaf");
    for _ in 0..110 {
        deep = json!({"x": deep});
    }
    let mut object = config(json!({"data": {}}));
    object["spec"] = json!({"replicas": 1});
    object["metadata"]["labels"] = json!({"a": "1"});
    let mut new = object.clone();
    new["status"] = deep;
    let fm_deduced = FieldManager::new("v1", "Thing", false, Arc::new(Schema::deduced));
    fm_deduced.update(&json!({}), &mut new, "m", None, NOW);
    assert!(new["metadata"].get("managedFields").is_none());
    // A shallow one is tracked.
    fm.update(&json!({}), &mut object, "m", None, NOW);
    assert!(object["metadata"].get("managedFields").is_some());
}

#[test]
fn what_the_server_removes_is_nobodys() {
    let fm = manager();
    let live = fm
        .apply(
            &json!({}),
            &config(json!({"metadata": {"name": "t", "labels": {"a": "1", "b": "2"}}})),
            "m",
            false,
            None,
            NOW,
        )
        .unwrap();
    let mut new = live.clone();
    new["metadata"]["labels"].as_object_mut().unwrap().remove("a");
    fm.forget_removed(&live, &mut new);
    assert_eq!(entries(&new)[0].2, json!({"f:metadata": {"f:labels": {"f:b": {}}}}));
}
