//! `pods/resize`: kube's in-place pod resize, what `kubectl patch
//! --subresource resize` and the vertical pod autoscaler write. Only the
//! containers' cpu and memory requests and limits (and their resize
//! policies) change through it, never the pod's QoS class; the kubelet then
//! applies the new sizes. Nothing else a resize sends is kept.

use serde_json::{Value, json};

use crate::errors::Cause;
use crate::registry::kinds::field;
use crate::runtime::quantity::Quantity;

/// The resources a resize may change.
const MUTABLE: [&str; 2] = ["cpu", "memory"];
const CONTAINER_LISTS: [&str; 2] = ["containers", "initContainers"];

/// kube's `dropNonResizeUpdates`: the stored spec, with each container's
/// resources and resize policy as the resize sent them (matched by name).
pub fn keep_only_resources(new: &mut Value, old: &Value) {
    let mut spec = old["spec"].clone();
    for list in CONTAINER_LISTS {
        let sent = new["spec"][list].as_array().cloned().unwrap_or_default();
        for container in spec[list].as_array_mut().into_iter().flatten() {
            let Some(resized) = sent.iter().find(|c| c["name"] == container["name"]) else { continue };
            for key in ["resources", "resizePolicy"] {
                match resized.get(key) {
                    Some(value) => container[key] = value.clone(),
                    None => drop(container.as_object_mut().map(|c| c.remove(key))),
                }
            }
        }
    }
    new["spec"] = spec;
}

/// kube's `ValidatePodResize` for what a resize can still get wrong:
/// removing a request or limit, changing anything but cpu and memory, a
/// request above its limit, a different QoS class (`qos_class` computes
/// it from a spec).
pub fn causes(new: &Value, old: &Value, qos_class: fn(&Value) -> &'static str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for list in CONTAINER_LISTS {
        let old_containers = old["spec"][list].as_array().map(Vec::as_slice).unwrap_or_default();
        for (i, container) in new["spec"][list].as_array().into_iter().flatten().enumerate() {
            let at = format!("spec.{list}[{i}].resources");
            let was = old_containers.get(i).map(|c| &c["resources"]).unwrap_or(&Value::Null);
            causes.extend(container_causes(&container["resources"], was, &at));
        }
    }
    if !only_cpu_and_memory_changed(new, old) {
        causes.push(field::forbidden("spec", "only cpu and memory resources are mutable"));
    }
    let class = old["status"]["qosClass"].as_str().unwrap_or_else(|| qos_class(&old["spec"]));
    if qos_class(&new["spec"]) != class {
        causes.push(field::invalid(
            "spec",
            &json!(class),
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    causes
}

fn container_causes(resources: &Value, was: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (kind, what) in [("requests", "resource requests"), ("limits", "resource limits")] {
        let removed =
            was[kind].as_object().into_iter().flatten().any(|(name, _)| resources[kind].get(name).is_none());
        if removed {
            causes.push(field::forbidden(&format!("{at}.{kind}"), &format!("{what} cannot be removed")));
        }
    }
    for name in MUTABLE {
        let quantity =
            |kind: &str| resources[kind][name].as_str().and_then(|q| Quantity::parse(q).ok().map(|p| (q, p)));
        if let (Some((request, asked)), Some((limit, most))) = (quantity("requests"), quantity("limits"))
            && asked.cmp_value(&most).is_gt()
        {
            causes.push(field::invalid(
                &format!("{at}.requests"),
                &json!(request),
                &format!("must be less than or equal to {name} limit of {limit}"),
            ));
        }
    }
    causes
}

/// Whether the specs differ only in the containers' cpu and memory.
fn only_cpu_and_memory_changed(new: &Value, old: &Value) -> bool {
    let without_mutable = |pod: &Value| {
        let mut spec = pod["spec"].clone();
        for list in CONTAINER_LISTS {
            for container in spec[list].as_array_mut().into_iter().flatten() {
                for kind in ["requests", "limits"] {
                    let amounts = container.get_mut("resources").and_then(|r| r.get_mut(kind));
                    if let Some(amounts) = amounts.and_then(Value::as_object_mut) {
                        amounts.retain(|name, _| !MUTABLE.contains(&name.as_str()));
                        if amounts.is_empty() {
                            drop(container["resources"].as_object_mut().map(|r| r.remove(kind)));
                        }
                    }
                }
                container.as_object_mut().map(|c| c.remove("resizePolicy"));
                if container["resources"].as_object().is_some_and(|r| r.is_empty()) {
                    container.as_object_mut().map(|c| c.remove("resources"));
                }
            }
        }
        spec
    };
    without_mutable(new) == without_mutable(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qos(spec: &Value) -> &'static str {
        match spec["containers"][0]["resources"]["limits"].is_object() {
            true => "Guaranteed",
            false => "Burstable",
        }
    }

    fn pod(resources: Value) -> Value {
        json!({"spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx", "resources": resources}]}})
    }

    #[test]
    fn a_resize_keeps_only_container_resources() {
        let old = pod(json!({"requests": {"cpu": "100m"}}));
        let mut new = old.clone();
        new["spec"]["nodeName"] = json!("n2");
        new["spec"]["containers"][0]["image"] = json!("evil");
        new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("200m");
        keep_only_resources(&mut new, &old);
        assert_eq!(new["spec"]["nodeName"], "n1");
        assert_eq!(new["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(new["spec"]["containers"][0]["resources"]["requests"]["cpu"], "200m");
        assert!(causes(&new, &old, qos).is_empty());
    }

    #[test]
    fn kube_refuses_what_a_resize_may_not_do() {
        let texts = |causes: Vec<Cause>| {
            causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect::<Vec<_>>()
        };
        let old = pod(json!({"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}}));
        let removed = pod(json!({"requests": {"cpu": "300m"}, "limits": {"cpu": "200m"}}));
        assert_eq!(
            texts(causes(&removed, &old, qos)),
            [
                "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed",
                "spec.containers[0].resources.requests: Invalid value: \"300m\": must be less than or equal to cpu limit of 200m",
            ]
        );
        let gpu = pod(
            json!({"requests": {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"}, "limits": {"cpu": "200m"}}),
        );
        assert_eq!(
            texts(causes(&gpu, &old, qos)),
            ["spec: Forbidden: only cpu and memory resources are mutable"]
        );
        let unlimited = pod(json!({"requests": {"cpu": "100m"}}));
        let limited = pod(json!({"requests": {"cpu": "100m"}, "limits": {"cpu": "100m"}}));
        let got = texts(causes(&limited, &unlimited, qos));
        assert_eq!(
            got,
            ["spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing"]
        );
    }
}
