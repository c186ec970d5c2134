//! Structural defaulting (kube's `structuraldefaulting`): a property with a
//! `default` that an object lacks (or holds `null` where the schema is not
//! `nullable`) gets the default, at every depth, after pruning; a default
//! object is then defaulted inside too.

use serde_json::Value;

use crate::runtime::schema_view::Node;

pub fn apply_defaults(value: &mut Value, schema: Node<'_>) {
    match value {
        Value::Object(fields) => {
            if let Some(properties) = schema.properties() {
                for (name, property) in properties {
                    let property = Node(property);
                    let Some(default) = property.default() else { continue };
                    match fields.get(name) {
                        None => {
                            fields.insert(name.clone(), default.clone());
                        }
                        Some(Value::Null) if !property.nullable() => {
                            fields.insert(name.clone(), default.clone());
                        }
                        Some(_) => {}
                    }
                }
            }
            for (name, field) in fields.iter_mut() {
                if let Some(node) = schema.field(name) {
                    apply_defaults(field, node);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                items.iter_mut().for_each(|v| apply_defaults(v, item));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn missing_and_null_fields_take_their_defaults_at_every_depth() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "default": {}, "properties": {
                "replicas": {"type": "integer", "default": 1},
                "mode": {"type": "string", "default": "fast"},
                "note": {"type": "string", "nullable": true, "default": "n"},
                "ports": {"type": "array", "items": {"type": "object", "properties": {
                    "protocol": {"type": "string", "default": "TCP"},
                }}},
                "extra": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                    "on": {"type": "boolean", "default": true},
                }}},
            }},
        }});
        let mut object = json!({"spec": {"mode": null, "note": null, "ports": [{}, {"protocol": "UDP"}], "extra": {"a": {}}}});
        apply_defaults(&mut object, Node(&schema));
        assert_eq!(
            object,
            json!({"spec": {"replicas": 1, "mode": "fast", "note": null,
                "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}], "extra": {"a": {"on": true}}}})
        );
        // A missing spec gets `{}` and then what is inside it.
        let mut empty = json!({});
        apply_defaults(&mut empty, Node(&schema));
        assert_eq!(empty, json!({"spec": {"replicas": 1, "mode": "fast", "note": "n"}}));
    }
}
