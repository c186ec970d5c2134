//! Matching a request against FlowSchemas as kube's APF controller does:
//! schemas in order of `matchingPrecedence` (then name), a schema whose
//! priority level is missing skipped, the first whose rules match wins;
//! nothing matching falls to `catch-all`.

use std::collections::HashMap;

use k8s_openapi::api::flowcontrol::v1 as flowcontrol;

use crate::request::{RequestInfo, ResourceRequest, UserInfo};

/// kube's name for "every" in rules and subjects.
const ALL: &str = "*";
const CATCH_ALL: &str = "catch-all";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// Where a request goes: its schema and priority level (names and uids),
/// and the flow it belongs to within the level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub schema: String,
    pub schema_uid: String,
    pub level: String,
    pub level_uid: String,
    /// The distinguisher's value: the user or the namespace ("" for none).
    pub flow: String,
}

/// The schemas in matching order, and the uids of the levels that exist.
#[derive(Debug, Default)]
pub(super) struct Config {
    schemas: Vec<flowcontrol::FlowSchema>,
    levels: HashMap<String, String>,
}

impl Config {
    pub(super) fn new(
        mut schemas: Vec<flowcontrol::FlowSchema>,
        levels: Vec<flowcontrol::PriorityLevelConfiguration>,
    ) -> Config {
        schemas.sort_by_key(|s| (precedence(s), name_of(&s.metadata).to_string()));
        let levels = levels
            .into_iter()
            .map(|l| (name_of(&l.metadata).to_string(), l.metadata.uid.unwrap_or_default()))
            .collect();
        Config { schemas, levels }
    }

    pub(super) fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<Classification> {
        let usable = |s: &&flowcontrol::FlowSchema| self.levels.contains_key(level_of(s));
        let matched = self.schemas.iter().filter(usable).find(|s| matches(s, user, info));
        let schema = matched
            .or_else(|| self.schemas.iter().filter(usable).find(|s| name_of(&s.metadata) == CATCH_ALL))?;
        let level = level_of(schema);
        Some(Classification {
            schema: name_of(&schema.metadata).to_string(),
            schema_uid: schema.metadata.uid.clone().unwrap_or_default(),
            level: level.to_string(),
            level_uid: self.levels.get(level).cloned().unwrap_or_default(),
            flow: flow(schema, user, info),
        })
    }
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

fn precedence(schema: &flowcontrol::FlowSchema) -> i32 {
    schema.spec.matching_precedence.unwrap_or(0)
}

fn level_of(schema: &flowcontrol::FlowSchema) -> &str {
    schema.spec.priority_level_configuration.name.as_str()
}

fn matches(schema: &flowcontrol::FlowSchema, user: &UserInfo, info: &RequestInfo) -> bool {
    let rules = schema.spec.rules.as_deref().unwrap_or_default();
    rules.iter().any(|rule| rule_matches(rule, user, info))
}

fn rule_matches(rule: &flowcontrol::PolicyRulesWithSubjects, user: &UserInfo, info: &RequestInfo) -> bool {
    if !rule.subjects.iter().any(|s| subject_matches(s, user)) {
        return false;
    }
    match info {
        RequestInfo::Resource(request) => {
            rule.resource_rules.iter().flatten().any(|r| resource_rule_matches(r, request))
        }
        RequestInfo::NonResource { verb, path } => {
            rule.non_resource_rules.iter().flatten().any(|r| non_resource_rule_matches(r, verb, path))
        }
    }
}

fn subject_matches(subject: &flowcontrol::Subject, user: &UserInfo) -> bool {
    match subject.kind.as_str() {
        "User" => subject.user.as_ref().is_some_and(|u| u.name == ALL || u.name == user.name),
        "Group" => subject.group.as_ref().is_some_and(|g| g.name == ALL || user.groups.contains(&g.name)),
        "ServiceAccount" => subject.service_account.as_ref().is_some_and(|account| {
            let namespace_prefix = format!("{SERVICE_ACCOUNT_PREFIX}{}:", account.namespace);
            match user.name.strip_prefix(&namespace_prefix) {
                Some(name) => account.name == ALL || account.name == name,
                None => false,
            }
        }),
        _ => false,
    }
}

fn listed(items: &[String], wanted: &str) -> bool {
    items.iter().any(|item| item == ALL || item == wanted)
}

fn resource_rule_matches(rule: &flowcontrol::ResourcePolicyRule, request: &ResourceRequest) -> bool {
    let resource = match &request.subresource {
        Some(sub) => format!("{}/{sub}", request.resource),
        None => request.resource.clone(),
    };
    if !listed(&rule.verbs, request.verb)
        || !listed(&rule.api_groups, &request.group)
        || !listed(&rule.resources, &resource)
    {
        return false;
    }
    match &request.namespace {
        Some(namespace) if !namespace.is_empty() => {
            listed(rule.namespaces.as_deref().unwrap_or_default(), namespace)
        }
        _ => rule.cluster_scope == Some(true),
    }
}

fn non_resource_rule_matches(rule: &flowcontrol::NonResourcePolicyRule, verb: &str, path: &str) -> bool {
    listed(&rule.verbs, verb)
        && rule.non_resource_urls.iter().any(|url| {
            url == ALL || url == path || url.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix))
        })
}

/// The flow within the level, by the schema's distinguisher.
fn flow(schema: &flowcontrol::FlowSchema, user: &UserInfo, info: &RequestInfo) -> String {
    let method = schema.spec.distinguisher_method.as_ref().map(|m| m.type_.as_str());
    match (method, info) {
        (Some("ByUser"), _) => user.name.clone(),
        (Some("ByNamespace"), RequestInfo::Resource(request)) => {
            request.namespace.clone().unwrap_or_default()
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use axum::http::Method;

    use super::*;

    /// kube's bootstrap schemas and levels, each with a uid of its name.
    fn bootstrap_objects() -> (Vec<flowcontrol::FlowSchema>, Vec<flowcontrol::PriorityLevelConfiguration>) {
        let (schemas, levels) = crate::flowcontrol::tests::bootstrap_config();
        (
            schemas.into_iter().map(|s| serde_json::from_value(s).unwrap()).collect(),
            levels.into_iter().map(|l| serde_json::from_value(l).unwrap()).collect(),
        )
    }

    fn bootstrap_config() -> Config {
        let (schemas, levels) = bootstrap_objects();
        Config::new(schemas, levels)
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: String::new(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            extra: BTreeMap::new(),
        }
    }

    fn classified(config: &Config, user: &UserInfo, method: Method, path: &str) -> (String, String, String) {
        let info = RequestInfo::parse(&method, path, false);
        let c = config.classify(user, &info).unwrap();
        assert_eq!((c.schema_uid.as_str(), c.level_uid.as_str()), (c.schema.as_str(), c.level.as_str()));
        (c.schema, c.level, c.flow)
    }

    #[test]
    fn requests_go_where_kubes_bootstrap_configuration_sends_them() {
        let config = bootstrap_config();
        let authenticated = ["system:authenticated"];
        let admin = user("admin", &["system:masters", "system:authenticated"]);
        assert_eq!(classified(&config, &admin, Method::GET, "/api/v1/pods").0, "exempt");
        let alice = user("alice", &authenticated);
        assert_eq!(
            classified(&config, &alice, Method::GET, "/api/v1/namespaces/a/pods"),
            ("global-default".into(), "global-default".into(), "alice".into())
        );
        assert_eq!(classified(&config, &alice, Method::GET, "/healthz").0, "probes");
        let node = user("system:node:n1", &["system:nodes", "system:authenticated"]);
        assert_eq!(classified(&config, &node, Method::PUT, "/api/v1/nodes/n1/status").0, "system-node-high");
        assert_eq!(classified(&config, &node, Method::GET, "/api/v1/pods").0, "system-nodes");
        let account =
            user("system:serviceaccount:kube-system:deployment-controller", &["system:serviceaccounts"]);
        assert_eq!(
            classified(&config, &account, Method::GET, "/apis/apps/v1/namespaces/web/deployments"),
            ("kube-system-service-accounts".into(), "workload-high".into(), "web".into())
        );
        let elsewhere = user("system:serviceaccount:web:builder", &["system:serviceaccounts"]);
        assert_eq!(
            classified(&config, &elsewhere, Method::GET, "/api/v1/namespaces/web/pods").0,
            "service-accounts"
        );
        let anonymous = user("system:anonymous", &["system:unauthenticated"]);
        assert_eq!(classified(&config, &anonymous, Method::GET, "/api/v1/pods").0, "global-default");
        // In no group at all: only catch-all is left.
        let nobody = user("nobody", &[]);
        assert_eq!(
            classified(&config, &nobody, Method::GET, "/api/v1/pods"),
            ("catch-all".into(), "catch-all".into(), "nobody".into())
        );
    }

    #[test]
    fn a_schema_whose_level_is_missing_is_passed_over() {
        let mine = serde_json::json!({"metadata": {"name": "mine", "uid": "m"}, "spec": {"matchingPrecedence": 5,
            "priorityLevelConfiguration": {"name": "gone"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "*"}}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}});
        let (mut schemas, levels) = bootstrap_objects();
        schemas.push(serde_json::from_value(mine).unwrap());
        let config = Config::new(schemas, levels);
        assert_eq!(name_of(&config.schemas[2].metadata), "mine", "matched third, after exempt and probes");
        let alice = user("alice", &["system:authenticated"]);
        assert_eq!(classified(&config, &alice, Method::GET, "/version").0, "global-default");
    }
}
