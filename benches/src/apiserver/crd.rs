//! The Widget CustomResourceDefinition `create --kind widget` measures:
//! a schema with the ConfigMap's data as a string map, plus a defaulted,
//! bounded field and an enum, so pruning, defaulting and validation all
//! run on every create.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::Api;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const NAME: &str = "widgets.bench.rtcd.io";

pub fn widgets(namespace: &str) -> String {
    format!("/apis/bench.rtcd.io/v1/namespaces/{namespace}/widgets")
}

pub fn widget(name: &str, val_size: usize) -> Value {
    json!({
        "apiVersion": "bench.rtcd.io/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"color": "red", "data": {"payload": "v".repeat(val_size)}},
    })
}

/// Installs the CRD (unless it is) and waits until it is Established.
pub async fn install_widgets(api: &Api) -> Result<(), String> {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "bench.rtcd.io",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": {
                    "color": {"type": "string", "enum": ["red", "green"]},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                    "data": {"type": "object", "additionalProperties": {"type": "string"}},
                }}},
            }}}],
        },
    });
    let reply = api.post(CRDS, &crd).await?;
    if !matches!(reply.status.as_u16(), 201 | 409) {
        return Err(format!("creating the Widget CRD: {}", reply.describe()));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let reply = api.get(&format!("{CRDS}/{NAME}")).await?;
        let crd: Value = serde_json::from_slice(&reply.body).unwrap_or_default();
        let established = crd["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Established" && c["status"] == "True"));
        if established {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the Widget CRD was not Established within 30 s".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
