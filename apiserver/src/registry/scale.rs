//! The `scale` subresource's view of a workload: an autoscaling/v1 Scale
//! (what `kubectl scale` and autoscalers read and write, and what admission
//! sees for a scale change, as in kube).

use serde_json::{Value, json};

use crate::admission::GroupVersionKind;

/// The kind admission is told a scale change is about.
pub fn kind() -> GroupVersionKind {
    GroupVersionKind { group: "autoscaling".into(), version: "v1".into(), kind: "Scale".into() }
}

/// The autoscaling/v1 Scale of a Deployment, ReplicaSet or StatefulSet.
pub fn of(object: &Value) -> Value {
    let meta = &object["metadata"];
    let selector = object["spec"]["selector"]["matchLabels"]
        .as_object()
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": object["spec"]["replicas"].as_i64().unwrap_or(0)},
        "status": {"replicas": object["status"]["replicas"].as_i64().unwrap_or(0), "selector": selector},
    })
}

/// `workload` with the replicas `scale` asks for (a Scale admission may
/// have changed); unchanged when the Scale says none.
pub fn with_replicas(mut workload: Value, scale: Option<&Value>) -> Value {
    if let Some(replicas) = scale.and_then(|s| s["spec"]["replicas"].as_i64())
        && workload["spec"].is_object()
    {
        workload["spec"]["replicas"] = json!(replicas);
    }
    workload
}
