//! kubectl's client-side apply beside server-side apply, for the manager
//! `kubectl` only (kube's last-applied manager and updater): an object last
//! applied client-side moves to server-side apply without conflicts over
//! fields it applied unchanged, and its last-applied annotation keeps
//! following what is applied, so going back to client-side apply works.

use serde_json::Value;

use super::fieldpath::Set;
use super::managed::Manager;
use super::{FieldManager, typed};

const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// kube's limit on the total size of an object's annotations.
const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// Whether every conflict is over a field the object's last client-side
/// apply set and that nobody has changed since: then the apply may take it.
pub fn conflicts_allowed(fm: &FieldManager, live: &Value, conflicts: &[(Manager, Set)]) -> bool {
    let Some(text) = live.pointer(&format!("/metadata/annotations/{}", ANNOTATION.replace('/', "~1"))) else {
        return false;
    };
    let Some(last) =
        text.as_str().filter(|t| !t.is_empty()).and_then(|t| serde_json::from_str::<Value>(t).ok())
    else {
        return false;
    };
    if last["apiVersion"].as_str() != Some(fm.api_version.as_str()) {
        return false;
    }
    let Ok(applied) = typed::field_set(fm.schema(), &last) else {
        return false;
    };
    let changed = typed::compare(fm.schema(), &last, live);
    let allowed = applied.difference(&changed.modified.union(&changed.added).union(&changed.removed));
    conflicts.iter().all(|(_, fields)| fields.paths().iter().all(|p| allowed.has(p)))
}

/// Sets the annotation, where the object has one, to the applied
/// configuration as kubectl writes it (keys sorted, a newline after);
/// drops it when that would make the annotations too large.
pub fn update_annotation(object: &mut Value, config: &Value) {
    let Some(annotations) = object.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) else {
        return;
    };
    if annotations.get(ANNOTATION).and_then(Value::as_str).is_none_or(str::is_empty) {
        return;
    }
    let mut applied = config.clone();
    if let Some(theirs) = applied.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) {
        theirs.remove(ANNOTATION);
        if theirs.is_empty()
            && let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.remove("annotations");
        }
    }
    let text = format!("{applied}\n");
    annotations.insert(ANNOTATION.into(), Value::String(text));
    let size: usize = annotations.iter().map(|(k, v)| k.len() + v.as_str().map_or(0, str::len)).sum();
    if size > MAX_ANNOTATIONS_BYTES {
        annotations.remove(ANNOTATION);
    }
}
