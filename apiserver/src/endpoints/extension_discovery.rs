//! Extension servers' group versions in this server's discovery, as kube's
//! aggregator lists them: every APIService naming a Service in the legacy
//! documents (`/apis`, `/apis/<group>`), in kube's order (groups by their
//! highest `groupPriorityMinimum`, versions by `versionPriority`); in
//! aggregated discovery, the resources each server listed at its last
//! discovery check (`Stale` while it is not available); in `/openapi/v3`,
//! where each server's document of the group version is.

use std::cmp::Reverse;

use serde_json::{Value, json};

use super::discovery::kube_version_order;
use crate::aggregator::{Learned, Target};

/// An extension server's group version and what it last said it serves.
pub type Remote = (Target, Option<Learned>);

/// The remote group versions not among `local` groups, grouped by group
/// in kube's order.
fn by_group<'a>(remotes: &'a [Remote], local: &[String]) -> Vec<(&'a str, Vec<&'a Remote>)> {
    let mut groups: Vec<(&str, Vec<&Remote>)> = Vec::new();
    for remote in remotes.iter().filter(|(t, _)| !t.group.is_empty() && !local.contains(&t.group)) {
        match groups.iter_mut().find(|(g, _)| *g == remote.0.group) {
            Some((_, members)) => members.push(remote),
            None => groups.push((&remote.0.group, vec![remote])),
        }
    }
    for (_, members) in &mut groups {
        members.sort_by_key(|(t, _)| (Reverse(t.version_priority), kube_version_order(&t.version)));
    }
    let top =
        |members: &Vec<&Remote>| members.iter().map(|(t, _)| t.group_priority).max().unwrap_or_default();
    groups.sort_by(|a, b| top(&b.1).cmp(&top(&a.1)).then_with(|| a.0.cmp(b.0)));
    groups
}

/// The `APIGroup` of each remote group, for `/apis`.
pub fn api_groups(remotes: &[Remote], local: &[String]) -> Vec<Value> {
    by_group(remotes, local).into_iter().map(|(group, members)| api_group(group, &members)).collect()
}

/// `/apis/<group>` of a remote group; None when no APIService names it.
pub fn api_group_of(remotes: &[Remote], group: &str) -> Option<Value> {
    let (group, members) = by_group(remotes, &[]).into_iter().find(|(g, _)| *g == group)?;
    Some(api_group(group, &members))
}

fn api_group(group: &str, members: &[&Remote]) -> Value {
    let versions: Vec<Value> = members
        .iter()
        .map(|(t, _)| json!({"groupVersion": format!("{group}/{}", t.version), "version": t.version}))
        .collect();
    let preferred = versions.first().cloned().unwrap_or(Value::Null);
    json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": preferred})
}

/// The `APIGroupDiscovery` of each remote group whose servers have been
/// heard from, for aggregated `/apis`.
pub fn aggregated_groups(remotes: &[Remote], local: &[String]) -> Vec<Value> {
    let mut items = Vec::new();
    for (group, members) in by_group(remotes, local) {
        let versions: Vec<Value> = members
            .iter()
            .filter_map(|(target, learned)| Some(aggregated_version(target, learned.as_ref()?)))
            .collect();
        if !versions.is_empty() {
            items.push(json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions}));
        }
    }
    items
}

/// One group version's `APIVersionDiscovery` from the `APIResourceList`
/// its server gave: subresources (`pods/log`) under their resource.
fn aggregated_version(target: &Target, learned: &Learned) -> Value {
    let listed = learned.resources["resources"].as_array().map(Vec::as_slice).unwrap_or_default();
    let kind_of = |r: &Value| {
        let text = |key: &str, default: &str| r[key].as_str().unwrap_or(default).to_string();
        json!({"group": text("group", &target.group), "version": text("version", &target.version),
            "kind": text("kind", "")})
    };
    let mut resources: Vec<Value> = Vec::new();
    for r in listed.iter().filter(|r| !r["name"].as_str().unwrap_or_default().contains('/')) {
        let mut entry = json!({
            "resource": r["name"],
            "responseKind": kind_of(r),
            "scope": if r["namespaced"] == true { "Namespaced" } else { "Cluster" },
            "singularResource": r["singularName"].as_str().unwrap_or_default(),
            "verbs": r["verbs"].as_array().cloned().unwrap_or_default(),
        });
        for key in ["shortNames", "categories"] {
            if r[key].as_array().is_some_and(|a| !a.is_empty()) {
                entry[key] = r[key].clone();
            }
        }
        resources.push(entry);
    }
    for r in listed {
        let name = r["name"].as_str().unwrap_or_default();
        let Some((parent, sub)) = name.split_once('/') else { continue };
        let Some(entry) = resources.iter_mut().find(|e| e["resource"] == parent) else { continue };
        let subresource = json!({"subresource": sub, "responseKind": kind_of(r),
            "verbs": r["verbs"].as_array().cloned().unwrap_or_default()});
        match entry["subresources"].as_array_mut() {
            Some(subresources) => subresources.push(subresource),
            None => entry["subresources"] = json!([subresource]),
        }
    }
    let freshness = if target.available { "Current" } else { "Stale" };
    json!({"version": target.version, "resources": resources, "freshness": freshness})
}

/// `/openapi/v3` entries of the remote group versions whose servers said
/// where their documents are: the path and its `serverRelativeURL`.
pub fn openapi_paths(remotes: &[Remote], local: &[String]) -> Vec<(String, String)> {
    remotes
        .iter()
        .filter(|(t, _)| !local.contains(&t.group))
        .filter_map(|(target, learned)| {
            let url = learned.as_ref()?.openapi_url.clone()?;
            Some((target.discovery_path().trim_start_matches('/').to_string(), url))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(group: &str, version: &str, priorities: (i64, i64), learned: Option<Value>) -> Remote {
        let service = json!({
            "metadata": {"name": format!("{version}.{group}")},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": priorities.0,
                "versionPriority": priorities.1, "service": {"namespace": "ns", "name": "api"}},
            "status": {"conditions": [{"type": "Available", "status": "True"}]},
        });
        let learned = learned.map(|resources| Learned::new(resources, None));
        (Target::of(&service).unwrap(), learned)
    }

    #[test]
    fn groups_and_versions_come_in_kube_priority_order() {
        let remotes = vec![
            remote("b.example.com", "v1beta1", (100, 10), None),
            remote("b.example.com", "v1", (100, 20), None),
            remote("a.example.com", "v1", (50, 10), None),
            remote("c.example.com", "v2", (2000, 10), None),
            remote("apps", "v9", (1, 1), None),
        ];
        let groups = api_groups(&remotes, &["apps".to_string()]);
        let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["c.example.com", "b.example.com", "a.example.com"], "apps is served here");
        assert_eq!(groups[1]["preferredVersion"]["version"], "v1");
        assert_eq!(groups[1]["versions"][1]["groupVersion"], "b.example.com/v1beta1");
        assert!(api_group_of(&remotes, "d.example.com").is_none());
    }

    #[test]
    fn a_resource_list_becomes_aggregated_discovery() {
        let list = json!({"kind": "APIResourceList", "groupVersion": "w.example.com/v1", "resources": [
            {"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
                "verbs": ["get", "list"], "shortNames": ["wd"]},
            {"name": "widgets/status", "singularName": "", "namespaced": true, "kind": "Widget",
                "verbs": ["get", "patch"]},
        ]});
        let remotes = vec![
            remote("w.example.com", "v1", (100, 10), Some(list)),
            remote("x.example.com", "v1", (1, 1), None),
        ];
        let items = aggregated_groups(&remotes, &[]);
        assert_eq!(items.len(), 1, "x.example.com was never heard from");
        let version = &items[0]["versions"][0];
        assert_eq!(version["freshness"], "Current");
        let widgets = &version["resources"][0];
        assert_eq!(widgets["resource"], "widgets");
        assert_eq!(
            widgets["responseKind"],
            json!({"group": "w.example.com", "version": "v1", "kind": "Widget"})
        );
        assert_eq!(widgets["scope"], "Namespaced");
        assert_eq!(widgets["shortNames"], json!(["wd"]));
        assert_eq!(widgets["subresources"][0]["subresource"], "status");
    }
}
