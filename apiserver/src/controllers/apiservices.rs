//! kube's aggregator housekeeping for the group versions this server serves
//! itself:
//!
//! * autoregistration: an APIService per served built-in group version,
//!   with kube's group and version priorities (a group version kube has no
//!   priority for gets none, as in kube), labelled
//!   `kube-aggregator.kubernetes.io/automanaged: onstart`; one per served
//!   version of every CustomResourceDefinition's group (priorities 1000 and
//!   100), labelled `true`. `onstart` ones are brought back to what they
//!   should be at the server's start, `true` ones always, and deleted once
//!   nothing serves them; one without the label is the user's, left alone.
//! * availability: a local APIService is `Available` (`Local`); one naming
//!   a Service is not while the Service is missing, does not listen on its
//!   port, has no ready endpoint on it, or its server fails kube's
//!   discovery check (`aggregator::check`); otherwise it is (`Passed`).
//!   kube's reasons and messages.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};

use std::sync::Arc;

use crate::admission::Objects;
use crate::aggregator::resolve::{endpoint_slices, ready_endpoints};
use crate::aggregator::{Aggregator, Target};
use crate::cacher::{ListOptions, ReadAt};
use crate::errors::ApiError;
use crate::registry::kinds::apiservice::{self, AVAILABLE, GROUP};
use crate::registry::kinds::customresourcedefinition;
use crate::registry::{DeleteOptions, Resources, Store, WriteContext};
use crate::runtime::meta;

/// How often it looks again.
const PERIOD: Duration = Duration::from_secs(2);
const MANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";
const ON_START: &str = "onstart";
const CONTINUOUSLY: &str = "true";

/// kube-apiserver's priorities of its group versions: `(group, version,
/// groupPriorityMinimum, versionPriority)`.
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];
/// A custom resource group version's (kube's CRD registration).
const CRD_PRIORITIES: (i64, i64) = (1000, 100);

/// What an APIService of this server should say.
#[derive(Debug, Clone, PartialEq)]
struct Wanted {
    group: String,
    version: String,
    group_priority: i64,
    version_priority: i64,
    managed: &'static str,
}

pub async fn run(resources: Resources, aggregator: Arc<Aggregator>) {
    let (Ok(services), Ok(crds)) = (
        resources.store(GROUP, "apiservices"),
        resources.store(customresourcedefinition::GROUP, "customresourcedefinitions"),
    ) else {
        return;
    };
    let mut period = tokio::time::interval(PERIOD);
    let mut starting = true;
    loop {
        period.tick().await;
        match register(&resources, &services, &crds, starting).await {
            Ok(()) => starting = false,
            Err(e) => tracing::debug!(error = %e, "registering local APIServices; retrying"),
        }
        if let Err(e) = check_availability(&resources, &services, &aggregator).await {
            tracing::debug!(error = %e, "checking APIServices' availability; retrying");
        }
    }
}

/// The APIServices this server's served group versions should have.
async fn wanted(resources: &Resources, crds: &Store) -> Result<BTreeMap<String, Wanted>, ApiError> {
    let mut custom = BTreeSet::new();
    for crd in crds.list(&ListOptions::default()).await?.items {
        let group = crd["spec"]["group"].as_str().unwrap_or_default().to_string();
        for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
            if version["served"] == json!(true) {
                custom.insert((group.clone(), version["name"].as_str().unwrap_or_default().to_string()));
            }
        }
    }
    let served: BTreeSet<(String, String)> = resources
        .all()
        .iter()
        .map(|s| (s.store.resource().group.clone(), s.store.resource().version.clone()))
        .collect();
    let mut wanted = BTreeMap::new();
    for (group, version) in served {
        let builtin = PRIORITIES.iter().find(|(g, v, _, _)| *g == group && *v == version);
        let (group_priority, version_priority, managed) = match builtin {
            Some((_, _, g, v)) if !custom.contains(&(group.clone(), version.clone())) => (*g, *v, ON_START),
            _ if custom.contains(&(group.clone(), version.clone())) => {
                (CRD_PRIORITIES.0, CRD_PRIORITIES.1, CONTINUOUSLY)
            }
            // kube registers no APIService for a group version it has no
            // priority for.
            _ => continue,
        };
        let name = apiservice::name_for(&group, &version);
        wanted.insert(name, Wanted { group, version, group_priority, version_priority, managed });
    }
    Ok(wanted)
}

/// Creates what is missing, brings managed ones back to what they should
/// be (`onstart` ones only when `starting`), deletes managed ones nothing
/// serves any more.
async fn register(
    resources: &Resources,
    store: &Store,
    crds: &Store,
    starting: bool,
) -> Result<(), ApiError> {
    let wanted = wanted(resources, crds).await?;
    let existing: BTreeMap<String, Value> = store
        .list(&ListOptions::default())
        .await?
        .items
        .into_iter()
        .map(|s| (meta::name_of(&s).to_string(), s))
        .collect();
    let ctx = WriteContext::server();
    for (name, want) in &wanted {
        let Some(current) = existing.get(name) else {
            match store.create(&ctx, None, object(name, want)).await {
                Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
                Err(e) => return Err(e),
            }
            continue;
        };
        let managed = current["metadata"]["labels"][MANAGED].as_str();
        let keeps = match managed {
            Some(CONTINUOUSLY) => true,
            Some(ON_START) => starting,
            _ => false,
        };
        let desired = object(name, want);
        if !keeps || (current["spec"] == desired["spec"] && managed == Some(want.managed)) {
            continue;
        }
        let mut new = current.clone();
        new["spec"] = desired["spec"].clone();
        new["metadata"]["labels"][MANAGED] = json!(want.managed);
        match store.update(&ctx, None, name, None, new).await {
            Ok(_) | Err(ApiError::Conflict { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    for (name, current) in &existing {
        let managed = current["metadata"]["labels"][MANAGED].as_str();
        let stale = match managed {
            Some(CONTINUOUSLY) => true,
            Some(ON_START) => starting,
            _ => false,
        };
        if stale && !wanted.contains_key(name) {
            match store.delete(&ctx, None, name, &DeleteOptions::default()).await {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

fn object(name: &str, want: &Wanted) -> Value {
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name, "labels": {MANAGED: want.managed}},
        "spec": {
            "group": want.group,
            "version": want.version,
            "groupPriorityMinimum": want.group_priority,
            "versionPriority": want.version_priority,
        },
    })
}

/// Sets each APIService's `Available` condition, the extension servers
/// checked all at once (one that hangs holds up no other).
async fn check_availability(
    resources: &Resources,
    store: &Store,
    aggregator: &Aggregator,
) -> Result<(), ApiError> {
    let listed = store.list(&ListOptions::default()).await?.items;
    let names: BTreeSet<String> = listed.iter().map(|s| meta::name_of(s).to_string()).collect();
    aggregator.metrics.retain(&names);
    aggregator.retain(&names);
    let checks = listed.iter().map(|service| availability(resources, aggregator, service));
    let conditions = futures_util::future::join_all(checks).await;
    for (service, wanted) in listed.into_iter().zip(conditions) {
        let name = meta::name_of(&service).to_string();
        // kube's gauge follows every check; its counter, the writes.
        let available = wanted["status"] == "True";
        aggregator.metrics.checked(&name, available);
        let same = |c: &Value| ["status", "reason", "message"].iter().all(|key| c[*key] == wanted[*key]);
        let before = apiservice::available(&service);
        if before.is_some_and(same) {
            continue;
        }
        let was_available = before.is_some_and(|c| c["status"] == "True");
        let change = |fresh: &Value| -> Result<Value, ApiError> {
            let mut new = fresh.clone();
            let mut conditions: Vec<Value> =
                fresh["status"]["conditions"].as_array().cloned().unwrap_or_default();
            let mut condition = wanted.clone();
            match conditions.iter_mut().find(|c| c["type"] == AVAILABLE) {
                // The transition time moves only when the status does.
                Some(old) => {
                    if old["status"] == condition["status"] {
                        condition["lastTransitionTime"] = old["lastTransitionTime"].clone();
                    }
                    *old = condition;
                }
                None => conditions.push(condition),
            }
            new["status"]["conditions"] = Value::Array(conditions);
            Ok(new)
        };
        match store.update_status(None, &name, &change).await {
            Ok(_) => aggregator.metrics.changed(&name, was_available, available, wanted["reason"].as_str()),
            Err(e) => tracing::debug!(apiservice = name, error = %e, "cannot set its Available condition"),
        }
    }
    Ok(())
}

/// The `Available` condition `service` should have.
async fn availability(resources: &Resources, aggregator: &Aggregator, service: &Value) -> Value {
    let Some(target) = Target::of(service) else {
        return condition("True", "Local", "Local APIServices are always available");
    };
    if let Some(unavailable) = remote_unavailable(resources, &service["spec"]["service"]).await {
        return unavailable;
    }
    match aggregator.check(resources, &target).await {
        Ok(()) => condition("True", "Passed", "all checks passed"),
        Err(why) => condition("False", "FailedDiscoveryCheck", &why),
    }
}

fn condition(status: &str, reason: &str, message: &str) -> Value {
    json!({"type": AVAILABLE, "status": status, "lastTransitionTime": meta::now(), "reason": reason,
        "message": message})
}

/// Why an APIService's Service cannot serve it (kube's remote availability
/// checks, short of the discovery call): None when the Service listens
/// and has a ready endpoint.
async fn remote_unavailable(resources: &Resources, reference: &Value) -> Option<Value> {
    let namespace = reference["namespace"].as_str().unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    let port = reference["port"].as_i64().unwrap_or(443);
    let quoted = crate::errors::go_quote(namespace);
    let services = resources.store("", "services").ok()?;
    let service = match services.get(Some(namespace), name, &ReadAt::default()).await {
        Ok(service) => service,
        Err(ApiError::NotFound { .. }) => {
            let message = format!("service/{name} in {quoted} is not present");
            return Some(condition("False", "ServiceNotFound", &message));
        }
        Err(e) => {
            let message = format!("service/{name} in {quoted} cannot be checked due to: {e}");
            return Some(condition("Unknown", "ServiceAccessError", &message));
        }
    };
    // kube checks ports and endpoints of ClusterIP Services only.
    let service_type = service["spec"]["type"].as_str().unwrap_or("ClusterIP");
    if service_type != "ClusterIP" {
        return None;
    }
    let ports = service["spec"]["ports"].as_array().cloned().unwrap_or_default();
    let Some(service_port) = ports.iter().find(|p| p["port"].as_i64() == Some(port)) else {
        let message = format!("service/{name} in {quoted} is not listening on port {port}");
        return Some(condition("False", "ServicePortError", &message));
    };
    let port_name = service_port["name"].as_str().unwrap_or_default();
    let slices = match endpoint_slices(resources, namespace, name).await {
        Ok(slices) => slices,
        Err(e) => {
            let message = format!("service/{name} in {quoted} cannot be checked due to: {e}");
            return Some(condition("Unknown", "EndpointsAccessError", &message));
        }
    };
    if slices.is_empty() {
        let message = format!("cannot find endpointslices for service/{name} in {quoted}");
        return Some(condition("False", "EndpointsNotFound", &message));
    }
    if slices.iter().all(|slice| ready_endpoints(slice, port_name).is_empty()) {
        let message = format!(
            "endpointslices for service/{name} in {quoted} have no addresses with port name {}",
            crate::errors::go_quote(port_name)
        );
        return Some(condition("False", "MissingEndpoints", &message));
    }
    None
}
