//! What an object uses in a quota's terms (kube's quota evaluators): one
//! of its resource's object count (`count/<resource>[.<group>]`, and the
//! legacy names `pods`, `configmaps`, ...), a Service's load balancers and
//! node ports, and a pod's compute requests and limits. Shared by the
//! admission plugin (what a write adds) and the quota controller (what a
//! namespace holds).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::runtime::quantity::Quantity;

/// Resource name → amount.
pub type Usage = BTreeMap<String, Quantity>;

/// Core resources counted under their plain name too.
const LEGACY_COUNTED: [&str; 7] = [
    "pods",
    "services",
    "configmaps",
    "secrets",
    "replicationcontrollers",
    "resourcequotas",
    "persistentvolumeclaims",
];

/// Compute resources a pod's containers ask for and quotas know by the
/// plain name (`cpu` is `requests.cpu`).
const STANDARD_COMPUTE: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

/// `count/<resource>` for core resources, `count/<resource>.<group>` else.
pub fn count_name(group: &str, plural: &str) -> String {
    match group {
        "" => format!("count/{plural}"),
        group => format!("count/{plural}.{group}"),
    }
}

/// Whether a pod has finished (it no longer uses anything).
pub fn is_terminal_pod(pod: &Value) -> bool {
    matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
}

/// What `object` of `plural` in `group` uses.
pub fn of(group: &str, plural: &str, object: &Value) -> Usage {
    let mut usage = Usage::new();
    if group.is_empty() && plural == "pods" && is_terminal_pod(object) {
        return usage;
    }
    let one = Quantity::from_milli(1000);
    usage.insert(count_name(group, plural), one);
    if group.is_empty() && LEGACY_COUNTED.contains(&plural) {
        usage.insert(plural.to_string(), one);
    }
    if group.is_empty() && plural == "services" {
        let kind = object["spec"]["type"].as_str().unwrap_or("ClusterIP");
        if kind == "LoadBalancer" {
            usage.insert("services.loadbalancers".into(), one);
        }
        if matches!(kind, "LoadBalancer" | "NodePort") {
            let ports = object["spec"]["ports"].as_array().map_or(0, Vec::len) as i128;
            usage.insert("services.nodeports".into(), Quantity::from_milli(ports * 1000));
        }
    }
    if group.is_empty() && plural == "pods" {
        usage.extend(pod_compute(&object["spec"]));
    }
    usage
}

/// A pod's requests and limits: its containers' sums, or the largest of
/// its init containers' where that is more (they run one at a time).
pub fn pod_compute(spec: &Value) -> Usage {
    let mut total = Usage::new();
    for kind in ["requests", "limits"] {
        let sum = sum_of(spec["containers"].as_array(), kind, |a, b| a.add(b));
        let init =
            sum_of(
                spec["initContainers"].as_array(),
                kind,
                |a, b| {
                    if b.cmp_value(a).is_gt() { *b } else { *a }
                },
            );
        for (resource, amount) in sum.iter().chain(init.iter()) {
            let key = format!("{kind}.{resource}");
            let keep = match total.get(&key) {
                Some(current) => amount.cmp_value(current).is_gt(),
                None => true,
            };
            if keep {
                total.insert(key, *amount);
            }
        }
    }
    for resource in STANDARD_COMPUTE {
        if let Some(request) = total.get(&format!("requests.{resource}")).cloned() {
            total.insert(resource.to_string(), request);
        }
    }
    total
}

fn sum_of(
    containers: Option<&Vec<Value>>,
    kind: &str,
    combine: impl Fn(&Quantity, &Quantity) -> Quantity,
) -> Usage {
    let mut out = Usage::new();
    for container in containers.into_iter().flatten() {
        for (resource, amount) in container["resources"][kind].as_object().into_iter().flatten() {
            let text = amount.as_str().map(str::to_string).unwrap_or_else(|| amount.to_string());
            let Ok(amount) = Quantity::parse(&text) else { continue };
            let combined = match out.get(resource) {
                Some(current) => combine(current, &amount),
                None => amount,
            };
            out.insert(resource.clone(), combined);
        }
    }
    out
}

/// The compute resources a quota names that a pod must state in every
/// container before the quota can account for it (kube's "must specify").
pub fn unstated(spec: &Value, hard: &[&str]) -> Vec<String> {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|f| spec[*f].as_array().into_iter().flatten())
        .collect();
    let mut missing = Vec::new();
    for name in hard {
        let (kind, resource) = match name.split_once('.') {
            Some((kind @ ("requests" | "limits"), resource)) => (kind, resource),
            _ if STANDARD_COMPUTE.contains(name) => ("requests", *name),
            _ => continue,
        };
        if !matches!(resource, "cpu" | "memory") {
            continue;
        }
        if containers.iter().any(|c| c["resources"][kind][resource].is_null()) {
            missing.push(name.to_string());
        }
    }
    missing.sort();
    missing
}

/// kube's `prettyPrint` of a resource list: `a=1,b=2`, sorted.
pub fn print(usage: &Usage) -> String {
    usage.iter().map(|(k, v)| format!("{k}={}", v.canonical())).collect::<Vec<_>>().join(",")
}

/// A quota's `hard` or `used` as a Usage (unparsable amounts left out).
pub fn read(list: &Value) -> Usage {
    list.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
            Quantity::parse(&text).ok().map(|q| (k.clone(), q))
        })
        .collect()
}

/// A Usage as a quota status list.
pub fn to_json(usage: &Usage) -> Value {
    Value::Object(usage.iter().map(|(k, v)| (k.clone(), Value::String(v.canonical()))).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pods_count_their_containers_sums_or_their_largest_init_container() {
        let pod = json!({"spec": {
        "initContainers": [{"resources": {"requests": {"cpu": "900m"}}}],
        "containers": [
            {"resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}},
            {"resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}}},
        ]}});
        let usage = of("", "pods", &pod);
        assert_eq!(
            print(&usage),
            "count/pods=1,cpu=900m,limits.memory=256Mi,memory=128Mi,pods=1,requests.cpu=900m,requests.memory=128Mi"
        );
        assert!(of("", "pods", &json!({"status": {"phase": "Succeeded"}})).is_empty());
        assert_eq!(print(&of("apps", "deployments", &json!({}))), "count/deployments.apps=1");
        let lb = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}});
        assert_eq!(
            print(&of("", "services", &lb)),
            "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"
        );
    }

    #[test]
    fn a_quota_on_compute_wants_every_container_to_state_it() {
        let spec = json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}, {"resources": {}}]});
        assert_eq!(
            unstated(&spec, &["requests.cpu", "limits.memory", "pods", "count/configmaps"]),
            ["limits.memory", "requests.cpu"]
        );
        assert!(
            unstated(&json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]}), &["cpu"])
                .is_empty()
        );
    }
}
