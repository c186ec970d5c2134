//! The review APIs (authorization.k8s.io and authentication.k8s.io): create
//! only, never stored, each answered 201 with the request echoed and its
//! `status` filled in — `kubectl auth can-i` (SelfSubjectAccessReview,
//! SelfSubjectRulesReview), `kubectl auth whoami` (SelfSubjectReview),
//! SubjectAccessReview / LocalSubjectAccessReview for components that check
//! on others' behalf, and TokenReview.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::App;
use super::handlers::{BodyType, body_json};
use super::respond;
use crate::authz::{Attributes, Decision, Rules, Target};
use crate::errors::{ApiError, Cause};
use crate::request::{ResourceRequest, UserInfo};

const AUTHORIZATION: &str = "authorization.k8s.io";
const AUTHENTICATION: &str = "authentication.k8s.io";

/// A resource served without a store of its own (the reviews, `bindings`,
/// `componentstatuses`), for routing and discovery.
#[derive(Debug, Clone, Copy)]
pub struct Unstored {
    pub group: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub verbs: &'static [&'static str],
    pub short_names: &'static [&'static str],
}

/// The verbs of a create-only resource.
pub const CREATE_ONLY: &[&str] = &["create"];

pub const REVIEWS: &[Unstored] = &[
    Unstored {
        group: AUTHENTICATION,
        plural: "selfsubjectreviews",
        kind: "SelfSubjectReview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
    },
    Unstored {
        group: AUTHENTICATION,
        plural: "tokenreviews",
        kind: "TokenReview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
    },
    Unstored {
        group: AUTHORIZATION,
        plural: "localsubjectaccessreviews",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
        verbs: CREATE_ONLY,
        short_names: &[],
    },
    Unstored {
        group: AUTHORIZATION,
        plural: "selfsubjectaccessreviews",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
    },
    Unstored {
        group: AUTHORIZATION,
        plural: "selfsubjectrulesreviews",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
    },
    Unstored {
        group: AUTHORIZATION,
        plural: "subjectaccessreviews",
        kind: "SubjectAccessReview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
    },
];

/// The review `info` names, if it names one.
pub fn find(info: &ResourceRequest) -> Option<&'static Unstored> {
    REVIEWS.iter().find(|r| r.group == info.group && r.plural == info.resource && info.version == "v1")
}

pub async fn serve(
    app: &App,
    review: &Unstored,
    info: &ResourceRequest,
    user: &Arc<UserInfo>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let in_namespace = info.namespace.is_some();
    if info.verb != "create"
        || info.name.is_some()
        || info.subresource.is_some()
        || in_namespace != review.namespaced
    {
        return Err(if info.verb == "create" {
            ApiError::NoSuchPath
        } else {
            ApiError::MethodNotAllowed(
                "the server does not allow this method on the requested resource".into(),
            )
        });
    }
    let body = body_json(
        headers,
        body,
        BodyType { kind: review.kind, max_yaml_json_bytes: app.max_request_body_bytes },
    )?;
    let mut object = request_object(review, body)?;
    let spec = object["spec"].clone();
    let status = match review.plural {
        "selfsubjectaccessreviews" => access_status(app, user.clone(), &spec, review)?,
        "subjectaccessreviews" => access_status(app, subject_of(&spec)?, &spec, review)?,
        "localsubjectaccessreviews" => {
            let namespace = info.namespace.as_deref().unwrap_or_default();
            local_namespace(&mut object, namespace)?;
            access_status(app, subject_of(&object["spec"])?, &object["spec"], review)?
        }
        "selfsubjectrulesreviews" => rules_status(app, user, &spec),
        "selfsubjectreviews" => json!({"userInfo": user.to_json()}),
        _ => token_status(app, &spec).await?,
    };
    object["status"] = status;
    Ok(respond::json_response(StatusCode::CREATED, &object))
}

/// The body as an object of the review's kind (apiVersion and kind filled
/// in when missing, refused when they name something else).
fn request_object(review: &Unstored, body: Value) -> Result<Value, ApiError> {
    let mut object = body;
    let Some(fields) = object.as_object_mut() else {
        return Err(ApiError::BadRequest("the body of the request was in an unknown format".into()));
    };
    let api_version = format!("{}/v1", review.group);
    for (field, wanted) in [("apiVersion", api_version.as_str()), ("kind", review.kind)] {
        match fields.get(field).and_then(Value::as_str) {
            None | Some("") => {
                fields.insert(field.into(), json!(wanted));
            }
            Some(given) if given == wanted => {}
            Some(given) => {
                return Err(ApiError::BadRequest(format!(
                    "{field} {given:?} does not match the expected {field} {wanted:?}"
                )));
            }
        }
    }
    fields.entry("metadata").or_insert_with(|| json!({}));
    fields.entry("spec").or_insert_with(|| json!({}));
    Ok(object)
}

/// A LocalSubjectAccessReview asks about the namespace of its path.
fn local_namespace(object: &mut Value, namespace: &str) -> Result<(), ApiError> {
    let attributes = &mut object["spec"]["resourceAttributes"];
    if attributes.is_object() {
        match attributes["namespace"].as_str() {
            None | Some("") => attributes["namespace"] = json!(namespace),
            Some(ns) if ns == namespace => {}
            Some(_) => {
                return Err(ApiError::BadRequest(format!(
                    "spec.resourceAttributes.namespace must match namespace: {namespace}"
                )));
            }
        }
    }
    match object["metadata"]["namespace"].as_str() {
        None | Some("") => object["metadata"]["namespace"] = json!(namespace),
        Some(ns) if ns == namespace => {}
        Some(_) => return Err(ApiError::BadRequest(format!("namespace must match namespace: {namespace}"))),
    }
    Ok(())
}

/// The user a SubjectAccessReview asks about.
fn subject_of(spec: &Value) -> Result<Arc<UserInfo>, ApiError> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    };
    let user = UserInfo {
        name: spec["user"].as_str().unwrap_or_default().to_string(),
        uid: spec["uid"].as_str().unwrap_or_default().to_string(),
        groups: strings(&spec["groups"]),
        extra: spec["extra"]
            .as_object()
            .map(|extra| extra.iter().map(|(k, v)| (k.clone(), strings(v))).collect::<BTreeMap<_, _>>())
            .unwrap_or_default(),
    };
    if user.name.is_empty() && user.groups.is_empty() {
        return Err(invalid(
            "SubjectAccessReview",
            AUTHORIZATION,
            "FieldValueInvalid",
            "spec.user",
            "Invalid value: \"\": at least one of user or group must be specified",
        ));
    }
    Ok(Arc::new(user))
}

/// A 422 for a review's spec, as kube's validation words it.
fn invalid(kind: &str, group: &str, reason: &'static str, field: &str, message: &str) -> ApiError {
    ApiError::Invalid {
        kind: format!("{kind}.{group}"),
        name: String::new(),
        causes: vec![Cause { reason, field: field.to_string(), message: message.to_string() }],
    }
}

/// `status` of an access review: what the authorizers decide for `user`.
fn access_status(app: &App, user: Arc<UserInfo>, spec: &Value, review: &Unstored) -> Result<Value, ApiError> {
    let resource = &spec["resourceAttributes"];
    let non_resource = &spec["nonResourceAttributes"];
    let attributes = match (resource.is_object(), non_resource.is_object()) {
        (true, false) => {
            let text = |field: &str| resource[field].as_str().unwrap_or_default().to_string();
            Attributes {
                user,
                verb: text("verb"),
                target: Target::Resource {
                    group: text("group"),
                    version: text("version"),
                    resource: text("resource"),
                    subresource: text("subresource"),
                    namespace: text("namespace"),
                    name: text("name"),
                },
            }
        }
        (false, true) => Attributes::path(
            user,
            non_resource["verb"].as_str().unwrap_or_default(),
            non_resource["path"].as_str().unwrap_or_default(),
        ),
        (true, true) => {
            return Err(invalid(
                review.kind,
                AUTHORIZATION,
                "FieldValueInvalid",
                "spec.nonResourceAttributes",
                "Invalid value: \"object\": cannot be specified in combination with resourceAttributes",
            ));
        }
        (false, false) => {
            return Err(invalid(
                review.kind,
                AUTHORIZATION,
                "FieldValueInvalid",
                "spec.resourceAttributes",
                "Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified",
            ));
        }
    };
    let (decision, reason) = app.authorizer.authorize(&attributes);
    let mut status = json!({"allowed": decision == Decision::Allow});
    if decision == Decision::Deny {
        status["denied"] = json!(true);
    }
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    Ok(status)
}

/// `status` of a SelfSubjectRulesReview.
fn rules_status(app: &App, user: &UserInfo, spec: &Value) -> Value {
    let namespace = spec["namespace"].as_str().unwrap_or_default();
    let Rules { resource, non_resource, incomplete, errors } = app.authorizer.rules_for(user, namespace);
    let resource_rules: Vec<Value> = resource
        .into_iter()
        .map(|r| {
            let mut rule = json!({"verbs": r.verbs});
            for (field, list) in
                [("apiGroups", r.api_groups), ("resources", r.resources), ("resourceNames", r.resource_names)]
            {
                if !list.is_empty() {
                    rule[field] = json!(list);
                }
            }
            rule
        })
        .collect();
    let non_resource_rules: Vec<Value> = non_resource
        .into_iter()
        .map(|r| json!({"verbs": r.verbs, "nonResourceURLs": r.non_resource_urls}))
        .collect();
    let mut status = json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": incomplete});
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    status
}

/// `status` of a TokenReview: whether the token stands for someone. A
/// token that does not is an answer (authenticated false), not an error.
async fn token_status(app: &App, spec: &Value) -> Result<Value, ApiError> {
    let token = spec["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(invalid(
            "TokenReview",
            AUTHENTICATION,
            "FieldValueRequired",
            "spec.token",
            "Required value",
        ));
    }
    let audiences: Vec<String> = spec["audiences"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    Ok(match app.authenticator.authenticate_token(token, &audiences).await {
        Some(user) => {
            let user = crate::authn::with_authenticated_group(user);
            let mut status = json!({"authenticated": true, "user": user.to_json()});
            if !audiences.is_empty() {
                status["audiences"] = json!(audiences);
            }
            status
        }
        None => json!({"user": {}, "error": "invalid bearer token"}),
    })
}
