//! rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding and
//! ClusterRoleBinding, stored and validated as kube does; the authorizer
//! (the RBAC authorizer) reads them through its watches. Their names are
//! path segments (`system:basic-user`), not DNS names.

use k8s_openapi::api::rbac::v1 as rbac;
use serde_json::{Value, json};

use super::Kind;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::strategy::NameRule;
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const GROUP: &str = "rbac.authorization.k8s.io";

pub fn kinds() -> Vec<Kind> {
    vec![
        Kind::typed::<rbac::ClusterRole>(
            Resource::new(GROUP, "ClusterRole", "clusterroles").cluster_scoped(),
            RoleStrategy { cluster: true },
        ),
        Kind::typed::<rbac::ClusterRoleBinding>(
            Resource::new(GROUP, "ClusterRoleBinding", "clusterrolebindings").cluster_scoped(),
            BindingStrategy { cluster: true },
        ),
        Kind::typed::<rbac::Role>(Resource::new(GROUP, "Role", "roles"), RoleStrategy { cluster: false }),
        Kind::typed::<rbac::RoleBinding>(
            Resource::new(GROUP, "RoleBinding", "rolebindings"),
            BindingStrategy { cluster: false },
        ),
    ]
}

#[derive(Debug)]
struct RoleStrategy {
    cluster: bool,
}

impl Strategy for RoleStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(if self.cluster { &nodes::RBAC_V1_CLUSTER_ROLE } else { &nodes::RBAC_V1_ROLE })
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let mut causes = Vec::new();
        for (i, rule) in object["rules"].as_array().into_iter().flatten().enumerate() {
            causes.extend(rule_causes(rule, &format!("rules[{i}]"), self.cluster));
        }
        finish(if self.cluster { "ClusterRole" } else { "Role" }, object, causes)
    }
}

#[derive(Debug)]
struct BindingStrategy {
    cluster: bool,
}

impl Strategy for BindingStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(if self.cluster { &nodes::RBAC_V1_CLUSTER_ROLE_BINDING } else { &nodes::RBAC_V1_ROLE_BINDING })
    }

    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn printer(&self) -> &'static Printer {
        &table::ROLE_BINDING
    }

    /// kube's defaults: User and Group subjects are RBAC's API group.
    fn prepare_for_create(&self, object: &mut Value) {
        default_subjects(object);
    }

    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        default_subjects(new);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let kind = if self.cluster { "ClusterRoleBinding" } else { "RoleBinding" };
        let mut causes = role_ref_causes(&object["roleRef"], self.cluster);
        for (i, subject) in object["subjects"].as_array().into_iter().flatten().enumerate() {
            causes.extend(subject_causes(subject, &format!("subjects[{i}]"), self.cluster));
        }
        finish(kind, object, causes)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        if new["roleRef"] != old["roleRef"] {
            let kind = if self.cluster { "ClusterRoleBinding" } else { "RoleBinding" };
            return finish(
                kind,
                new,
                vec![Cause {
                    reason: "FieldValueInvalid",
                    field: "roleRef".into(),
                    message: format!("Invalid value: {}: cannot change roleRef", go_struct(&new["roleRef"])),
                }],
            );
        }
        Ok(())
    }
}

fn default_subjects(object: &mut Value) {
    for subject in object["subjects"].as_array_mut().into_iter().flatten() {
        let kind = subject["kind"].as_str().unwrap_or_default();
        if matches!(kind, "User" | "Group") && subject["apiGroup"].as_str().unwrap_or_default().is_empty() {
            subject["apiGroup"] = json!(GROUP);
        }
    }
}

fn finish(kind: &str, object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    super::field::refuse(&format!("{kind}.{GROUP}"), object, causes)
}

fn required(field: String) -> Cause {
    Cause { reason: "FieldValueRequired", field, message: "Required value".into() }
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// kube's `ValidatePolicyRule`.
fn rule_causes(rule: &Value, path: &str, cluster: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    if strings(&rule["verbs"]).is_empty() {
        causes.push(required(format!("{path}.verbs")));
    }
    let urls = strings(&rule["nonResourceURLs"]);
    let groups = strings(&rule["apiGroups"]);
    let resources = strings(&rule["resources"]);
    if !urls.is_empty() {
        if !cluster {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: format!("{path}.nonResourceURLs"),
                message: format!(
                    "Invalid value: {}: namespaced rules cannot apply to non-resource URLs",
                    go_list(&urls)
                ),
            });
        }
        if !groups.is_empty() || !resources.is_empty() {
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: format!("{path}.nonResourceURLs"),
                message: format!(
                    "Invalid value: {}: rules cannot apply to both regular resources and non-resource URLs",
                    go_list(&urls)
                ),
            });
        }
        return causes;
    }
    if groups.is_empty() {
        causes.push(required(format!("{path}.apiGroups")));
    }
    if resources.is_empty() {
        causes.push(required(format!("{path}.resources")));
    }
    causes
}

/// kube's roleRef checks.
fn role_ref_causes(role_ref: &Value, cluster: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    if role_ref["apiGroup"].as_str() != Some(GROUP) {
        causes.push(Cause {
            reason: "FieldValueNotSupported",
            field: "roleRef.apiGroup".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"{GROUP}\"",
                crate::errors::go_quote(role_ref["apiGroup"].as_str().unwrap_or_default())
            ),
        });
    }
    let kind = role_ref["kind"].as_str().unwrap_or_default();
    let allowed: &[&str] = if cluster { &["ClusterRole"] } else { &["Role", "ClusterRole"] };
    if !allowed.contains(&kind) {
        let supported: Vec<String> = allowed.iter().map(|k| format!("\"{k}\"")).collect();
        causes.push(Cause {
            reason: "FieldValueNotSupported",
            field: "roleRef.kind".into(),
            message: format!(
                "Unsupported value: {}: supported values: {}",
                crate::errors::go_quote(kind),
                supported.join(", ")
            ),
        });
    }
    if role_ref["name"].as_str().unwrap_or_default().is_empty() {
        causes.push(required("roleRef.name".into()));
    }
    causes
}

/// kube's `ValidateRoleBindingSubject`.
fn subject_causes(subject: &Value, path: &str, cluster: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let name = subject["name"].as_str().unwrap_or_default();
    if name.is_empty() {
        causes.push(required(format!("{path}.name")));
    }
    let group = subject["apiGroup"].as_str().unwrap_or_default();
    match subject["kind"].as_str().unwrap_or_default() {
        "ServiceAccount" => {
            if !group.is_empty() {
                causes.push(Cause {
                    reason: "FieldValueNotSupported",
                    field: format!("{path}.apiGroup"),
                    message: format!(
                        "Unsupported value: {}: supported values: \"\"",
                        crate::errors::go_quote(group)
                    ),
                });
            }
            if cluster && subject["namespace"].as_str().unwrap_or_default().is_empty() {
                causes.push(required(format!("{path}.namespace")));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                causes.push(Cause {
                    reason: "FieldValueNotSupported",
                    field: format!("{path}.apiGroup"),
                    message: format!(
                        "Unsupported value: {}: supported values: \"{GROUP}\"",
                        crate::errors::go_quote(group)
                    ),
                });
            }
        }
        other => causes.push(Cause {
            reason: "FieldValueNotSupported",
            field: format!("{path}.kind"),
            message: format!(
                "Unsupported value: {}: supported values: \"ServiceAccount\", \"User\", \"Group\"",
                crate::errors::go_quote(other)
            ),
        }),
    }
    causes
}

/// `["a" "b"]`, as Go prints a string slice with %q.
fn go_list(items: &[&str]) -> String {
    format!("[{}]", items.iter().map(|i| crate::errors::go_quote(i)).collect::<Vec<_>>().join(" "))
}

/// A RoleRef as Go prints the struct (`{rbac.authorization.k8s.io Role x}`).
fn go_struct(role_ref: &Value) -> String {
    let field = |f: &str| role_ref[f].as_str().unwrap_or_default().to_string();
    format!(
        "rbac.RoleRef{{APIGroup:{:?}, Kind:{:?}, Name:{:?}}}",
        field("apiGroup"),
        field("kind"),
        field("name")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(result: Result<(), ApiError>) -> String {
        result.map(|_| String::new()).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn roles_need_verbs_and_resources_and_only_cluster_roles_name_urls() {
        let role = RoleStrategy { cluster: false };
        let ok = json!({"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
        assert_eq!(messages(role.validate(&ok)), "");
        let bad = json!({"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/x"]}]});
        assert_eq!(
            messages(role.validate(&bad)),
            "Role.rbac.authorization.k8s.io \"r\" is invalid: [rules[0].verbs: Required value, rules[1].nonResourceURLs: Invalid value: [\"/x\"]: namespaced rules cannot apply to non-resource URLs]"
        );
        let cluster = RoleStrategy { cluster: true };
        let urls =
            json!({"metadata": {"name": "r"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]});
        assert_eq!(messages(cluster.validate(&urls)), "");
    }

    #[test]
    fn bindings_check_role_ref_and_subjects_and_keep_role_ref() {
        let binding = BindingStrategy { cluster: false };
        let mut ok = json!({
            "metadata": {"name": "b", "namespace": "dev"},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "jane"}, {"kind": "ServiceAccount", "name": "robot"}],
        });
        binding.prepare_for_create(&mut ok);
        assert_eq!(ok["subjects"][0]["apiGroup"], GROUP, "User subjects default to RBAC's group");
        assert_eq!(messages(binding.validate(&ok)), "");
        let mut changed = ok.clone();
        changed["roleRef"]["name"] = json!("edit");
        assert!(messages(binding.validate_update(&changed, &ok)).ends_with("cannot change roleRef"));
        let bad = json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": GROUP, "kind": "Role"}, "subjects": [{"kind": "Robot", "name": "x"}]});
        let cluster = BindingStrategy { cluster: true };
        let message = messages(cluster.validate(&bad));
        assert!(
            message.contains("roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\""),
            "{message}"
        );
        assert!(message.contains("roleRef.name: Required value"), "{message}");
        assert!(message.contains("subjects[0].kind: Unsupported value: \"Robot\""), "{message}");
    }
}
