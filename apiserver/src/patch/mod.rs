//! PATCH bodies, by their Content-Type: JSON patch (RFC 6902), JSON merge
//! patch (RFC 7396) and strategic merge patch for built-in kinds.
//! Server-side apply is not served yet: 415, which kubectl reports as
//! "server-side apply not available".

pub mod strategic;
pub mod strategic_schema;

use serde_json::Value;

use crate::errors::ApiError;
use strategic_schema::TypeNode;

/// kube's limit on the operations of one JSON patch.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
}

impl PatchType {
    /// The patch type of a request's Content-Type (parameters ignored).
    pub fn from_content_type(content_type: &str) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        match media {
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            other => Err(ApiError::UnsupportedMediaType(format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json; got {other:?}"
            ))),
        }
    }
}

/// `original` with `patch` applied. A strategic merge patch needs the
/// kind's patch metadata (`schema`); without it (kinds that have none,
/// custom resources) it is refused as kube refuses it, naming `qualified`.
pub fn apply(
    kind: PatchType,
    schema: Option<&'static TypeNode>,
    qualified: &str,
    original: &Value,
    patch: &[u8],
) -> Result<Value, ApiError> {
    match kind {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_slice(patch)
                .map_err(|e| ApiError::BadRequest(format!("error decoding patch: {e}")))?;
            if ops.0.len() > MAX_JSON_PATCH_OPERATIONS {
                return Err(ApiError::Unprocessable(format!(
                    "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                    ops.0.len()
                )));
            }
            let mut doc = original.clone();
            json_patch::patch(&mut doc, &ops).map_err(|e| ApiError::Unprocessable(e.to_string()))?;
            Ok(doc)
        }
        PatchType::Merge => {
            let patch = parse_object(patch)?;
            let mut doc = original.clone();
            json_patch::merge(&mut doc, &patch);
            Ok(doc)
        }
        PatchType::Strategic => {
            let patch = parse_object(patch)?;
            let schema = schema.ok_or_else(|| {
                ApiError::UnsupportedMediaType(format!(
                    "strategic merge patch is not supported for {qualified}"
                ))
            })?;
            strategic::apply(original, &patch, schema).map_err(|e| ApiError::BadRequest(e.to_string()))
        }
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
    fn content_types_map_to_patch_types_and_apply_is_unsupported() {
        assert_eq!(PatchType::from_content_type("application/merge-patch+json").unwrap(), PatchType::Merge);
        assert_eq!(
            PatchType::from_content_type("application/json-patch+json; charset=utf-8").unwrap(),
            PatchType::Json
        );
        assert_eq!(PatchType::from_content_type("application/apply-patch+yaml").unwrap_err().code(), 415);
    }

    #[test]
    fn json_and_merge_patches_apply() {
        let cm = None;
        let apply = |kind, original: &Value, patch: &[u8]| apply(kind, cm, "configmaps", original, patch);
        let original = json!({"data": {"a": "1", "b": "2"}});
        let merged = apply(PatchType::Merge, &original, br#"{"data": {"a": null, "c": "3"}}"#).unwrap();
        assert_eq!(merged, json!({"data": {"b": "2", "c": "3"}}));
        let ops = br#"[{"op": "replace", "path": "/data/a", "value": "9"}]"#;
        assert_eq!(apply(PatchType::Json, &original, ops).unwrap()["data"]["a"], "9");
        let missing = br#"[{"op": "remove", "path": "/data/zzz"}]"#;
        assert_eq!(apply(PatchType::Json, &original, missing).unwrap_err().code(), 422);
        assert_eq!(apply(PatchType::Merge, &original, b"[1]").unwrap_err().code(), 400);
    }
}
