//! Discovery: the legacy documents (`/api`, `/apis`, `/api/v1`,
//! `/apis/<g>/<v>`) and aggregated discovery (apidiscovery.k8s.io/v2),
//! chosen by the Accept header as kube does; clients tell the two apart by
//! the response's Content-Type.

use serde_json::{Value, json};

use super::binding::BINDINGS;
use super::component_status::COMPONENT_STATUSES;
use super::reviews::{REVIEWS, Unstored};
use crate::registry::{Action, Resource, Resources};

/// The Content-Type of an aggregated discovery document.
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// Whether the client asked for aggregated discovery (v2).
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|media| {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        params.contains(&"g=apidiscovery.k8s.io")
            && params.contains(&"v=v2")
            && params.contains(&"as=APIGroupDiscoveryList")
    })
}

/// `/api`: the core group's versions.
pub fn api_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
}

/// Every named group: the served resources' and the reviews'.
pub fn groups(resources: &Resources) -> Vec<String> {
    let mut groups = resources.groups();
    for review in REVIEWS {
        if !groups.iter().any(|g| g == review.group) {
            groups.push(review.group.to_string());
        }
    }
    groups
}

/// The resources of `group` without a store: its reviews (and core's
/// `bindings` and `componentstatuses`).
fn unstored_of(group: &str) -> impl Iterator<Item = &'static Unstored> + '_ {
    REVIEWS.iter().chain([&BINDINGS, &COMPONENT_STATUSES]).filter(move |r| r.group == group)
}

/// `/apis`: every named group.
pub fn api_group_list(resources: &Resources) -> Value {
    let groups: Vec<Value> = groups(resources).iter().map(|g| api_group(resources, g)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`: its versions, the preferred (first) one first.
pub fn api_group(resources: &Resources, group: &str) -> Value {
    let versions: Vec<Value> = versions_of(resources, group)
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": preferred})
}

/// Whether this server serves `group`/`version` itself.
pub fn serves(resources: &Resources, group: &str, version: &str) -> bool {
    match group {
        "" => version == "v1",
        _ => versions_of(resources, group).iter().any(|v| v == version),
    }
}

/// The versions `group` is served in, in kube's order of preference (the
/// reviews' groups are v1).
fn versions_of(resources: &Resources, group: &str) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for served in resources.all() {
        let r = served.store.resource();
        if r.group == group && !versions.contains(&r.version) {
            versions.push(r.version.clone());
        }
    }
    if versions.is_empty() && unstored_of(group).next().is_some() {
        versions.push("v1".to_string());
    }
    versions.sort_by_key(|v| kube_version_order(v));
    versions
}

/// kube's version priority: GA before beta before alpha, higher numbers
/// first; versions not of that form last, alphabetically.
pub(super) fn kube_version_order(
    version: &str,
) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = version.strip_prefix('v').and_then(|rest| {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let (stage, minor) = match &rest[digits..] {
            "" => (0, 0),
            tail => {
                let (stage, number) = if let Some(n) = tail.strip_prefix("beta") {
                    (1, n)
                } else {
                    (2, tail.strip_prefix("alpha")?)
                };
                (stage, number.parse().ok().filter(|_| !number.starts_with('0') || number == "0")?)
            }
        };
        Some((stage, major, minor))
    });
    match parsed {
        Some((stage, major, minor)) => {
            (stage, std::cmp::Reverse(major), std::cmp::Reverse(minor), String::new())
        }
        None => (3, std::cmp::Reverse(0), std::cmp::Reverse(0), version.to_string()),
    }
}

/// `/api/v1` or `/apis/<group>/<version>`; None when not served.
pub fn api_resource_list(resources: &Resources, group: &str, version: &str) -> Option<Value> {
    let served = resources.all();
    let served: Vec<&Resource> = served
        .iter()
        .map(|s| s.store.resource())
        .filter(|r| r.group == group && r.version == version)
        .collect();
    let reviews: Vec<&Unstored> = unstored_of(group).filter(|_| version == "v1").collect();
    if served.is_empty() && reviews.is_empty() {
        return None;
    }
    let mut list = Vec::new();
    for review in reviews {
        let mut entry = json!({
            "name": review.plural,
            "singularName": review.kind.to_lowercase(),
            "namespaced": review.namespaced,
            "kind": review.kind,
            "verbs": review.verbs,
        });
        if !review.short_names.is_empty() {
            entry["shortNames"] = json!(review.short_names);
        }
        list.push(entry);
    }
    for r in served {
        list.push(json!({
            "name": r.plural,
            "singularName": r.singular(),
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": r.verbs(),
            "shortNames": r.short_names,
            "categories": r.categories,
        }));
        for sub in subresources_of(r) {
            let mut entry = json!({
                "name": format!("{}/{}", r.plural, sub.name),
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": sub.kind,
                "verbs": sub.verbs,
            });
            // Only a subresource answering in another group version says it.
            if (sub.group, sub.version) != (r.group.as_str(), r.version.as_str()) {
                entry["group"] = json!(sub.group);
                entry["version"] = json!(sub.version);
            }
            list.push(entry);
        }
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": list}),
    )
}

/// A subresource as discovery describes it.
struct Sub<'a> {
    name: &'a str,
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    verbs: &'a [&'a str],
}

/// Every subresource of `resource`: status (the kind itself), scale
/// (autoscaling/v1 Scale) and its actions, in kube's order (by name).
fn subresources_of(resource: &Resource) -> Vec<Sub<'_>> {
    let mut subs: Vec<Sub<'_>> = resource
        .subresources()
        .iter()
        .map(|&name| match name {
            "scale" => {
                Sub { name, group: "autoscaling", version: "v1", kind: "Scale", verbs: SUBRESOURCE_VERBS }
            }
            _ => Sub {
                name,
                group: &resource.group,
                version: &resource.version,
                kind: &resource.kind,
                verbs: SUBRESOURCE_VERBS,
            },
        })
        .chain(resource.actions.iter().map(|a: &Action| Sub {
            name: a.name,
            group: a.group,
            version: a.version,
            kind: a.kind,
            verbs: a.verbs,
        }))
        .collect();
    subs.sort_by_key(|s| s.name);
    subs
}

/// The aggregated document for `/api` (core only) or `/apis` (the rest).
pub fn aggregated(served: &Resources, core: bool) -> Value {
    let groups: Vec<String> = if core { vec![String::new()] } else { groups(served) };
    let all = served.all();
    let items: Vec<Value> = groups
        .into_iter()
        .map(|group| {
            let versions: Vec<Value> = versions_of(served, &group)
                .into_iter()
                .map(|version| {
                    let mut resources: Vec<Value> = all
                        .iter()
                        .map(|s| s.store.resource())
                        .filter(|r| r.group == group && r.version == version)
                        .map(aggregated_resource)
                        .collect();
                    let reviews = unstored_of(&group).filter(|_| version == "v1");
                    resources.extend(reviews.map(|review| {
                        let mut entry = json!({
                            "resource": review.plural,
                            "responseKind": {"group": review.group, "version": "v1", "kind": review.kind},
                            "scope": if review.namespaced { "Namespaced" } else { "Cluster" },
                            "singularResource": review.kind.to_lowercase(),
                            "verbs": review.verbs,
                        });
                        if !review.short_names.is_empty() {
                            entry["shortNames"] = json!(review.short_names);
                        }
                        entry
                    }));
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

fn aggregated_resource(r: &Resource) -> Value {
    let subresources: Vec<Value> = subresources_of(r)
        .iter()
        .map(|sub| {
            json!({
                "subresource": sub.name,
                "responseKind": {"group": sub.group, "version": sub.version, "kind": sub.kind},
                "verbs": sub.verbs,
            })
        })
        .collect();
    let mut entry = json!({
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular(),
        "verbs": r.verbs(),
        "shortNames": r.short_names,
        "categories": r.categories,
    });
    if !subresources.is_empty() {
        entry["subresources"] = json!(subresources);
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregated_is_chosen_by_the_client_go_accept_header() {
        let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert!(wants_aggregated(accept));
        assert!(!wants_aggregated("application/json, */*"));
    }

    #[test]
    fn versions_sort_as_kube_prefers_them() {
        let mut versions =
            vec!["v1alpha1", "foo", "v2beta1", "v1", "v10", "v1beta2", "v2", "v1beta1", "bar", "v3alpha1"];
        versions.sort_by_key(|v| kube_version_order(v));
        assert_eq!(
            versions,
            ["v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v3alpha1", "v1alpha1", "bar", "foo"]
        );
    }

    #[tokio::test]
    async fn resource_lists_carry_subresources_and_scale_kind() {
        let resources = crate::registry::kinds::tests::builtin_resources();
        let apps = api_resource_list(&resources, "apps", "v1").unwrap();
        let names: Vec<&str> =
            apps["resources"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
        assert!(names.contains(&"deployments") && names.contains(&"deployments/scale"));
        let scale =
            apps["resources"].as_array().unwrap().iter().find(|r| r["name"] == "deployments/scale").unwrap();
        assert_eq!((scale["kind"].as_str(), scale["group"].as_str()), (Some("Scale"), Some("autoscaling")));
        assert!(api_resource_list(&resources, "apps", "v2").is_none());
        let core = aggregated(&resources, true);
        assert_eq!(core["items"][0]["metadata"]["name"], "");
        let pods = core["items"][0]["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "pods")
            .unwrap();
        assert_eq!(pods["scope"], "Namespaced");
    }
}
