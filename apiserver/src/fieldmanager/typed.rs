//! Walks of an object along its [`Schema`]: the fields it sets, what
//! changed between two versions, an applied configuration merged into a
//! live object, and owned fields taken out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, Scalar, Set};
use super::schema::{DEDUCED, ListKind, Schema, Type, TypeId};
use crate::errors::go_quote;

/// What changed between two versions of an object.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

/// How a value is walked at one type: owned whole, as an object's entries,
/// or as a list's items.
enum Shape<'s> {
    Leaf,
    Object { id: TypeId },
    Items { elem: TypeId, kind: &'s ListKind },
}

fn shape<'s>(schema: &'s Schema, id: TypeId, value: &Value) -> Shape<'s> {
    match (schema.get(id), value) {
        (Type::Map { atomic: false, .. } | Type::Deduced, Value::Object(_)) => Shape::Object { id },
        (Type::List { elem, kind }, Value::Array(_)) if *kind != ListKind::Atomic => {
            Shape::Items { elem: *elem, kind }
        }
        _ => Shape::Leaf,
    }
}

/// An error at a path, as kube's typed values print them.
fn at(path: &Path, message: &str) -> String {
    format!("{path}: {message}")
}

/// The element naming `item` in a list of `kind`; why it cannot be named
/// otherwise.
fn item_element(kind: &ListKind, item: &Value) -> Result<PathElement, String> {
    match kind {
        ListKind::Set => match item {
            Value::Object(_) => Err("associative list without keys has an element that's a map type".into()),
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => Err("associative list without keys has an element that's an explicit null".into()),
            scalar => Ok(PathElement::Value(Scalar::of(scalar))),
        },
        ListKind::Map(keys) => {
            let Value::Object(fields) = item else {
                let why = if item.is_null() { "a null element" } else { "non-map elements" };
                return Err(format!("associative list with keys may not have {why}"));
            };
            // A missing key field takes its default, or is left out of the
            // key; an item with none at all cannot be named.
            let mut key: Vec<(String, Scalar)> = keys
                .iter()
                .filter_map(|(name, default)| {
                    Some((name.clone(), Scalar::of(fields.get(name).or(default.as_ref())?)))
                })
                .collect();
            if key.is_empty() {
                let names: Vec<String> = keys.iter().map(|(k, _)| go_quote(k)).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    names.join(" ")
                ));
            }
            key.sort();
            Ok(PathElement::Key(key))
        }
        ListKind::Atomic => Err("invalid indexing of non-associative list".into()),
    }
}

/// A list's items with their elements, in order.
fn named_items<'v>(
    kind: &ListKind,
    items: &'v [Value],
    path: &Path,
) -> Result<Vec<(PathElement, &'v Value)>, String> {
    let named = items.iter().enumerate().map(|(i, item)| match item_element(kind, item) {
        Ok(element) => Ok((element, item)),
        Err(why) => Err(at(path, &format!("element {i}: {why}"))),
    });
    named.collect()
}

/// Every field `value` sets: kube's `ToFieldSet`. Scalars, atomic values,
/// list items and map entries are members; a struct's named fields are
/// members only when null or empty (their fields below say the rest). What
/// the schema cannot place is an error: this is the check of an applied
/// configuration.
pub fn field_set(schema: &Schema, value: &Value) -> Result<Set, String> {
    let mut set = Set::new();
    collect(schema, schema.root(), value, &Path::default(), &mut set, Strictness::Strict)?;
    Ok(set)
}

/// The fields a stored object sets, which kube never refuses: a field the
/// schema does not name is walked as it comes, an item that cannot be
/// named is left out, and a repeated item is one member, not walked.
pub fn stored_field_set(schema: &Schema, value: &Value) -> Set {
    let mut set = Set::new();
    // Lenient walks report nothing.
    let _ = collect(schema, schema.root(), value, &Path::default(), &mut set, Strictness::Lenient);
    set
}

#[derive(Clone, Copy, PartialEq)]
enum Strictness {
    Strict,
    Lenient,
}

fn collect(
    schema: &Schema,
    id: TypeId,
    value: &Value,
    path: &Path,
    set: &mut Set,
    strictness: Strictness,
) -> Result<(), String> {
    let strict = strictness == Strictness::Strict;
    match shape(schema, id, value) {
        Shape::Leaf => set.insert(path),
        Shape::Object { id } => {
            for (name, child) in value.as_object().into_iter().flatten() {
                let child_id = match schema.field_type(id, name) {
                    Some(child_id) => child_id,
                    None if strict => return Err(at(&path.field(name), "field not declared in schema")),
                    None => DEDUCED,
                };
                let child_path = path.field(name);
                collect(schema, child_id, child, &child_path, set, strictness)?;
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !schema.is_named_field(id, name) {
                    set.insert(&child_path);
                }
            }
        }
        Shape::Items { elem, kind } => {
            let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
            let named: Vec<(PathElement, &Value)> = if strict {
                named_items(kind, items, path)?
            } else {
                items.iter().filter_map(|item| Some((item_element(kind, item).ok()?, item))).collect()
            };
            let mut seen = BTreeSet::new();
            let mut repeated = BTreeSet::new();
            for (element, _) in &named {
                if !seen.insert(element) {
                    if strict {
                        return Err(at(path, &format!("duplicate entries for key {element}")));
                    }
                    repeated.insert(element);
                }
            }
            for (element, item) in &named {
                let child_path = path.child(element.clone());
                if !repeated.contains(element) {
                    collect(schema, elem, item, &child_path, set, strictness)?;
                }
                set.insert(&child_path);
            }
        }
    }
    Ok(())
}

/// What changed from `old` to `new`: kube's `Compare`. A field present on
/// one side only is added or removed with everything below it; a leaf on
/// both sides is modified when the values differ.
pub fn compare(schema: &Schema, old: &Value, new: &Value) -> Comparison {
    let mut out = Comparison::default();
    compare_at(schema, schema.root(), Some(old), Some(new), &Path::default(), &mut out);
    out
}

fn compare_at<'v>(
    schema: &Schema,
    id: TypeId,
    old: Option<&'v Value>,
    new: Option<&'v Value>,
    path: &Path,
    out: &mut Comparison,
) {
    // Walked by the side that has a value: a null beside an object or a list
    // is an empty one (its entries are added or removed, as kube compares).
    let present = match (old, new) {
        (_, Some(n)) if !n.is_null() => n,
        (Some(o), _) => o,
        _ => new.unwrap_or(&Value::Null),
    };
    // Otherwise both sides must be walked the same way; when they disagree
    // (an object became a string) the value is compared whole.
    let agree = match (old, new) {
        (Some(o), Some(n)) => {
            std::mem::discriminant(o) == std::mem::discriminant(n) || o.is_null() || n.is_null()
        }
        _ => true,
    };
    match (agree, shape(schema, id, present)) {
        (true, Shape::Object { id }) => {
            let empty = Map::new();
            let old_map = old.and_then(Value::as_object).unwrap_or(&empty);
            let new_map = new.and_then(Value::as_object).unwrap_or(&empty);
            let names: BTreeSet<&String> = old_map.keys().chain(new_map.keys()).collect();
            for name in names {
                let child_id = schema.field_type(id, name).unwrap_or(DEDUCED);
                compare_at(schema, child_id, old_map.get(name), new_map.get(name), &path.field(name), out);
            }
        }
        (true, Shape::Items { elem, kind }) => {
            // Items that cannot be named are left out (kube reports them and
            // goes on); a repeated name keeps its first item.
            let index = |side: Option<&'v Value>| -> BTreeMap<PathElement, &'v Value> {
                let items = side.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let mut named = BTreeMap::new();
                for item in items {
                    if let Ok(element) = item_element(kind, item) {
                        named.entry(element).or_insert(item);
                    }
                }
                named
            };
            let (old_items, new_items) = (index(old), index(new));
            let names: BTreeSet<&PathElement> = old_items.keys().chain(new_items.keys()).collect();
            for element in names {
                let (o, n) = (old_items.get(element).copied(), new_items.get(element).copied());
                compare_at(schema, elem, o, n, &path.child(element.clone()), out);
            }
        }
        _ => {
            match (old, new) {
                (None, Some(_)) => out.added.insert(path),
                (Some(_), None) => out.removed.insert(path),
                (Some(o), Some(n)) if !same(o, n) => out.modified.insert(path),
                _ => {}
            }
            return;
        }
    }
    match (old, new) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        _ => {}
    }
}

/// Values equal as JSON, `1` and `1.0` alike.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Where `value` sets an atomic list, map or struct: kube's `findAtomics`,
/// which refuses apply configurations that would replace one whole
/// (taking away what the configuration does not repeat). Paths as kube
/// prints them (`.spec.containers[0].args`).
pub fn atomics(schema: &Schema, value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    atomics_at(schema, schema.root(), value, &Path::default(), &mut found);
    found
}

fn atomics_at(schema: &Schema, id: TypeId, value: &Value, path: &Path, found: &mut Vec<String>) {
    match (schema.get(id), value) {
        (Type::Map { fields, atomic, .. }, Value::Object(entries)) => {
            if *atomic {
                found.push(path.to_string());
            }
            // As kube: only a struct's named fields are looked into.
            for (name, child) in entries {
                if let Some(child_id) = fields.get(name) {
                    atomics_at(schema, *child_id, child, &path.field(name), found);
                }
            }
        }
        (Type::List { elem, kind }, Value::Array(items)) => {
            if *kind == ListKind::Atomic {
                found.push(path.to_string());
            }
            for (i, item) in items.iter().enumerate() {
                atomics_at(schema, *elem, item, &path.child(PathElement::Index(i)), found);
            }
        }
        _ => {}
    }
}

/// `config` merged into `live`: kube's `Merge`. Leaves take the
/// configuration's value; objects merge field by field; set and associative
/// lists merge item by item, the configuration's items in its order, the
/// live object's other items kept where they were.
pub fn merge(schema: &Schema, live: &Value, config: &Value) -> Result<Value, String> {
    merge_at(schema, schema.root(), live, config, &Path::default())
}

fn merge_at(schema: &Schema, id: TypeId, live: &Value, config: &Value, path: &Path) -> Result<Value, String> {
    // A null over an object or a list merges as an empty one: what is there
    // stays (it may be others'), as in kube.
    if config.is_null() && !matches!(shape(schema, id, live), Shape::Leaf) {
        return Ok(live.clone());
    }
    if std::mem::discriminant(live) != std::mem::discriminant(config) {
        return Ok(config.clone());
    }
    match shape(schema, id, config) {
        Shape::Leaf => Ok(config.clone()),
        Shape::Object { id } => {
            let (Value::Object(live_map), Value::Object(config_map)) = (live, config) else {
                return Ok(config.clone());
            };
            let mut out = live_map.clone();
            for (name, value) in config_map {
                let child_id = schema.field_type(id, name).unwrap_or(DEDUCED);
                let merged = match live_map.get(name) {
                    Some(old) => merge_at(schema, child_id, old, value, &path.field(name))?,
                    None => value.clone(),
                };
                out.insert(name.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        Shape::Items { elem, kind } => {
            let live_items = named_items(kind, live.as_array().map(Vec::as_slice).unwrap_or_default(), path)?;
            let config_items =
                named_items(kind, config.as_array().map(Vec::as_slice).unwrap_or_default(), path)?;
            merge_items(schema, elem, &live_items, &config_items, path).map(Value::Array)
        }
    }
}

/// Merges two named lists keeping both orders as far as they agree: live
/// items not in the configuration stay where they were relative to their
/// neighbours, shared and new items come in the configuration's order.
fn merge_items(
    schema: &Schema,
    elem: TypeId,
    live: &[(PathElement, &Value)],
    config: &[(PathElement, &Value)],
    path: &Path,
) -> Result<Vec<Value>, String> {
    let live_items: BTreeMap<&PathElement, &Value> = live.iter().rev().map(|(e, v)| (e, *v)).collect();
    let config_names: BTreeSet<&PathElement> = config.iter().map(|(e, _)| e).collect();
    // The shared items, in the configuration's order: the next one due.
    let mut shared = config.iter().map(|(e, _)| e).filter(|e| live_items.contains_key(e));
    let mut next_shared = shared.next();
    let mut merged: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let merge_one = |element: &PathElement, value: &Value| -> Result<Value, String> {
        match live_items.get(element) {
            Some(old) => merge_at(schema, elem, old, value, &path.child(element.clone())),
            None => Ok(value.clone()),
        }
    };
    let (mut l, mut c) = (0, 0);
    while l < live.len() || c < config.len() {
        if l < live.len() && c < config.len() {
            let element = &live[l].0;
            if *element == config[c].0 {
                out.push(merge_one(element, config[c].1)?);
                merged.insert(element);
                l += 1;
                c += 1;
                next_shared = shared.next();
                continue;
            }
            if config_names.contains(element) && next_shared.is_some_and(|n| n != element) {
                // A shared item, but not the one due: it comes later.
                l += 1;
                continue;
            }
        }
        if l < live.len() {
            let element = &live[l].0;
            if !config_names.contains(element) {
                out.push(live[l].1.clone());
                l += 1;
                continue;
            }
            if merged.contains(element) {
                // Already merged where the configuration put it; the
                // configuration's next item may come now.
                l += 1;
            }
        }
        if c < config.len() {
            let element = &config[c].0;
            out.push(merge_one(element, config[c].1)?);
            merged.insert(element);
            c += 1;
            if next_shared == Some(element) {
                next_shared = shared.next();
            }
        }
    }
    Ok(out)
}

/// `value` without the members of `set` (and what is below them).
pub fn remove(schema: &Schema, value: &Value, set: &Set) -> Value {
    remove_at(schema, schema.root(), value, set)
}

fn remove_at(schema: &Schema, id: TypeId, value: &Value, set: &Set) -> Value {
    match shape(schema, id, value) {
        Shape::Leaf => value.clone(),
        Shape::Object { id } => {
            let mut out = Map::new();
            for (name, child) in value.as_object().into_iter().flatten() {
                let element = PathElement::Field(name.clone());
                if set.has_member(&element) {
                    continue;
                }
                let kept = match set.child(&element) {
                    Some(below) => {
                        let kept =
                            remove_at(schema, schema.field_type(id, name).unwrap_or(DEDUCED), child, below);
                        // Emptied by the removal: gone (kube leaves a null,
                        // which decoding drops).
                        if is_empty_container(&kept) && !is_empty_container(child) {
                            continue;
                        }
                        kept
                    }
                    None => child.clone(),
                };
                out.insert(name.clone(), kept);
            }
            Value::Object(out)
        }
        Shape::Items { elem, kind } => {
            let mut out = Vec::new();
            for item in value.as_array().into_iter().flatten() {
                let Ok(element) = item_element(kind, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has_member(&element) {
                    continue;
                }
                out.push(match set.child(&element) {
                    Some(below) => remove_at(schema, elem, item, below),
                    None => item.clone(),
                });
            }
            Value::Array(out)
        }
    }
}

fn is_empty_container(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// `set` with every named struct field that has members below it made a
/// member too (kube's `EnsureNamedFieldsAreMembers`): removing what a
/// manager owned then removes the struct itself, not just its fields; map
/// keys and list items are left as they are.
pub fn with_named_fields(schema: &Schema, set: &Set) -> Set {
    let mut out = Set::new();
    named_fields_at(schema, schema.root(), set, &Path::default(), &mut out);
    out
}

fn named_fields_at(schema: &Schema, id: TypeId, set: &Set, path: &Path, out: &mut Set) {
    for element in set.elements() {
        let child_path = path.child(element.clone());
        let child_id = match (element, schema.get(id)) {
            (PathElement::Field(name), _) => schema.field_type(id, name).unwrap_or(DEDUCED),
            (_, Type::List { elem, .. }) => *elem,
            _ => DEDUCED,
        };
        if set.has_member(element) {
            out.insert(&child_path);
        }
        if let Some(below) = set.child(element) {
            if matches!(element, PathElement::Field(name) if schema.is_named_field(id, name)) {
                out.insert(&child_path);
            }
            named_fields_at(schema, child_id, below, &child_path, out);
        }
    }
}

#[cfg(test)]
mod tests;
