//! `metadata.managedFields`: who manages which fields, read from and
//! written to an object.
//!
//! A manager is known by its name, its operation (`Apply` or `Update`), the
//! API version it wrote in and the subresource it wrote through; each has
//! the set of fields it manages and the time it last changed them.

use serde_json::{Map, Value, json};

use super::fieldpath::Set;
use crate::runtime::meta;

/// The deepest fields tracked: with managedFields' own five levels and the
/// leaf's, well inside the 128 levels serde_json (and so every reader of
/// stored objects here) accepts.
const MAX_FIELDS_DEPTH: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who manages a set of fields.
#[derive(Debug, Clone, Eq)]
pub struct Manager {
    pub name: String,
    pub operation: Operation,
    pub api_version: String,
    pub subresource: String,
}

/// An applier is the same manager whatever version it applied in (its
/// entry records the latest); an updater is one per version.
impl PartialEq for Manager {
    fn eq(&self, other: &Manager) -> bool {
        self.name == other.name
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == Operation::Apply || self.api_version == other.api_version)
    }
}

impl Manager {
    /// What tells managers apart (see `PartialEq`), as one value.
    pub fn identity(&self) -> (String, Operation, String, String) {
        let version = match self.operation {
            Operation::Apply => String::new(),
            Operation::Update => self.api_version.clone(),
        };
        (self.name.clone(), self.operation, self.subresource.clone(), version)
    }

    /// How kube names a manager in conflicts: `"kubectl"`, with the
    /// subresource when there is one, and for an updater its version.
    pub fn describe(&self) -> String {
        let mut text = crate::errors::go_quote(&self.name);
        if !self.subresource.is_empty() {
            text = format!("{text} with subresource {}", crate::errors::go_quote(&self.subresource));
        }
        match self.operation {
            Operation::Apply => text,
            Operation::Update => format!("{text} using {}", self.api_version),
        }
    }
}

/// One manager's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub manager: Manager,
    pub fields: Set,
    /// RFC 3339, seconds: when the manager last changed its fields.
    pub time: Option<String>,
}

/// Every manager of an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Managed {
    pub entries: Vec<Entry>,
}

impl Managed {
    /// The managers `object` records; what is wrong with them otherwise.
    pub fn decode(object: &Value) -> Result<Managed, String> {
        let list = match object.pointer("/metadata/managedFields") {
            None | Some(Value::Null) => return Ok(Managed::default()),
            Some(Value::Array(list)) => list,
            Some(_) => return Err("managedFields must be a list".into()),
        };
        let mut entries: Vec<Entry> = Vec::with_capacity(list.len());
        let mut by_manager = std::collections::HashMap::with_capacity(list.len());
        for (i, raw) in list.iter().enumerate() {
            let entry = decode_entry(raw).map_err(|e| format!("error decoding entry {i}: {e}"))?;
            // One entry per manager: a repeated one adds its fields.
            match by_manager.get(&entry.manager.identity()) {
                Some(&at) => {
                    let existing: &mut Entry = &mut entries[at];
                    existing.fields.union_with(&entry.fields);
                }
                None => {
                    by_manager.insert(entry.manager.identity(), entries.len());
                    entries.push(entry);
                }
            }
        }
        Ok(Managed { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, manager: &Manager) -> Option<&Entry> {
        self.entries.iter().find(|e| &e.manager == manager)
    }

    /// Replaces `manager`'s entry (or adds it).
    pub fn put(&mut self, manager: &Manager, fields: Set, time: Option<String>) {
        self.entries.retain(|e| &e.manager != manager);
        self.entries.push(Entry { manager: manager.clone(), fields, time });
    }

    /// Writes the managers into `object`'s metadata, in kube's order:
    /// appliers first, then by time, name, version and subresource; none at
    /// all leaves no field.
    pub fn encode_into(&self, object: &mut Value) {
        let mut entries: Vec<&Entry> = self.entries.iter().collect();
        entries.sort_by(|a, b| {
            (a.manager.operation, a.time.as_deref().unwrap_or(""), &a.manager.name)
                .cmp(&(b.manager.operation, b.time.as_deref().unwrap_or(""), &b.manager.name))
                .then_with(|| a.manager.api_version.cmp(&b.manager.api_version))
                .then_with(|| a.manager.subresource.cmp(&b.manager.subresource))
        });
        let meta = meta::metadata_mut(object);
        // fieldsV1 nests one level per path element, five below the object's
        // root: an object nested nearly as deep as JSON readers allow would
        // be stored unreadable with them. Such an object goes untracked.
        let too_deep = entries.iter().any(|e| e.fields.depth() > MAX_FIELDS_DEPTH);
        if entries.is_empty() || too_deep {
            meta.remove("managedFields");
            return;
        }
        let list: Vec<Value> = entries.into_iter().map(encode_entry).collect();
        meta.insert("managedFields".into(), Value::Array(list));
    }
}

fn decode_entry(raw: &Value) -> Result<Entry, String> {
    let Value::Object(fields) = raw else {
        return Err("expected an object".into());
    };
    let text = |name: &str| fields.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
    let operation = match fields.get("operation").and_then(Value::as_str) {
        Some("Apply") => Operation::Apply,
        Some("Update") => Operation::Update,
        other => return Err(format!("unknown operation {other:?}")),
    };
    match fields.get("fieldsType").and_then(Value::as_str) {
        Some("FieldsV1") => {}
        other => return Err(format!("invalid fieldsType {other:?}")),
    }
    let set = match fields.get("fieldsV1") {
        None | Some(Value::Null) => Set::new(),
        Some(v1) => Set::from_fields_v1(v1)?,
    };
    Ok(Entry {
        manager: Manager {
            name: text("manager"),
            operation,
            api_version: text("apiVersion"),
            subresource: text("subresource"),
        },
        fields: set,
        time: fields.get("time").and_then(Value::as_str).map(str::to_string),
    })
}

fn encode_entry(entry: &Entry) -> Value {
    let mut out = Map::new();
    out.insert("manager".into(), json!(entry.manager.name));
    out.insert("operation".into(), json!(entry.manager.operation.name()));
    out.insert("apiVersion".into(), json!(entry.manager.api_version));
    if let Some(time) = &entry.time {
        out.insert("time".into(), json!(time));
    }
    out.insert("fieldsType".into(), json!("FieldsV1"));
    out.insert("fieldsV1".into(), entry.fields.to_fields_v1());
    if !entry.manager.subresource.is_empty() {
        out.insert("subresource".into(), json!(entry.manager.subresource));
    }
    Value::Object(out)
}
