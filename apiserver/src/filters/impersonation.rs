//! Acting as someone else (kube's `WithImpersonation`): `Impersonate-User`,
//! `Impersonate-Group` (repeatable), `Impersonate-Uid` and
//! `Impersonate-Extra-<key>` replace the request's user, once the real user
//! is allowed the `impersonate` verb on each value asked for. Groups, uid
//! or extras without a user answer 400; any refused value answers kube's
//! 403. The headers are removed before the request goes on.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::audit::AuditContext;
use crate::authn::add_authenticated_group;
use crate::authz::{Attributes, Union};
use crate::errors::ApiError;
use crate::request::{UserInfo, unescape_extra_key};

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// What the headers ask for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Wanted {
    user: Option<String>,
    groups: Vec<String>,
    uid: Option<String>,
    extra: BTreeMap<String, Vec<String>>,
}

pub(super) async fn impersonate(
    State(authorizer): State<Arc<Union>>,
    request: Request,
    next: Next,
) -> Response {
    let wanted = match wanted(request.headers()) {
        Ok(None) => return next.run(request).await,
        Ok(Some(wanted)) => wanted,
        Err(e) => return e.into_response(),
    };
    let Some(real) = request.extensions().get::<Arc<UserInfo>>().cloned() else {
        return ApiError::Internal("the request reached impersonation without its user".into())
            .into_response();
    };
    if let Err(e) = check(&authorizer, &real, &wanted) {
        return e.into_response();
    }
    let (mut parts, body) = request.into_parts();
    let names: Vec<_> =
        parts.headers.keys().filter(|k| k.as_str().starts_with("impersonate-")).cloned().collect();
    for name in names {
        parts.headers.remove(name);
    }
    let user = impersonated(wanted);
    if let Some(audit) = parts.extensions.get::<AuditContext>() {
        audit.set_impersonated_user(&user);
    }
    parts.extensions.insert(Arc::new(user));
    next.run(Request::from_parts(parts, body)).await
}

/// The impersonation headers, or None when there are none.
fn wanted(headers: &HeaderMap) -> Result<Option<Wanted>, ApiError> {
    let text = |v: &axum::http::HeaderValue| v.to_str().map(str::to_string).ok();
    let mut wanted = Wanted {
        user: headers.get(USER).and_then(text).filter(|u| !u.is_empty()),
        groups: headers.get_all(GROUP).iter().filter_map(text).collect(),
        uid: headers.get(UID).and_then(text).filter(|u| !u.is_empty()),
        extra: BTreeMap::new(),
    };
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            let key = unescape_extra_key(key).to_lowercase();
            wanted.extra.entry(key).or_default().extend(text(value));
        }
    }
    if wanted == Wanted::default() {
        return Ok(None);
    }
    if wanted.user.is_none() {
        return Err(ApiError::BadRequest(format!(
            "requested {} without impersonating a user",
            requests_as_go_prints_them(&wanted)
        )));
    }
    Ok(Some(wanted))
}

/// kube's error lists the requests as Go prints `[]ObjectReference`.
fn requests_as_go_prints_them(wanted: &Wanted) -> String {
    const V1: &str = "authentication.k8s.io/v1";
    let mut refs: Vec<String> = wanted.groups.iter().map(|g| format!("{{Group  {g}  {V1}  }}")).collect();
    for (key, values) in &wanted.extra {
        refs.extend(values.iter().map(|v| format!("{{UserExtra  {v}  {V1}  {key}}}")));
    }
    if let Some(uid) = &wanted.uid {
        refs.push(format!("{{UID  {uid}  {V1}  }}"));
    }
    format!("[{}]", refs.join(" "))
}

/// Asks the authorizers whether `real` may impersonate each value.
fn check(authorizer: &Union, real: &Arc<UserInfo>, wanted: &Wanted) -> Result<(), ApiError> {
    let mut checks = Vec::new();
    if let Some(user) = &wanted.user {
        checks.push(match service_account(user) {
            Some((namespace, name)) => {
                Attributes::resource(real.clone(), "impersonate", "", "serviceaccounts", namespace, name)
            }
            None => Attributes::resource(real.clone(), "impersonate", "", "users", "", user),
        });
    }
    for group in &wanted.groups {
        checks.push(Attributes::resource(real.clone(), "impersonate", "", "groups", "", group));
    }
    for (key, values) in &wanted.extra {
        for value in values {
            checks.push(
                Attributes::resource(
                    real.clone(),
                    "impersonate",
                    "authentication.k8s.io",
                    "userextras",
                    "",
                    value,
                )
                .with_subresource(key),
            );
        }
    }
    if let Some(uid) = &wanted.uid {
        checks.push(Attributes::resource(
            real.clone(),
            "impersonate",
            "authentication.k8s.io",
            "uids",
            "",
            uid,
        ));
    }
    for attributes in checks {
        let (decision, reason) = authorizer.authorize(&attributes);
        if decision != crate::authz::Decision::Allow {
            return Err(attributes.forbidden(&reason));
        }
    }
    Ok(())
}

/// `system:serviceaccount:<namespace>:<name>` → (namespace, name).
fn service_account(user: &str) -> Option<(&str, &str)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (namespace, name) = rest.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains(':')).then_some((namespace, name))
}

/// The user a request impersonates: a ServiceAccount without requested
/// groups gets a ServiceAccount's groups; then the authenticated group.
fn impersonated(wanted: Wanted) -> UserInfo {
    let name = wanted.user.unwrap_or_default();
    let mut groups = wanted.groups;
    if groups.is_empty()
        && let Some((namespace, _)) = service_account(&name)
    {
        groups = vec!["system:serviceaccounts".into(), format!("system:serviceaccounts:{namespace}")];
    }
    let mut user = UserInfo { name, uid: wanted.uid.unwrap_or_default(), groups, extra: wanted.extra };
    add_authenticated_group(&mut user);
    user
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers
                .append(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn headers_ask_for_a_user_its_groups_and_extras() {
        let wanted = wanted(&headers(&[
            ("Impersonate-User", "alice"),
            ("Impersonate-Group", "dev"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-Scopes%2Fview", "a"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(wanted.user.as_deref(), Some("alice"));
        assert_eq!(wanted.groups, ["dev", "ops"]);
        assert_eq!(wanted.extra["scopes/view"], ["a"]);
        let user = impersonated(wanted);
        assert_eq!(user.groups, ["dev", "ops", "system:authenticated"]);
        assert_eq!(super::wanted(&headers(&[("Accept", "x")])).unwrap(), None);
    }

    #[test]
    fn groups_without_a_user_are_a_bad_request_as_kube_words_it() {
        let err = wanted(&headers(&[("Impersonate-Group", "g"), ("Impersonate-Uid", "1")])).unwrap_err();
        assert_eq!(err.code(), 400);
        assert_eq!(
            err.to_string(),
            "requested [{Group  g  authentication.k8s.io/v1  } {UID  1  authentication.k8s.io/v1  }] without impersonating a user"
        );
    }

    #[test]
    fn a_service_account_gets_its_groups_and_anonymous_stays_unauthenticated() {
        let sa =
            impersonated(Wanted { user: Some("system:serviceaccount:ns:robot".into()), ..Wanted::default() });
        assert_eq!(
            sa.groups,
            ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"]
        );
        let anon = impersonated(Wanted { user: Some("system:anonymous".into()), ..Wanted::default() });
        assert_eq!(anon.groups, ["system:unauthenticated"]);
    }

    #[test]
    fn a_refused_impersonation_reads_like_kubes() {
        let authorizer = Union::new(vec![]);
        let bob = Arc::new(UserInfo { name: "bob".into(), ..UserInfo::default() });
        let err = check(&authorizer, &bob, &Wanted { user: Some("alice".into()), ..Wanted::default() })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
        let admin = Arc::new(UserInfo { groups: vec!["system:masters".into()], ..UserInfo::default() });
        assert!(
            check(&authorizer, &admin, &Wanted { user: Some("alice".into()), ..Wanted::default() }).is_ok()
        );
    }
}
