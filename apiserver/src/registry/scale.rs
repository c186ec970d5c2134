//! The `scale` subresource: a kind's replicas and selector seen as an
//! autoscaling/v1 Scale (what `kubectl scale`, autoscalers and admission
//! see), and a Scale's replicas written back into the object. Built-in
//! workloads keep them where their Go types do; a custom resource names
//! its paths in its CRD's `subresources.scale`, read as kube's
//! apiextensions scale handler reads them (unstructured accessors, with
//! their error texts).

use serde_json::{Map, Value, json};

use crate::admission::GroupVersionKind;
use crate::errors::{ApiError, Cause};
use crate::runtime::golang::{go_type, go_value};
use crate::selector::object as label_selector;

/// The replicas kube's custom resource scale handler hands a patch when
/// the object has none, so that a write leaving them unset is told apart
/// from one setting 0 (the smallest int32).
const UNSET: i64 = i32::MIN as i64;

/// Where a kind keeps what its Scale shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScalePaths {
    /// Deployments, ReplicaSets and StatefulSets: `.spec.replicas`,
    /// `.status.replicas`, and `.spec.selector` (a LabelSelector) printed.
    Workload,
    /// ReplicationControllers: as a workload, but `.spec.selector` is a plain
    /// map of labels.
    ReplicationController,
    /// A custom resource: the paths its CRD names (`.spec.replicas`); the
    /// selector, when named, is text its controller keeps up to date.
    Custom { spec_replicas: String, status_replicas: String, label_selector: Option<String> },
}

impl ScalePaths {
    /// A CRD version's `subresources.scale`, when it has one (the CRD's
    /// validation made sure the paths are there and well formed).
    pub fn of_crd(scale: &Value) -> Option<ScalePaths> {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        scale.is_object().then(|| ScalePaths::Custom {
            spec_replicas: text(&scale["specReplicasPath"]),
            status_replicas: text(&scale["statusReplicasPath"]),
            label_selector: scale["labelSelectorPath"].as_str().map(str::to_string),
        })
    }

    /// Whether this is one of kube's own kinds (checked as kube's workload
    /// scale handlers check, not as a custom resource's).
    pub fn is_builtin(&self) -> bool {
        !matches!(self, ScalePaths::Custom { .. })
    }

    fn spec_replicas(&self) -> &str {
        match self {
            ScalePaths::Workload | ScalePaths::ReplicationController => ".spec.replicas",
            ScalePaths::Custom { spec_replicas, .. } => spec_replicas,
        }
    }

    fn status_replicas(&self) -> &str {
        match self {
            ScalePaths::Workload | ScalePaths::ReplicationController => ".status.replicas",
            ScalePaths::Custom { status_replicas, .. } => status_replicas,
        }
    }

    /// The selector an autoscaler reads: a workload's printed, a custom
    /// resource's as its controller wrote it.
    fn selector(&self, object: &Value) -> Result<String, String> {
        match self {
            ScalePaths::Workload => Ok(label_selector::to_text(&object["spec"]["selector"])),
            ScalePaths::ReplicationController => {
                Ok(label_selector::to_text(&serde_json::json!({"matchLabels": object["spec"]["selector"]})))
            }
            ScalePaths::Custom { label_selector: None, .. } => Ok(String::new()),
            ScalePaths::Custom { label_selector: Some(path), .. } => match nested(object, path)? {
                None => Ok(String::new()),
                Some(Value::String(text)) => Ok(text.clone()),
                Some(other) => Err(accessor_error(path, other, "string")),
            },
        }
    }
}

/// The kind admission is told a scale change is about.
pub fn kind() -> GroupVersionKind {
    GroupVersionKind { group: "autoscaling".into(), version: "v1".into(), kind: "Scale".into() }
}

/// The Scale of `object`, as a GET of `/scale` answers it: kube's 500 when
/// the object has no spec replicas (a custom resource nobody set them on)
/// or keeps something else than what a Scale can show there.
pub fn read(paths: &ScalePaths, object: &Value) -> Result<Value, ApiError> {
    let (scale, found) = scale_of(paths, object).map_err(ApiError::Untyped)?;
    if !found {
        return Err(ApiError::Internal(format!(
            "the spec replicas field {:?} does not exist",
            paths.spec_replicas()
        )));
    }
    Ok(scale)
}

/// The Scale an update of `/scale` starts from (what a patch applies to);
/// spec replicas the object does not have are [`UNSET`].
pub fn current(paths: &ScalePaths, object: &Value) -> Result<Value, ApiError> {
    let (mut scale, found) = scale_of(paths, object).map_err(ApiError::Untyped)?;
    if !found {
        scale["spec"]["replicas"] = json!(UNSET);
    }
    Ok(scale)
}

/// The Scale of `object`, spec replicas or none (what a write of `/scale`
/// answers, and what admission sees a scale change as).
pub fn of(paths: &ScalePaths, object: &Value) -> Result<Value, ApiError> {
    scale_of(paths, object).map(|(scale, _)| scale).map_err(ApiError::Untyped)
}

/// The replicas a Scale a client sent (or patched) asks for, refused as
/// kube refuses them: what an int32 cannot hold as a decoding error,
/// replicas left unset on an object that had none (400), and, for
/// built-in workloads, kube's Scale validation (a custom resource's own
/// validation checks its replicas once they are in it).
pub fn requested_replicas(paths: &ScalePaths, scale: &Value) -> Result<i64, ApiError> {
    let replicas = match &scale["spec"]["replicas"] {
        Value::Null => 0,
        value => value.as_i64().filter(|n| i32::try_from(*n).is_ok()).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go \
                 struct field ScaleSpec.spec.replicas of type int32",
                go_json_kind(value)
            ))
        })?,
    };
    if replicas == UNSET {
        return Err(ApiError::BadRequest(format!(
            "the spec replicas field {:?} cannot be empty",
            paths.spec_replicas()
        )));
    }
    if paths.is_builtin() && replicas < 0 {
        return Err(ApiError::Invalid {
            kind: "Scale.autoscaling".into(),
            name: scale["metadata"]["name"].as_str().unwrap_or_default().to_string(),
            causes: vec![Cause {
                reason: "FieldValueInvalid",
                field: "spec.replicas".into(),
                message: format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            }],
        });
    }
    Ok(replicas)
}

/// `object` with spec replicas `replicas`, the objects on the way made as
/// kube's `SetNestedField` makes them.
pub fn set_replicas(paths: &ScalePaths, object: &mut Value, replicas: i64) -> Result<(), ApiError> {
    let path = paths.spec_replicas();
    let steps = split(path);
    let mut at = object;
    for (i, step) in steps.iter().enumerate() {
        if at.is_null() {
            *at = Value::Object(Map::new());
        }
        let Some(fields) = at.as_object_mut() else {
            return Err(ApiError::Untyped(format!(
                "value cannot be set because {} is not a map[string]interface{{}}",
                json_path(&steps[..i])
            )));
        };
        at = fields.entry(step.to_string()).or_insert(Value::Null);
    }
    *at = json!(replicas);
    Ok(())
}

/// `workload` with the replicas of a Scale admission may have changed;
/// unchanged when the Scale says none.
pub fn with_admitted_replicas(paths: &ScalePaths, mut workload: Value, scale: Option<&Value>) -> Value {
    if let Some(replicas) = scale.and_then(|s| s["spec"]["replicas"].as_i64()) {
        // The path was written moments ago, so it can be written again.
        let _ = set_replicas(paths, &mut workload, replicas);
    }
    workload
}

/// A custom resource's replicas checked as kube checks them on every write
/// (`status` ones also on status writes), as causes of the kind's 422:
/// whole numbers from 0 to the largest int32, and a selector that is text.
pub fn causes(paths: &ScalePaths, object: &Value) -> Vec<Cause> {
    let ScalePaths::Custom { label_selector, .. } = paths else { return Vec::new() };
    let mut causes: Vec<Cause> = [paths.spec_replicas(), paths.status_replicas()]
        .into_iter()
        .filter_map(|path| replicas_cause(object, path))
        .collect();
    if let Some(path) = label_selector
        && let Err(why) = paths.selector(object)
    {
        causes.push(invalid(path, "\"\"", &why));
    }
    causes
}

fn replicas_cause(object: &Value, path: &str) -> Option<Cause> {
    match nested_int(object, path) {
        Err(why) => Some(invalid(path, "0", &why)),
        Ok(Some(n)) if n < 0 => Some(invalid(path, &n.to_string(), "should be a non-negative integer")),
        Ok(Some(n)) if n > i64::from(i32::MAX) => {
            Some(invalid(path, &n.to_string(), &format!("should be less than or equal to {}", i32::MAX)))
        }
        Ok(_) => None,
    }
}

fn invalid(path: &str, value: &str, why: &str) -> Cause {
    // kube names the field by the path as the CRD wrote it, leading dot
    // and all.
    Cause {
        reason: "FieldValueInvalid",
        field: path.to_string(),
        message: format!("Invalid value: {value}: {why}"),
    }
}

/// The Scale of `object` and whether it has spec replicas.
fn scale_of(paths: &ScalePaths, object: &Value) -> Result<(Value, bool), String> {
    let spec_replicas = nested_int(object, paths.spec_replicas())?;
    let status_replicas = nested_int(object, paths.status_replicas())?.unwrap_or(0);
    let selector = paths.selector(object)?;
    let meta = &object["metadata"];
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {},
        "status": {"replicas": int32(status_replicas)},
    });
    // autoscaling/v1 leaves out zero spec replicas and an empty selector.
    let replicas = int32(spec_replicas.unwrap_or(0));
    if replicas != 0 {
        scale["spec"]["replicas"] = json!(replicas);
    }
    if !selector.is_empty() {
        scale["status"]["selector"] = json!(selector);
    }
    if meta["namespace"].is_null() {
        scale["metadata"].as_object_mut().map(|m| m.remove("namespace"));
    }
    Ok((scale, spec_replicas.is_some()))
}

/// A Scale holds int32s: kube's Go conversion keeps the low 32 bits.
fn int32(n: i64) -> i64 {
    i64::from(n as i32)
}

/// The value at `.a.b.c` (kube's `NestedFieldNoCopy`): a missing or null
/// object on the way means none; anything else on the way is an error.
fn nested<'a>(object: &'a Value, path: &str) -> Result<Option<&'a Value>, String> {
    let steps = split(path);
    let mut at = object;
    for (i, step) in steps.iter().enumerate() {
        match at {
            Value::Null => return Ok(None),
            Value::Object(fields) => match fields.get(*step) {
                Some(next) => at = next,
                None => return Ok(None),
            },
            other => return Err(accessor_error(&json_path(&steps[..=i]), other, "map[string]interface{}")),
        }
    }
    Ok(Some(at))
}

/// An int64 at `path` (kube's `NestedInt64`): a JSON number that is not a
/// whole int64 is an error, as it is to Go.
fn nested_int(object: &Value, path: &str) -> Result<Option<i64>, String> {
    match nested(object, path)? {
        None => Ok(None),
        Some(value) => value.as_i64().map(Some).ok_or_else(|| accessor_error(path, value, "int64")),
    }
}

/// The steps of `.spec.replicas`, its leading dot ignored.
fn split(path: &str) -> Vec<&str> {
    path.strip_prefix('.').unwrap_or(path).split('.').collect()
}

fn json_path(steps: &[&str]) -> String {
    format!(".{}", steps.join("."))
}

fn accessor_error(path: &str, found: &Value, expected: &str) -> String {
    let path = json_path(&split(path));
    format!(
        "{path} accessor error: {} is of the type {}, expected {expected}",
        go_value(found),
        go_type(found)
    )
}

/// What Go's JSON decoder calls a value it cannot put in an int32.
fn go_json_kind(value: &Value) -> String {
    match value {
        Value::Bool(_) => "bool".into(),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

#[cfg(test)]
mod tests;
