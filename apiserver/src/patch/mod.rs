//! PATCH bodies, by their Content-Type: JSON patch (RFC 6902), JSON merge
//! patch (RFC 7396) and strategic merge patch for built-in kinds. Server-side
//! apply (`application/apply-patch+yaml`) is the field manager's
//! (`crate::fieldmanager`), not a patch of the object's text.

pub mod strategic;
pub mod strategic_schema;

use serde_json::Value;

use crate::errors::ApiError;
use strategic_schema::TypeNode;

/// kube's limit on the operations of one JSON patch (`maxJSONPatchOperations`
/// in k8s.io/apiserver's patch handler).
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// kube's limit on the bytes the `copy` operations of one JSON patch may add
/// up to (`JSONPatchMaxCopyBytes`, 3 MiB, which it gives evanphx/json-patch as
/// `AccumulatedCopySizeLimit`): without it a patch a few KiB long doubles a
/// value with each copy into itself and takes gigabytes.
const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// What kube answers when a JSON patch does not apply (its
/// `NewGenericServerResponse(422, …)`, which keeps only this message).
const JSON_PATCH_REJECTED: &str = "the server rejected our request due to an error in our request";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    /// Server-side apply: the body is the configuration a manager wants.
    Apply,
}

impl PatchType {
    /// The patch type of a request's Content-Type (parameters ignored).
    pub fn from_content_type(content_type: &str) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        match media {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" => Ok(PatchType::Apply),
            other => Err(ApiError::UnsupportedMediaType(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml; got {other:?}"
            ))),
        }
    }
}

/// `original` with `patch` applied. A strategic merge patch needs the
/// kind's patch metadata (`schema`); without it (kinds that have none,
/// custom resources) it is refused as kube refuses it.
pub fn apply(
    kind: PatchType,
    schema: Option<&'static TypeNode>,
    original: &Value,
    patch: &[u8],
) -> Result<Value, ApiError> {
    match kind {
        PatchType::Json => apply_json_patch(original, patch),
        PatchType::Merge => {
            let patch = parse_object(patch)?;
            let mut doc = original.clone();
            json_patch::merge(&mut doc, &patch);
            Ok(doc)
        }
        PatchType::Strategic => {
            // Kinds without Go types (custom resources) take no strategic
            // merge patch; kube's custom resource handler lists what they
            // take.
            let schema = schema.ok_or_else(|| {
                ApiError::UnsupportedMediaType(
                    "the body of the request was in an unknown format - accepted media types include: \
                     application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                        .into(),
                )
            })?;
            let patch = parse_object(patch)?;
            strategic::apply(original, &patch, schema).map_err(|e| ApiError::BadRequest(e.to_string()))
        }
        PatchType::Apply => Err(ApiError::Internal("an apply is not a patch of the object's text".into())),
    }
}

/// A JSON patch applied as kube applies it: at most 10,000 operations
/// (413 beyond), copies adding up to at most 3 MiB, and any failure to
/// apply answered with kube's bare 422.
fn apply_json_patch(original: &Value, patch: &[u8]) -> Result<Value, ApiError> {
    let ops: json_patch::Patch = serde_json::from_slice(patch)
        .map_err(|e| ApiError::BadRequest(format!("error decoding patch: {e}")))?;
    if ops.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::RequestEntityTooLarge(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.0.len()
        )));
    }
    let mut doc = original.clone();
    let mut copied = 0;
    for op in &ops.0 {
        copied += copy_size(&doc, op);
        if copied > MAX_JSON_PATCH_COPY_BYTES {
            tracing::debug!(
                copied,
                limit = MAX_JSON_PATCH_COPY_BYTES,
                "JSON patch refused: its copies exceed the limit"
            );
            return Err(ApiError::Unprocessable(JSON_PATCH_REJECTED.into()));
        }
        // One operation at a time, so a copy is measured against the
        // document as the operations before it left it. A failed patch
        // leaves `doc` half-patched, but it is dropped then.
        json_patch::patch_unsafe(&mut doc, std::slice::from_ref(op)).map_err(|e| {
            tracing::debug!(error = %e, "JSON patch does not apply");
            ApiError::Unprocessable(JSON_PATCH_REJECTED.into())
        })?;
    }
    Ok(doc)
}

/// The bytes a `copy` operation would add: its source encoded as compact
/// JSON, as evanphx/json-patch measures it. Other operations copy nothing;
/// a missing source copies nothing (the operation fails when applied).
fn copy_size(doc: &Value, op: &json_patch::PatchOperation) -> usize {
    let json_patch::PatchOperation::Copy(copy) = op else {
        return 0;
    };
    let Some(source) = doc.pointer(copy.from.as_str()) else {
        return 0;
    };
    let mut counter = ByteCounter(0);
    // Writing to a counter cannot fail; a Value always serializes.
    let _ = serde_json::to_writer(&mut counter, source);
    counter.0
}

/// Counts what is written to it, keeping nothing.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn parse_object(patch: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice(patch) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(_) => Err(ApiError::BadRequest("the patch must be a JSON object".into())),
        Err(e) => Err(ApiError::BadRequest(format!("error decoding patch: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_types_map_to_patch_types() {
        assert_eq!(PatchType::from_content_type("application/merge-patch+json").unwrap(), PatchType::Merge);
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json; charset=utf-8").unwrap(),
            PatchType::Json
        );
        assert_eq!(PatchType::from_content_type("application/apply-patch+yaml").unwrap(), PatchType::Apply);
        assert_eq!(PatchType::from_content_type("application/apply-patch+cbor").unwrap_err().code(), 415);
    }

    #[test]
    fn json_and_merge_patches_apply() {
        let cm = None;
        let apply = |kind, original: &Value, patch: &[u8]| apply(kind, cm, original, patch);
        let original = json!({"data": {"a": "1", "b": "2"}});
        let merged = apply(PatchType::Merge, &original, br#"{"data": {"a": null, "c": "3"}}"#).unwrap();
        assert_eq!(merged, json!({"data": {"b": "2", "c": "3"}}));
        let ops = br#"[{"op": "replace", "path": "/data/a", "value": "9"}]"#;
        assert_eq!(apply(PatchType::Json, &original, ops).unwrap()["data"]["a"], "9");
        let missing = br#"[{"op": "remove", "path": "/data/zzz"}]"#;
        assert_eq!(apply(PatchType::Json, &original, missing).unwrap_err().code(), 422);
        assert_eq!(apply(PatchType::Merge, &original, b"[1]").unwrap_err().code(), 400);
    }

    #[test]
    fn json_patch_copies_are_capped_as_kube_caps_them() {
        let original = json!({"data": {}});
        // 1 KiB, then copied into itself: each copy doubles it.
        let mut ops = vec![json!({"op": "add", "path": "/x", "value": {"v": "a".repeat(1024)}})];
        ops.extend((0..19).map(|i| json!({"op": "copy", "from": "/x", "path": format!("/x/c{i}")})));
        let patch = serde_json::to_vec(&ops).unwrap();
        let err = apply(PatchType::Json, None, &original, &patch).unwrap_err();
        assert_eq!(err, ApiError::Unprocessable(JSON_PATCH_REJECTED.into()));
        // A few copies stay well under the limit.
        let few = serde_json::to_vec(&ops[..4]).unwrap();
        let patched = apply(PatchType::Json, None, &original, &few).unwrap();
        assert_eq!(patched["x"]["c2"]["c1"]["c0"]["v"].as_str().map(str::len), Some(1024));
    }

    #[test]
    fn too_many_json_patch_operations_are_too_large() {
        let ops: Vec<Value> =
            (0..10_001).map(|_| json!({"op": "test", "path": "/data", "value": {}})).collect();
        let err = apply(PatchType::Json, None, &json!({"data": {}}), &serde_json::to_vec(&ops).unwrap())
            .unwrap_err();
        assert_eq!(err.code(), 413);
        assert_eq!(
            err.to_string(),
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }
}
