//! Resource requests: one function per verb, each turning the request
//! into a registry call and its result into kube's response.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::App;
use super::negotiate::{self, Encoding, Shape};
use super::query::{self, Params};
use super::respond;
use super::{binding, eviction, watch};
use crate::admission::Notes;
use crate::cacher::{Listing, ReadAt};
use crate::errors::ApiError;
use crate::fieldmanager;
use crate::metrics::tracker::{self, Route};
use crate::patch::PatchType;
use crate::protobuf::{self, ProtobufError};
use crate::registry::metadata::prepare_update;
use crate::registry::scale::{self, ScalePaths};
use crate::registry::{DeleteOptions, Deleted, Resource, Store, WriteContext};
use crate::request::{ResourceRequest, UserInfo};
use crate::runtime::decode::{self, FieldValidation};
use crate::runtime::meta;

/// A resource request, already parsed; the whole body read.
pub async fn serve(
    app: &App,
    info: &ResourceRequest,
    user: &Arc<UserInfo>,
    params: &Params,
    headers: &HeaderMap,
    body: &[u8],
    notes: &Arc<Notes>,
) -> Result<Response, ApiError> {
    let served = app.resources.get(&info.group, &info.version, &info.resource).ok_or(ApiError::NoSuchPath)?;
    let store = &served.store;
    let resource = store.resource();
    let namespace = match (resource.namespaced, info.namespace.as_deref()) {
        (true, ns) => ns,
        // `/api/v1/namespaces/<name>` names a namespace, not a scope.
        (false, Some(_)) if !resource.is("", "namespaces") => return Err(ApiError::NoSuchPath),
        (false, _) => None,
    };
    if let Some(sub) = info.subresource.as_deref()
        && !resource.subresources().contains(&sub)
    {
        let action = resource.action(sub).ok_or(ApiError::NoSuchPath)?;
        if !action.verbs.contains(&info.verb) {
            return Err(ApiError::MethodNotAllowed(
                "the server does not allow this method on the requested resource".to_string(),
            ));
        }
    }
    // A namespaced kind is only listed and watched across namespaces; and
    // namespaces go one by one (their deletion is a process).
    let cluster_wide_write =
        resource.namespaced && namespace.is_none() && !matches!(info.verb, "list" | "watch");
    if cluster_wide_write || (resource.is("", "namespaces") && info.verb == "deletecollection") {
        return Err(ApiError::MethodNotAllowed(
            "the server does not allow this method on the requested resource".to_string(),
        ));
    }
    // A route of kube's installer would have taken it.
    tracker::routed(Route::Resource);
    let accept = header_str(headers, header::ACCEPT);
    let (shape, encoding) = negotiate::negotiate(accept, params.get("includeObject"))?;
    let name = info.name.as_deref().unwrap_or_default();
    let max_body = app.max_request_body_bytes;
    let manager =
        fieldmanager::manager_name(params.get("fieldManager"), header_str(headers, header::USER_AGENT));
    let request =
        Request { store, resource, namespace, name, params, shape, encoding, user, max_body, notes, manager };
    match (info.verb, info.subresource.as_deref()) {
        ("create", Some("binding")) => binding::serve(app, info, params, headers, body, encoding).await,
        ("create", Some("eviction")) => {
            eviction::serve(app, info, user, params, headers, body, encoding).await
        }
        ("get", Some("scale")) => request.get_scale().await,
        ("get", _) => request.get().await,
        ("list", _) => request.list().await,
        ("watch", _) => watch::serve(store, namespace, params, shape, encoding, &app.metrics).await,
        ("create", None) => request.create(headers, body).await,
        ("update", Some("scale")) => request.update_scale(headers, body).await,
        ("update", sub) => request.update(sub, headers, body).await,
        ("patch", Some("scale")) => request.patch_scale(headers, body).await,
        ("patch", sub) => request.patch(sub, headers, body).await,
        ("delete", None) => request.delete(headers, body).await,
        ("deletecollection", None) => request.delete_collection(headers, body).await,
        _ => Err(ApiError::MethodNotAllowed(
            "the server does not allow this method on the requested resource".to_string(),
        )),
    }
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> &str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

/// One resource request's scope (kube's `RequestScope`): what every verb's
/// handler needs.
struct Request<'a> {
    store: &'a Store,
    resource: &'a Resource,
    namespace: Option<&'a str>,
    name: &'a str,
    params: &'a Params,
    shape: Shape,
    encoding: Encoding,
    user: &'a Arc<UserInfo>,
    /// The request body limit, which also bounds what a YAML body expands to.
    max_body: usize,
    /// Where admission's warnings and audit annotations go.
    notes: &'a Arc<Notes>,
    /// Who the request's writes are recorded as in managedFields.
    manager: String,
}

impl<'a> Request<'a> {
    fn ok(&self, code: StatusCode, object: Value) -> Response {
        self.answer(code, &respond::object_body(self.store, object, self.shape))
    }

    /// A body as it is, in the encoding negotiated.
    fn answer(&self, code: StatusCode, body: &Value) -> Response {
        respond::answer(code, body, self.encoding)
    }

    fn write_context(&self, dry_run: bool) -> WriteContext {
        WriteContext::new(self.user.clone(), dry_run)
            .noting_into(self.notes.clone())
            .managed_by(self.manager.clone())
    }

    async fn get(&self) -> Result<Response, ApiError> {
        let at = ReadAt { resource_version: self.params.resource_version()?, exact: false };
        let object = self.store.get(self.namespace, self.name, &at).await?;
        Ok(self.ok(StatusCode::OK, object))
    }

    async fn list(&self) -> Result<Response, ApiError> {
        let opts = self.params.list_options(self.store, self.namespace)?;
        let listing = self.store.listing(&opts).await?;
        if let (Shape::Object, Encoding::Json, Listing::Cached { objects, resource_version }) =
            (self.shape, self.encoding, &listing)
            && let Some(body) = respond::cached_list_json(self.store, objects, *resource_version)
        {
            return Ok(respond::json_bytes(StatusCode::OK, body, respond::JSON));
        }
        let list = listing.into_result();
        Ok(self.answer(StatusCode::OK, &respond::list_body(self.store, list, self.shape)))
    }

    /// Decodes a JSON, YAML or protobuf request body as an object of this
    /// resource.
    /// Fields a JSON body gives twice are strict decoding errors, as
    /// kube's decoder finds them: warnings under `Warn`, refused with the
    /// unknown fields under `Strict`.
    fn decode(&self, headers: &HeaderMap, body: &[u8]) -> Result<(Value, Vec<String>), ApiError> {
        let validation = self.params.field_validation()?;
        let (json, duplicates) = match is_json(headers) {
            true => decode::json_noting_duplicates(body).map_err(json_error)?,
            false => (body_json(headers, body, self.body_type(&self.resource.kind))?, Vec::new()),
        };
        if duplicates.is_empty() || validation == FieldValidation::Ignore {
            return self.store.decode(json, validation);
        }
        let duplicates = duplicates.iter().map(|path| format!("duplicate field \"{path}\""));
        let (object, unknown) = self.store.decode(json, FieldValidation::Warn)?;
        let errors: Vec<String> = duplicates.chain(unknown).collect();
        match validation {
            FieldValidation::Strict => {
                Err(ApiError::BadRequest(format!("strict decoding error: {}", errors.join(", "))))
            }
            _ => Ok((object, errors)),
        }
    }

    /// How a body of `kind` is decoded for this request.
    fn body_type<'k>(&self, kind: &'k str) -> BodyType<'k> {
        // A YAML body may expand to twice the body limit: JSON spells out
        // what block YAML leaves implicit, but aliases cannot take more.
        BodyType { kind, max_yaml_json_bytes: self.max_body.saturating_mul(2) }
    }

    async fn create(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
        self.params.field_manager("CreateOptions")?;
        let ctx = self.write_context(self.params.dry_run()?);
        let (object, warnings) = self.decode(headers, body)?;
        self.notes.note_created_name(meta::name_of(&object));
        let created = self.store.create(&ctx, self.namespace, object).await?;
        Ok(respond::with_warnings(self.ok(StatusCode::CREATED, created), &warnings))
    }

    async fn update(
        &self,
        sub: Option<&str>,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Response, ApiError> {
        self.params.field_manager("UpdateOptions")?;
        let ctx = self.write_context(self.params.dry_run()?);
        let (object, warnings) = self.decode(headers, body)?;
        let updated = self.store.update(&ctx, self.namespace, self.name, sub, object).await?;
        Ok(respond::with_warnings(self.ok(StatusCode::OK, updated), &warnings))
    }

    async fn patch(&self, sub: Option<&str>, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
        let ctx = self.write_context(self.params.dry_run()?);
        let kind = PatchType::from_content_type(header_str(headers, header::CONTENT_TYPE))?;
        let force = query::patch_options(self.params, kind)?;
        let validation = self.params.field_validation()?;
        if kind == PatchType::Apply {
            let config = apply_body(body, self.max_body.saturating_mul(2))?;
            let (applied, warnings, created) =
                self.store.apply(&ctx, self.namespace, self.name, sub, &config, force, validation).await?;
            let code = if created { StatusCode::CREATED } else { StatusCode::OK };
            return Ok(respond::with_warnings(self.ok(code, applied), &warnings));
        }
        let (patched, warnings) =
            self.store.patch(&ctx, self.namespace, self.name, sub, kind, body, validation).await?;
        Ok(respond::with_warnings(self.ok(StatusCode::OK, patched), &warnings))
    }

    async fn delete(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
        let options = query::delete_body(
            &delete_options(headers, body, self.body_type("DeleteOptions"))?,
            self.params,
        )?;
        let ctx = self.write_context(self.params.dry_run()? || options.dry_run);
        let opts = DeleteOptions {
            preconditions: options.preconditions,
            propagation: options.propagation,
            grace_period_seconds: options.grace_period_seconds,
        };
        match self.store.delete(&ctx, self.namespace, self.name, &opts).await? {
            Deleted::Gone(object) if self.resource.returns_deleted => Ok(self.ok(StatusCode::OK, object)),
            Deleted::Gone(object) => {
                Ok(self.answer(StatusCode::OK, &respond::deleted_status(self.resource, &object)))
            }
            // The namespace controller takes a Terminating namespace from here.
            Deleted::Pending(object) => Ok(self.ok(StatusCode::OK, object)),
        }
    }

    /// Deletes every object the selectors match; the list of them.
    async fn delete_collection(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
        let options = query::delete_body(
            &delete_options(headers, body, self.body_type("DeleteOptions"))?,
            self.params,
        )?;
        let ctx = self.write_context(self.params.dry_run()? || options.dry_run);
        let opts = DeleteOptions {
            preconditions: options.preconditions,
            propagation: options.propagation,
            grace_period_seconds: options.grace_period_seconds,
        };
        let list_opts = self.params.list_options(self.store, self.namespace)?;
        let mut list = self.store.list(&list_opts).await?;
        let mut deleted = Vec::with_capacity(list.items.len());
        for item in &list.items {
            let name = meta::name_of(item).to_string();
            let ns = item["metadata"]["namespace"].as_str();
            match self.store.delete(&ctx, ns, &name, &opts).await {
                Ok(Deleted::Gone(object) | Deleted::Pending(object)) => deleted.push(object),
                Err(ApiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        list.items = deleted;
        list.continue_token = None;
        list.remaining_item_count = None;
        Ok(self.answer(StatusCode::OK, &respond::list_body(self.store, list, Shape::Object)))
    }

    async fn get_scale(&self) -> Result<Response, ApiError> {
        let at = ReadAt { resource_version: self.params.resource_version()?, exact: false };
        let object = self.store.get(self.namespace, self.name, &at).await?;
        Ok(self.answer(StatusCode::OK, &scale::read(self.scale_paths()?, &object)?))
    }

    /// Where the resource keeps what its Scale shows (the router serves
    /// `/scale` only for resources that have one).
    fn scale_paths(&self) -> Result<&'a ScalePaths, ApiError> {
        self.resource.scale.as_ref().ok_or(ApiError::NoSuchPath)
    }

    async fn update_scale(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
        let scale = body_json(headers, body, self.body_type("Scale"))?;
        self.set_replicas(|_| Ok(scale.clone())).await
    }

    async fn patch_scale(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, ApiError> {
        let kind = match PatchType::from_content_type(header_str(headers, header::CONTENT_TYPE))? {
            // Scale has no patch strategies: a strategic patch merges
            // plainly, for the kinds that take strategic patches at all
            // (custom resources refuse them on /scale too, as kube does).
            PatchType::Strategic if self.store.strategy().patch_schema().is_some() => PatchType::Merge,
            PatchType::Apply => {
                return Err(ApiError::UnsupportedMediaType(
                    "server-side apply of the scale subresource is not supported".into(),
                ));
            }
            other => other,
        };
        self.set_replicas(|current| crate::patch::apply(kind, None, current, body)).await
    }

    /// Sets the spec replicas from the Scale that `make` builds from the
    /// current one; answers with the new Scale.
    async fn set_replicas<F>(&self, make: F) -> Result<Response, ApiError>
    where
        F: Fn(&Value) -> Result<Value, ApiError>,
    {
        let ctx = self.write_context(self.params.dry_run()?);
        let paths = self.scale_paths()?;
        let updated = self
            .store
            .update_with(&ctx, self.namespace, self.name, Some("scale"), |old| {
                let scale = make(&scale::current(paths, old)?)?;
                let replicas = scale::requested_replicas(paths, &scale)?;
                self.check_scale_preconditions(paths, &scale, old)?;
                let mut new = old.clone();
                scale::set_replicas(paths, &mut new, replicas)?;
                prepare_update(self.resource, self.store.strategy(), old, &mut new, None);
                // The scaler takes the replicas (from an applier too), as
                // kube's scale handler records it.
                self.store.track(&ctx, old, &mut new, Some("scale"));
                Ok(new)
            })
            .await?;
        Ok(self.answer(StatusCode::OK, &scale::of(paths, &updated)?))
    }

    /// A Scale's `resourceVersion` (and, for kube's workloads, its `uid`)
    /// must be the object's, when set.
    fn check_scale_preconditions(
        &self,
        paths: &ScalePaths,
        scale: &Value,
        old: &Value,
    ) -> Result<(), ApiError> {
        let (name, wanted, have) = (self.name, &scale["metadata"], &old["metadata"]);
        let uid = wanted["uid"].as_str().unwrap_or_default();
        if paths.is_builtin() && !uid.is_empty() && have["uid"].as_str() != Some(uid) {
            let object_uid = have["uid"].as_str().unwrap_or_default();
            return Err(ApiError::Conflict {
                // kube names the subresource as `deployments/scale.apps`
                // (`replicationcontrollers/scale` in the core group).
                qualified: match self.resource.group.as_str() {
                    "" => format!("{}/scale", self.resource.plural),
                    group => format!("{}/scale.{group}", self.resource.plural),
                },
                name: name.to_string(),
                why: format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {object_uid}"
                ),
            });
        }
        self.store.check_resource_version(name, old, wanted["resourceVersion"].as_str().unwrap_or_default())
    }
}

/// What a request body must decode into: the kind named in decoding
/// errors, and the JSON bytes a YAML body may expand to.
pub(super) struct BodyType<'a> {
    pub kind: &'a str,
    pub max_yaml_json_bytes: usize,
}

/// A request body as JSON: JSON as sent, YAML turned into JSON (what kube's
/// YAML serializer does; kubectl never sends it, curl users do), or protobuf
/// (what client-go's typed clients send for built-in kinds) decoded into the
/// same JSON.
pub(super) fn body_json(headers: &HeaderMap, body: &[u8], into: BodyType<'_>) -> Result<Value, ApiError> {
    match media_type(headers) {
        "" | "application/json" | "*/*" => serde_json::from_slice(body).map_err(json_error),
        "application/yaml" => decode::yaml_to_json(body, into.kind, into.max_yaml_json_bytes),
        protobuf::PROTOBUF => protobuf::decode(body).map_err(|e| match e {
            ProtobufError::UnsupportedKind { .. } => ApiError::UnsupportedMediaType(e.to_string()),
            _ => ApiError::BadRequest(e.to_string()),
        }),
        // kube lists the media types its serializers decode.
        _ => Err(ApiError::UnsupportedMediaType(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf".to_string(),
        )),
    }
}

/// The request body's media type, without parameters.
fn media_type(headers: &HeaderMap) -> &str {
    header_str(headers, header::CONTENT_TYPE).split(';').next().unwrap_or_default().trim()
}

/// Whether the body is read as JSON (no type, JSON, or anything).
fn is_json(headers: &HeaderMap) -> bool {
    matches!(media_type(headers), "" | "application/json" | "*/*")
}

fn json_error(e: serde_json::Error) -> ApiError {
    ApiError::BadRequest(format!("error decoding request body: {e}"))
}

/// An apply's body: YAML (or JSON) that must be an object, refused with
/// kube's texts (which carry Go's names for what it is instead).
fn apply_body(body: &[u8], max_json_bytes: usize) -> Result<Value, ApiError> {
    // What clients send is JSON (kubectl, client-go, the Python client):
    // read as JSON it is the same value, without the YAML parser's cost.
    let value = match serde_json::from_slice::<Value>(body) {
        Ok(value) => value,
        Err(_) => decode::yaml_value(body, max_json_bytes).map_err(|e| {
            ApiError::BadRequest(format!("error encoding patch: error converting YAML to JSON: {e}"))
        })?,
    };
    let go_type = match &value {
        Value::Object(_) => return Ok(value),
        // Go leaves the map empty.
        Value::Null => return Ok(json!({})),
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
    };
    Err(ApiError::BadRequest(format!(
        "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
    )))
}

/// A DELETE's body (DeleteOptions) as JSON bytes; empty when none was sent.
fn delete_options(headers: &HeaderMap, body: &[u8], into: BodyType<'_>) -> Result<Vec<u8>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let value = body_json(headers, body, into)?;
    serde_json::to_vec(&value).map_err(|e| ApiError::Internal(e.to_string()))
}
