//! Pods: created Pending (nothing schedules or runs them here); selectable
//! by node, phase, IP and the other fields kubelets and controllers use.
//! Deleted gracefully: a pod bound to a node is marked and left to its
//! kubelet for its grace period; one never scheduled goes at once.

use k8s_openapi::api::core::v1 as core;
use serde_json::{Value, json};

use super::Kind;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{
    POD_BINDING, POD_EPHEMERAL_CONTAINERS, POD_EVICTION, POD_RESIZE, Resource, Strategy, defaults,
};
use crate::runtime::meta;
use crate::selector::{FieldLabels, Refusal, attrs};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::Pod>(
        Resource::new("", "Pod", "pods")
            .short_names(&["po"])
            .in_all()
            .with_status()
            .returns_deleted_object()
            .with_actions(&[POD_BINDING, POD_EVICTION, POD_EPHEMERAL_CONTAINERS, POD_RESIZE]),
        PodStrategy,
    )
}

pub static FIELDS: FieldLabels = FieldLabels {
    accepted: &[
        "metadata.name",
        "metadata.namespace",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    ],
    refusal: Refusal::NotSupported,
    // Old v1 clients ask for pods by `spec.host`.
    aliases: &[("spec.host", "spec.nodeName")],
    cluster_scoped: false,
    value: field_value,
};

fn field_value(object: &Value, field: &str) -> Option<String> {
    match field {
        "spec.nodeName" | "spec.host" => Some(attrs::text(object, &["spec", "nodeName"])),
        "spec.restartPolicy" => Some(attrs::text(object, &["spec", "restartPolicy"])),
        "spec.schedulerName" => Some(attrs::text(object, &["spec", "schedulerName"])),
        "spec.serviceAccountName" => Some(attrs::text(object, &["spec", "serviceAccountName"])),
        "spec.hostNetwork" => Some(attrs::boolean(object, &["spec", "hostNetwork"])),
        "status.phase" => Some(attrs::text(object, &["status", "phase"])),
        "status.podIP" => Some(pod_ip(object)),
        "status.nominatedNodeName" => Some(attrs::text(object, &["status", "nominatedNodeName"])),
        _ => None,
    }
}

/// kube reads the primary IP from `status.podIPs[0]`; v1 objects written
/// with only `status.podIP` convert to that same list.
fn pod_ip(object: &Value) -> String {
    object["status"]["podIPs"][0]["ip"]
        .as_str()
        .map_or_else(|| attrs::text(object, &["status", "podIP"]), str::to_string)
}

#[derive(Debug)]
struct PodStrategy;

impl Strategy for PodStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_POD)
    }

    /// kube's defaults of a Pod and its spec (requests from limits,
    /// pull policies, probes, volumes...).
    fn set_defaults(&self, object: &mut Value) {
        defaults::pod_spec::pod(object);
    }

    fn prepare_for_create(&self, object: &mut Value) {
        let qos = qos_class(&object["spec"]);
        object["status"] = json!({"phase": "Pending", "qosClass": qos});
    }

    /// kube's `CheckGracefulDelete` of pods: the period asked for, else
    /// the pod's own; nothing to wait for when no node ever ran it or it
    /// has finished.
    fn grace_period(&self, pod: &Value, requested: Option<i64>) -> Option<i64> {
        let own = pod["spec"]["terminationGracePeriodSeconds"].as_i64();
        let unscheduled = pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty);
        let finished = matches!(pod["status"]["phase"].as_str(), Some("Failed" | "Succeeded"));
        let period = if unscheduled || finished { 0 } else { requested.or(own).unwrap_or(0) };
        Some(if period < 0 { 1 } else { period })
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        super::field::refuse("Pod", new, spec_update_causes(&new["spec"], &old["spec"]))
    }

    fn validate_subresource_update(
        &self,
        sub: Option<&str>,
        new: &Value,
        old: &Value,
    ) -> Result<(), ApiError> {
        match sub {
            Some("ephemeralcontainers") => {
                super::field::refuse("Pod", new, ephemeral_container_causes(&new["spec"], &old["spec"]))
            }
            Some("resize") => {
                super::field::refuse("Pod", new, super::pod_resize::causes(new, old, qos_class))
            }
            _ => self.validate_update(new, old),
        }
    }

    /// A resize keeps only the containers' resources of what it sent, and
    /// counts as a new generation of the pod when it changed them.
    fn prepare_subresource_update(&self, subresource: &str, new: &mut Value, old: &Value) {
        if subresource != "resize" {
            return;
        }
        super::pod_resize::keep_only_resources(new, old);
        if new["spec"] != old["spec"] {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(1);
            new["metadata"]["generation"] = json!(generation + 1);
        }
    }

    fn field_labels(&self) -> &'static FieldLabels {
        &FIELDS
    }

    fn printer(&self) -> &'static Printer {
        &table::POD
    }
}

/// What a live Pod's spec may change, as kube's message lists it.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// kube's pod update rules (`ValidatePodUpdate`): containers neither added
/// nor removed, images set, the deadline only shortened, tolerations only
/// added, scheduling gates only removed, a gated pod's node selector only
/// extended; any other change to the spec is forbidden.
fn spec_update_causes(new: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for list in ["containers", "initContainers"] {
        let field = format!("spec.{list}");
        if items(&new[list]).len() != items(&old[list]).len() {
            causes.push(forbidden(&field, "pod updates may not add or remove containers"));
            return causes;
        }
        causes.extend(image_causes(&new[list], &field));
    }
    causes.extend(deadline_causes(&new["activeDeadlineSeconds"], &old["activeDeadlineSeconds"]));
    causes.extend(toleration_causes(&new["tolerations"], &old["tolerations"]));
    causes.extend(gate_causes(&new["schedulingGates"], &old["schedulingGates"]));
    let (munged, selector_causes) = munge(new, old);
    causes.extend(selector_causes);
    if !same(&munged, old) {
        let message =
            format!("pod updates may not change fields other than {UPDATABLE}\n{}", spec_diff(old, &munged));
        causes.push(forbidden("spec", &message));
    }
    causes
}

/// kube's QoS class: Guaranteed when every container limits CPU and memory
/// and requests exactly that, BestEffort when none asks for CPU or memory,
/// Burstable otherwise.
fn qos_class(spec: &Value) -> &'static str {
    const COMPUTE: [&str; 2] = ["cpu", "memory"];
    let containers: Vec<&Value> =
        ["initContainers", "containers"].iter().flat_map(|list| items(&spec[*list]).iter()).collect();
    let quantity = |c: &Value, kind: &str, r: &str| {
        c["resources"][kind][r].as_str().and_then(|q| crate::runtime::quantity::Quantity::parse(q).ok())
    };
    let asks = containers.iter().any(|c| {
        COMPUTE.iter().any(|r| {
            quantity(c, "requests", r).is_some_and(|q| !q.is_zero()) || quantity(c, "limits", r).is_some()
        })
    });
    if !asks {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        COMPUTE.iter().all(|r| match (quantity(c, "requests", r), quantity(c, "limits", r)) {
            (Some(request), Some(limit)) => request == limit,
            (None, Some(_)) => true,
            _ => false,
        })
    });
    if guaranteed { "Guaranteed" } else { "Burstable" }
}

/// What an ephemeral container may not set: it must not be relied on for
/// the pod's own service (kube's list of allowed fields, turned around).
const NOT_FOR_EPHEMERAL: &[&str] =
    &["ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources", "resizePolicy"];

/// kube's ValidatePodEphemeralContainersUpdate: ephemeral containers are
/// only added, each named uniquely among all the pod's containers, with an
/// image, none of the fields a service container has, and a target that
/// exists.
fn ephemeral_container_causes(new: &Value, old: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let list = "spec.ephemeralContainers";
    let regular: Vec<&str> = items(&new["containers"])
        .iter()
        .chain(items(&new["initContainers"]))
        .filter_map(|c| c["name"].as_str())
        .collect();
    let mut seen: Vec<&str> = regular.clone();
    for (i, container) in items(&new["ephemeralContainers"]).iter().enumerate() {
        let at = format!("{list}[{i}]");
        match container["name"].as_str().unwrap_or_default() {
            "" => causes.push(Cause {
                reason: "FieldValueRequired",
                field: format!("{at}.name"),
                message: "Required value".into(),
            }),
            name if seen.contains(&name) => causes.push(Cause {
                reason: "FieldValueDuplicate",
                field: format!("{at}.name"),
                message: format!("Duplicate value: \"{name}\""),
            }),
            name => seen.push(name),
        }
        if container["image"].as_str().is_none_or(|i| i.trim().is_empty()) {
            causes.push(Cause {
                reason: "FieldValueRequired",
                field: format!("{at}.image"),
                message: "Required value".into(),
            });
        }
        for field in NOT_FOR_EPHEMERAL {
            if container.get(*field).is_some_and(|v| !is_empty(v)) {
                causes.push(forbidden(&format!("{at}.{field}"), "cannot be set for an Ephemeral Container"));
            }
        }
        if let Some(target) = container["targetContainerName"].as_str().filter(|t| !t.is_empty())
            && !regular.contains(&target)
        {
            causes.push(Cause {
                reason: "FieldValueNotFound",
                field: format!("{at}.targetContainerName"),
                message: format!("Not found: \"{target}\""),
            });
        }
    }
    for was in items(&old["ephemeralContainers"]) {
        let name = was["name"].as_str().unwrap_or_default();
        match items(&new["ephemeralContainers"]).iter().find(|c| c["name"] == was["name"]) {
            None => causes.push(forbidden(
                list,
                &format!("existing ephemeral containers \"{name}\" may not be removed\n"),
            )),
            Some(now) if !same(now, was) => causes.push(forbidden(
                &format!("{list}.{name}"),
                &format!("existing ephemeral containers \"{name}\" may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    causes
}

fn items(list: &Value) -> &[Value] {
    list.as_array().map_or(&[], Vec::as_slice)
}

fn forbidden(field: &str, detail: &str) -> Cause {
    Cause { reason: "FieldValueForbidden", field: field.into(), message: format!("Forbidden: {detail}") }
}

fn invalid(field: &str, value: &Value, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid",
        field: field.into(),
        message: format!("Invalid value: {value}: {detail}"),
    }
}

/// Every container keeps an image, without surrounding blanks.
fn image_causes(containers: &Value, field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, container) in items(containers).iter().enumerate() {
        let image = container["image"].as_str().unwrap_or_default();
        let field = format!("{field}[{i}].image");
        if image.is_empty() {
            causes.push(Cause {
                reason: "FieldValueRequired",
                field: field.clone(),
                message: "Required value".into(),
            });
        }
        if image.trim() != image {
            causes.push(invalid(&field, &json!(image), "must not have leading or trailing whitespace"));
        }
    }
    causes
}

/// `activeDeadlineSeconds` may be set, or lowered, never raised or unset.
fn deadline_causes(new: &Value, old: &Value) -> Vec<Cause> {
    const FIELD: &str = "spec.activeDeadlineSeconds";
    match (new.as_i64(), old.as_i64()) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            vec![invalid(FIELD, new, "must be between 0 and 2147483647, inclusive")]
        }
        (Some(n), Some(o)) if o < n => {
            vec![invalid(FIELD, new, "must be less than or equal to previous value")]
        }
        (None, Some(_)) => {
            vec![invalid(FIELD, &Value::Null, "must not update from a positive integer to nil value")]
        }
        _ => Vec::new(),
    }
}

/// Every existing toleration stays, only its `tolerationSeconds` may change.
fn toleration_causes(new: &Value, old: &Value) -> Vec<Cause> {
    let without_seconds = |t: &Value| {
        let mut t = t.clone();
        meta::remove_field(&mut t, "tolerationSeconds");
        t
    };
    let new: Vec<Value> = items(new).iter().map(without_seconds).collect();
    let kept = items(old).iter().map(without_seconds).all(|o| new.iter().any(|n| same(n, &o)));
    if kept {
        return Vec::new();
    }
    vec![forbidden(
        "spec.tolerations",
        "existing toleration can not be modified except its tolerationSeconds",
    )]
}

/// Scheduling gates may only go.
fn gate_causes(new: &Value, old: &Value) -> Vec<Cause> {
    let old: Vec<&Value> = items(old).iter().map(|g| &g["name"]).collect();
    items(new)
        .iter()
        .enumerate()
        .filter(|(_, gate)| !old.contains(&&gate["name"]))
        .map(|(i, gate)| {
            let name = gate["name"].as_str().unwrap_or_default();
            let detail = format!("only deletion is allowed, but found new scheduling gate '{name}'");
            forbidden(&format!("spec.schedulingGates[{i}].name"), &detail)
        })
        .collect()
}

/// The new spec with what may change taken from the old one, so that what
/// is left to compare must not have changed; with the refusals of a gated
/// pod's node selector, which may only grow.
fn munge(new: &Value, old: &Value) -> (Value, Vec<Cause>) {
    let mut munged = new.clone();
    for list in ["containers", "initContainers"] {
        if let Some(containers) = munged[list].as_array_mut() {
            for (container, was) in containers.iter_mut().zip(items(&old[list])) {
                container["image"] = was["image"].clone();
            }
        }
    }
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        set(&mut munged, field, &old[field]);
    }
    let grace = "terminationGracePeriodSeconds";
    if old[grace].as_i64().is_some_and(|g| g < 0) && new[grace].as_i64() == Some(1) {
        set(&mut munged, grace, &old[grace]);
    }
    let mut causes = Vec::new();
    if !items(&old["schedulingGates"]).is_empty() && !same(&new["nodeSelector"], &old["nodeSelector"]) {
        let kept = old["nodeSelector"]
            .as_object()
            .is_none_or(|was| was.iter().all(|(k, v)| new["nodeSelector"].get(k) == Some(v)));
        if !kept {
            let detail = "only additions to spec.nodeSelector are allowed (no mutations or deletions)";
            causes.push(invalid("spec.nodeSelector", &new["nodeSelector"], detail));
        }
        set(&mut munged, "nodeSelector", &old["nodeSelector"]);
    }
    (munged, causes)
}

/// Sets a spec field to `value`, or removes it when that is absent.
fn set(spec: &mut Value, field: &str, value: &Value) {
    match spec.as_object_mut() {
        Some(fields) if value.is_null() => {
            fields.remove(field);
        }
        Some(fields) => {
            fields.insert(field.to_string(), value.clone());
        }
        None => {}
    }
}

/// kube's semantic equality over JSON: an empty list or map, null and
/// absence are the same (Go's nil and empty slices and maps).
fn same(a: &Value, b: &Value) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields.iter().map(|(k, v)| (k.clone(), normalize(v))).filter(|(_, v)| !is_empty(v)).collect(),
        ),
        Value::Array(values) => Value::Array(values.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(values) => values.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}

/// Which spec fields differ, old (`-`) and new (`+`), in the shape of the
/// diff kube appends (its exact text comes from Go's cmp package).
fn spec_diff(old: &Value, new: &Value) -> String {
    let (old, new) = (normalize(old), normalize(new));
    let empty = serde_json::Map::new();
    let fields = |v: &Value| v.as_object().cloned().unwrap_or_else(|| empty.clone());
    let (old, new) = (fields(&old), fields(&new));
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    let mut lines = vec!["  core.PodSpec{".to_string()];
    for name in names {
        if old.get(name) != new.get(name) {
            if let Some(was) = old.get(name) {
                lines.push(format!("- \t{name}: {was},"));
            }
            if let Some(now) = new.get(name) {
                lines.push(format!("+ \t{name}: {now},"));
            }
        }
    }
    lines.push("  }".to_string());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selector::FieldSelector;

    fn sel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap()
    }

    fn spec(extra: Value) -> Value {
        let mut spec = json!({"containers": [{"name": "a", "image": "nginx:1"}]});
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        spec
    }

    fn messages(new: &Value, old: &Value) -> Vec<String> {
        spec_update_causes(new, old).iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
    }

    #[test]
    fn live_pods_change_only_what_kube_lets_change() {
        let old =
            spec(json!({"activeDeadlineSeconds": 30, "tolerations": [{"key": "k", "operator": "Exists"}]}));
        // Images, a shorter deadline, more tolerations: allowed.
        let mut new = old.clone();
        new["containers"][0]["image"] = json!("nginx:2");
        new["activeDeadlineSeconds"] = json!(10);
        new["tolerations"] =
            json!([{"key": "k", "operator": "Exists", "tolerationSeconds": 5}, {"key": "z"}]);
        assert!(messages(&new, &old).is_empty(), "{:?}", messages(&new, &old));
        // Empty lists are absent lists.
        let mut new = old.clone();
        new["volumes"] = json!([]);
        assert!(messages(&new, &old).is_empty());

        let mut added = old.clone();
        added["containers"] = json!([{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}]);
        assert_eq!(
            messages(&added, &old),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        let mut removed = old.clone();
        removed["containers"] = json!([]);
        assert_eq!(
            messages(&removed, &old),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );

        let mut longer = old.clone();
        longer["activeDeadlineSeconds"] = json!(60);
        assert_eq!(
            messages(&longer, &old),
            ["spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"]
        );
        let mut blank = old.clone();
        blank["containers"][0]["image"] = json!(" x");
        assert_eq!(
            messages(&blank, &old),
            ["spec.containers[0].image: Invalid value: \" x\": must not have leading or trailing whitespace"]
        );
        let mut gated = old.clone();
        gated["schedulingGates"] = json!([{"name": "g"}]);
        assert_eq!(
            messages(&gated, &old),
            [
                "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g'"
            ]
        );
        let mut policy = old.clone();
        policy["restartPolicy"] = json!("Never");
        let got = messages(&policy, &old);
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with(&format!(
            "spec: Forbidden: pod updates may not change fields other than {UPDATABLE}\n"
        )));
        assert!(got[0].contains("+ \trestartPolicy: \"Never\","), "{}", got[0]);
    }

    #[test]
    fn gated_pods_may_extend_their_node_selector() {
        let old = spec(json!({"schedulingGates": [{"name": "g"}], "nodeSelector": {"a": "b"}}));
        let mut new = old.clone();
        new["nodeSelector"] = json!({"a": "b", "c": "d"});
        new["schedulingGates"] = json!([]);
        assert!(messages(&new, &old).is_empty());
        new["nodeSelector"] = json!({"a": "z"});
        assert_eq!(
            messages(&new, &old),
            [
                "spec.nodeSelector: Invalid value: {\"a\":\"z\"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)"
            ]
        );
    }

    #[test]
    fn requests_default_to_limits_and_decide_the_qos_class() {
        let mut pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
            {"name": "b", "resources": {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m"}}},
            {"name": "c"},
        ]}});
        PodStrategy.set_defaults(&mut pod);
        let containers = &pod["spec"]["containers"];
        assert_eq!(containers[0]["resources"]["requests"], json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(containers[1]["resources"]["requests"], json!({"cpu": "100m"}));
        assert!(containers[2].get("resources").is_none());
        assert_eq!(qos_class(&pod["spec"]), "Burstable");
        let guaranteed = json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"},
            "requests": {"cpu": "1000m", "memory": "1024Mi"}}}]});
        assert_eq!(qos_class(&guaranteed), "Guaranteed");
        assert_eq!(qos_class(&json!({"containers": [{"name": "x"}]})), "BestEffort");
    }

    #[test]
    fn pod_fields() {
        let running = json!({
            "metadata": {"name": "p1", "namespace": "default"},
            "spec": {"nodeName": "node-a", "restartPolicy": "Always", "hostNetwork": true},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}
        });
        let pending =
            json!({"metadata": {"name": "p2", "namespace": "default"}, "status": {"phase": "Pending"}});
        let f = sel("status.phase=Running");
        assert!(f.matches(&FIELDS, &running));
        assert!(!f.matches(&FIELDS, &pending));
        assert!(sel("status.phase!=Running").matches(&FIELDS, &pending));
        assert!(sel("status.phase!=Succeeded,status.phase!=Failed").matches(&FIELDS, &running));
        assert!(sel("spec.nodeName=node-a").matches(&FIELDS, &running));
        assert!(sel("spec.host=node-a").matches(&FIELDS, &running));
        assert!(sel("spec.nodeName=").matches(&FIELDS, &pending));
        assert!(sel("spec.hostNetwork=true").matches(&FIELDS, &running));
        assert!(sel("spec.hostNetwork=false").matches(&FIELDS, &pending));
        assert!(sel("status.podIP=10.0.0.1").matches(&FIELDS, &running));
        // Accepted, but kube has no such attribute: it reads as "".
        assert!(!sel("status.podIPs=10.0.0.1").matches(&FIELDS, &running));
        assert!(sel("status.podIPs=").matches(&FIELDS, &running));
        assert_eq!(FIELDS.value(&running, "status.podIPs"), None);
        let legacy = json!({"status": {"podIP": "10.0.0.9"}});
        assert_eq!(FIELDS.value(&legacy, "status.podIP").as_deref(), Some("10.0.0.9"));
    }
}
