//! Binding a pod to a node, what kube-scheduler posts once it has chosen one:
//! `POST .../pods/<name>/binding` and the older `POST .../namespaces/<ns>/bindings`, both with a
//! `Binding` {metadata.name: the pod, target: {kind: Node, name}}.
//!
//! As kube's BindingREST: the pod gets `spec.nodeName`, the binding's annotations and a
//! `PodScheduled=True` condition in one compare-and-swap that neither admission nor the pod's
//! update rules see (a live pod may not otherwise change its node); a pod already bound, being
//! deleted or still gated is a 409 on `pods/binding`. The answer is a Success Status (201).

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::App;
use super::handlers::{BodyType, body_json};
use super::negotiate::Encoding;
use super::reviews::{CREATE_ONLY, Unstored};
use super::{query::Params, respond};
use crate::errors::{ApiError, Cause};
use crate::request::ResourceRequest;
use crate::runtime::meta;

/// `bindings`: the create-only resource of core v1 discovery.
pub const BINDINGS: Unstored = Unstored {
    group: "",
    plural: "bindings",
    kind: "Binding",
    namespaced: true,
    verbs: CREATE_ONLY,
    short_names: &[],
};

/// Whether a request is for `/api/v1/namespaces/<ns>/bindings`.
pub fn is_bindings(info: &ResourceRequest) -> bool {
    info.group.is_empty() && info.resource == "bindings" && info.subresource.is_none()
}

/// `pods/binding` (`pod` from the URL) or `bindings` (`pod` None: the Binding's own name).
pub async fn serve(
    app: &App,
    info: &ResourceRequest,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
    encoding: Encoding,
) -> Result<Response, ApiError> {
    let Some(namespace) = info.namespace.as_deref() else { return Err(ApiError::NoSuchPath) };
    if info.verb != "create" {
        return Err(ApiError::MethodNotAllowed(
            "the server does not allow this method on the requested resource".into(),
        ));
    }
    let into = BodyType { kind: "Binding", max_yaml_json_bytes: app.max_request_body_bytes };
    let binding = body_json(headers, body, into)?;
    if !binding.is_object() {
        return Err(ApiError::BadRequest("the body of the request was in an unknown format".into()));
    }
    let name = meta::name_of(&binding);
    if info.subresource.is_some() && info.name.as_deref() != Some(name) {
        return Err(ApiError::BadRequest("name in URL does not match name in Binding object".into()));
    }
    validate(&binding)?;
    let node = binding["target"]["name"].as_str().unwrap_or_default().to_owned();
    let pods = app.resources.store("", "pods")?;
    let preconditions = (meta::uid_of(&binding).to_owned(), meta::resource_version_of(&binding).to_owned());
    pods.guaranteed_update(Some(namespace), name, params.dry_run()?, |pod| {
        bind(pod, &node, &binding["metadata"]["annotations"], &preconditions)
    })
    .await?;
    let status =
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    Ok(respond::answer(StatusCode::CREATED, &status, encoding))
}

/// kube's ValidatePodBinding, answered as kube answers it: its aggregate is not an API status,
/// so it is a 500 with the causes as the message.
fn validate(binding: &Value) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let kind = binding["target"]["kind"].as_str().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        causes.push(Cause {
            reason: "FieldValueNotSupported",
            field: "target.kind".into(),
            message: format!("Unsupported value: \"{kind}\": supported values: \"Node\", \"<empty>\""),
        });
    }
    if binding["target"]["name"].as_str().unwrap_or_default().is_empty() {
        causes.push(Cause {
            reason: "FieldValueRequired",
            field: "target.name".into(),
            message: "Required value".into(),
        });
    }
    match causes.as_slice() {
        [] => Ok(()),
        [one] => Err(ApiError::Untyped(format!("{}: {}", one.field, one.message))),
        many => {
            let each: Vec<String> = many.iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
            Err(ApiError::Untyped(format!("[{}]", each.join(", "))))
        }
    }
}

/// The pod bound to `node`, or kube's refusal.
fn bind(
    pod: &Value,
    node: &str,
    annotations: &Value,
    (uid, rv): &(String, String),
) -> Result<Value, ApiError> {
    let name = meta::name_of(pod);
    let conflict =
        |why: String| ApiError::Conflict { qualified: "pods/binding".into(), name: name.into(), why };
    // The binding's uid and resourceVersion are preconditions on the pod.
    let precondition = |what: &str, wanted: &str, has: &str| ApiError::Conflict {
        qualified: "pods".into(),
        name: name.into(),
        why: format!("Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {has}"),
    };
    if !uid.is_empty() && meta::uid_of(pod) != uid {
        return Err(precondition("UID", uid, meta::uid_of(pod)));
    }
    if !rv.is_empty() && meta::resource_version_of(pod) != rv {
        return Err(precondition("ResourceVersion", rv, meta::resource_version_of(pod)));
    }
    if pod["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
        return Err(conflict(format!("pod {name} is being deleted, cannot be assigned to a host")));
    }
    let bound = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    if !bound.is_empty() {
        return Err(conflict(format!("pod {name} is already assigned to node \"{bound}\"")));
    }
    if pod["spec"]["schedulingGates"].as_array().is_some_and(|g| !g.is_empty()) {
        return Err(conflict(format!("pod {name} has non-empty .spec.schedulingGates")));
    }
    let mut pod = pod.clone();
    pod["spec"]["nodeName"] = json!(node);
    if let Some(annotations) = annotations.as_object().filter(|a| !a.is_empty()) {
        let into = &mut pod["metadata"]["annotations"];
        if !into.is_object() {
            *into = json!({});
        }
        for (key, value) in annotations {
            into[key] = value.clone();
        }
    }
    let scheduled = json!({"type": "PodScheduled", "status": "True"});
    crate::runtime::conditions::set_on_pod(&mut pod, scheduled, &meta::now());
    Ok(pod)
}
