//! A custom resource definition's schema, and an object of its kind: the
//! CRD is validated as the API server validates it (structural schema,
//! `x-kubernetes-validations` compiled within kube's limits), then an
//! object is validated against the schema it accepted (the schema's checks,
//! then its CEL rules, evaluated within kube's cost budget).
//!
//! Input: one byte (bit 0: the object replaces itself, so transition rules
//! and ratcheting run), the schema's JSON, a NUL byte, the object's JSON.
//!
//! Properties: nothing panics; the refusal of either, as the Status a client
//! gets, is under 1 MiB (a 50,000-value enum once made a 1.3 GB answer);
//! validating the same object again gives the same causes.

use rtcd_apiserver::customresource::validation::Validator;
use rtcd_apiserver::errors::ApiError;
use rtcd_apiserver::registry::kinds::customresourcedefinition;
use serde_json::{Value, json};

/// What no answer may reach.
const MAX_ANSWER_BYTES: usize = 1 << 20;

pub fn run(data: &[u8]) {
    let Some((selector, schema, object)) = crate::split_input(data) else { return };
    let Ok(schema) = serde_json::from_slice::<Value>(schema) else { return };
    let Ok(object) = serde_json::from_slice::<Value>(object) else { return };
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": schema}}]}});
    let kind = customresourcedefinition::kind();
    let mut crd = crd;
    kind.strategy.set_defaults(&mut crd);
    if let Err(refused) = kind.strategy.validate(&crd) {
        bounded(&refused);
        return;
    }
    let Some(schema) = crd.pointer("/spec/versions/0/schema/openAPIV3Schema") else { return };
    let validator = Validator::new(schema.clone());
    let causes = match selector & 1 {
        0 => validator.validate(&object),
        _ => validator.validate_update(&object, &object),
    };
    let again = match selector & 1 {
        0 => validator.validate(&object),
        _ => validator.validate_update(&object, &object),
    };
    assert_eq!(causes, again, "the same object judged twice differently");
    if !causes.is_empty() {
        bounded(&ApiError::Invalid { kind: "Thing.example.com".into(), name: "t".into(), causes });
    }
}

fn bounded(refused: &ApiError) {
    let answer = serde_json::to_vec(&refused.status()).unwrap_or_default();
    assert!(answer.len() < MAX_ANSWER_BYTES, "a {} byte answer", answer.len());
}
