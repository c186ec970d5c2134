//! Whether a pod gets the proxy, and the JSON Patch that gives it one: an
//! init container that would set up traffic redirection, the proxy
//! sidecar with its configuration, a volume they share and annotations
//! saying who injected what. Pure functions of the pod and its
//! namespace's annotations, so every rule is tested without a server.

use serde_json::{Value, json};

/// The annotation that asks for injection, on a pod or its namespace.
pub const INJECT: &str = "rtcd.dev/inject";
/// The pod annotation setting the proxy's log level.
pub const LOG_LEVEL: &str = "config.rtcd.dev/proxy-log-level";
pub const PROXY: &str = "rtcd-proxy";
pub const INIT: &str = "rtcd-init";
pub const CONFIG_VOLUME: &str = "rtcd-proxy-config";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The images the injected containers run.
#[derive(Debug, Clone)]
pub struct Images {
    pub proxy: String,
    pub init: String,
}

/// Why a pod is or is not injected (the webhook's audit annotation).
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    Inject,
    Skip(&'static str),
}

/// The pod's own annotation wins; else its namespace's; injection only
/// when the one that speaks says `enabled`. Never twice, never into the
/// host's network namespace (the redirection would capture the node's
/// traffic).
pub fn decide(pod: &Value, namespace_annotations: Option<&Value>) -> Decision {
    let spec = &pod["spec"];
    if containers(spec, "containers").any(|c| c["name"] == PROXY) {
        return Decision::Skip("already injected");
    }
    if spec["hostNetwork"] == true {
        return Decision::Skip("hostNetwork pod");
    }
    let asked = pod["metadata"]["annotations"][INJECT]
        .as_str()
        .or_else(|| namespace_annotations.and_then(|a| a[INJECT].as_str()));
    match asked {
        Some("enabled") => Decision::Inject,
        Some(_) => Decision::Skip("injection disabled"),
        None => Decision::Skip("injection not asked for"),
    }
}

fn containers<'a>(spec: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    spec[field].as_array().into_iter().flatten()
}

/// The RFC 6902 operations injecting `pod`: `add` to the end of a list
/// that exists, or of the whole list where there is none.
pub fn patch(pod: &Value, images: &Images) -> Value {
    let spec = &pod["spec"];
    let mut operations = Vec::new();
    let mut append = |path: &str, present: bool, item: Value| {
        operations.push(match present {
            true => json!({"op": "add", "path": format!("{path}/-"), "value": item}),
            false => json!({"op": "add", "path": path, "value": [item]}),
        });
    };
    append("/spec/initContainers", spec["initContainers"].is_array(), init_container(images));
    append("/spec/containers", spec["containers"].is_array(), proxy_container(pod, images));
    append(
        "/spec/volumes",
        spec["volumes"].is_array(),
        json!({"name": CONFIG_VOLUME, "emptyDir": {"medium": "Memory"}}),
    );
    let annotations = [("rtcd.dev/injected-by", "rtcd-sample-injector"), ("rtcd.dev/proxy-version", VERSION)];
    if pod["metadata"]["annotations"].is_object() {
        for (key, value) in annotations {
            let path = format!("/metadata/annotations/{}", key.replace('~', "~0").replace('/', "~1"));
            operations.push(json!({"op": "add", "path": path, "value": value}));
        }
    } else {
        let all: serde_json::Map<String, Value> =
            annotations.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        operations.push(json!({"op": "add", "path": "/metadata/annotations", "value": all}));
    }
    Value::Array(operations)
}

fn init_container(images: &Images) -> Value {
    json!({
        "name": INIT,
        "image": images.init,
        "args": ["--incoming-proxy-port", "4143", "--outgoing-proxy-port", "4140", "--proxy-uid", "2102"],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}, "runAsUser": 0, "runAsNonRoot": false},
    })
}

/// The sidecar: its ports, the application's ports it fronts, its log
/// level, and the shared configuration volume.
fn proxy_container(pod: &Value, images: &Images) -> Value {
    let inbound: Vec<String> = containers(&pod["spec"], "containers")
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .filter_map(|p| p["containerPort"].as_i64())
        .map(|p| p.to_string())
        .collect();
    let level = pod["metadata"]["annotations"][LOG_LEVEL].as_str().unwrap_or("info");
    json!({
        "name": PROXY,
        "image": images.proxy,
        "ports": [{"name": "proxy", "containerPort": 4143}, {"name": "admin", "containerPort": 4191}],
        "env": [
            {"name": "RTCD_PROXY_LOG_LEVEL", "value": level},
            {"name": "RTCD_PROXY_INBOUND_PORTS", "value": inbound.join(",")},
        ],
        "volumeMounts": [{"name": CONFIG_VOLUME, "mountPath": "/var/run/rtcd"}],
        "securityContext": {"runAsUser": 2102, "allowPrivilegeEscalation": false},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn images() -> Images {
        Images { proxy: "proxy:1".into(), init: "init:1".into() }
    }

    #[test]
    fn the_pod_annotation_wins_over_the_namespace_and_nothing_is_injected_twice() {
        let enabled = json!({INJECT: "enabled"});
        let disabled = json!({INJECT: "disabled"});
        let pod = |annotations: Value| json!({"metadata": {"annotations": annotations}, "spec": {"containers": [{"name": "app"}]}});
        assert_eq!(decide(&pod(json!({})), Some(&enabled)), Decision::Inject);
        assert_eq!(decide(&pod(disabled.clone()), Some(&enabled)), Decision::Skip("injection disabled"));
        assert_eq!(decide(&pod(enabled.clone()), None), Decision::Inject);
        assert_eq!(decide(&pod(json!({})), None), Decision::Skip("injection not asked for"));
        let injected = json!({"spec": {"containers": [{"name": "app"}, {"name": PROXY}]}});
        assert_eq!(decide(&injected, Some(&enabled)), Decision::Skip("already injected"));
        let host = json!({"spec": {"hostNetwork": true, "containers": []}});
        assert_eq!(decide(&host, Some(&enabled)), Decision::Skip("hostNetwork pod"));
    }

    #[test]
    fn the_patch_applies_to_pods_with_and_without_the_lists_it_extends() {
        let bare = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app", "ports": [{"containerPort": 8080}, {"containerPort": 9090}]}]}});
        let full = json!({"metadata": {"name": "p", "annotations": {LOG_LEVEL: "debug"}}, "spec": {
            "initContainers": [{"name": "setup"}], "volumes": [{"name": "data"}], "containers": [{"name": "app"}]}});
        for pod in [bare, full] {
            let operations: json_patch::Patch = serde_json::from_value(patch(&pod, &images())).unwrap();
            let mut out = pod.clone();
            json_patch::patch(&mut out, &operations).unwrap();
            let names = |field: &str| -> Vec<String> {
                out["spec"][field]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["name"].as_str().unwrap().to_string())
                    .collect()
            };
            assert_eq!(names("initContainers").last().unwrap(), INIT);
            assert_eq!(names("containers"), ["app", PROXY]);
            assert_eq!(names("volumes").last().unwrap(), CONFIG_VOLUME);
            assert_eq!(out["metadata"]["annotations"]["rtcd.dev/injected-by"], "rtcd-sample-injector");
            assert_eq!(decide(&out, None), Decision::Skip("already injected"));
        }
        let operations: json_patch::Patch = serde_json::from_value(patch(&json!({"metadata": {"annotations": {LOG_LEVEL: "debug"}}, "spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}]}]}}), &images())).unwrap();
        let mut out = json!({"metadata": {"annotations": {LOG_LEVEL: "debug"}}, "spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}]}]}});
        json_patch::patch(&mut out, &operations).unwrap();
        assert_eq!(
            out["spec"]["containers"][1]["env"],
            json!([
            {"name": "RTCD_PROXY_LOG_LEVEL", "value": "debug"}, {"name": "RTCD_PROXY_INBOUND_PORTS", "value": "80"}])
        );
    }
}
