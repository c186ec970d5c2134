//! `POST .../serviceaccounts/<name>/token` (TokenRequest, what `kubectl
//! create token` calls): a token for the ServiceAccount, optionally bound
//! to a Pod or Secret, signed with `--service-account-signing-key-file`.
//! Without a signing key the subresource is not served (404), as in kube.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::App;
use super::handlers::{BodyType, body_json};
use super::respond;
use crate::authn::service_account::TokenSpec;
use crate::cacher::ReadAt;
use crate::errors::{ApiError, Cause};
use crate::request::ResourceRequest;
use crate::runtime::meta;

const DEFAULT_SECONDS: i64 = 3600;
const MIN_SECONDS: i64 = 600;
const MAX_SECONDS: i64 = 1 << 32;

/// Whether `info` is a TokenRequest.
pub fn is_token_request(info: &ResourceRequest) -> bool {
    info.group.is_empty()
        && info.resource == "serviceaccounts"
        && info.subresource.as_deref() == Some("token")
}

pub async fn serve(
    app: &App,
    info: &ResourceRequest,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let Some(tokens) = &app.authenticator.service_accounts else { return Err(ApiError::NoSuchPath) };
    let (Some(namespace), Some(name)) = (info.namespace.as_deref(), info.name.as_deref()) else {
        return Err(ApiError::NoSuchPath);
    };
    if info.verb != "create" {
        return Err(ApiError::MethodNotAllowed(
            "the server does not allow this method on the requested resource".into(),
        ));
    }
    let into = BodyType { kind: "TokenRequest", max_yaml_json_bytes: app.max_request_body_bytes };
    let mut request = body_json(headers, body, into)?;
    if !request.is_object() {
        return Err(ApiError::BadRequest("the body of the request was in an unknown format".into()));
    }
    let seconds = request["spec"]["expirationSeconds"].as_i64().unwrap_or(DEFAULT_SECONDS);
    check_duration(name, seconds)?;
    let accounts = app.resources.store("", "serviceaccounts")?;
    let account = accounts.get(Some(namespace), name, &ReadAt::default()).await?;
    let bound = bound_object(app, namespace, &request["spec"]["boundObjectRef"]).await?;
    let audiences: Vec<String> = request["spec"]["audiences"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let audiences = if audiences.is_empty() { tokens.audiences().to_vec() } else { audiences };
    let spec = TokenSpec {
        namespace: namespace.to_string(),
        account: name.to_string(),
        account_uid: meta::uid_of(&account).to_string(),
        audiences: audiences.clone(),
        expiration_seconds: seconds,
        bound,
    };
    let Some((token, expires)) = tokens.mint(&spec) else {
        return Err(ApiError::Internal("no ServiceAccount signing key is configured".into()));
    };
    let expiration = jiff::Timestamp::from_second(expires)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    request["apiVersion"] = json!("authentication.k8s.io/v1");
    request["kind"] = json!("TokenRequest");
    request["metadata"] = json!({"name": name, "namespace": namespace, "creationTimestamp": meta::now()});
    request["spec"]["audiences"] = json!(audiences);
    request["spec"]["expirationSeconds"] = json!(seconds);
    request["status"] = json!({"token": token, "expirationTimestamp": expiration});
    Ok(respond::json_response(StatusCode::CREATED, &request))
}

/// kube's TokenRequest validation: at least 10 minutes, at most 2^32 s.
fn check_duration(name: &str, seconds: i64) -> Result<(), ApiError> {
    let detail = if seconds < MIN_SECONDS {
        "may not specify a duration less than 10 minutes"
    } else if seconds > MAX_SECONDS {
        "may not specify a duration larger than 2^32 seconds"
    } else {
        return Ok(());
    };
    Err(ApiError::Invalid {
        kind: "TokenRequest.authentication.k8s.io".into(),
        name: name.to_string(),
        causes: vec![Cause {
            reason: "FieldValueInvalid",
            field: "spec.expirationSeconds".into(),
            message: format!("Invalid value: {seconds}: {detail}"),
        }],
    })
}

/// The Pod or Secret a token is bound to: it must exist (with the uid
/// given, if one is).
async fn bound_object(
    app: &App,
    namespace: &str,
    reference: &Value,
) -> Result<Option<(String, String, String)>, ApiError> {
    if !reference.is_object() {
        return Ok(None);
    }
    let kind = reference["kind"].as_str().unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    let plural = match kind {
        "Pod" => "pods",
        "Secret" => "secrets",
        other => return Err(ApiError::BadRequest(format!("cannot bind token for object of kind {other:?}"))),
    };
    let object = app.resources.store("", plural)?.get(Some(namespace), name, &ReadAt::default()).await?;
    let uid = meta::uid_of(&object).to_string();
    if let Some(wanted) = reference["uid"].as_str().filter(|u| !u.is_empty())
        && wanted != uid
    {
        return Err(ApiError::Conflict {
            qualified: plural.to_string(),
            name: name.to_string(),
            why: format!(
                "the UID in the bound object reference ({wanted}) does not match the UID in record. The object might have been deleted and then recreated"
            ),
        });
    }
    Ok(Some((kind.to_string(), name.to_string(), uid)))
}
