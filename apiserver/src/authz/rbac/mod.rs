//! The RBAC authorizer: allowed when a rule of a role bound to the user
//! covers the request; otherwise no opinion (RBAC never denies).
//!
//! * `rules`: roles, bindings and kube's matching rules.
//! * `index`: the objects in memory, kept by watches.
//! * `bootstrap`: the roles and bindings every cluster starts with.
//! * `components`: those of them kube makes for its own components.
//! * `controllers`: those of kube-controller-manager's controllers.
//! * `escalation`: no one grants what they do not hold.
//! * `aggregation`: `admin`, `edit`, `view` kept as the union of their parts.

pub mod aggregation;
pub mod bootstrap;
mod components;
mod controllers;
pub mod escalation;
pub mod index;
pub mod rules;

pub use index::RbacIndex;

use super::{Attributes, Authorizer, Decision, Rules};
use crate::request::UserInfo;

#[derive(Debug, Clone)]
pub struct Rbac {
    index: RbacIndex,
}

impl Rbac {
    pub fn new(index: RbacIndex) -> Rbac {
        Rbac { index }
    }
}

impl Authorizer for Rbac {
    fn authorize(&self, attributes: &Attributes) -> (Decision, String) {
        let namespace = match &attributes.target {
            super::Target::Resource { namespace, .. } => namespace.as_str(),
            super::Target::Path(_) => "",
        };
        let mut allowed_by = None;
        let errors = self.index.visit_rules(&attributes.user, namespace, |binding, subject, rule| {
            let allows = rule.allows(&attributes.verb, &attributes.target);
            if allows {
                allowed_by = Some(binding.describe(subject));
            }
            allows
        });
        match allowed_by {
            Some(by) => (Decision::Allow, format!("RBAC: allowed by {by}")),
            None if errors.is_empty() => (Decision::NoOpinion, String::new()),
            None => (Decision::NoOpinion, format!("RBAC: {}", aggregate(&errors))),
        }
    }

    fn is_ready(&self) -> bool {
        self.index.is_ready()
    }

    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules {
        let mut rules = Rules::default();
        let errors = self.index.visit_rules(user, namespace, |_, _, rule| {
            let (resource, non_resource) = rule.listed();
            rules.resource.extend(resource);
            rules.non_resource.extend(non_resource);
            false
        });
        rules.incomplete = !errors.is_empty();
        rules.errors = errors;
        rules
    }
}

/// kube's error aggregate: one alone, several in brackets.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn user(name: &str, groups: &[&str]) -> Arc<UserInfo> {
        Arc::new(UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        })
    }

    fn rbac() -> Rbac {
        let index = RbacIndex::default();
        index.insert(
            "clusterroles",
            &json!({"metadata": {"name": "view"}, "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
        );
        index.insert(
            "rolebindings",
            &json!({"metadata": {"name": "jane-view", "namespace": "dev"},
                    "roleRef": {"kind": "ClusterRole", "name": "view"},
                    "subjects": [{"kind": "User", "name": "jane"}]}),
        );
        index.insert(
            "clusterrolebindings",
            &json!({"metadata": {"name": "broken"}, "roleRef": {"kind": "ClusterRole", "name": "missing"},
                    "subjects": [{"kind": "Group", "name": "ops"}]}),
        );
        Rbac::new(index)
    }

    #[test]
    fn a_role_binding_grants_its_role_in_its_namespace_only() {
        let rbac = rbac();
        let allowed = rbac.authorize(&Attributes::resource(user("jane", &[]), "list", "", "pods", "dev", ""));
        assert_eq!(
            allowed,
            (
                Decision::Allow,
                "RBAC: allowed by RoleBinding \"jane-view/dev\" of ClusterRole \"view\" to User \"jane\""
                    .into()
            )
        );
        let elsewhere =
            rbac.authorize(&Attributes::resource(user("jane", &[]), "list", "", "pods", "prod", ""));
        assert_eq!(elsewhere, (Decision::NoOpinion, String::new()));
        let write =
            rbac.authorize(&Attributes::resource(user("jane", &[]), "delete", "", "pods", "dev", "p"));
        assert_eq!(write.0, Decision::NoOpinion);
    }

    #[test]
    fn a_binding_to_a_missing_role_is_the_reason() {
        let (decision, reason) =
            rbac().authorize(&Attributes::resource(user("bob", &["ops"]), "get", "", "pods", "dev", "p"));
        assert_eq!(decision, Decision::NoOpinion);
        assert_eq!(reason, "RBAC: clusterrole.rbac.authorization.k8s.io \"missing\" not found");
    }

    #[test]
    fn rules_for_lists_what_the_bindings_grant() {
        let rules = rbac().rules_for(&user("jane", &[]), "dev");
        assert_eq!(rules.resource.len(), 1);
        assert_eq!(rules.resource[0].verbs, ["get", "list"]);
        assert!(!rules.incomplete);
        assert!(rbac().rules_for(&user("jane", &[]), "prod").resource.is_empty());
    }
}
