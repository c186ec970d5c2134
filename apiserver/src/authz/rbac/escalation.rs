//! RBAC's escalation check (kube enforces it in the RBAC objects' storage):
//! no one grants permissions they do not hold. A Role or ClusterRole may
//! be written by a user holding every rule in it (or the `escalate` verb on
//! it); a binding by a user holding every rule of the role it binds (or the
//! `bind` verb on that role). `system:masters` may do either.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;

use super::RbacIndex;
use super::index::GROUP;
use super::rules::Rule;
use crate::admission::{Attributes as Write, Operation, Plugin};
use crate::authz::{Attributes, MASTERS, NonResourceRule, ResourceRule, Rules, Union};
use crate::errors::{ApiError, go_quote};

/// The admission-chain step that runs the check on RBAC writes.
#[derive(Default)]
pub struct EscalationCheck {
    /// Set once the authorizers exist (they follow the stores this check
    /// belongs to).
    authority: OnceLock<(Arc<Union>, RbacIndex)>,
}

impl std::fmt::Debug for EscalationCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EscalationCheck").field("ready", &self.authority.get().is_some()).finish()
    }
}

impl EscalationCheck {
    pub fn set_authority(&self, authorizer: Arc<Union>, index: RbacIndex) {
        let _ = self.authority.set((authorizer, index));
    }
}

#[async_trait]
impl Plugin for EscalationCheck {
    fn name(&self) -> &'static str {
        "RBACEscalationCheck"
    }

    async fn validate(&self, write: &Write) -> Result<(), ApiError> {
        if write.resource.group != GROUP || !matches!(write.operation, Operation::Create | Operation::Update)
        {
            return Ok(());
        }
        // Without RBAC there is nothing to escalate to.
        let Some((authorizer, index)) = self.authority.get() else { return Ok(()) };
        if write.user.groups.iter().any(|g| g == MASTERS) {
            return Ok(());
        }
        let Some(object) = &write.object else { return Ok(()) };
        let check =
            Check { authorizer, index, write, namespace: write.namespace.clone().unwrap_or_default() };
        match write.resource.resource.as_str() {
            "roles" | "clusterroles" => check.role(object),
            "rolebindings" | "clusterrolebindings" => check.binding(object),
            _ => Ok(()),
        }
    }
}

/// One write of an RBAC object, checked against what its author holds.
struct Check<'a> {
    authorizer: &'a Union,
    index: &'a RbacIndex,
    write: &'a Write,
    namespace: String,
}

impl Check<'_> {
    /// A Role or ClusterRole: unchanged rules, the `escalate` verb on it,
    /// or every rule held (the aggregationRule only with full authority).
    fn role(&self, object: &serde_json::Value) -> Result<(), ApiError> {
        let unchanged = self.write.old_object.as_ref().is_some_and(|old| {
            old.get("rules") == object.get("rules")
                && old.get("aggregationRule") == object.get("aggregationRule")
        });
        if unchanged || self.may("escalate", &self.write.resource.resource, &self.write.name) {
            return Ok(());
        }
        if object.get("aggregationRule").is_some_and(|a| !a.is_null())
            && !holds_everything(&self.authorizer.rules_for(&self.write.user, &self.namespace))
        {
            return Err(self.forbidden("must have cluster-admin privileges to use the aggregationRule"));
        }
        self.confirm_held(&Rule::all_of(object))
    }

    /// A RoleBinding or ClusterRoleBinding: the `bind` verb on its role, or
    /// every rule of that role held.
    fn binding(&self, object: &serde_json::Value) -> Result<(), ApiError> {
        let role_ref = &object["roleRef"];
        let kind = role_ref["kind"].as_str().unwrap_or_default();
        let role = role_ref["name"].as_str().unwrap_or_default();
        let role_plural = if kind == "Role" { "roles" } else { "clusterroles" };
        if self.may("bind", role_plural, role) {
            return Ok(());
        }
        match self.index.rules_of_role(kind, &self.namespace, role) {
            Ok(wanted) => self.confirm_held(&wanted),
            Err(e) => Err(self.forbidden(&e)),
        }
    }

    /// Whether the author may `verb` the RBAC object `plural`/`name`.
    fn may(&self, verb: &str, plural: &str, name: &str) -> bool {
        let user = self.write.user.clone();
        self.authorizer.allows(&Attributes::resource(user, verb, GROUP, plural, &self.namespace, name))
    }

    /// Refuses unless the author holds every rule of `wanted` here, with
    /// kube's message listing what is missing.
    fn confirm_held(&self, wanted: &[Rule]) -> Result<(), ApiError> {
        let user = &self.write.user;
        let held = self.authorizer.rules_for(user, &self.namespace);
        let missing = missing_rules(&held, wanted);
        if missing.is_empty() {
            return Ok(());
        }
        let groups: Vec<String> = user.groups.iter().map(|g| go_quote(g)).collect();
        let mut why = format!(
            "user {} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
            go_quote(&user.name),
            groups.join(" "),
            missing.join("\n")
        );
        if !held.errors.is_empty() {
            why.push_str(&format!("; resolution errors: [{}]", held.errors.join(" ")));
        }
        Err(self.forbidden(&why))
    }

    fn forbidden(&self, why: &str) -> ApiError {
        forbidden(&self.write.resource.resource, &self.write.name, why)
    }
}

fn forbidden(plural: &str, name: &str, why: &str) -> ApiError {
    ApiError::ForbiddenFor {
        qualified: format!("{plural}.{GROUP}"),
        name: name.to_string(),
        why: why.to_string(),
        causes: Vec::new(),
    }
}

/// Whether `rules` allow everything (`*` on `*.*` and `*` URLs).
fn holds_everything(rules: &Rules) -> bool {
    let all = |list: &[String]| list.iter().any(|v| v == "*");
    rules
        .resource
        .iter()
        .any(|r| all(&r.verbs) && all(&r.api_groups) && all(&r.resources) && r.resource_names.is_empty())
        && rules.non_resource.iter().any(|r| all(&r.verbs) && all(&r.non_resource_urls))
}

/// The parts of `wanted` that `held` does not cover, compacted as kube
/// prints them (one line per group, resource and names, with its verbs).
fn missing_rules(held: &Rules, wanted: &[Rule]) -> Vec<String> {
    // (groups, resources, names) → verbs, or URL → verbs.
    let mut resource: BTreeMap<(String, String, Option<String>), Vec<String>> = BTreeMap::new();
    let mut urls: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for rule in wanted {
        for verb in &rule.verbs {
            for group in &rule.api_groups {
                for res in &rule.resources {
                    let names: Vec<Option<&String>> = if rule.resource_names.is_empty() {
                        vec![None]
                    } else {
                        rule.resource_names.iter().map(Some).collect()
                    };
                    for name in names {
                        if !held.resource.iter().any(|h| resource_covers(h, verb, group, res, name)) {
                            let verbs =
                                resource.entry((group.clone(), res.clone(), name.cloned())).or_default();
                            if !verbs.contains(verb) {
                                verbs.push(verb.clone());
                            }
                        }
                    }
                }
            }
            for url in &rule.non_resource_urls {
                if !held.non_resource.iter().any(|h| url_covers(h, verb, url)) {
                    let verbs = urls.entry(url.clone()).or_default();
                    if !verbs.contains(verb) {
                        verbs.push(verb.clone());
                    }
                }
            }
        }
    }
    let quoted =
        |list: &[String]| format!("[{}]", list.iter().map(|v| go_quote(v)).collect::<Vec<_>>().join(" "));
    let mut lines: Vec<String> = resource
        .into_iter()
        .map(|((group, res, name), verbs)| {
            let names = name.map(|n| format!(", ResourceNames:{}", quoted(&[n]))).unwrap_or_default();
            format!(
                "{{APIGroups:{}, Resources:{}{names}, Verbs:{}}}",
                quoted(&[group]),
                quoted(&[res]),
                quoted(&verbs)
            )
        })
        .collect();
    lines.extend(
        urls.into_iter()
            .map(|(url, verbs)| format!("{{NonResourceURLs:{}, Verbs:{}}}", quoted(&[url]), quoted(&verbs))),
    );
    lines.sort();
    lines
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

fn resource_covers(
    held: &ResourceRule,
    verb: &str,
    group: &str,
    resource: &str,
    name: Option<&String>,
) -> bool {
    let resource_held = held.resources.iter().any(|r| {
        r == "*"
            || r == resource
            || resource.split_once('/').is_some_and(|(_, sub)| r.strip_prefix("*/") == Some(sub))
    });
    has(&held.verbs, verb)
        && has(&held.api_groups, group)
        && resource_held
        && (held.resource_names.is_empty() || name.is_some_and(|n| held.resource_names.contains(n)))
}

fn url_covers(held: &NonResourceRule, verb: &str, url: &str) -> bool {
    has(&held.verbs, verb)
        && held.non_resource_urls.iter().any(|h| {
            h == "*" || h == url || h.strip_suffix('*').is_some_and(|prefix| url.starts_with(prefix))
        })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// What `value` asks for, as rules.
    fn rules(value: Value) -> Vec<Rule> {
        Rule::all_of(&json!({"rules": value})).to_vec()
    }

    fn held() -> Rules {
        Rules {
            resource: vec![ResourceRule {
                verbs: vec!["get".into(), "list".into()],
                api_groups: vec!["".into()],
                resources: vec!["pods".into(), "configmaps".into()],
                resource_names: Vec::new(),
            }],
            non_resource: vec![NonResourceRule {
                verbs: vec!["get".into()],
                non_resource_urls: vec!["/api/*".into()],
            }],
            incomplete: false,
            errors: Vec::new(),
        }
    }

    #[test]
    fn what_is_held_may_be_granted() {
        let wanted = rules(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                                  {"verbs": ["get"], "nonResourceURLs": ["/api/v1"]}]));
        assert!(missing_rules(&held(), &wanted).is_empty());
    }

    #[test]
    fn what_is_not_held_is_listed_as_kube_lists_it() {
        let wanted = rules(
            json!([{"verbs": ["get", "delete", "create"], "apiGroups": [""], "resources": ["pods", "secrets"]},
                                  {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
        );
        assert_eq!(
            missing_rules(&held(), &wanted),
            [
                "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"create\"]}",
                "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\" \"create\"]}",
                "{NonResourceURLs:[\"/healthz\"], Verbs:[\"get\"]}",
            ]
        );
    }
}
