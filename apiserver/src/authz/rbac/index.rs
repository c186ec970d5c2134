//! Roles and bindings in memory, kept current by one watch per resource
//! (as kube's RBAC authorizer reads its informers): authorization never
//! reads storage.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;

use super::rules::{Binding, Rule, Subject};
use crate::cacher::{Delivery, EventType};
use crate::errors::ApiError;
use crate::registry::Resources;
use crate::request::UserInfo;
use crate::runtime::meta;

pub const GROUP: &str = "rbac.authorization.k8s.io";

/// The four RBAC resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Roles,
    ClusterRoles,
    RoleBindings,
    ClusterRoleBindings,
}

impl Held {
    const ALL: [Held; 4] = [Held::ClusterRoles, Held::Roles, Held::ClusterRoleBindings, Held::RoleBindings];

    fn plural(self) -> &'static str {
        match self {
            Held::Roles => "roles",
            Held::ClusterRoles => "clusterroles",
            Held::RoleBindings => "rolebindings",
            Held::ClusterRoleBindings => "clusterrolebindings",
        }
    }
}

#[derive(Debug, Default)]
struct Objects {
    /// By (namespace, name).
    roles: HashMap<(String, String), Arc<Vec<Rule>>>,
    cluster_roles: HashMap<String, Arc<Vec<Rule>>>,
    cluster_role_bindings: BTreeMap<String, Binding>,
    /// By namespace, then name.
    role_bindings: HashMap<String, BTreeMap<String, Binding>>,
    /// Which resources have had their first full state.
    loaded: [bool; 4],
}

impl Objects {
    fn clear(&mut self, held: Held) {
        match held {
            Held::Roles => self.roles.clear(),
            Held::ClusterRoles => self.cluster_roles.clear(),
            Held::RoleBindings => self.role_bindings.clear(),
            Held::ClusterRoleBindings => self.cluster_role_bindings.clear(),
        }
    }

    fn apply(&mut self, held: Held, kind: EventType, object: &Value) {
        let name = meta::name_of(object).to_string();
        let namespace = meta::namespace_of(object).unwrap_or_default().to_string();
        let deleted = kind == EventType::Deleted;
        match held {
            Held::Roles if deleted => {
                self.roles.remove(&(namespace, name));
            }
            Held::Roles => {
                self.roles.insert((namespace, name), Rule::all_of(object));
            }
            Held::ClusterRoles if deleted => {
                self.cluster_roles.remove(&name);
            }
            Held::ClusterRoles => {
                self.cluster_roles.insert(name, Rule::all_of(object));
            }
            Held::RoleBindings if deleted => {
                if let Some(in_namespace) = self.role_bindings.get_mut(&namespace) {
                    in_namespace.remove(&name);
                }
            }
            Held::RoleBindings => {
                self.role_bindings.entry(namespace).or_default().insert(name, Binding::from_json(object));
            }
            Held::ClusterRoleBindings if deleted => {
                self.cluster_role_bindings.remove(&name);
            }
            Held::ClusterRoleBindings => {
                self.cluster_role_bindings.insert(name, Binding::from_json(object));
            }
        }
    }

    /// The rules a binding grants, or kube's error for a missing role.
    fn rules_of(&self, binding: &Binding) -> Result<Arc<Vec<Rule>>, String> {
        let found = match binding.role_kind.as_str() {
            "ClusterRole" => self.cluster_roles.get(&binding.role_name).cloned(),
            "Role" => self.roles.get(&(binding.namespace.clone(), binding.role_name.clone())).cloned(),
            _ => None,
        };
        found.ok_or_else(|| {
            format!(
                "{}.{GROUP} {} not found",
                binding.role_kind.to_lowercase(),
                crate::errors::go_quote(&binding.role_name)
            )
        })
    }
}

/// The RBAC objects, shared by the authorizer and whoever keeps them.
#[derive(Debug, Clone, Default)]
pub struct RbacIndex {
    objects: Arc<RwLock<Objects>>,
    /// Whether the bootstrap policy has been reconciled (kube's `rbac/bootstrap-roles`
    /// post-start hook): until then kube's own roles may be missing.
    bootstrapped: Arc<AtomicBool>,
}

impl RbacIndex {
    /// Starts following the RBAC resources served by `resources`.
    pub fn follow(resources: &Resources) -> RbacIndex {
        let index = RbacIndex::default();
        for held in Held::ALL {
            let (index, resources) = (index.clone(), resources.clone());
            tokio::spawn(async move {
                loop {
                    if let Err(e) = index.watch(&resources, held).await {
                        tracing::warn!(resource = held.plural(), error = %e, "RBAC watch failed; retrying");
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            });
        }
        index
    }

    /// Whether every RBAC resource has been loaded.
    pub fn is_loaded(&self) -> bool {
        self.read().loaded.iter().all(|l| *l)
    }

    /// Whether RBAC decides as it will: everything loaded, the bootstrap policy in.
    pub fn is_ready(&self) -> bool {
        self.bootstrapped.load(Ordering::Acquire) && self.is_loaded()
    }

    /// Called once the bootstrap policy is reconciled.
    pub fn mark_bootstrapped(&self) {
        self.bootstrapped.store(true, Ordering::Release);
    }

    async fn watch(&self, resources: &Resources, held: Held) -> Result<(), ApiError> {
        let mut watch = resources.store(GROUP, held.plural())?.follow().await?;
        {
            let mut objects = self.write();
            objects.clear(held);
            for delivery in std::mem::take(&mut watch.initial) {
                if let Delivery::Event { kind, object, .. } = delivery {
                    objects.apply(held, kind, &object.value());
                }
            }
            objects.loaded[held as usize] = true;
        }
        while let Some(delivery) = watch.live.recv().await {
            if let Delivery::Event { kind, object, .. } = delivery {
                self.write().apply(held, kind, &object.value());
            }
        }
        Ok(())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Objects> {
        self.objects.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Objects> {
        self.objects.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Visits every rule granted to `user`: through ClusterRoleBindings
    /// first, then the RoleBindings of `namespace` (kube's order), until
    /// `visit` returns true. Returns the lookup errors met on the way.
    pub fn visit_rules(
        &self,
        user: &UserInfo,
        namespace: &str,
        mut visit: impl FnMut(&Binding, &Subject, &Rule) -> bool,
    ) -> Vec<String> {
        let objects = self.read();
        let mut errors = Vec::new();
        let namespaced = (!namespace.is_empty()).then(|| objects.role_bindings.get(namespace)).flatten();
        let bindings =
            objects.cluster_role_bindings.values().chain(namespaced.into_iter().flat_map(|b| b.values()));
        for binding in bindings {
            let Some(subject) = binding.subject_for(user) else { continue };
            match objects.rules_of(binding) {
                Ok(rules) => {
                    for rule in rules.iter() {
                        if visit(binding, subject, rule) {
                            return errors;
                        }
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        errors
    }

    /// The rules of role `name` (`kind` Role in `namespace`, or
    /// ClusterRole), or kube's not-found text.
    pub fn rules_of_role(&self, kind: &str, namespace: &str, name: &str) -> Result<Arc<Vec<Rule>>, String> {
        let binding = Binding {
            name: String::new(),
            namespace: namespace.to_string(),
            role_kind: kind.to_string(),
            role_name: name.to_string(),
            subjects: Vec::new(),
        };
        self.read().rules_of(&binding)
    }

    /// For tests and the bootstrap: puts an object in as a watch would.
    #[cfg(test)]
    pub(crate) fn insert(&self, plural: &str, object: &Value) {
        let held = Held::ALL.into_iter().find(|h| h.plural() == plural).expect("an RBAC resource");
        self.write().apply(held, EventType::Added, object);
    }
}
