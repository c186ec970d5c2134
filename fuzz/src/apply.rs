//! Server-side apply (`rtcd_apiserver::fieldmanager`) of an arbitrary
//! configuration to an arbitrary live object, along the schema of a
//! built-in kind. Input: one byte picking the kind, then the live object's
//! JSON, a NUL byte, then the applied configuration's JSON (its apiVersion
//! and kind are set to the kind's, so the walk is reached).
//!
//! Properties: nothing panics, whatever the live object's managedFields
//! hold; the result's managedFields decode; applying the same
//! configuration again by the same manager changes nothing more (kube's
//! apply is idempotent, which is what makes `kubectl apply` re-runnable).

use rtcd_apiserver::fieldmanager::Managed;
use rtcd_apiserver::registry::field_manager;
use serde_json::Value;

use crate::apiserver_decode::builtin_kinds;

const NOW: &str = "2026-01-01T00:00:00Z";

pub fn run(data: &[u8]) {
    let Some((selector, live, config)) = crate::split_input(data) else { return };
    let Ok(live) = serde_json::from_slice::<Value>(live) else { return };
    let Ok(mut config) = serde_json::from_slice::<Value>(config) else { return };
    let kinds = builtin_kinds();
    let Some(kind) = kinds.get(usize::from(selector) % kinds.len().max(1)) else { return };
    let fields = field_manager(&kind.resource, &kind.codec);
    if let Some(object) = config.as_object_mut() {
        object.insert("apiVersion".into(), kind.resource.api_version().into());
        object.insert("kind".into(), kind.resource.kind.clone().into());
    }
    let force = selector & 0x80 != 0;
    let Ok(once) = fields.apply(&live, &config, "fuzz", force, None, NOW) else { return };
    if let Err(e) = Managed::decode(&once) {
        panic!("the managedFields an apply wrote do not decode: {e}");
    }
    match fields.apply(&once, &config, "fuzz", force, None, NOW) {
        Ok(twice) => assert_eq!(twice, once, "the same apply twice changes more"),
        Err(e) => panic!("an apply that succeeded once fails the second time: {e:?}"),
    }
}
