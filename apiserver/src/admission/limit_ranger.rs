//! LimitRanger (kube's `plugin/pkg/admission/limitranger`): a new pod gets
//! the default requests and limits of its namespace's LimitRanges for what
//! its containers leave unset (recorded in the `kubernetes.io/limit-ranger`
//! annotation), and is refused (403, kube's texts) when a container, or the
//! pod as a whole, falls outside a range's min, max or limit/request ratio.
//! Pod updates are left alone: containers' resources cannot change then.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::lookup::Lookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;
use crate::runtime::quantity::Quantity;

const ANNOTATION: &str = "kubernetes.io/limit-ranger";
/// How long a namespace found without LimitRanges in storage is believed
/// (kube's live-lookup cache), so pod creates do not each read storage.
const LIVE_TTL: Duration = Duration::from_secs(30);
const LIVE_ENTRIES: usize = 10_000;

#[derive(Debug)]
pub struct LimitRanger {
    ranges: Lookup,
    live: Mutex<HashMap<String, (Instant, Vec<Value>)>>,
}

impl LimitRanger {
    pub fn new(ranges: Lookup) -> Self {
        LimitRanger { ranges, live: Mutex::default() }
    }

    /// The namespace's LimitRanges: from the cache, or, when it has none
    /// (it may lag one created just now), from storage at most every 30 s.
    async fn ranges(&self, namespace: &str) -> Result<Vec<Value>, ApiError> {
        let cached = self.ranges.get()?.list(Some(namespace), true).await?;
        if !cached.is_empty() {
            return Ok(cached);
        }
        let now = Instant::now();
        if let Some((at, items)) = self.live.lock().unwrap_or_else(|p| p.into_inner()).get(namespace)
            && now.duration_since(*at) < LIVE_TTL
        {
            return Ok(items.clone());
        }
        let items = self.ranges.get()?.list(Some(namespace), false).await?;
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        if live.len() >= LIVE_ENTRIES {
            live.clear();
        }
        live.insert(namespace.to_string(), (now, items.clone()));
        Ok(items)
    }
}

fn created_pod(attributes: &Attributes) -> Option<&str> {
    let applies = attributes.operation == Operation::Create && attributes.is("", "pods");
    applies.then_some(attributes.namespace.as_deref()).flatten()
}

#[async_trait]
impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        let Some(namespace) = created_pod(attributes).map(str::to_string) else { return Ok(()) };
        let ranges = self.ranges(&namespace).await?;
        let Some(pod) = attributes.object.as_mut().filter(|p| p.is_object()) else { return Ok(()) };
        for range in &ranges {
            set_defaults(range, pod);
        }
        Ok(())
    }

    async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        let Some(namespace) = created_pod(attributes) else { return Ok(()) };
        let Some(pod) = attributes.object.as_ref() else { return Ok(()) };
        for range in self.ranges(namespace).await? {
            let errors = violations(&range, pod);
            match errors.as_slice() {
                [] => {}
                [one] => return Err(attributes.forbidden(one.clone())),
                many => return Err(attributes.forbidden(format!("[{}]", many.join(", ")))),
            }
        }
        Ok(())
    }
}

/// Resource name → quantity text.
type Resources = BTreeMap<String, String>;

fn resources(value: &Value) -> Resources {
    value
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// The Container items' default requests and limits (later items win).
fn container_defaults(range: &Value) -> (Resources, Resources) {
    let (mut requests, mut limits) = (Resources::new(), Resources::new());
    for item in range["spec"]["limits"].as_array().into_iter().flatten().filter(|i| i["type"] == "Container")
    {
        requests.extend(resources(&item["defaultRequest"]));
        limits.extend(resources(&item["default"]));
    }
    (requests, limits)
}

/// Fills what each container leaves unset and records it in kube's
/// annotation (`cpu, memory request for container app; cpu limit for
/// container app`).
fn set_defaults(range: &Value, pod: &mut Value) {
    let (default_requests, default_limits) = container_defaults(range);
    let mut notes = Vec::new();
    for (list, what) in [("containers", "container"), ("initContainers", "init container")] {
        for container in pod["spec"].get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
            if !container.is_object() {
                continue;
            }
            let name = container["name"].as_str().unwrap_or_default().to_string();
            let set_requests = fill(container, "requests", &default_requests);
            let set_limits = fill(container, "limits", &default_limits);
            if !set_requests.is_empty() {
                notes.push(format!("{} request for {what} {name}", set_requests.join(", ")));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {what} {name}", set_limits.join(", ")));
            }
        }
    }
    if !notes.is_empty() {
        if !pod["metadata"]["annotations"].is_object() {
            pod["metadata"]["annotations"] = json!({});
        }
        pod["metadata"]["annotations"][ANNOTATION] =
            json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
    }
}

/// Adds the `defaults` a container's `resources.<field>` lacks; the names
/// added, sorted.
fn fill(container: &mut Value, field: &str, defaults: &Resources) -> Vec<String> {
    let mut present: Map<String, Value> =
        container["resources"][field].as_object().cloned().unwrap_or_default();
    let mut added = Vec::new();
    for (resource, quantity) in defaults {
        if !present.contains_key(resource) {
            present.insert(resource.clone(), json!(quantity));
            added.push(resource.clone());
        }
    }
    if !added.is_empty() {
        if !container["resources"].is_object() {
            container["resources"] = json!({});
        }
        container["resources"][field] = Value::Object(present);
    }
    added
}

/// Parsed quantities (unreadable ones are the pod validation's to refuse).
type Amounts = BTreeMap<String, Quantity>;

fn amounts(value: &Value) -> Amounts {
    resources(value).into_iter().filter_map(|(k, v)| Some((k, Quantity::parse(&v).ok()?))).collect()
}

/// Every way `pod` falls outside `range`, in kube's texts.
fn violations(range: &Value, pod: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let containers = |list: &str| pod["spec"][list].as_array().cloned().unwrap_or_default();
    for item in range["spec"]["limits"].as_array().into_iter().flatten() {
        let kind = item["type"].as_str().unwrap_or_default();
        let bounds = Bounds {
            kind,
            min: amounts(&item["min"]),
            max: amounts(&item["max"]),
            ratio: amounts(&item["maxLimitRequestRatio"]),
        };
        match kind {
            "Container" => {
                for container in containers("containers").iter().chain(containers("initContainers").iter()) {
                    let resources = &container["resources"];
                    bounds.check(
                        &amounts(&resources["requests"]),
                        &amounts(&resources["limits"]),
                        &mut errors,
                    );
                }
            }
            "Pod" => {
                let (requests, limits) = pod_totals(pod);
                bounds.check(&requests, &limits, &mut errors);
            }
            _ => {}
        }
    }
    errors
}

/// What one LimitRange item bounds.
struct Bounds<'a> {
    kind: &'a str,
    min: Amounts,
    max: Amounts,
    ratio: Amounts,
}

impl Bounds<'_> {
    fn check(&self, requests: &Amounts, limits: &Amounts, errors: &mut Vec<String>) {
        let kind = self.kind;
        for (resource, min) in &self.min {
            let m = min.canonical();
            match (requests.get(resource), limits.get(resource)) {
                (None, _) => errors
                    .push(format!("minimum {resource} usage per {kind} is {m}.  No request is specified")),
                (Some(r), _) if r.milli_value() < min.milli_value() => errors.push(format!(
                    "minimum {resource} usage per {kind} is {m}, but request is {}",
                    r.canonical()
                )),
                (_, Some(l)) if l.milli_value() < min.milli_value() => errors.push(format!(
                    "minimum {resource} usage per {kind} is {m}, but limit is {}",
                    l.canonical()
                )),
                _ => {}
            }
        }
        for (resource, max) in &self.max {
            let m = max.canonical();
            match (requests.get(resource), limits.get(resource)) {
                (_, None) => {
                    errors.push(format!("maximum {resource} usage per {kind} is {m}.  No limit is specified"))
                }
                (_, Some(l)) if l.milli_value() > max.milli_value() => errors.push(format!(
                    "maximum {resource} usage per {kind} is {m}, but limit is {}",
                    l.canonical()
                )),
                (Some(r), _) if r.milli_value() > max.milli_value() => errors.push(format!(
                    "maximum {resource} usage per {kind} is {m}, but request is {}",
                    r.canonical()
                )),
                _ => {}
            }
        }
        for (resource, ratio) in &self.ratio {
            let m = ratio.canonical();
            let request = requests.get(resource).map(Quantity::milli_value).filter(|v| *v != 0);
            let limit = limits.get(resource).map(Quantity::milli_value).filter(|v| *v != 0);
            let Some(request) = request else {
                errors.push(format!(
                    "{resource} max limit to request ratio per {kind} is {m}, but no request is specified or request is 0"
                ));
                continue;
            };
            let Some(limit) = limit else {
                errors.push(format!(
                    "{resource} max limit to request ratio per {kind} is {m}, but no limit is specified or limit is 0"
                ));
                continue;
            };
            let observed = limit as f64 / request as f64;
            if observed * 1000.0 > ratio.milli_value() as f64 {
                errors.push(format!(
                    "{resource} max limit to request ratio per {kind} is {m}, but provided ratio is {observed:.6}"
                ));
            }
        }
    }
}

/// A pod's requests and limits as kube totals them: the containers' sum
/// (with sidecar init containers, which keep running), or the largest init
/// container (plus the sidecars started before it) when that is more.
fn pod_totals(pod: &Value) -> (Amounts, Amounts) {
    let spec = &pod["spec"];
    let total = |field: &str| {
        let mut sum = Amounts::new();
        let mut sidecars = Amounts::new();
        let mut init_peak = Amounts::new();
        for container in spec["containers"].as_array().into_iter().flatten() {
            add(&mut sum, &amounts(&container["resources"][field]));
        }
        for container in spec["initContainers"].as_array().into_iter().flatten() {
            let own = amounts(&container["resources"][field]);
            let during = if container["restartPolicy"] == "Always" {
                add(&mut sum, &own);
                add(&mut sidecars, &own);
                sidecars.clone()
            } else {
                let mut during = own;
                add(&mut during, &sidecars);
                during
            };
            peak(&mut init_peak, &during);
        }
        peak(&mut sum, &init_peak);
        sum
    };
    (total("requests"), total("limits"))
}

fn add(into: &mut Amounts, more: &Amounts) {
    for (resource, quantity) in more {
        let sum = into.get(resource).map_or(*quantity, |have| have.add(quantity));
        into.insert(resource.clone(), sum);
    }
}

fn peak(into: &mut Amounts, other: &Amounts) {
    for (resource, quantity) in other {
        if into.get(resource).is_none_or(|have| quantity.cmp_value(have).is_gt()) {
            into.insert(resource.clone(), *quantity);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::registry::tests::Cluster;

    async fn cluster_with(limits: Value) -> Cluster {
        let c = Cluster::new().await;
        c.create("", "serviceaccounts", Some("default"), json!({"metadata": {"name": "default"}}))
            .await
            .unwrap();
        let range = json!({"metadata": {"name": "limits"}, "spec": {"limits": limits}});
        c.create("", "limitranges", Some("default"), range).await.unwrap();
        c
    }

    fn pod(name: &str, containers: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"automountServiceAccountToken": false, "containers": containers}})
    }

    #[tokio::test]
    async fn pods_get_the_namespaces_defaults_and_say_so() {
        let c = cluster_with(json!([{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m"}}]))
        .await;
        let containers = json!([
            {"name": "app", "image": "i"},
            {"name": "tuned", "image": "i", "resources": {"limits": {"memory": "1Gi"}}},
        ]);
        let created = c.create("", "pods", Some("default"), pod("web", containers)).await.unwrap();
        let spec = &created["spec"]["containers"];
        // The range's own defaulting made its memory default the default
        // request too.
        assert_eq!(
            spec[0]["resources"],
            json!({"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}})
        );
        // Its own limit stays; its memory request came from that limit
        // (kube's pod defaulting), not from the range.
        assert_eq!(
            spec[1]["resources"],
            json!({"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "1Gi"}})
        );
        assert_eq!(
            created["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
            "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; cpu request for container tuned; cpu limit for container tuned"
        );
        assert_eq!(created["status"]["qosClass"], "Burstable");
    }

    #[tokio::test]
    async fn pods_outside_the_range_are_refused_with_kubes_texts() {
        let c = cluster_with(json!([
            {"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"}, "maxLimitRequestRatio": {"cpu": "2"}},
            {"type": "Pod", "max": {"cpu": "2"}},
        ]))
        .await;
        // The range's own defaults (default from max, defaultRequest from
        // default and min) fill the gaps, so a bare pod passes.
        let range = c.get("", "limitranges", Some("default"), "limits").await.unwrap();
        assert_eq!(range["spec"]["limits"][0]["default"], json!({"memory": "1Gi"}));
        assert_eq!(range["spec"]["limits"][0]["defaultRequest"], json!({"memory": "1Gi", "cpu": "100m"}));

        let resources = |requests: Value, limits: Value| {
            json!([{"name": "app", "image": "i",
            "resources": {"requests": requests, "limits": limits}}])
        };
        let refused = |name: &'static str, containers: Value| {
            let c = &c;
            async move { c.create("", "pods", Some("default"), pod(name, containers)).await.unwrap_err() }
        };
        let err = refused("small", resources(json!({"cpu": "50m"}), json!({"cpu": "100m"}))).await;
        assert_eq!(
            (err.code(), err.to_string()),
            (
                403,
                "pods \"small\" is forbidden: minimum cpu usage per Container is 100m, but request is 50m"
                    .to_string()
            )
        );
        let err = refused("big", resources(json!({"cpu": "1"}), json!({"cpu": "1", "memory": "2Gi"}))).await;
        assert_eq!(
            err.to_string(),
            "pods \"big\" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi"
        );
        let err = refused("bursty", resources(json!({"cpu": "250m"}), json!({"cpu": "1"}))).await;
        assert_eq!(
            err.to_string(),
            "pods \"bursty\" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"
        );
        // Two containers within their own bounds, over the pod's: both
        // failures of one range are reported together.
        let two = json!([
            {"name": "a", "image": "i", "resources": {"limits": {"cpu": "1500m"}}},
            {"name": "b", "image": "i", "resources": {"limits": {"cpu": "1500m", "memory": "2Gi"}}},
        ]);
        let err = refused("crowd", two).await;
        assert_eq!(
            err.to_string(),
            "pods \"crowd\" is forbidden: [maximum memory usage per Container is 1Gi, but limit is 2Gi, maximum cpu usage per Pod is 2, but limit is 3]"
        );
        let fine = resources(json!({"cpu": "500m"}), json!({"cpu": "1", "memory": "512Mi"}));
        c.create("", "pods", Some("default"), pod("fine", fine)).await.unwrap();
    }
}
