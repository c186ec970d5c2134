use serde_json::{Value, json};

use super::*;

/// A Deployment-like shape: labels a map, containers keyed by name, ports
/// keyed by port and protocol (defaulted), finalizers a set, args atomic.
fn schema() -> Schema {
    let definitions = json!({
        "Container": {"type": "object", "properties": {
            "name": {"type": "string"},
            "image": {"type": "string"},
            "args": {"type": "array", "items": {"type": "string"}},
            "ports": {"type": "array", "items": {"$ref": "#/components/schemas/Port"},
                      "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["containerPort", "protocol"]},
        }},
        "Port": {"type": "object", "properties": {
            "containerPort": {"type": "integer"},
            "protocol": {"type": "string", "default": "TCP"},
        }},
    });
    let root = json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object", "properties": {
            "name": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        }},
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "containers": {"type": "array", "items": {"$ref": "#/components/schemas/Container"},
                           "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                         "properties": {"app": {"type": "string"}}},
        }},
    }});
    Schema::from_openapi(&root, definitions.as_object().unwrap())
}

fn texts(set: &Set) -> Vec<String> {
    set.paths().iter().map(ToString::to_string).collect()
}

#[test]
fn field_sets_name_leaves_items_and_map_entries() {
    let object = json!({
        "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a"]},
        "spec": {"replicas": 2, "selector": {"app": "web"},
                 "containers": [{"name": "c", "image": "nginx", "args": ["x"], "ports": [{"containerPort": 80}]}]},
    });
    let set = field_set(&schema(), &object).unwrap();
    assert_eq!(
        texts(&set),
        vec![
            // a node's members before what is below its children, as kube
            // iterates (and lists conflicts)
            ".metadata.name",
            ".metadata.finalizers[=\"a\"]",
            ".metadata.labels.app",
            ".spec.replicas",
            ".spec.selector",
            ".spec.containers[name=\"c\"]",
            ".spec.containers[name=\"c\"].args",
            ".spec.containers[name=\"c\"].image",
            ".spec.containers[name=\"c\"].name",
            ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"]",
            ".spec.containers[name=\"c\"].ports[containerPort=80,protocol=\"TCP\"].containerPort",
        ]
    );
}

#[test]
fn field_sets_refuse_what_the_schema_cannot_place() {
    let unknown = json!({"spec": {"replicas": 1, "bogus": true}});
    assert_eq!(field_set(&schema(), &unknown).unwrap_err(), ".spec.bogus: field not declared in schema");
    let keyless = json!({"spec": {"containers": [{"image": "x"}]}});
    assert_eq!(
        field_set(&schema(), &keyless).unwrap_err(),
        ".spec.containers: element 0: associative list with keys has an element that omits all key fields \
         [\"name\"] (and doesn't have default values for any key fields)"
    );
    let twice = json!({"spec": {"containers": [{"name": "a"}, {"name": "a"}]}});
    assert!(field_set(&schema(), &twice).unwrap_err().contains("duplicate entries for key [name=\"a\"]"));
}

#[test]
fn comparisons_split_added_modified_and_removed() {
    let old = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 1}});
    let new =
        json!({"metadata": {"labels": {"a": "9"}}, "spec": {"replicas": 1, "containers": [{"name": "c"}]}});
    let c = compare(&schema(), &old, &new);
    assert_eq!(texts(&c.modified), vec![".metadata.labels.a"]);
    assert_eq!(texts(&c.removed), vec![".metadata.labels.b"]);
    assert_eq!(
        texts(&c.added),
        vec![".spec.containers", ".spec.containers[name=\"c\"]", ".spec.containers[name=\"c\"].name"]
    );
    // A null beside a map: its entries are what changed.
    let nulled = json!({"metadata": {"labels": null}});
    let c = compare(&schema(), &nulled, &json!({"metadata": {"labels": {"a": "1"}}}));
    assert_eq!(texts(&c.added), vec![".metadata.labels.a"]);
    let c = compare(&schema(), &json!({"metadata": {"labels": {"a": "1"}}}), &nulled);
    assert_eq!(texts(&c.removed), vec![".metadata.labels.a"]);
    let same = compare(&schema(), &new, &new);
    assert!(same.added.is_empty() && same.modified.is_empty() && same.removed.is_empty());
}

#[test]
fn merges_keep_live_items_and_take_the_configurations_values() {
    let live = json!({"spec": {"replicas": 1, "selector": {"app": "a", "tier": "x"},
        "containers": [{"name": "sidecar", "image": "s"}, {"name": "web", "image": "old", "args": ["1"]}]}});
    let config = json!({"spec": {"selector": {"app": "b"},
        "containers": [{"name": "web", "image": "new"}, {"name": "extra", "image": "e"}]}});
    let merged = merge(&schema(), &live, &config).unwrap();
    assert_eq!(merged["spec"]["replicas"], 1);
    // atomic: replaced whole
    assert_eq!(merged["spec"]["selector"], json!({"app": "b"}));
    let names: Vec<&Value> =
        merged["spec"]["containers"].as_array().unwrap().iter().map(|c| &c["name"]).collect();
    assert_eq!(names, vec!["sidecar", "web", "extra"]);
    assert_eq!(merged["spec"]["containers"][1], json!({"name": "web", "image": "new", "args": ["1"]}));
}

#[test]
fn merged_lists_follow_the_configurations_order_for_shared_items() {
    let item = |n: &str| json!({"name": n});
    let live = json!({"spec": {"containers": [item("a"), item("b"), item("x"), item("c")]}});
    let config = json!({"spec": {"containers": [item("c"), item("b"), item("d")]}});
    let merged = merge(&schema(), &live, &config).unwrap();
    let names: Vec<&str> =
        merged["spec"]["containers"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, vec!["a", "x", "c", "b", "d"]);
}

#[test]
fn removal_takes_members_and_named_fields_take_their_structs() {
    let object = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 3}});
    let mut set = Set::new();
    set.insert(&Path::of_fields(&["metadata", "labels", "a"]));
    set.insert(&Path::of_fields(&["spec", "replicas"]));
    let removed = remove(&schema(), &object, &set);
    assert_eq!(removed, json!({"metadata": {"labels": {"b": "2"}}}), "spec emptied: gone");
    // spec is a named field of the root: with it a member, spec goes too;
    // labels is a map key's parent but itself a named field of metadata.
    let named = with_named_fields(&schema(), &set);
    assert!(named.has(&Path::of_fields(&["spec"])));
    assert!(named.has(&Path::of_fields(&["metadata", "labels"])));
    assert_eq!(remove(&schema(), &object, &named), json!({}));
}
