//! Authorization (kube's authorizer union): may this user do this?
//!
//! `--authorization-mode` lists the authorizers in order (AlwaysAllow,
//! AlwaysDeny, RBAC); the first to allow or deny decides, and a request no
//! one allows is forbidden. Members of `system:masters` are allowed before
//! any of them is asked, as kube-apiserver's privileged-group authorizer
//! does.
//!
//! * `attributes`: what is asked (user, verb, resource or path).
//! * `rbac`: roles and bindings, kept in memory by watches.
//! * `delegated`: an extension server's questions asked of the main server.

pub mod attributes;
pub mod delegated;
pub mod rbac;

use std::fmt::Debug;
use std::sync::Arc;

pub use attributes::{Attributes, Target};

use crate::request::UserInfo;

/// The group every authorizer allows.
pub const MASTERS: &str = "system:masters";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    NoOpinion,
}

/// A rule as the rules reviews list it (`SelfSubjectRulesReview`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NonResourceRule {
    pub verbs: Vec<String>,
    pub non_resource_urls: Vec<String>,
}

/// What a user may do in a namespace, as far as an authorizer can say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rules {
    pub resource: Vec<ResourceRule>,
    pub non_resource: Vec<NonResourceRule>,
    /// Some authorizer could not list everything it allows.
    pub incomplete: bool,
    pub errors: Vec<String>,
}

pub trait Authorizer: Send + Sync + Debug {
    /// The decision and, for the 403 message and audit, its reason.
    fn authorize(&self, attributes: &Attributes) -> (Decision, String);

    /// Everything `user` may do in `namespace`.
    fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules;

    /// Whether it has what it decides from (RBAC: its objects loaded).
    fn is_ready(&self) -> bool {
        true
    }
}

/// Allows everything (kube's default mode without flags).
#[derive(Debug)]
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize(&self, _: &Attributes) -> (Decision, String) {
        (Decision::Allow, String::new())
    }

    fn rules_for(&self, _: &UserInfo, _: &str) -> Rules {
        let all = vec!["*".to_string()];
        Rules {
            resource: vec![ResourceRule {
                verbs: all.clone(),
                api_groups: all.clone(),
                resources: all.clone(),
                resource_names: Vec::new(),
            }],
            non_resource: vec![NonResourceRule { verbs: all.clone(), non_resource_urls: all }],
            incomplete: false,
            errors: Vec::new(),
        }
    }
}

/// Allows nothing; as kube's, it has no opinion (so a later authorizer in
/// the list may still allow) and says why.
#[derive(Debug)]
pub struct AlwaysDeny;

impl Authorizer for AlwaysDeny {
    fn authorize(&self, _: &Attributes) -> (Decision, String) {
        (Decision::NoOpinion, "Everything is forbidden.".to_string())
    }

    fn rules_for(&self, _: &UserInfo, _: &str) -> Rules {
        Rules::default()
    }
}

/// The configured authorizers, after the privileged group.
#[derive(Debug, Clone)]
pub struct Union {
    authorizers: Vec<Arc<dyn Authorizer>>,
}

/// What admission plugins ask (CertificateApproval, CertificateSigning).
impl crate::admission::Permissions for Union {
    fn allows(&self, user: &Arc<UserInfo>, verb: &str, group: &str, resource: &str, name: &str) -> bool {
        Union::allows(self, &Attributes::resource(user.clone(), verb, group, resource, "", name))
    }
}

impl Union {
    pub fn new(authorizers: Vec<Arc<dyn Authorizer>>) -> Union {
        Union { authorizers }
    }

    /// The first decision that is not NoOpinion; otherwise NoOpinion with
    /// every authorizer's reason, one a line.
    pub fn authorize(&self, attributes: &Attributes) -> (Decision, String) {
        if attributes.user.groups.iter().any(|g| g == MASTERS) {
            return (Decision::Allow, String::new());
        }
        let mut reasons = Vec::new();
        for authorizer in &self.authorizers {
            match authorizer.authorize(attributes) {
                (Decision::NoOpinion, reason) => {
                    if !reason.is_empty() {
                        reasons.push(reason);
                    }
                }
                decided => return decided,
            }
        }
        (Decision::NoOpinion, reasons.join("\n"))
    }

    /// Whether every authorizer is ready (`/readyz`).
    pub fn is_ready(&self) -> bool {
        self.authorizers.iter().all(|a| a.is_ready())
    }

    pub fn allows(&self, attributes: &Attributes) -> bool {
        self.authorize(attributes).0 == Decision::Allow
    }

    /// Every authorizer's rules for `user` in `namespace`, together.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> Rules {
        if user.groups.iter().any(|g| g == MASTERS) {
            return AlwaysAllow.rules_for(user, namespace);
        }
        let mut all = Rules::default();
        for authorizer in &self.authorizers {
            let rules = authorizer.rules_for(user, namespace);
            all.resource.extend(rules.resource);
            all.non_resource.extend(rules.non_resource);
            all.incomplete |= rules.incomplete;
            all.errors.extend(rules.errors);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attributes(groups: &[&str]) -> Attributes {
        let user = UserInfo {
            name: "u".into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        };
        Attributes::path(Arc::new(user), "get", "/api")
    }

    #[test]
    fn the_first_opinion_decides_and_masters_are_always_allowed() {
        let deny_then_allow = Union::new(vec![Arc::new(AlwaysDeny), Arc::new(AlwaysAllow)]);
        assert_eq!(deny_then_allow.authorize(&attributes(&[])).0, Decision::Allow);
        let deny = Union::new(vec![Arc::new(AlwaysDeny)]);
        assert_eq!(
            deny.authorize(&attributes(&[])),
            (Decision::NoOpinion, "Everything is forbidden.".to_string())
        );
        assert_eq!(deny.authorize(&attributes(&[MASTERS])).0, Decision::Allow);
        assert_eq!(Union::new(vec![]).authorize(&attributes(&[])).0, Decision::NoOpinion);
    }
}
