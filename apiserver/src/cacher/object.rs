//! An object as the watch cache holds it: encoded, not decoded.
//!
//! A decoded `serde_json::Value` takes about five times its JSON in memory
//! (every small map, and an object's metadata and managedFields are many,
//! allocates a whole B-tree node), so a cache of every object of every
//! resource held decoded took six times the objects' JSON. Held as the
//! bytes a watch sends, with the little a selector reads kept beside them
//! (namespace, labels, and on first use the kind's selectable fields), an
//! object takes about its JSON; readers decode what they read, which costs
//! what cloning a decoded tree cost before.

use std::sync::OnceLock;

use serde_json::Value;

use crate::runtime::json_order::KubeOrder;
use crate::selector::{FieldLabels, FieldSet, Labels};

/// An object as the cache holds it: its key, its JSON (in kube's field
/// order, `metadata.resourceVersion` filled in) and that revision.
#[derive(Clone)]
pub struct CachedObject {
    pub key: String,
    pub resource_version: i64,
    json: Box<[u8]>,
    /// How many bytes after the opening `{` say `"kind":…,"apiVersion":…,`
    /// (0 when the object has neither); None when it cannot be cut out by
    /// bytes (only one of them, or nothing after them).
    type_meta: Option<u32>,
    namespace: Option<Box<str>>,
    labels: Labels,
    /// The kind's selectable fields, worked out the first time a field
    /// selector asks, for the field labels they were worked out with.
    fields: OnceLock<(&'static [&'static str], FieldSet)>,
    /// What it takes in memory, what the cache's window counts.
    pub size: usize,
}

impl CachedObject {
    /// `value` stored under `key`, read at `resource_version`.
    pub fn new(key: String, mut value: Value, resource_version: i64) -> Self {
        stamp(&mut value, resource_version);
        let meta = &value["metadata"];
        let namespace: Option<Box<str>> = meta["namespace"].as_str().map(Box::from);
        let labels = Labels::of(meta["labels"].as_object());
        // Serializing a Value cannot fail (its keys are strings).
        let json = serde_json::to_vec(&KubeOrder(&value)).unwrap_or_default().into_boxed_slice();
        let type_meta = type_meta_len(&value, &json);
        let size = std::mem::size_of::<Self>()
            + key.len()
            + json.len()
            + namespace.as_ref().map_or(0, |ns| ns.len())
            + labels.footprint();
        CachedObject {
            key,
            resource_version,
            json,
            type_meta,
            namespace,
            labels,
            fields: OnceLock::new(),
            size,
        }
    }

    /// The object, decoded for the reader.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or_else(|err| {
            // The bytes were written from a Value above; this cannot happen.
            tracing::error!(key = self.key, error = %err, "a cached object does not decode");
            Value::Null
        })
    }

    /// The object as a watch sends it in JSON.
    pub fn json(&self) -> &[u8] {
        &self.json
    }

    /// Appends the object as an item of a list: as it is, or without its
    /// `kind` and `apiVersion` (`untyped`, as kube lists built-in kinds);
    /// false, with nothing appended, when those cannot be cut out by bytes.
    pub fn write_list_item(&self, untyped: bool, out: &mut Vec<u8>) -> bool {
        match (untyped, self.type_meta) {
            (false, _) | (true, Some(0)) => out.extend_from_slice(&self.json),
            (true, Some(cut)) => {
                let Some(rest) = self.json.get(1 + cut as usize..) else { return false };
                out.push(b'{');
                out.extend_from_slice(rest);
            }
            (true, None) => return false,
        }
        true
    }

    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    pub fn labels(&self) -> &Labels {
        &self.labels
    }

    /// Whether the field selector holds for this object, decoding it only
    /// the first time the kind's fields are asked for.
    pub fn fields_match(&self, selector: &crate::selector::FieldSelector, labels: &FieldLabels) -> bool {
        let (with, fields) = self.fields.get_or_init(|| (labels.accepted, labels.attributes(&self.value())));
        if std::ptr::eq(*with, labels.accepted) {
            selector.matches_attributes(labels, fields)
        } else {
            // Another kind's labels over the same object (not done today).
            selector.matches(labels, &self.value())
        }
    }

    /// The same object, stamped with another revision (a deletion's).
    pub(crate) fn at_revision(&self, resource_version: i64) -> CachedObject {
        CachedObject::new(self.key.clone(), self.value(), resource_version)
    }

    #[cfg(test)]
    pub fn with_size(mut self, size: usize) -> Self {
        self.size = size;
        self
    }
}

impl PartialEq for CachedObject {
    fn eq(&self, other: &Self) -> bool {
        (&self.key, &self.json, self.resource_version) == (&other.key, &other.json, other.resource_version)
    }
}

impl std::fmt::Debug for CachedObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedObject")
            .field("key", &self.key)
            .field("resource_version", &self.resource_version)
            .field("json", &String::from_utf8_lossy(&self.json))
            .finish()
    }
}

/// The length of `"kind":…,"apiVersion":…,` right after `json`'s opening
/// `{` (kube's order writes them first), for lists that leave them out.
fn type_meta_len(value: &Value, json: &[u8]) -> Option<u32> {
    match (value.get("kind"), value.get("apiVersion")) {
        (None, None) => Some(0),
        (Some(Value::String(kind)), Some(Value::String(api_version))) => {
            // Written as serde_json writes strings, escapes included.
            let (kind, api_version) = (Value::from(kind.as_str()), Value::from(api_version.as_str()));
            let prefix = format!("\"kind\":{kind},\"apiVersion\":{api_version},");
            let found = json.get(1..)?.starts_with(prefix.as_bytes());
            found.then(|| u32::try_from(prefix.len()).ok())?
        }
        _ => None,
    }
}

/// Sets `metadata.resourceVersion` (storage keeps objects without it).
pub fn stamp(value: &mut Value, resource_version: i64) {
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(resource_version.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::selector::{FieldSelector, LabelSelector};

    fn configmap() -> Value {
        json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "namespace": "ns", "labels": {"app": "web", "tier": "front"}},
            "data": {"k": "x".repeat(900)}})
    }

    #[test]
    fn it_reads_back_as_written_with_its_revision() {
        let object = CachedObject::new("/registry/configmaps/ns/a".into(), configmap(), 42);
        let mut expected = configmap();
        expected["metadata"]["resourceVersion"] = json!("42");
        assert_eq!(object.value(), expected);
        assert_eq!(object.namespace(), Some("ns"));
        // kube's field order, as watches send it.
        assert!(object.json().starts_with(br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"#));
        assert_eq!(object.at_revision(50).value()["metadata"]["resourceVersion"], "50");
    }

    #[test]
    fn a_list_item_is_written_as_the_list_encoder_would() {
        let untyped = |value: Value| {
            let mut value = value;
            let map = value.as_object_mut().unwrap();
            map.remove("kind");
            map.remove("apiVersion");
            serde_json::to_vec(&KubeOrder(&value)).unwrap()
        };
        let no_type = json!({"metadata": {"name": "b"}, "data": {}});
        let only_kind = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
        for value in [configmap(), no_type, only_kind.clone()] {
            let object = CachedObject::new("/k".into(), value, 3);
            let mut typed = Vec::new();
            assert!(object.write_list_item(false, &mut typed));
            assert_eq!(typed, object.json());
            let mut written = Vec::new();
            if object.write_list_item(true, &mut written) {
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    String::from_utf8(untyped(object.value())).unwrap()
                );
            } else {
                assert_eq!(
                    object.value()["metadata"]["name"],
                    "c",
                    "only the object with a kind and no apiVersion"
                );
                assert!(written.is_empty());
            }
        }
    }

    #[test]
    fn it_takes_about_its_json() {
        let object = CachedObject::new("/registry/configmaps/ns/a".into(), configmap(), 42);
        let json = serde_json::to_vec(&configmap()).unwrap().len();
        assert!(object.size < json + 400, "{} bytes held for {json} of JSON", object.size);
    }

    #[test]
    fn selectors_read_what_is_kept_beside_the_bytes() {
        let object = CachedObject::new("/registry/configmaps/ns/a".into(), configmap(), 42);
        let labels = |s: &str| LabelSelector::parse(s).unwrap().matches(object.labels());
        assert!(labels("app=web,tier"));
        assert!(labels("app in (web, db),!missing"));
        assert!(!labels("app=db"));
        let fields =
            |s: &str| object.fields_match(&FieldSelector::parse(s).unwrap(), &FieldLabels::METADATA_ONLY);
        assert!(fields("metadata.name=a,metadata.namespace=ns"));
        assert!(!fields("metadata.name!=a"));
        assert!(fields("metadata.name=a"), "the second ask reads the fields worked out by the first");
    }
}
