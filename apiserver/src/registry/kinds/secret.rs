//! Secrets: `stringData` is write-only and lands base64-encoded in `data`.

use base64::Engine;
use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::Secret>(Resource::new("", "Secret", "secrets"), SecretStrategy)
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &["type", "metadata.namespace", "metadata.name"],
    refusal: Refusal::NotSupported,
    aliases: &[],
    cluster_scoped: false,
    value: |object, field| (field == "type").then(|| attrs::text(object, &["type"])),
};

#[derive(Debug)]
struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_SECRET)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, object: &mut Value) {
        fold_string_data(object);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        fold_string_data(new);
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::SECRET
    }
}

/// `stringData` lands base64 in `data`.
fn fold_string_data(object: &mut Value) {
    let Some(fields) = object.as_object_mut() else { return };
    let Some(Value::Object(strings)) = fields.remove("stringData") else { return };
    let data = fields.entry("data").or_insert_with(|| json!({}));
    if let Some(data) = data.as_object_mut() {
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, json!(base64::engine::general_purpose::STANDARD.encode(text)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_lands_in_data() {
        let mut secret = json!({"stringData": {"password": "hunter2"}});
        fold_string_data(&mut secret);
        assert_eq!(secret["data"]["password"], "aHVudGVyMg==");
        assert!(secret.get("stringData").is_none());
    }
}
