//! Request bodies of the API server: JSON, Kubernetes protobuf
//! (`rtcd_apiserver::protobuf::decode`) or YAML
//! (`rtcd_apiserver::runtime::decode::yaml_to_json`, alias expansion
//! bounded), then the kind's typed decode with
//! field validation (`rtcd_apiserver::runtime::decode`), for every built-in
//! kind. The first byte picks the kind, the field validation and the body's
//! format; the rest is the body.
//!
//! Properties: nothing panics; decoding is idempotent — the typed object a
//! body decodes to decodes again, strictly (no unknown fields), to itself,
//! because that is what storage holds and every later read and update
//! decodes it again.

use std::sync::{Arc, OnceLock};

use rtcd_apiserver::registry::kinds::{self, Kind, KindContext, service::IpRange};
use rtcd_apiserver::runtime::decode::{decode, yaml_to_json};
use rtcd_apiserver::runtime::{Expected, FieldValidation};
use rtcd_apiserver::storage::MemoryStorage;
use serde_json::Value;

/// Every built-in kind, built once (they hold only static tables).
pub(crate) fn builtin_kinds() -> &'static [Kind] {
    static KINDS: OnceLock<Vec<Kind>> = OnceLock::new();
    KINDS.get_or_init(|| {
        // Only the Service kind's allocator looks at these; nothing is stored.
        let service_ips = IpRange::parse("10.96.0.0/16").unwrap_or_else(|e| panic!("service range: {e}"));
        let context = KindContext {
            storage: Arc::new(MemoryStorage::new()),
            etcd_prefix: "/registry".to_string(),
            services: service_ips.into(),
        };
        kinds::builtin(&context)
    })
}

const VALIDATIONS: [FieldValidation; 3] =
    [FieldValidation::Warn, FieldValidation::Ignore, FieldValidation::Strict];

/// The server's request body limit (3 MiB, kube's) times two: what a YAML
/// body may expand to as JSON.
const MAX_YAML_JSON_BYTES: usize = 6 << 20;

pub fn run(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else { return };
    let kinds = builtin_kinds();
    // Bits 0-4 pick the kind, bits 5-7 the format and the field validation.
    let mode = usize::from(selector >> 5);
    let validation = VALIDATIONS[mode / 3 % VALIDATIONS.len()];
    let format = mode % 3;
    let Some(picked) = kinds.get(usize::from(selector & 0x1f) % kinds.len().max(1)) else { return };
    // As the endpoint does for each Content-Type.
    let body = match format {
        0 => serde_json::from_slice::<Value>(body).ok(),
        1 => rtcd_apiserver::protobuf::decode(body).ok(),
        _ => yaml_to_json(body, &picked.resource.kind, MAX_YAML_JSON_BYTES).ok(),
    };
    let Some(body) = body else { return };
    let protobuf = format == 1;
    // A protobuf body names its kind; a JSON one goes to the kind picked.
    let named = body.get("kind").and_then(Value::as_str);
    let kind = match named.and_then(|k| kinds.iter().find(|kind| kind.resource.kind == k)) {
        Some(kind) if protobuf => kind,
        _ => picked,
    };
    let api_version = kind.resource.api_version();
    let roundtrip = |value: Value| kind.codec.roundtrip(value);
    let expected = Expected { api_version: &api_version, kind: &kind.resource.kind, roundtrip: &roundtrip };
    let Ok((typed, _warnings)) = decode(expected, body, validation) else { return };
    match decode(expected, typed.clone(), FieldValidation::Strict) {
        Ok((again, warnings)) => {
            assert_eq!(again, typed, "a decoded {} decodes to something else", kind.resource.kind);
            assert!(warnings.is_empty(), "a decoded object has unknown fields: {warnings:?}");
        }
        Err(e) => panic!("a decoded {} does not decode again: {e:?}\n{typed}", kind.resource.kind),
    }
}
