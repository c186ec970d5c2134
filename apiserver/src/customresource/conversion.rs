//! A custom resource between its versions (kube's CRD converters):
//! strategy `None` changes only `apiVersion`; strategy `Webhook` sends the
//! objects to the CRD's conversion webhook in a ConversionReview and takes
//! back what it answers, checked as kube checks it (same kind, name,
//! namespace and uid; only labels and annotations of the metadata may
//! change, anything else there is put back).
//!
//! [`VersionConversion`] is a served version's view of stored objects, in
//! kube's order: on reading, an object is pruned and defaulted by the
//! schema of the version it is stored in, converted, then pruned by the
//! version read through; on writing, converted to the storage version and
//! pruned by its schema.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use super::defaults::apply_defaults;
use super::prune::prune_object;
use crate::admission::webhook::{Caller, Target};
use crate::registry::metadata::{annotation_causes, label_causes};
use crate::runtime::golang::go_type;
use crate::runtime::schema_view::Node;
use crate::storage::VersionView;

/// How long a conversion webhook may take: kube's fixed 30 seconds (the
/// CRD has no setting for it).
const TIMEOUT: Duration = Duration::from_secs(30);

/// The most request bytes one ConversionReview carries: a long list is
/// converted in several calls, so no answer grows past what the webhook
/// client accepts.
const MAX_REVIEW_BYTES: usize = 2 << 20;

/// One CRD's conversion between its versions.
#[derive(Debug)]
pub struct Converter {
    group: String,
    /// Every version in `spec.versions`, served or not.
    versions: Vec<String>,
    how: How,
}

#[derive(Debug)]
enum How {
    /// Versions differ in name only.
    None,
    Webhook(Webhook),
}

#[derive(Debug)]
struct Webhook {
    caller: Arc<Caller>,
    target: Target,
    /// PEM roots from `caBundle` (empty: the system's).
    ca_bundle: Vec<u8>,
    /// The first of `conversionReviewVersions` this server speaks; none
    /// fails every conversion, as in kube.
    review_version: Option<&'static str>,
}

impl Converter {
    /// The conversion a (valid, stored) CRD asks for.
    pub fn of_crd(crd: &Value, caller: &Arc<Caller>) -> Converter {
        let spec = &crd["spec"];
        let versions = spec["versions"].as_array().into_iter().flatten();
        let conversion = &spec["conversion"];
        let how = match conversion["strategy"].as_str() {
            Some("Webhook") => How::Webhook(Webhook::of(&conversion["webhook"], caller.clone())),
            _ => How::None,
        };
        Converter {
            group: spec["group"].as_str().unwrap_or_default().to_string(),
            versions: versions.filter_map(|v| v["name"].as_str()).map(str::to_string).collect(),
            how,
        }
    }

    /// `objects` in `desired` (an apiVersion); those already in it are
    /// left as they are, and with none to convert no webhook is called.
    pub async fn convert(&self, mut objects: Vec<Value>, desired: &str) -> Result<Vec<Value>, String> {
        if !self.knows(desired) {
            return Err(format!("request to convert CR to an invalid group/version: {desired}"));
        }
        match &self.how {
            // Objects stored in a version the CRD no longer lists are read
            // as before (kube refuses them, but also refuses the CRD update
            // that strands them, through status.storedVersions, which is
            // not checked here yet).
            How::None => {
                for object in &mut objects {
                    object["apiVersion"] = json!(desired);
                }
                Ok(objects)
            }
            How::Webhook(webhook) => {
                if let Some(unknown) = objects.iter().map(api_version).find(|v| !self.knows(v)) {
                    return Err(format!("request to convert CR from an invalid group/version: {unknown}"));
                }
                let version = webhook.review_version.ok_or("no supported conversion review versions")?;
                let pending: Vec<usize> =
                    (0..objects.len()).filter(|&i| api_version(&objects[i]) != desired).collect();
                for batch in batches(&objects, &pending) {
                    let sent: Vec<Value> = batch.iter().map(|&i| objects[i].clone()).collect();
                    let converted = webhook.call(version, sent, desired).await?;
                    for (&i, object) in batch.iter().zip(converted) {
                        objects[i] = object;
                    }
                }
                Ok(objects)
            }
        }
    }

    fn knows(&self, api_version: &str) -> bool {
        api_version
            .split_once('/')
            .is_some_and(|(group, version)| group == self.group && self.versions.iter().any(|v| v == version))
    }
}

/// The indexes of `pending` in reviews of at most [`MAX_REVIEW_BYTES`]
/// (one object at least each).
fn batches(objects: &[Value], pending: &[usize]) -> Vec<Vec<usize>> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut bytes = 0;
    for &i in pending {
        let size = serde_json::to_vec(&objects[i]).map_or(0, |b| b.len());
        match batches.last_mut() {
            Some(batch) if bytes + size <= MAX_REVIEW_BYTES => batch.push(i),
            _ => {
                batches.push(vec![i]);
                bytes = 0;
            }
        }
        bytes += size;
    }
    batches
}

impl Webhook {
    fn of(webhook: &Value, caller: Arc<Caller>) -> Webhook {
        let config = &webhook["clientConfig"];
        let target = match config["url"].as_str() {
            Some(url) => Target::Url(url.to_string()),
            None => {
                let service = &config["service"];
                let text = |key: &str| service[key].as_str().unwrap_or_default().to_string();
                Target::Service {
                    namespace: text("namespace"),
                    name: text("name"),
                    path: service["path"].as_str().unwrap_or("/").to_string(),
                    port: service["port"].as_u64().and_then(|p| u16::try_from(p).ok()).unwrap_or(443),
                }
            }
        };
        // A bundle of blanks is none (kube trims it).
        let ca_bundle = config["caBundle"]
            .as_str()
            .and_then(|b| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b).ok())
            .filter(|pem| !pem.trim_ascii().is_empty())
            .unwrap_or_default();
        let review_version =
            webhook["conversionReviewVersions"].as_array().into_iter().flatten().find_map(|v| {
                match v.as_str() {
                    Some("v1") => Some("v1"),
                    Some("v1beta1") => Some("v1beta1"),
                    _ => None,
                }
            });
        Webhook { caller, target, ca_bundle, review_version }
    }

    /// One ConversionReview: `objects` sent, what came back checked and
    /// their metadata restored.
    async fn call(&self, version: &str, objects: Vec<Value>, desired: &str) -> Result<Vec<Value>, String> {
        let source = gvk(&objects[0]);
        let failed = |why: String| format!("conversion webhook for {source} failed: {why}");
        let uid = uuid::Uuid::new_v4().to_string();
        let review = json!({
            "kind": "ConversionReview",
            "apiVersion": format!("apiextensions.k8s.io/{version}"),
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
            // kube sends an empty response along.
            "response": {"uid": "", "convertedObjects": null, "result": {"metadata": {}}},
        });
        let body = serde_json::to_vec(&review).map_err(|e| failed(e.to_string()))?;
        let answer = self.caller.post(&self.target, &self.ca_bundle, body, TIMEOUT).await.map_err(failed)?;
        let converted = converted_objects(version, &uid, &answer).map_err(failed)?;
        if converted.len() != objects.len() {
            return Err(format!(
                "conversion webhook for {source} returned {} objects, expected {}",
                converted.len(),
                objects.len()
            ));
        }
        let single = objects.len() == 1;
        objects
            .iter()
            .zip(converted)
            .enumerate()
            .map(|(i, (original, converted))| {
                checked(original, converted, desired).map_err(|problem| problem.text(&source, i, single))
            })
            .collect()
    }
}

/// The `convertedObjects` of a ConversionReview answer, checked as kube
/// checks them (the type and uid only in v1).
fn converted_objects(version: &str, uid: &str, body: &[u8]) -> Result<Vec<Value>, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    if version == "v1" {
        let got = gvk(&review);
        if got != "apiextensions.k8s.io/v1, Kind=ConversionReview" {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}"
            ));
        }
    }
    let response = review.get("response").filter(|r| r.is_object()).ok_or("no response provided")?;
    let got_uid = response["uid"].as_str().unwrap_or_default();
    if version == "v1" && got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let result = &response["result"];
    let status = result["status"].as_str().unwrap_or_default();
    if status != "Success" {
        return Err(match result["message"].as_str().filter(|m| !m.is_empty()) {
            Some(message) => message.to_string(),
            None => format!("response.result.status was '{status}', not 'Success'"),
        });
    }
    Ok(response["convertedObjects"].as_array().cloned().unwrap_or_default())
}

/// What is wrong with one converted object.
enum Problem {
    /// Not an object with a kind: unreadable.
    Unreadable(String),
    /// The wrong version or kind.
    Type(String),
    /// Another object than the one sent.
    Identity(String),
    Metadata(String),
}

impl Problem {
    /// kube's text, which differs for a review of one object and of many.
    fn text(self, source: &str, i: usize, single: bool) -> String {
        let object = if single {
            "invalid object".to_string()
        } else {
            format!("invalid converted object at index {i}")
        };
        match self {
            Problem::Unreadable(why) if single => why,
            Problem::Type(why) if single => {
                format!("conversion webhook for {source} returned invalid object at index 0: {why}")
            }
            Problem::Unreadable(why) | Problem::Type(why) | Problem::Identity(why) => {
                format!("conversion webhook for {source} returned {object}: {why}")
            }
            Problem::Metadata(why) if single => {
                format!("conversion webhook for {source} returned invalid metadata: {why}")
            }
            Problem::Metadata(why) => {
                format!(
                    "conversion webhook for {source} returned invalid metadata in object at index {i}: {why}"
                )
            }
        }
    }
}

/// `converted` checked against `original` and its metadata restored
/// (kube's `validateConvertedObject` and `restoreObjectMeta`).
fn checked(original: &Value, mut converted: Value, desired: &str) -> Result<Value, Problem> {
    if converted["kind"].as_str().is_none_or(str::is_empty) {
        return Err(Problem::Unreadable(format!("Object 'Kind' is missing in '{converted}'")));
    }
    let got = api_version(&converted);
    if got != desired {
        return Err(Problem::Type(format!("invalid groupVersion (expected {desired}, received {got})")));
    }
    let kind = |o: &Value| o["kind"].as_str().unwrap_or_default().to_string();
    if kind(&converted) != kind(original) {
        return Err(Problem::Type(format!(
            "invalid kind (expected {}, received {})",
            kind(original),
            kind(&converted)
        )));
    }
    for (what, field) in [("name", "name"), ("namespace", "namespace"), ("UID", "uid")] {
        let value = |o: &Value| o["metadata"][field].as_str().unwrap_or_default().to_string();
        if value(&converted) != value(original) {
            return Err(Problem::Identity(format!(
                "must have the same {what}: {} != {}",
                value(original),
                value(&converted)
            )));
        }
    }
    let metadata =
        restored_metadata(&original["metadata"], &converted["metadata"]).map_err(Problem::Metadata)?;
    converted["metadata"] = metadata;
    Ok(converted)
}

/// The original metadata with the converted object's labels and
/// annotations (all other changes are undone, as kube undoes them).
fn restored_metadata(original: &Value, converted: &Value) -> Result<Value, String> {
    let converted = match converted {
        Value::Null => return Err("missing metadata in converted object".into()),
        Value::Object(fields) => fields,
        other => return Err(format!("invalid metadata of type {} in converted object", go_type(other))),
    };
    let mut restored = original.clone();
    for field in ["labels", "annotations"] {
        let taken = match converted.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ));
            }
        };
        let before = match &original[field] {
            Value::Null => None,
            Value::Object(map) => Some(map),
            other => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in original object",
                    go_type(other)
                ));
            }
        };
        if let Some((key, value)) = taken.into_iter().flatten().find(|(_, v)| !v.is_string()) {
            return Err(format!(
                "metadata.{field}[{key}] must be a string, but is {} in converted object",
                go_type(value)
            ));
        }
        if taken != before {
            check_changed(field, taken)?;
        }
        match taken {
            Some(map) => restored[field] = Value::Object(map.clone()),
            None => {
                restored.as_object_mut().map(|m| m.remove(field));
            }
        }
    }
    Ok(restored)
}

/// Labels or annotations a webhook changed, validated as kube validates
/// them there (annotations under `metadata.annotation`, sic).
fn check_changed(field: &str, taken: Option<&Map<String, Value>>) -> Result<(), String> {
    let meta = json!({ field: taken });
    let causes = if field == "labels" { label_causes(&meta) } else { annotation_causes(&meta) };
    let lines: Vec<String> = causes
        .iter()
        .map(|c| format!("{}: {}", c.field.replace("metadata.annotations", "metadata.annotation"), c.message))
        .collect();
    match lines.as_slice() {
        [] => Ok(()),
        [one] => Err(one.clone()),
        many => Err(format!("[{}]", many.join(", "))),
    }
}

fn api_version(object: &Value) -> &str {
    object["apiVersion"].as_str().unwrap_or_default()
}

/// `group/version, Kind=kind`, as Go prints a GroupVersionKind.
fn gvk(object: &Value) -> String {
    let api_version = api_version(object);
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={}", object["kind"].as_str().unwrap_or_default())
}

/// A served version's view of the objects of its CRD (the storage wrapper
/// of its resource, and how writes through it are stored).
pub struct VersionConversion {
    converter: Arc<Converter>,
    /// `example.com/v1`: the version read and written through.
    served: String,
    storage: String,
    /// Every version's `openAPIV3Schema`, by apiVersion.
    schemas: Arc<HashMap<String, Value>>,
}

impl VersionConversion {
    pub fn new(
        converter: Arc<Converter>,
        served: String,
        storage: String,
        schemas: Arc<HashMap<String, Value>>,
    ) -> VersionConversion {
        VersionConversion { converter, served, storage, schemas }
    }

    fn prune(&self, object: &mut Value, api_version: &str) {
        if let Some(schema) = self.schemas.get(api_version) {
            prune_object(object, Node(schema));
        }
    }
}

#[async_trait]
impl VersionView for VersionConversion {
    async fn read(&self, mut objects: Vec<Value>) -> Result<Vec<Value>, String> {
        for object in &mut objects {
            let stored_in = api_version(object).to_string();
            if let Some(schema) = self.schemas.get(&stored_in) {
                prune_object(object, Node(schema));
                apply_defaults(object, Node(schema));
            }
        }
        let converted: Vec<bool> = objects.iter().map(|o| api_version(o) != self.served).collect();
        let mut objects = self.converter.convert(objects, &self.served).await?;
        for (object, converted) in objects.iter_mut().zip(converted) {
            // What the conversion made, pruned by the version read through.
            if converted {
                self.prune(object, &self.served);
            }
        }
        Ok(objects)
    }

    async fn store(&self, object: Value) -> Result<Value, String> {
        let mut stored = self.converter.convert(vec![object], &self.storage).await?;
        let mut object = stored.pop().unwrap_or_default();
        self.prune(&mut object, &self.storage);
        Ok(object)
    }
}

#[cfg(test)]
mod tests;
