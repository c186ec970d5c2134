//! RBAC's objects as the authorizer holds them, read from their JSON, and
//! kube's matching rules: which subjects a binding names, which requests a
//! rule covers.

use std::sync::Arc;

use serde_json::Value;

use crate::authz::{NonResourceRule, ResourceRule, Target};
use crate::request::UserInfo;

/// A PolicyRule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// A RoleBinding (namespace set) or ClusterRoleBinding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub name: String,
    /// "" for a ClusterRoleBinding.
    pub namespace: String,
    /// `Role` or `ClusterRole`.
    pub role_kind: String,
    pub role_name: String,
    pub subjects: Vec<Subject>,
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn text(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_string()
}

impl Rule {
    pub fn from_json(rule: &Value) -> Rule {
        Rule {
            verbs: strings(&rule["verbs"]),
            api_groups: strings(&rule["apiGroups"]),
            resources: strings(&rule["resources"]),
            resource_names: strings(&rule["resourceNames"]),
            non_resource_urls: strings(&rule["nonResourceURLs"]),
        }
    }

    /// The `rules` of a Role or ClusterRole.
    pub fn all_of(role: &Value) -> Arc<Vec<Rule>> {
        Arc::new(
            role["rules"].as_array().map(|r| r.iter().map(Rule::from_json).collect()).unwrap_or_default(),
        )
    }

    /// Whether this rule allows `verb` on `target` (kube's `RuleAllows`).
    pub fn allows(&self, verb: &str, target: &Target) -> bool {
        if !has(&self.verbs, verb) {
            return false;
        }
        match target {
            Target::Resource { group, resource, subresource, name, .. } => {
                has(&self.api_groups, group)
                    && self.resource_matches(resource, subresource)
                    && (self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name))
            }
            Target::Path(path) => self.non_resource_urls.iter().any(|url| url_matches(url, path)),
        }
    }

    fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        let combined =
            if subresource.is_empty() { resource.to_string() } else { format!("{resource}/{subresource}") };
        self.resources.iter().any(|r| {
            r == "*"
                || *r == combined
                || (!subresource.is_empty() && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
        })
    }

    /// The rule as SelfSubjectRulesReview lists it: one entry per kind of
    /// rule it holds.
    pub fn listed(&self) -> (Option<ResourceRule>, Option<NonResourceRule>) {
        let resource = (!self.resources.is_empty() || !self.api_groups.is_empty()).then(|| ResourceRule {
            verbs: self.verbs.clone(),
            api_groups: self.api_groups.clone(),
            resources: self.resources.clone(),
            resource_names: self.resource_names.clone(),
        });
        let non_resource = (!self.non_resource_urls.is_empty()).then(|| NonResourceRule {
            verbs: self.verbs.clone(),
            non_resource_urls: self.non_resource_urls.clone(),
        });
        (resource, non_resource)
    }
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

/// `*`, the exact path, or a prefix ending in `*`.
fn url_matches(rule: &str, path: &str) -> bool {
    rule == "*" || rule == path || rule.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix))
}

impl Binding {
    pub fn from_json(binding: &Value) -> Binding {
        let metadata = &binding["metadata"];
        Binding {
            name: text(metadata, "name"),
            namespace: text(metadata, "namespace"),
            role_kind: text(&binding["roleRef"], "kind"),
            role_name: text(&binding["roleRef"], "name"),
            subjects: binding["subjects"]
                .as_array()
                .map(|subjects| {
                    subjects
                        .iter()
                        .map(|s| Subject {
                            kind: text(s, "kind"),
                            name: text(s, "name"),
                            namespace: text(s, "namespace"),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The first subject that names `user`.
    pub fn subject_for(&self, user: &UserInfo) -> Option<&Subject> {
        self.subjects.iter().find(|s| self.names(s, user))
    }

    fn names(&self, subject: &Subject, user: &UserInfo) -> bool {
        match subject.kind.as_str() {
            "User" => subject.name == user.name,
            "Group" => user.groups.contains(&subject.name),
            "ServiceAccount" => {
                let namespace =
                    if subject.namespace.is_empty() { &self.namespace } else { &subject.namespace };
                !namespace.is_empty()
                    && user.name == format!("system:serviceaccount:{namespace}:{}", subject.name)
            }
            _ => false,
        }
    }

    /// `ClusterRoleBinding "b" of ClusterRole "r" to Group "g"`, as RBAC's
    /// allow reasons say it.
    pub fn describe(&self, subject: &Subject) -> String {
        let binding = if self.namespace.is_empty() {
            format!("ClusterRoleBinding {}", quote(&self.name))
        } else {
            format!("RoleBinding {}", quote(&format!("{}/{}", self.name, self.namespace)))
        };
        let who = if subject.kind == "ServiceAccount" {
            let namespace = if subject.namespace.is_empty() { &self.namespace } else { &subject.namespace };
            format!("ServiceAccount {}", quote(&format!("{}/{namespace}", subject.name)))
        } else {
            format!("{} {}", subject.kind, quote(&subject.name))
        };
        format!("{binding} of {} {} to {who}", self.role_kind, quote(&self.role_name))
    }
}

fn quote(text: &str) -> String {
    crate::errors::go_quote(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pods(verb: &str, sub: &str, name: &str) -> (String, Target) {
        (
            verb.to_string(),
            Target::Resource {
                group: String::new(),
                version: "v1".into(),
                resource: "pods".into(),
                subresource: sub.into(),
                namespace: "dev".into(),
                name: name.into(),
            },
        )
    }

    fn rule(value: Value) -> Rule {
        Rule::from_json(&value)
    }

    #[test]
    fn resource_rules_match_as_kubes_do() {
        let read = rule(json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}));
        let (verb, target) = pods("get", "", "a");
        assert!(read.allows(&verb, &target));
        let (verb, target) = pods("delete", "", "a");
        assert!(!read.allows(&verb, &target));
        // `pods` does not cover `pods/log`; `pods/*` and `*/log` do.
        let (verb, target) = pods("get", "log", "a");
        assert!(!read.allows(&verb, &target));
        assert!(
            rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]})).allows(&verb, &target)
        );
        assert!(rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})).allows(&verb, &target));
        // resourceNames never cover a request without a name (list, create).
        let named = rule(
            json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
        );
        let (verb, target) = pods("get", "", "a");
        assert!(named.allows(&verb, &target));
        let (verb, target) = pods("get", "", "b");
        assert!(!named.allows(&verb, &target));
        let (verb, target) = pods("list", "", "");
        assert!(!named.allows(&verb, &target));
        // Another group is another resource.
        let apps = Target::Resource {
            group: "apps".into(),
            version: "v1".into(),
            resource: "pods".into(),
            subresource: String::new(),
            namespace: String::new(),
            name: String::new(),
        };
        assert!(!read.allows("get", &apps));
    }

    #[test]
    fn non_resource_rules_match_exactly_or_by_prefix() {
        let health = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/api/*"]}));
        assert!(health.allows("get", &Target::Path("/healthz".into())));
        assert!(!health.allows("get", &Target::Path("/healthz/ping".into())));
        assert!(health.allows("get", &Target::Path("/api/v1".into())));
        assert!(!health.allows("post", &Target::Path("/healthz".into())));
        assert!(!health.allows("get", &pods("get", "", "").1));
    }

    #[test]
    fn subjects_name_users_groups_and_service_accounts() {
        let binding = Binding::from_json(&json!({
            "metadata": {"name": "b", "namespace": "dev"},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "jane"},
                {"kind": "Group", "name": "ops"},
                {"kind": "ServiceAccount", "name": "robot"},
            ],
        }));
        let user = |name: &str, groups: &[&str]| UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        };
        assert_eq!(binding.subject_for(&user("jane", &[])).map(|s| s.kind.as_str()), Some("User"));
        assert_eq!(binding.subject_for(&user("bob", &["ops"])).map(|s| s.kind.as_str()), Some("Group"));
        let robot = user("system:serviceaccount:dev:robot", &[]);
        let subject = binding.subject_for(&robot).unwrap();
        assert_eq!(
            binding.describe(subject),
            "RoleBinding \"b/dev\" of ClusterRole \"view\" to ServiceAccount \"robot/dev\""
        );
        assert_eq!(binding.subject_for(&user("system:serviceaccount:other:robot", &[])), None);
        // A ClusterRoleBinding's ServiceAccount subject needs its namespace.
        let cluster = Binding { namespace: String::new(), ..binding.clone() };
        assert_eq!(cluster.subject_for(&robot), None);
    }
}
