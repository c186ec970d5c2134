//! Structural pruning (kube's `structuralpruning`): fields a custom
//! resource's schema does not name are dropped as the object is decoded, as
//! a built-in kind's typed decoding drops fields its type lacks. The
//! decoder compares what it got with what is left to warn about (or, with
//! `fieldValidation=Strict`, refuse) each dropped field.

use serde_json::{Map, Value};

use crate::runtime::schema_view::Node;

/// Prunes a whole custom resource: `apiVersion`, `kind` and `metadata`
/// always stay (metadata is ObjectMeta's to check), the rest as the schema
/// says.
pub fn prune_object(object: &mut Value, schema: Node<'_>) {
    let Value::Object(fields) = object else { return };
    prune_fields(fields, schema, &["apiVersion", "kind", "metadata"]);
}

/// Prunes a value described by `schema`.
fn prune(value: &mut Value, schema: Node<'_>) {
    match value {
        Value::Object(fields) => {
            // An embedded object keeps its own type and metadata.
            let kept: &[&str] =
                if schema.embedded_resource() { &["apiVersion", "kind", "metadata"] } else { &[] };
            prune_fields(fields, schema, kept);
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                items.iter_mut().for_each(|v| prune(v, item));
            }
        }
        _ => {}
    }
}

fn prune_fields(fields: &mut Map<String, Value>, schema: Node<'_>, kept: &[&str]) {
    let keeps_unknown = schema.preserves_unknown_fields() || schema.allows_additional();
    fields.retain(|name, value| match schema.field(name) {
        // A null where null is not allowed and no default would replace
        // it reads as the field left out (kube's
        // PruneNonNullableNullsWithoutDefaults).
        Some(field) => !(value.is_null() && !field.nullable() && field.default().is_none()),
        None => kept.contains(&name.as_str()) || keeps_unknown,
    });
    for (name, value) in fields.iter_mut() {
        // What is always kept is not the schema's to prune (controller-gen
        // writes `metadata: {type: object}`, which would empty it).
        if kept.contains(&name.as_str()) {
            continue;
        }
        if let Some(field) = schema.field(name) {
            prune(value, field);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pruned(schema: Value, mut object: Value) -> Value {
        prune_object(&mut object, Node(&schema));
        object
    }

    #[test]
    fn unknown_fields_go_at_every_depth() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "gone": {"type": "string"},
                "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
            }},
        }});
        let object = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": 1, "colour": "red", "gone": null,
                "ports": [{"port": 80, "name": "http"}],
                "labels": {"a": {"v": "x", "w": "y"}}},
            "status": {"ok": true},
        });
        assert_eq!(
            pruned(schema, object),
            json!({
                "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                "spec": {"size": 1, "ports": [{"port": 80}], "labels": {"a": {"v": "x"}}},
            })
        );
    }

    #[test]
    fn metadata_is_never_pruned_by_the_schema() {
        // As controller-gen writes it, and with a constraint on the name.
        for metadata in
            [json!({"type": "object"}), json!({"type": "object", "properties": {"name": {"type": "string"}}})]
        {
            let schema = json!({"type": "object", "properties": {"metadata": metadata,
                "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"metadata": metadata}}}});
            let object = json!({"metadata": {"name": "w", "labels": {"a": "b"}},
                "template": {"metadata": {"name": "t", "annotations": {"x": "y"}}}});
            assert_eq!(pruned(schema, object.clone()), object);
        }
    }

    #[test]
    fn preserved_and_embedded_fields_stay() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                "known": {"type": "object", "properties": {"a": {"type": "string"}}},
            }},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "spec": {"type": "object", "properties": {}},
            }},
            "free": {"type": "object", "additionalProperties": true},
        }});
        let object = json!({
            "spec": {"anything": {"deep": 1}, "known": {"a": "x", "b": "pruned"}},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}, "other": 2},
            "free": {"k": {"v": 1}},
        });
        assert_eq!(
            pruned(schema, object),
            json!({
                "spec": {"anything": {"deep": 1}, "known": {"a": "x"}},
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
                "free": {"k": {"v": 1}},
            })
        );
    }
}
