//! The API Priority and Fairness objects a kube-apiserver puts in place on
//! its own: two mandatory priority levels and flow schemas (`exempt` and
//! `catch-all`) that must always exist, and a suggested set on top of them
//! that a fresh cluster starts with. The data mirrors the configuration kube
//! 1.37 ships in k8s.io/apiserver (`pkg/apis/flowcontrol/bootstrap`), written
//! out the way the v1 API serves it: every field kube's v1 defaulting would
//! fill is already filled, and fields kube leaves empty (a false
//! `clusterScope`, an unset `borrowingLimitPercent`) are left out.
//!
//! Each object comes bare: name and spec only. Whoever stores it adds the
//! [`AUTO_UPDATE`] annotation.

use serde_json::{Value, json};

/// The annotation kube's config producer sets on the objects it maintains.
pub const AUTO_UPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

const API_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";
const ALL: &str = "*";
const COORDINATION: &str = "coordination.k8s.io";
/// How long a queue may grow in every suggested queuing level.
const QUEUE_LENGTH_LIMIT: i64 = 50;

const MASTERS: &str = "system:masters";
const NODES: &str = "system:nodes";
const AUTHENTICATED: &str = "system:authenticated";
const UNAUTHENTICATED: &str = "system:unauthenticated";
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
const SCHEDULER: &str = "system:kube-scheduler";

const BY_USER: Option<&str> = Some("ByUser");
const BY_NAMESPACE: Option<&str> = Some("ByNamespace");

/// `catch-all` (refuses what it cannot serve at once) and `exempt`.
pub fn mandatory_priority_levels() -> Vec<Value> {
    vec![
        limited("catch-all", 5, 0, json!({"type": "Reject"})),
        priority_level(
            "exempt",
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
    ]
}

/// The limited levels a fresh cluster gets besides the mandatory ones.
pub fn suggested_priority_levels() -> Vec<Value> {
    vec![
        queued("system", 30, 33, 64, 6),
        queued("node-high", 40, 25, 64, 6),
        queued("leader-election", 10, 0, 16, 4),
        queued("workload-high", 40, 50, 128, 6),
        queued("workload-low", 100, 90, 128, 6),
        queued("global-default", 20, 50, 128, 6),
    ]
}

/// `exempt` (cluster admins, matched first) and `catch-all` (everyone, matched last).
pub fn mandatory_flow_schemas() -> Vec<Value> {
    vec![
        flow_schema("exempt", "exempt", 1, None, everything(groups(&[MASTERS]))),
        flow_schema("catch-all", "catch-all", 10000, BY_USER, everything(everyone())),
    ]
}

/// The schemas sorting a fresh cluster's traffic into the suggested levels.
pub fn suggested_flow_schemas() -> Vec<Value> {
    let controller_manager = everything(users(&[CONTROLLER_MANAGER]));
    let scheduler = everything(users(&[SCHEDULER]));
    let kube_system = everything(kube_system_service_accounts());
    let service_accounts = everything(groups(&[SERVICE_ACCOUNTS]));
    vec![
        flow_schema("system-nodes", "system", 500, BY_USER, everything(groups(&[NODES]))),
        flow_schema("system-node-high", "node-high", 400, BY_USER, node_health()),
        flow_schema("probes", "exempt", 2, None, probes()),
        flow_schema("system-leader-election", "leader-election", 100, BY_USER, leader_election()),
        flow_schema("kube-controller-manager", "workload-high", 800, BY_NAMESPACE, controller_manager),
        flow_schema("kube-scheduler", "workload-high", 800, BY_NAMESPACE, scheduler),
        flow_schema("kube-system-service-accounts", "workload-high", 900, BY_NAMESPACE, kube_system),
        flow_schema("service-accounts", "workload-low", 9000, BY_USER, service_accounts),
        flow_schema("global-default", "global-default", 9900, BY_USER, everything(everyone())),
    ]
}

fn priority_level(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name},
        "spec": spec,
    })
}

fn limited(name: &str, shares: i64, lendable: i64, limit_response: Value) -> Value {
    let limited = json!({
        "nominalConcurrencyShares": shares,
        "lendablePercent": lendable,
        "limitResponse": limit_response,
    });
    priority_level(name, json!({"type": "Limited", "limited": limited}))
}

/// A limited level that queues what it cannot serve at once.
fn queued(name: &str, shares: i64, lendable: i64, queues: i64, hand_size: i64) -> Value {
    let queuing = json!({"queues": queues, "handSize": hand_size, "queueLengthLimit": QUEUE_LENGTH_LIMIT});
    limited(name, shares, lendable, json!({"type": "Queue", "queuing": queuing}))
}

fn flow_schema(name: &str, level: &str, precedence: i64, distinguisher: Option<&str>, rule: Value) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": [rule],
    });
    if let Some(kind) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": kind});
    }
    json!({
        "apiVersion": API_VERSION,
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "spec": spec,
    })
}

/// One entry of a schema's `rules`; empty rule lists are left out.
fn rule(subjects: Vec<Value>, resource_rules: Vec<Value>, non_resource_rules: Vec<Value>) -> Value {
    let mut rule = json!({"subjects": subjects});
    if !resource_rules.is_empty() {
        rule["resourceRules"] = Value::from(resource_rules);
    }
    if !non_resource_rules.is_empty() {
        rule["nonResourceRules"] = Value::from(non_resource_rules);
    }
    rule
}

/// Every request, to any resource or URL, from `subjects`.
fn everything(subjects: Vec<Value>) -> Value {
    let resources = resource_rule(&[ALL], &[ALL], &[ALL], true);
    rule(subjects, vec![resources], vec![non_resource_rule(&[ALL], &[ALL])])
}

/// Nodes reporting their health: their Node objects and their leases.
fn node_health() -> Value {
    let nodes = resource_rule(&[ALL], &[""], &["nodes", "nodes/status"], true);
    rule(groups(&[NODES]), vec![nodes, leases(&[ALL])], Vec::new())
}

/// Health, readiness and liveness probes, from anyone.
fn probes() -> Value {
    let urls = non_resource_rule(&["get"], &["/healthz", "/readyz", "/livez"]);
    rule(everyone(), Vec::new(), vec![urls])
}

/// Controllers taking and renewing their leader-election leases.
fn leader_election() -> Value {
    let mut subjects = users(&[CONTROLLER_MANAGER, SCHEDULER]);
    subjects.extend(kube_system_service_accounts());
    rule(subjects, vec![leases(&["get", "create", "update"])], Vec::new())
}

fn leases(verbs: &[&str]) -> Value {
    resource_rule(verbs, &[COORDINATION], &["leases"], false)
}

/// A rule over resources in every namespace, and also cluster-scoped
/// ones when `cluster_scope`.
fn resource_rule(verbs: &[&str], api_groups: &[&str], resources: &[&str], cluster_scope: bool) -> Value {
    let mut rule = json!({
        "verbs": verbs,
        "apiGroups": api_groups,
        "resources": resources,
        "namespaces": [ALL],
    });
    if cluster_scope {
        rule["clusterScope"] = json!(true);
    }
    rule
}

fn non_resource_rule(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"verbs": verbs, "nonResourceURLs": urls})
}

fn everyone() -> Vec<Value> {
    groups(&[UNAUTHENTICATED, AUTHENTICATED])
}

fn groups(names: &[&str]) -> Vec<Value> {
    names.iter().map(|name| json!({"kind": "Group", "group": {"name": name}})).collect()
}

fn users(names: &[&str]) -> Vec<Value> {
    names.iter().map(|name| json!({"kind": "User", "user": {"name": name}})).collect()
}

/// Every service account of the `kube-system` namespace.
fn kube_system_service_accounts() -> Vec<Value> {
    vec![json!({"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": ALL}})]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Name, matchingPrecedence, priority level and distinguisher of each
    /// FlowSchema, in the order kube lists them.
    const MANDATORY_SCHEMAS: &[(&str, i64, &str, Option<&str>)] =
        &[("exempt", 1, "exempt", None), ("catch-all", 10000, "catch-all", Some("ByUser"))];
    const SUGGESTED_SCHEMAS: &[(&str, i64, &str, Option<&str>)] = &[
        ("system-nodes", 500, "system", Some("ByUser")),
        ("system-node-high", 400, "node-high", Some("ByUser")),
        ("probes", 2, "exempt", None),
        ("system-leader-election", 100, "leader-election", Some("ByUser")),
        ("kube-controller-manager", 800, "workload-high", Some("ByNamespace")),
        ("kube-scheduler", 800, "workload-high", Some("ByNamespace")),
        ("kube-system-service-accounts", 900, "workload-high", Some("ByNamespace")),
        ("service-accounts", 9000, "workload-low", Some("ByUser")),
        ("global-default", 9900, "global-default", Some("ByUser")),
    ];

    /// Name, type, nominalConcurrencyShares and lendablePercent of each
    /// priority level, in the order kube lists them.
    const MANDATORY_LEVELS: &[(&str, &str, i64, i64)] =
        &[("catch-all", "Limited", 5, 0), ("exempt", "Exempt", 0, 0)];
    const SUGGESTED_LEVELS: &[(&str, &str, i64, i64)] = &[
        ("system", "Limited", 30, 33),
        ("node-high", "Limited", 40, 25),
        ("leader-election", "Limited", 10, 0),
        ("workload-high", "Limited", 40, 50),
        ("workload-low", "Limited", 100, 90),
        ("global-default", "Limited", 20, 50),
    ];

    fn name(object: &Value) -> &str {
        object["metadata"]["name"].as_str().unwrap()
    }

    fn all_levels() -> Vec<Value> {
        [mandatory_priority_levels(), suggested_priority_levels()].concat()
    }

    fn all_schemas() -> Vec<Value> {
        [mandatory_flow_schemas(), suggested_flow_schemas()].concat()
    }

    fn check_schemas(schemas: &[Value], expected: &[(&str, i64, &str, Option<&str>)]) {
        let got: Vec<_> = schemas
            .iter()
            .map(|s| {
                let spec = &s["spec"];
                (
                    name(s),
                    spec["matchingPrecedence"].as_i64().unwrap(),
                    spec["priorityLevelConfiguration"]["name"].as_str().unwrap(),
                    spec["distinguisherMethod"]["type"].as_str(),
                )
            })
            .collect();
        assert_eq!(got, expected);
    }

    fn check_levels(levels: &[Value], expected: &[(&str, &str, i64, i64)]) {
        let got: Vec<_> = levels
            .iter()
            .map(|l| {
                let kind = l["spec"]["type"].as_str().unwrap();
                let block = &l["spec"][kind.to_lowercase()];
                (
                    name(l),
                    kind,
                    block["nominalConcurrencyShares"].as_i64().unwrap(),
                    block["lendablePercent"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn flow_schemas_match_kube() {
        check_schemas(&mandatory_flow_schemas(), MANDATORY_SCHEMAS);
        check_schemas(&suggested_flow_schemas(), SUGGESTED_SCHEMAS);
    }

    #[test]
    fn priority_levels_match_kube() {
        check_levels(&mandatory_priority_levels(), MANDATORY_LEVELS);
        check_levels(&suggested_priority_levels(), SUGGESTED_LEVELS);
    }

    #[test]
    fn every_schema_refers_to_a_known_level() {
        let levels = all_levels();
        let names: HashSet<_> = levels.iter().map(name).collect();
        for schema in all_schemas() {
            let level = schema["spec"]["priorityLevelConfiguration"]["name"].as_str().unwrap();
            assert!(names.contains(level), "{} refers to missing level {level}", name(&schema));
        }
    }

    #[test]
    fn names_are_unique() {
        for objects in [all_levels(), all_schemas()] {
            let names: HashSet<_> = objects.iter().map(name).collect();
            assert_eq!(names.len(), objects.len());
        }
    }

    #[test]
    fn exempt_and_catch_all_schemas_are_mandatory() {
        let mandatory = mandatory_flow_schemas();
        let precedence = |wanted: &str| {
            let schema = mandatory.iter().find(|s| name(s) == wanted).unwrap();
            schema["spec"]["matchingPrecedence"].as_i64().unwrap()
        };
        assert_eq!(precedence("exempt"), 1);
        assert_eq!(precedence("catch-all"), 10000);
    }

    #[test]
    fn objects_are_bare_v1() {
        for (objects, kind) in [(all_levels(), "PriorityLevelConfiguration"), (all_schemas(), "FlowSchema")] {
            for object in objects {
                assert_eq!(object["apiVersion"], API_VERSION);
                assert_eq!(object["kind"], kind);
                assert_eq!(object["metadata"].as_object().unwrap().len(), 1, "{object}");
                assert!(object.get("status").is_none());
            }
        }
    }

    #[test]
    fn limit_responses() {
        for level in all_levels() {
            let spec = &level["spec"];
            if spec["type"] == "Exempt" {
                assert!(spec.get("limited").is_none());
                continue;
            }
            assert!(spec["limited"].get("borrowingLimitPercent").is_none());
            let response = &spec["limited"]["limitResponse"];
            if name(&level) == "catch-all" {
                assert_eq!(response, &json!({"type": "Reject"}));
            } else {
                assert_eq!(response["type"], "Queue");
                assert_eq!(response["queuing"]["queueLengthLimit"], 50);
            }
        }
    }

    #[test]
    fn rules_use_kube_subjects() {
        let schemas = suggested_flow_schemas();
        let rules =
            |wanted: &str| schemas.iter().find(|s| name(s) == wanted).unwrap()["spec"]["rules"].clone();
        let probes = &rules("probes")[0];
        assert_eq!(probes["subjects"][1]["group"]["name"], "system:authenticated");
        assert_eq!(
            probes["nonResourceRules"][0]["nonResourceURLs"],
            json!(["/healthz", "/readyz", "/livez"])
        );
        assert!(probes.get("resourceRules").is_none());
        let election = &rules("system-leader-election")[0];
        assert_eq!(election["subjects"].as_array().unwrap().len(), 3);
        assert_eq!(
            election["subjects"][2]["serviceAccount"],
            json!({"namespace": "kube-system", "name": "*"})
        );
        let lease = &election["resourceRules"][0];
        assert_eq!(lease["apiGroups"], json!(["coordination.k8s.io"]));
        assert!(lease.get("clusterScope").is_none());
        let node_high = &rules("system-node-high")[0]["resourceRules"];
        assert_eq!(node_high[0]["apiGroups"], json!([""]));
        assert_eq!(node_high[0]["clusterScope"], true);
    }
}
