//! `?labelSelector=` and `?fieldSelector=` (`rtcd_apiserver::selector`):
//! parsing, the per-kind field-label check and matching. Input: one byte
//! picking the kind (for its field labels), the selector text, then
//! optionally a NUL byte and an object's JSON to match (a labelled Pod-like
//! object otherwise). The same text is tried as both kinds of selector.
//!
//! Properties: nothing panics; an empty selector matches everything; an
//! object matched by a field selector that names an exact
//! `metadata.name` has that name (the server then reads that one key
//! instead of listing).

use rtcd_apiserver::selector::{FieldSelector, LabelSelector};
use serde_json::{Value, json};

use crate::apiserver_decode::builtin_kinds;

pub fn run(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else { return };
    let (text, object) = match rest.iter().position(|&b| b == 0) {
        Some(nul) => (&rest[..nul], serde_json::from_slice::<Value>(&rest[nul + 1..]).ok()),
        None => (rest, None),
    };
    // Query parameters reach the handlers as UTF-8 (percent-decoding replaces
    // anything else), so lossy conversion is what the server sees.
    let text = String::from_utf8_lossy(text);
    let object = object.unwrap_or_else(|| {
        json!({
            "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web", "tier": "1", "a.b/c": ""}},
            "spec": {"nodeName": "n1", "restartPolicy": "Always"},
            "status": {"phase": "Running"},
        })
    });
    let labels = object.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object);

    if let Ok(s) = LabelSelector::parse(&text) {
        let matched = s.matches(labels);
        assert!(!s.is_empty() || matched, "an empty label selector refuses {labels:?}");
        assert_eq!(s.matches(labels), matched, "label matching is not deterministic");
    }

    let kinds = builtin_kinds();
    let Some(kind) = kinds.get(usize::from(selector) % kinds.len().max(1)) else { return };
    let field_labels = kind.strategy.field_labels();
    let Ok(s) = FieldSelector::parse(&text) else { return };
    let supported = s.check_supported(field_labels).is_ok();
    let matched = s.matches(field_labels, &object);
    assert!(!s.is_empty() || matched, "an empty field selector refuses {object}");
    if let (true, true, Some(name)) = (supported, matched, s.exact_name()) {
        // Stored objects' names are strings; other shapes are not a case for the shortcut.
        if let Some(actual) = object.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str) {
            assert_eq!(actual, name, "matched object is not the exact name asked for");
        }
    }
}
