//! What an authorizer is asked (kube's `authorizer.Attributes`), from a
//! request's RequestInfo and user, or from a SubjectAccessReview's spec.

use std::sync::Arc;

use crate::errors::{ApiError, go_quote};
use crate::request::{RequestInfo, UserInfo};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    pub user: Arc<UserInfo>,
    pub verb: String,
    pub target: Target,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Resource {
        group: String,
        version: String,
        resource: String,
        /// "" for the object itself.
        subresource: String,
        /// "" for cluster scope.
        namespace: String,
        /// "" for collections.
        name: String,
    },
    Path(String),
}

impl Attributes {
    pub fn of_request(user: Arc<UserInfo>, info: &RequestInfo) -> Attributes {
        match info {
            RequestInfo::NonResource { verb, path } => Attributes::path(user, verb, path),
            RequestInfo::Resource(r) => Attributes {
                user,
                verb: r.verb.to_string(),
                target: Target::Resource {
                    group: r.group.clone(),
                    version: r.version.clone(),
                    resource: r.resource.clone(),
                    subresource: r.subresource.clone().unwrap_or_default(),
                    namespace: r.namespace.clone().unwrap_or_default(),
                    name: r.name.clone().unwrap_or_default(),
                },
            },
        }
    }

    pub fn path(user: Arc<UserInfo>, verb: &str, path: &str) -> Attributes {
        Attributes { user, verb: verb.to_string(), target: Target::Path(path.to_string()) }
    }

    /// A resource request's attributes, for checks the server makes itself
    /// (impersonation, RBAC grants).
    pub fn resource(
        user: Arc<UserInfo>,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Attributes {
        Attributes {
            user,
            verb: verb.to_string(),
            target: Target::Resource {
                group: group.to_string(),
                version: String::new(),
                resource: resource.to_string(),
                subresource: String::new(),
                namespace: namespace.to_string(),
                name: name.to_string(),
            },
        }
    }

    pub fn with_subresource(mut self, sub: &str) -> Attributes {
        if let Target::Resource { subresource, .. } = &mut self.target {
            *subresource = sub.to_string();
        }
        self
    }

    /// kube's 403 for a request not allowed, with the authorizers' reason.
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let user = go_quote(&self.user.name);
        let (qualified, name, mut why) = match &self.target {
            Target::Path(path) => (
                String::new(),
                String::new(),
                format!("User {user} cannot {} path {}", self.verb, go_quote(path)),
            ),
            Target::Resource { group, resource, subresource, namespace, name, .. } => {
                let shown = if subresource.is_empty() {
                    resource.clone()
                } else {
                    format!("{resource}/{subresource}")
                };
                let scope = if namespace.is_empty() {
                    "at the cluster scope".to_string()
                } else {
                    format!("in the namespace {}", go_quote(namespace))
                };
                let qualified =
                    if group.is_empty() { resource.clone() } else { format!("{resource}.{group}") };
                let why = format!(
                    "User {user} cannot {} resource {} in API group {} {scope}",
                    self.verb,
                    go_quote(&shown),
                    go_quote(group)
                );
                (qualified, name.clone(), why)
            }
        };
        // kube keeps the message from reading as HTML.
        why = why.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        if !reason.is_empty() {
            why = format!("{why}: {reason}");
        }
        ApiError::ForbiddenFor { qualified, name, why, causes: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::*;

    fn jane() -> Arc<UserInfo> {
        Arc::new(UserInfo { name: "jane".into(), ..UserInfo::default() })
    }

    fn message(method: Method, path: &str) -> serde_json::Value {
        let info = RequestInfo::parse(&method, path, false);
        Attributes::of_request(jane(), &info).forbidden("").status()
    }

    #[test]
    fn forbidden_messages_read_like_kubes() {
        let s = message(Method::GET, "/api/v1/namespaces/default/pods");
        assert_eq!(
            s["message"],
            "pods is forbidden: User \"jane\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
        );
        assert_eq!(s["details"], serde_json::json!({"kind": "pods"}));
        assert_eq!((s["code"].as_u64(), s["reason"].as_str()), (Some(403), Some("Forbidden")));
        let s = message(Method::GET, "/apis/apps/v1/namespaces/x/deployments/web/scale");
        assert_eq!(
            s["message"],
            "deployments.apps \"web\" is forbidden: User \"jane\" cannot get resource \"deployments/scale\" in API group \"apps\" in the namespace \"x\""
        );
        assert_eq!(s["details"], serde_json::json!({"kind": "deployments", "group": "apps", "name": "web"}));
        let s = message(Method::GET, "/api/v1/nodes");
        assert_eq!(
            s["message"],
            "nodes is forbidden: User \"jane\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let s = message(Method::GET, "/foo/<b>");
        assert_eq!(s["message"], "forbidden: User \"jane\" cannot get path \"/foo/&lt;b&gt;\"");
        assert_eq!(s["details"], serde_json::json!({}));
        let info = RequestInfo::parse(&Method::GET, "/api", false);
        let s = Attributes::of_request(jane(), &info).forbidden("Everything is forbidden.").status();
        assert_eq!(
            s["message"],
            "forbidden: User \"jane\" cannot get path \"/api\": Everything is forbidden."
        );
    }
}
