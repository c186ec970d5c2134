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

/// The conflicts left once those over fields the object's last client-side
/// apply set, and nobody has changed since, are allowed: none left, the
/// apply may take them all.
pub fn remaining_conflicts(
    fm: &FieldManager,
    live: &Value,
    conflicts: Vec<(Manager, Set)>,
) -> Vec<(Manager, Set)> {
    let Some(allowed) = allowed(fm, live) else {
        return conflicts;
    };
    conflicts
        .into_iter()
        .map(|(manager, fields)| {
            let left: Vec<_> = fields.paths().into_iter().filter(|p| !allowed.has(p)).collect();
            let mut set = Set::new();
            for path in &left {
                set.insert(path);
            }
            (manager, set)
        })
        .filter(|(_, set)| !set.is_empty())
        .collect()
}

/// What the last client-side apply set and nobody changed since.
fn allowed(fm: &FieldManager, live: &Value) -> Option<Set> {
    let text = live.pointer(&format!("/metadata/annotations/{}", ANNOTATION.replace('/', "~1")))?;
    let last: Value = serde_json::from_str(text.as_str().filter(|t| !t.is_empty())?).ok()?;
    if last["apiVersion"].as_str() != Some(fm.api_version.as_str()) {
        return None;
    }
    let applied = typed::stored_field_set(fm.schema(), &last);
    let changed = typed::compare(fm.schema(), &last, live);
    Some(applied.difference(&changed.modified.union(&changed.added).union(&changed.removed)))
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
