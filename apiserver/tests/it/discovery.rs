//! rtcd-apiserver's discovery compared with kube-apiserver's: every resource and subresource a
//! default kube-apiserver serves (its GA group versions, from kubernetes' own `api/discovery`
//! documents, condensed in `testdata/kube-discovery.txt` with their sources) is served with
//! kube's scope, kind, verbs, short names and categories, or is listed in the README's "Not
//! served yet" table with the reason. A row there for something now served fails too, so the
//! table stays true.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::{ApiServer, Backend, get_bytes};

const KUBE: &str = include_str!("testdata/kube-discovery.txt");
const README: &str = include_str!("../../../README.md");
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// One resource or subresource as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    scope: String,
    /// `Kind`, or `Kind@group/version` when it answers in another group version.
    kind: String,
    verbs: Vec<String>,
    short: Vec<String>,
    categories: Vec<String>,
}

/// kube's, by (groupVersion, name).
fn kube() -> BTreeMap<(String, String), Entry> {
    let mut out = BTreeMap::new();
    for line in KUBE.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let list = |prefix: &str| -> Vec<String> {
            fields[5..]
                .iter()
                .find_map(|f| f.strip_prefix(prefix))
                .map(|v| v.split(',').map(str::to_owned).collect())
                .unwrap_or_default()
        };
        let entry = Entry {
            scope: fields[2].to_owned(),
            kind: fields[3].to_owned(),
            verbs: sorted(fields[4].split(',').map(str::to_owned).collect()),
            short: list("short="),
            categories: list("categories="),
        };
        out.insert((fields[0].to_owned(), fields[1].to_owned()), entry);
    }
    out
}

fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

/// rtcd's, from its aggregated discovery of `/api` and `/apis`.
async fn served(addr: &str) -> BTreeMap<(String, String), Entry> {
    let mut out = BTreeMap::new();
    for root in ["/api", "/apis"] {
        let (code, _, body) = get_bytes(addr, root, AGGREGATED).await;
        assert_eq!(code, 200, "{root}");
        let doc: Value = serde_json::from_slice(&body).unwrap();
        for group in doc["items"].as_array().unwrap() {
            let group_name = group["metadata"]["name"].as_str().unwrap_or_default();
            for version in group["versions"].as_array().unwrap() {
                let version_name = version["version"].as_str().unwrap();
                let gv = match group_name {
                    "" => version_name.to_owned(),
                    g => format!("{g}/{version_name}"),
                };
                let kind_of = |response: &Value| {
                    let (g, v) = (
                        response["group"].as_str().unwrap_or(""),
                        response["version"].as_str().unwrap_or(""),
                    );
                    let kind = response["kind"].as_str().unwrap_or_default();
                    if v.is_empty() || (g, v) == (group_name, version_name) {
                        kind.to_owned()
                    } else if g.is_empty() {
                        format!("{kind}@{v}")
                    } else {
                        format!("{kind}@{g}/{v}")
                    }
                };
                for resource in version["resources"].as_array().unwrap() {
                    let name = resource["resource"].as_str().unwrap().to_owned();
                    let scope = resource["scope"].as_str().unwrap().to_owned();
                    out.insert(
                        (gv.clone(), name.clone()),
                        Entry {
                            scope: scope.clone(),
                            kind: kind_of(&resource["responseKind"]),
                            verbs: sorted(strings(&resource["verbs"])),
                            short: strings(&resource["shortNames"]),
                            categories: strings(&resource["categories"]),
                        },
                    );
                    for sub in resource["subresources"].as_array().into_iter().flatten() {
                        let sub_name = format!("{name}/{}", sub["subresource"].as_str().unwrap());
                        out.insert(
                            (gv.clone(), sub_name),
                            Entry {
                                scope: scope.clone(),
                                kind: kind_of(&sub["responseKind"]),
                                verbs: sorted(strings(&sub["verbs"])),
                                short: Vec::new(),
                                categories: Vec::new(),
                            },
                        );
                    }
                }
            }
        }
    }
    out
}

/// The README's "not served yet" rows: `` | `<groupVersion> <name>` | reason | ``.
fn not_served() -> Vec<(String, String)> {
    README
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .filter_map(|(key, _)| key.split_once(' '))
        .map(|(gv, name)| (gv.to_owned(), name.to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_matches_kube_or_the_readme_says_why_not() {
    let api = ApiServer::start(Backend::Rtcd).await;
    let addr = api.url.trim_start_matches("http://");
    let served = served(addr).await;
    let missing_ok = not_served();
    let mut problems = Vec::new();
    for (key, theirs) in kube() {
        match served.get(&key) {
            Some(ours) if ours == &theirs => {}
            Some(ours) => problems.push(format!("{} {}: kube {theirs:?}, rtcd {ours:?}", key.0, key.1)),
            None if missing_ok.contains(&key) => {}
            None => problems.push(format!("{} {}: not served, and not in the README's table", key.0, key.1)),
        }
    }
    for key in &missing_ok {
        if served.contains_key(key) {
            problems.push(format!("{} {}: served, but the README says it is not", key.0, key.1));
        }
    }
    assert!(problems.is_empty(), "{} differences:\n{}", problems.len(), problems.join("\n"));
    assert!(!missing_ok.is_empty(), "the README's table was not found");
}
