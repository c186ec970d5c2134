//! PATCH bodies: JSON patch, JSON merge patch and strategic merge patch
//! (`rtcd_apiserver::patch::apply`) of an arbitrary original object, with
//! the patch metadata of every built-in kind. Input: one byte picking the
//! patch type and the kind, then the original's JSON, a NUL byte (which
//! JSON text cannot contain), then the patch body.
//!
//! Properties: nothing panics; memory stays bounded (libFuzzer's
//! `-malloc_limit_mb`/`-rss_limit_mb` turn a blow-up into a finding); a
//! merge patch is idempotent (RFC 7396: applying it twice changes nothing
//! more), which the server relies on when it retries a conflicting update.

use rtcd_apiserver::patch::{PatchType, apply};
use serde_json::Value;

use crate::apiserver_decode::builtin_kinds;

const TYPES: [PatchType; 3] = [PatchType::Json, PatchType::Merge, PatchType::Strategic];

pub fn run(data: &[u8]) {
    let Some((selector, original, patch)) = crate::split_input(data) else { return };
    let Ok(original) = serde_json::from_slice::<Value>(original) else { return };
    let kind = TYPES[usize::from(selector & 0x3) % TYPES.len()];
    let kinds = builtin_kinds();
    let Some(resource) = kinds.get(usize::from(selector >> 2) % kinds.len().max(1)) else { return };
    let schema = resource.strategy.patch_schema();
    let Ok(patched) = apply(kind, schema, &original, patch) else { return };
    if kind == PatchType::Merge {
        match apply(kind, schema, &patched, patch) {
            Ok(twice) => assert_eq!(twice, patched, "a merge patch applied twice changes more"),
            Err(e) => panic!("a merge patch that applied once fails the second time: {e:?}"),
        }
    }
}
