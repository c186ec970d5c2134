//! What a request is about, read off its method and path the way kube's
//! RequestInfo filter does: the verb, and for resource requests the group,
//! version, namespace, resource, name and subresource. Later filters
//! (authorization, audit) key on it.

use axum::http::Method;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestInfo {
    /// A path that is not an object (`/version`, `/healthz`, discovery).
    NonResource {
        verb: &'static str,
        path: String,
    },
    Resource(ResourceRequest),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    pub verb: &'static str,
    /// "" for the core group (`/api`).
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// Subresources of a namespace itself (`/namespaces/<n>/status`), which
/// must not be read as a namespaced resource.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

impl RequestInfo {
    pub fn parse(method: &Method, path: &str, watch: bool) -> RequestInfo {
        resource_request(method, path, watch).map(RequestInfo::Resource).unwrap_or_else(|| {
            RequestInfo::NonResource { verb: non_resource_verb(method), path: path.to_string() }
        })
    }

    pub fn verb(&self) -> &'static str {
        match self {
            RequestInfo::NonResource { verb, .. } => verb,
            RequestInfo::Resource(r) => r.verb,
        }
    }

    /// Watches are long-running: no request timeout, not counted in flight.
    pub fn is_long_running(&self) -> bool {
        self.verb() == "watch"
    }
}

fn non_resource_verb(method: &Method) -> &'static str {
    match *method {
        Method::GET | Method::HEAD => "get",
        Method::POST => "post",
        Method::PUT => "put",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "unknown",
    }
}

fn resource_request(method: &Method, path: &str, watch: bool) -> Option<ResourceRequest> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    if rest.is_empty() || rest.iter().any(|p| p.is_empty()) {
        return None;
    }
    let mut namespace = None;
    let mut rest = rest;
    if rest[0] == "namespaces" && rest.len() > 1 {
        namespace = Some(rest[1].to_string());
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    let (resource, name, subresource) = match rest {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(name.to_string()), None),
        [resource, name, sub] => (*resource, Some(name.to_string()), Some(sub.to_string())),
        _ => return None,
    };
    let verb = match (method.clone(), name.is_some()) {
        (Method::GET | Method::HEAD, true) => "get",
        (Method::GET | Method::HEAD, false) if watch => "watch",
        (Method::GET | Method::HEAD, false) => "list",
        (Method::POST, _) => "create",
        (Method::PUT, _) => "update",
        (Method::PATCH, _) => "patch",
        (Method::DELETE, true) => "delete",
        (Method::DELETE, false) => "deletecollection",
        _ => "unknown",
    };
    Some(ResourceRequest {
        verb,
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        resource: resource.to_string(),
        name,
        subresource,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(method: Method, path: &str, watch: bool) -> ResourceRequest {
        match RequestInfo::parse(&method, path, watch) {
            RequestInfo::Resource(r) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn namespaced_cluster_and_namespace_paths_read_like_kubes() {
        let r = resource(Method::GET, "/api/v1/namespaces/default/configmaps/a", false);
        assert_eq!(
            (r.verb, r.namespace.as_deref(), r.resource.as_str(), r.name.as_deref()),
            ("get", Some("default"), "configmaps", Some("a"))
        );
        let r = resource(Method::GET, "/api/v1/namespaces/kube-system", false);
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref(), r.namespace.as_deref()),
            ("namespaces", Some("kube-system"), Some("kube-system"))
        );
        let r = resource(Method::PUT, "/api/v1/namespaces/a/status", false);
        assert_eq!(
            (r.verb, r.resource.as_str(), r.subresource.as_deref()),
            ("update", "namespaces", Some("status"))
        );
        let r = resource(Method::GET, "/apis/apps/v1/deployments", true);
        assert_eq!((r.verb, r.group.as_str(), r.namespace), ("watch", "apps", None));
        let r = resource(Method::DELETE, "/apis/apps/v1/namespaces/x/deployments", false);
        assert_eq!(r.verb, "deletecollection");
        let r = resource(Method::PATCH, "/apis/apps/v1/namespaces/x/deployments/web/scale", false);
        assert_eq!((r.verb, r.subresource.as_deref()), ("patch", Some("scale")));
    }

    #[test]
    fn other_paths_are_non_resource() {
        for path in ["/version", "/api", "/apis", "/apis/apps", "/healthz", "/api/v1/a/b/c/d"] {
            assert!(
                matches!(RequestInfo::parse(&Method::GET, path, false), RequestInfo::NonResource { .. }),
                "{path}"
            );
        }
    }
}
