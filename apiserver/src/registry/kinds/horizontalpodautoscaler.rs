//! autoscaling HorizontalPodAutoscalers, served in v2 and v1: one set of objects, stored in
//! autoscaling/v2 (kube's storage version) and read through v1 converted, as kube does for the
//! CPU target (`targetCPUUtilizationPercentage` is v2's CPU utilization metric). kube's v2
//! defaults: one replica at least, a CPU utilization target of 80% when no metric is given, and
//! kube's scaling rules filled in wherever a `behavior` leaves them out. The scaling itself is
//! kube-controller-manager's HPA controller's work.
//!
//! Not carried into v1 (kube carries them in `autoscaling.alpha.kubernetes.io/*` annotations):
//! metrics other than CPU utilization, `behavior` and status conditions; an HPA that has them
//! and is then replaced through v1 loses them.

use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
use serde_json::{Map, Value, json};

use super::{Kind, field};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy, defaults};
use crate::storage::{ReadView, VersionView};
use crate::table::{self, Printer};

const GROUP: &str = "autoscaling";
const KIND: &str = "HorizontalPodAutoscaler.autoscaling";
const V1: &str = "autoscaling/v1";
const V2: &str = "autoscaling/v2";
/// kube's DefaultCPUUtilization.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

fn resource(version: &str) -> Resource {
    let mut resource = Resource::new(GROUP, "HorizontalPodAutoscaler", "horizontalpodautoscalers")
        .short_names(&["hpa"])
        .in_all()
        .with_status();
    resource.version = version.to_owned();
    resource
}

/// autoscaling/v2, as stored.
pub fn v2() -> Kind {
    Kind::typed::<autoscaling_v2::HorizontalPodAutoscaler>(resource("v2"), HpaStrategy { version: 2 })
}

/// autoscaling/v1, converted from and to v2.
pub fn v1() -> Kind {
    let mut kind =
        Kind::typed::<autoscaling_v1::HorizontalPodAutoscaler>(resource("v1"), HpaStrategy { version: 1 });
    kind.view = ReadView::new(Arc::new(V1View));
    kind
}

#[derive(Debug)]
struct HpaStrategy {
    version: u8,
}

impl Strategy for HpaStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        match self.version {
            1 => Some(&nodes::AUTOSCALING_V1_HORIZONTAL_POD_AUTOSCALER),
            _ => Some(&nodes::AUTOSCALING_V2_HORIZONTAL_POD_AUTOSCALER),
        }
    }

    fn set_defaults(&self, object: &mut Value) {
        match self.version {
            1 => {
                if let Some(spec) = defaults::object_at(object, "spec") {
                    defaults::pointer(spec, "minReplicas", json!(1));
                }
            }
            _ => default_v2(object),
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, object, causes(&object["spec"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's SetDefaults_HorizontalPodAutoscaler (autoscaling/v2).
fn default_v2(object: &mut Value) {
    let Some(spec) = defaults::object_at(object, "spec") else { return };
    defaults::pointer(spec, "minReplicas", json!(1));
    if spec["metrics"].as_array().is_none_or(Vec::is_empty) {
        spec["metrics"] = json!([cpu_utilization(DEFAULT_CPU_UTILIZATION)]);
    }
    if let Some(behavior) = defaults::present(spec, "behavior") {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ]});
        let down = json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]});
        fill_rules(behavior, "scaleUp", up);
        fill_rules(behavior, "scaleDown", down);
    }
}

/// kube's copyHPAScalingRules over its defaults: what the rules leave out, the default's.
fn fill_rules(behavior: &mut Value, direction: &str, mut default: Value) {
    if let Some(given) = behavior[direction].as_object() {
        for (key, value) in given.iter().filter(|(_, v)| !v.is_null()) {
            default[key] = value.clone();
        }
    }
    behavior[direction] = default;
}

fn cpu_utilization(percent: i64) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}})
}

/// kube's validateHorizontalPodAutoscalerSpec, its replica bounds and target.
fn causes(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let min = spec["minReplicas"].as_i64();
    if let Some(min) = min.filter(|m| *m < 1) {
        causes.push(field::invalid("spec.minReplicas", &json!(min), "must be greater than or equal to 1"));
    }
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if max < 1 {
        causes.push(field::invalid("spec.maxReplicas", &json!(max), "must be greater than 0"));
    }
    if min.is_some_and(|min| max < min) {
        causes.push(field::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    for key in ["kind", "name"] {
        if spec["scaleTargetRef"][key].as_str().is_none_or(str::is_empty) {
            causes.push(field::required(&format!("spec.scaleTargetRef.{key}"), ""));
        }
    }
    if let Some(percent) = spec["targetCPUUtilizationPercentage"].as_i64().filter(|p| *p < 1) {
        causes.push(field::invalid(
            "spec.targetCPUUtilizationPercentage",
            &json!(percent),
            "must be greater than or equal to 1",
        ));
    }
    causes
}

/// autoscaling/v1 over objects stored in v2.
struct V1View;

#[async_trait]
impl VersionView for V1View {
    async fn read(&self, objects: Vec<Value>) -> Result<Vec<Value>, String> {
        Ok(objects.into_iter().map(to_v1).collect())
    }

    async fn store(&self, object: Value) -> Result<Value, String> {
        let mut stored = to_v2(object);
        default_v2(&mut stored);
        Ok(stored)
    }
}

/// A v2 HPA as v1 shows it: its CPU utilization target and current usage.
fn to_v1(hpa: Value) -> Value {
    let cpu = |metric: &Value| metric["type"] == "Resource" && metric["resource"]["name"] == "cpu";
    let mut spec = common(&hpa["spec"], &["scaleTargetRef", "minReplicas", "maxReplicas"]);
    let target = hpa["spec"]["metrics"].as_array().into_iter().flatten().find(|m| cpu(m));
    if let Some(percent) = target.and_then(|m| m["resource"]["target"]["averageUtilization"].as_i64()) {
        spec.insert("targetCPUUtilizationPercentage".into(), json!(percent));
    }
    let mut status = common(
        &hpa["status"],
        &["observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"],
    );
    let current = hpa["status"]["currentMetrics"].as_array().into_iter().flatten().find(|m| cpu(m));
    if let Some(percent) = current.and_then(|m| m["resource"]["current"]["averageUtilization"].as_i64()) {
        status.insert("currentCPUUtilizationPercentage".into(), json!(percent));
    }
    json!({"apiVersion": V1, "kind": "HorizontalPodAutoscaler", "metadata": hpa["metadata"], "spec": spec, "status": status})
}

/// A v1 HPA stored as v2: its CPU target as a CPU utilization metric.
fn to_v2(hpa: Value) -> Value {
    let mut spec = common(&hpa["spec"], &["scaleTargetRef", "minReplicas", "maxReplicas"]);
    if let Some(percent) = hpa["spec"]["targetCPUUtilizationPercentage"].as_i64() {
        spec.insert("metrics".into(), json!([cpu_utilization(percent)]));
    }
    let mut status = common(
        &hpa["status"],
        &["observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas"],
    );
    if let Some(percent) = hpa["status"]["currentCPUUtilizationPercentage"].as_i64() {
        let current = json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": percent}}});
        status.insert("currentMetrics".into(), json!([current]));
    }
    let mut out = json!({"apiVersion": V2, "kind": "HorizontalPodAutoscaler", "metadata": hpa["metadata"], "spec": spec});
    if !status.is_empty() || hpa.get("status").is_some() {
        out["status"] = Value::Object(status);
    }
    out
}

/// The fields both versions share.
fn common(from: &Value, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| from.get(*k).filter(|v| !v.is_null()).map(|v| ((*k).to_owned(), v.clone())))
        .collect()
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Reference", "string", "The workload that is scaled."),
        table::col("Targets", "string", "The current and target value of each metric."),
        table::col("MinPods", "string", "The fewest replicas it scales to."),
        table::col("MaxPods", "integer", "The most replicas it scales to."),
        table::col("Replicas", "integer", "The replicas the workload has now."),
        table::AGE,
    ],
    cells,
};

fn cells(hpa: &Value, now: i64) -> Vec<Value> {
    let spec = &hpa["spec"];
    let reference = format!(
        "{}/{}",
        spec["scaleTargetRef"]["kind"].as_str().unwrap_or_default(),
        spec["scaleTargetRef"]["name"].as_str().unwrap_or_default()
    );
    let min = spec["minReplicas"].as_i64().map_or("<unset>".to_owned(), |m| m.to_string());
    vec![
        table::name(hpa),
        table::s(reference),
        table::s(targets(hpa)),
        table::s(min),
        table::n(spec["maxReplicas"].as_i64().unwrap_or(0)),
        table::n(hpa["status"]["currentReplicas"].as_i64().unwrap_or(0)),
        table::age(hpa, now),
    ]
}

/// kube's formatHPAMetrics: `cpu: 40%/80%` for each metric (`<unknown>` before the controller
/// reports), two at most then `+ N more...`; `<none>` without metrics. A v1 object shows its
/// CPU target.
fn targets(hpa: &Value) -> String {
    let specs: Vec<Value> = match hpa["spec"]["targetCPUUtilizationPercentage"].as_i64() {
        Some(percent) => vec![cpu_utilization(percent)],
        None => hpa["spec"]["metrics"].as_array().cloned().unwrap_or_default(),
    };
    let statuses = hpa["status"]["currentMetrics"].as_array().cloned().unwrap_or_default();
    let mut list: Vec<String> = Vec::new();
    for (i, metric) in specs.iter().enumerate().take(2) {
        let status = statuses.get(i);
        let source = match metric["type"].as_str() {
            Some("Resource") => "resource",
            Some("ContainerResource") => "containerResource",
            Some("Pods") => "pods",
            Some("Object") => "object",
            _ => "external",
        };
        let (spec, current) = (&metric[source], status.map(|s| &s[source]));
        let target = &spec["target"];
        let text = match target["averageUtilization"].as_i64() {
            Some(percent) => {
                let now = current
                    .and_then(|c| c["current"]["averageUtilization"].as_i64())
                    .map_or("<unknown>".to_owned(), |p| format!("{p}%"));
                format!("{now}/{percent}%")
            }
            None => {
                let wanted = target["averageValue"].as_str().or(target["value"].as_str()).unwrap_or("<auto>");
                let now = current
                    .and_then(|c| c["current"]["averageValue"].as_str().or(c["current"]["value"].as_str()))
                    .unwrap_or("<unknown>");
                format!("{now}/{wanted}")
            }
        };
        match source {
            "resource" | "containerResource" => {
                list.push(format!("{}: {text}", spec["name"].as_str().unwrap_or_default()));
            }
            _ => list.push(text),
        }
    }
    if list.is_empty() {
        return "<none>".to_owned();
    }
    let joined = list.join(", ");
    match specs.len() {
        n if n > 2 => format!("{joined} + {} more...", n - 2),
        _ => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_defaults_are_kubes() {
        let mut hpa = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
        default_v2(&mut hpa);
        assert_eq!(hpa["spec"]["minReplicas"], 1);
        assert_eq!(hpa["spec"]["metrics"], json!([cpu_utilization(80)]));
        assert_eq!(hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"], 60);
        assert_eq!(hpa["spec"]["behavior"]["scaleDown"]["policies"][0]["type"], "Percent");
        assert_eq!(
            hpa["spec"]["behavior"]["scaleUp"]["policies"][0],
            json!({"type": "Pods", "value": 4, "periodSeconds": 15})
        );
    }

    #[test]
    fn the_cpu_target_is_one_in_both_versions() {
        let v1 = json!({"apiVersion": V1, "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 5,
                "targetCPUUtilizationPercentage": 60}});
        let v2 = to_v2(v1.clone());
        assert_eq!(v2["spec"]["metrics"], json!([cpu_utilization(60)]));
        let mut back = to_v1(v2);
        back.as_object_mut().unwrap().remove("status");
        assert_eq!(back, v1);
        assert_eq!(targets(&v1), "cpu: <unknown>/60%");
    }

    #[test]
    fn replica_bounds_are_checked() {
        let spec = json!({"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 3, "maxReplicas": 2});
        let messages: Vec<String> =
            causes(&spec).iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            messages,
            ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]
        );
    }
}
