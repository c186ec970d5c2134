//! Strategic merge patch (`application/strategic-merge-patch+json`) for the
//! built-in kinds, following kube's apimachinery `strategicpatch` as the
//! server applies it.
//!
//! A strategic merge patch is a JSON merge patch (RFC 7396) that knows, from
//! the Go types' `patchStrategy`/`patchMergeKey` tags, which lists to merge
//! instead of replace, plus a handful of `$`-directives:
//!
//! - `$patch: replace | delete` in an object, `$patch: delete | replace` as an
//!   item of a list merged by key;
//! - `$retainKeys: [...]`: drop every other key of the live object;
//! - `$deleteFromPrimitiveList/<field>: [...]`: remove values from a list of
//!   primitives;
//! - `$setElementOrder/<field>: [...]`: the order the merged list must have
//!   (kubectl apply and kubectl edit send it whenever they touch a merged list).
//!
//! Ordering follows kube exactly, because clients observe it: the patch's own
//! items keep the patch's order, live items the patch does not mention keep
//! their live order, and the two sequences are interleaved using the live
//! positions. One visible consequence, kept for compatibility: an item that is
//! new to the list and sent without `$setElementOrder` lands before the live
//! items, not after them.
//!
//! The functions work on owned copies: the live object is cloned once in
//! [`apply`] and rebuilt piece by piece, the patch is only borrowed.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::strategic_schema::{ListStrategy, PLAIN, TypeNode};

/// A JSON object, as serde_json holds it.
type Object = Map<String, Value>;

/// The directive key inside an object (`"$patch": "replace"`).
const PATCH: &str = "$patch";
/// The directive listing the keys an object keeps.
const RETAIN_KEYS: &str = "$retainKeys";
/// Prefix of the parallel list giving a merged list's order.
const SET_ORDER: &str = "$setElementOrder";
/// Prefix of the parallel list removing values from a primitive list.
const DELETE_FROM: &str = "$deleteFromPrimitiveList";

/// Why a strategic merge patch could not be applied. The wording is kube's,
/// so that a client sees the message it would get from kube-apiserver; maps
/// are shown as JSON rather than Go's `map[...]` notation. Every variant but
/// [`SmpError::InvalidDocument`] is a malformed patch, i.e. a 400 Bad Request
/// (kube itself answers 422 for lists of lists and lets several others
/// surface as 500s, which blames the server for the client's patch).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SmpError {
    /// The patch body is JSON but not an object.
    #[error("json: cannot unmarshal {0} into Go value of type map[string]interface {{}}")]
    PatchNotAnObject(&'static str),
    /// The live object is not a JSON object (a server bug, not a client one).
    #[error("invalid JSON document")]
    InvalidDocument,
    /// `$patch` has a value other than `replace`/`delete` (or `merge` in an
    /// object, which kube does not accept there either).
    #[error("unknown patch type: {directive} in map: {map}")]
    UnknownPatchType { directive: String, map: String },
    /// An item of a list merged by key lacks the key.
    #[error("map: {map} does not contain declared merge key: {key}")]
    MissingMergeKey { map: String, key: String },
    /// `{"$patch": "merge"}` as an item of a merged list.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeDirectiveInList,
    /// `$deleteFromPrimitiveList` is malformed (no `/field`, or not a list).
    #[error("invalid patch format of primitive list")]
    BadPrimitiveListFormat,
    /// `$retainKeys` is not a list, or the patch sets a key it does not retain.
    #[error("invalid patch format of retainKeys")]
    BadRetainKeys,
    /// `$setElementOrder` is malformed (no `/field`, or not a list).
    #[error("invalid patch format of setElementOrder list")]
    BadSetElementOrder,
    /// The patch's list items are not in the order `$setElementOrder` gives.
    #[error("The order in patch list: {patch} doesn't match $setElementOrder list: {order}")]
    OrderMismatch { patch: String, order: String },
    /// A merged list holds lists.
    #[error("lists of lists are not supported")]
    ListOfLists,
    /// A merged list mixes objects, strings, numbers...
    #[error("list element types are not identical: {0}")]
    MixedListElements(String),
    /// A list of primitives tagged for merging holds objects.
    #[error("cannot merge lists without merge key for {0}")]
    NoMergeKey(String),
}

/// Applies strategic merge `patch` to `original`, an object of the kind
/// described by `kind` (see [`super::strategic_schema::for_kind`]), and
/// returns the patched object, free of directives.
///
/// `patch` must be a JSON object; `null` changes nothing, as it does in kube
/// (Go decodes `null` into an empty map).
pub fn apply(original: &Value, patch: &Value, kind: &TypeNode) -> Result<Value, SmpError> {
    let patch = match patch {
        Value::Object(patch) => patch,
        Value::Null => return Ok(original.clone()),
        other => return Err(SmpError::PatchNotAnObject(go_kind(other))),
    };
    let live = match original {
        Value::Object(live) => live.clone(),
        Value::Null => Map::new(),
        _ => return Err(SmpError::InvalidDocument),
    };
    merge_map(live, patch, kind).map(Value::Object)
}

/// What the schema says about one field, resolved to concrete values: plain
/// fields get [`ListStrategy::Replace`] and the [`PLAIN`] node.
#[derive(Clone, Copy)]
struct Field<'a> {
    name: &'a str,
    list: ListStrategy,
    /// The field's type, or each item's type for a list.
    node: &'a TypeNode,
    /// `patchStrategy:"replace"`: the patch's object replaces the live one.
    replace: bool,
}

impl Field<'_> {
    /// The key that identifies items of this list, if it is merged by key.
    fn merge_key(&self) -> Option<&'static str> {
        match self.list {
            ListStrategy::MergeByKey(key) => Some(key),
            ListStrategy::Replace | ListStrategy::MergeSet => None,
        }
    }
}

/// Looks field `name` up in `node`.
fn field_of<'a>(node: &'a TypeNode, name: &'a str) -> Field<'a> {
    match node.field(name) {
        Some(meta) => Field {
            name: meta.name,
            list: meta.list,
            node: meta.node.unwrap_or(&PLAIN),
            replace: meta.replace,
        },
        None => Field { name, list: ListStrategy::Replace, node: &PLAIN, replace: false },
    }
}

// ---- objects -------------------------------------------------------------

/// Merges patch object `patch` into live object `live`. Order of work is
/// kube's: `$patch`, then `$retainKeys` (which prunes the live object before
/// anything is merged), then the lists named by `$setElementOrder`, then the
/// other keys, and `$deleteFromPrimitiveList` last so that it wins over an
/// addition of the same value.
fn merge_map(mut live: Object, patch: &Object, node: &TypeNode) -> Result<Object, SmpError> {
    if let Some(directive) = patch.get(PATCH) {
        return map_directive(directive, patch, node);
    }
    apply_retain_keys(&mut live, patch)?;
    let ordered = apply_element_orders(&mut live, patch, node)?;
    for (key, value) in patch {
        if is_directive_key(key)? || ordered.iter().any(|done| done == key) {
            continue;
        }
        merge_field(&mut live, key, value, field_of(node, key))?;
    }
    apply_primitive_deletions(&mut live, patch)?;
    Ok(live)
}

/// `$patch` in an object: `replace` makes the object exactly the rest of the
/// patch; `delete` empties it (kube leaves `{}`, not an absent field, when the
/// field existed). Anything else, `merge` included, is rejected as kube does.
fn map_directive(directive: &Value, patch: &Object, node: &TypeNode) -> Result<Object, SmpError> {
    match directive.as_str() {
        Some("replace") => {
            let mut rest = patch.clone();
            rest.remove(PATCH);
            merge_map(Map::new(), &rest, node)
        }
        Some("delete") => Ok(Map::new()),
        _ => Err(SmpError::UnknownPatchType { directive: display(directive), map: display_map(patch) }),
    }
}

/// Merges the patch value of one key into `live`. `null` deletes the key;
/// two objects or two lists merge; anything else replaces.
fn merge_field(live: &mut Object, key: &str, patch: &Value, field: Field<'_>) -> Result<(), SmpError> {
    if patch.is_null() {
        live.remove(key);
        return Ok(());
    }
    // Taking the value out of its slot keeps the key where it was.
    let merged = match live.get_mut(key) {
        Some(slot) => merge_value(std::mem::take(slot), patch, field)?,
        None => fresh_value(patch, field)?,
    };
    match merged {
        Some(value) => {
            live.insert(key.to_owned(), value);
        }
        None => {
            live.remove(key);
        }
    }
    Ok(())
}

/// Merges `patch` into an existing value; `None` means the key goes away.
fn merge_value(current: Value, patch: &Value, field: Field<'_>) -> Result<Option<Value>, SmpError> {
    match (current, patch) {
        (Value::Object(live), Value::Object(patch)) if !field.replace => {
            Ok(Some(Value::Object(merge_map(live, patch, field.node)?)))
        }
        (Value::Array(live), Value::Array(patch)) => Ok(Some(Value::Array(merge_list(live, patch, field)?))),
        (_, patch) => fresh_value(patch, field),
    }
}

/// The value a patch produces where there is nothing (or nothing of the same
/// type) to merge into: the patch itself, with its directives carried out and
/// its nulls dropped, so that no `$` key ever reaches storage. An object that
/// asks to be deleted produces nothing.
fn fresh_value(patch: &Value, field: Field<'_>) -> Result<Option<Value>, SmpError> {
    match patch {
        Value::Null => Ok(None),
        Value::Object(patch) if patch.get(PATCH).and_then(Value::as_str) == Some("delete") => Ok(None),
        Value::Object(patch) => Ok(Some(Value::Object(merge_map(Map::new(), patch, field.node)?))),
        Value::Array(patch) => Ok(Some(Value::Array(merge_list(Vec::new(), patch, field)?))),
        scalar => Ok(Some(scalar.clone())),
    }
}

/// True for keys that are directives rather than fields. A key that starts
/// like a parallel-list directive but is malformed is an error, as in kube.
fn is_directive_key(key: &str) -> Result<bool, SmpError> {
    Ok(key == RETAIN_KEYS
        || directive_target(key, SET_ORDER)?.is_some()
        || directive_target(key, DELETE_FROM)?.is_some())
}

/// For `<prefix>/<field>` returns `field`; `None` if `key` does not start
/// with `prefix`.
fn directive_target<'k>(key: &'k str, prefix: &str) -> Result<Option<&'k str>, SmpError> {
    if !key.starts_with(prefix) {
        return Ok(None);
    }
    match key.split_once('/') {
        Some((head, field)) if head == prefix && !field.is_empty() => Ok(Some(field)),
        _ if prefix == SET_ORDER => Err(SmpError::BadSetElementOrder),
        _ => Err(SmpError::BadPrimitiveListFormat),
    }
}

/// `$retainKeys`: every key the patch sets must be listed, and the live keys
/// that are not listed are dropped before merging. This is how kubectl clears
/// the other members of a union (`rollingUpdate` when `strategy.type` becomes
/// Recreate, the old source of a volume).
fn apply_retain_keys(live: &mut Object, patch: &Object) -> Result<(), SmpError> {
    let Some(retain) = patch.get(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(SmpError::BadRetainKeys);
    };
    let listed: HashSet<&str> = retain.iter().filter_map(Value::as_str).collect();
    let retained = |key: &str| listed.contains(key);
    let sets_unlisted = patch.iter().any(|(key, value)| {
        !value.is_null()
            && key != RETAIN_KEYS
            && !key.starts_with(SET_ORDER)
            && !key.starts_with(DELETE_FROM)
            && !retained(key)
    });
    if sets_unlisted {
        return Err(SmpError::BadRetainKeys);
    }
    live.retain(|key, _| retained(key));
    Ok(())
}

/// `$deleteFromPrimitiveList/<field>`: removes every occurrence of the listed
/// values from the live list, whatever the field's strategy. A missing live
/// list stays missing.
fn apply_primitive_deletions(live: &mut Object, patch: &Object) -> Result<(), SmpError> {
    for (key, value) in patch {
        let Some(field) = directive_target(key, DELETE_FROM)? else {
            continue;
        };
        let Value::Array(remove) = value else {
            return Err(SmpError::BadPrimitiveListFormat);
        };
        if let Some(Value::Array(list)) = live.get_mut(field) {
            let doomed: HashSet<String> = remove.iter().map(id_key).collect();
            list.retain(|item| !doomed.contains(&id_key(item)));
        }
    }
    Ok(())
}

// ---- $setElementOrder ----------------------------------------------------

/// Handles every `$setElementOrder/<field>` of `patch`: merges the field's
/// list (if the patch has one) and then puts the result in the given order.
/// Returns the fields it handled, which the caller must not merge again.
fn apply_element_orders<'p>(
    live: &mut Object,
    patch: &'p Object,
    node: &TypeNode,
) -> Result<Vec<&'p str>, SmpError> {
    let mut handled = Vec::new();
    for (key, order) in patch {
        let Some(name) = directive_target(key, SET_ORDER)? else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(SmpError::BadSetElementOrder);
        };
        let patch_list = match patch.get(name) {
            None => None,
            Some(Value::Array(list)) => Some(list.as_slice()),
            Some(_) => return Err(SmpError::BadSetElementOrder),
        };
        let field = field_of(node, name);
        // Only a live list takes part; any other live value is left to be
        // replaced by the patch's list, or kept if the patch has none.
        let current = match live.get(name) {
            Some(Value::Array(_)) => live.remove(name),
            _ => None,
        };
        if let Some(list) = ordered_list(current, patch_list, order, field)? {
            live.insert(name.to_owned(), Value::Array(list));
        }
        handled.push(name);
    }
    Ok(handled)
}

/// The merged, reordered list for one `$setElementOrder` directive; `None`
/// when neither the live object nor the patch has the list.
fn ordered_list(
    live: Option<Value>,
    patch: Option<&[Value]>,
    order: &[Value],
    field: Field<'_>,
) -> Result<Option<Vec<Value>>, SmpError> {
    let key = field.merge_key();
    let wanted = identities_required(order, key)?;
    if let Some(patch) = patch {
        check_order(patch, &wanted, order, key)?;
    }
    let live = match live {
        Some(Value::Array(live)) => Some(live),
        _ => None,
    };
    let live_ids = live.as_deref().map(|l| identities(l, key)).unwrap_or_default();
    let merged = match (live, patch) {
        (None, None) => return Ok(None),
        (Some(live), None) => live,
        (live, Some(patch)) => merge_list(live.unwrap_or_default(), patch, field)?,
    };
    Ok(Some(order_items(merged, &wanted, &live_ids, key)))
}

/// The patch's own list must be a subsequence of `$setElementOrder`, or the
/// client built the patch wrongly. Deletion and replace markers are ignored.
fn check_order(
    patch: &[Value],
    wanted: &[Value],
    order: &[Value],
    key: Option<&str>,
) -> Result<(), SmpError> {
    let mut remaining = wanted.iter().map(id_key);
    for item in patch.iter().filter(|item| !has_directive(item)) {
        let id = id_key(identity_required(item, key)?);
        if !remaining.any(|w| w == id) {
            return Err(SmpError::OrderMismatch {
                patch: display(&Value::Array(patch.to_vec())),
                order: display(&Value::Array(order.to_vec())),
            });
        }
    }
    Ok(())
}

// ---- lists ---------------------------------------------------------------

/// Merges a patch list into a live list according to the field's strategy.
fn merge_list(live: Vec<Value>, patch: &[Value], field: Field<'_>) -> Result<Vec<Value>, SmpError> {
    if field.list == ListStrategy::Replace {
        return replace_list(patch, field);
    }
    if live.is_empty() && patch.is_empty() {
        return Ok(live);
    }
    match (element_kind(&live, patch)?, field.merge_key()) {
        (JsonKind::Object, Some(key)) => merge_keyed(live, patch, key, field),
        (JsonKind::Object, None) => Err(SmpError::NoMergeKey(field.name.to_owned())),
        // kube merges primitives as a set even under a merge key.
        _ => Ok(merge_set(live, patch)),
    }
}

/// An untagged list: the patch's list, with directives carried out inside its
/// items (an item that only says `$patch: delete` disappears).
fn replace_list(patch: &[Value], field: Field<'_>) -> Result<Vec<Value>, SmpError> {
    let mut out = Vec::with_capacity(patch.len());
    for item in patch {
        if item.is_null() {
            out.push(Value::Null);
        } else if let Some(value) = fresh_value(item, field)? {
            out.push(value);
        }
    }
    Ok(out)
}

/// A list of primitives with `patchStrategy:"merge"`: the union, without
/// duplicates, ordered like kube (see [`order_items`]).
fn merge_set(live: Vec<Value>, patch: &[Value]) -> Vec<Value> {
    let live_ids = live.clone();
    let mut seen = HashSet::with_capacity(live.len() + patch.len());
    let merged: Vec<Value> =
        live.into_iter().chain(patch.iter().cloned()).filter(|item| seen.insert(id_key(item))).collect();
    order_items(merged, patch, &live_ids, None)
}

/// A list of objects merged by `key`: deletions and `$patch: replace` first,
/// then each patch item merges into the live item with the same key or is
/// added.
fn merge_keyed(
    live: Vec<Value>,
    patch: &[Value],
    key: &str,
    field: Field<'_>,
) -> Result<Vec<Value>, SmpError> {
    let Split { live: mut merged, items } = apply_list_directives(live, patch, key)?;
    let live_ids = identities(&merged, Some(key));
    let mut index = first_positions(&live_ids);
    let mut wanted = Vec::with_capacity(items.len());
    for item in items {
        let id = item.get(key).ok_or_else(|| missing_key(item, key))?;
        wanted.push(id.clone());
        match index.get(&id_key(id)).and_then(|&at| merged.get_mut(at)) {
            Some(slot) => {
                let current = into_object(std::mem::take(slot));
                *slot = Value::Object(merge_map(current, item, field.node)?);
            }
            None => {
                index.insert(id_key(id), merged.len());
                merged.push(Value::Object(merge_map(Map::new(), item, field.node)?));
            }
        }
    }
    Ok(order_items(merged, &wanted, &live_ids, Some(key)))
}

/// A keyed patch list once its directive items are carried out.
struct Split<'p> {
    /// The live list left after deletions (empty after a replace).
    live: Vec<Value>,
    /// The ordinary patch items, in patch order.
    items: Vec<&'p Object>,
}

/// Carries out the directive items of a keyed patch list.
/// `{"$patch": "delete", key: v}` removes every live item with that key;
/// `{"$patch": "replace"}` anywhere discards the live list.
fn apply_list_directives<'p>(
    mut live: Vec<Value>,
    patch: &'p [Value],
    key: &str,
) -> Result<Split<'p>, SmpError> {
    let mut items = Vec::with_capacity(patch.len());
    let mut replace = false;
    let mut doomed = HashSet::new();
    for item in patch {
        let Value::Object(item) = item else {
            return Err(SmpError::MixedListElements(display(&Value::Array(patch.to_vec()))));
        };
        let Some(directive) = item.get(PATCH) else {
            items.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                doomed.insert(id_key(item.get(key).ok_or_else(|| missing_key(item, key))?));
            }
            Some("replace") => replace = true,
            Some("merge") => return Err(SmpError::MergeDirectiveInList),
            _ => {
                return Err(SmpError::UnknownPatchType {
                    directive: display(directive),
                    map: display_map(item),
                });
            }
        }
    }
    if replace {
        live.clear();
    } else if !doomed.is_empty() {
        live.retain(|l| !l.get(key).is_some_and(|v| doomed.contains(&id_key(v))));
    }
    Ok(Split { live, items })
}

/// The JSON types a list item can have, to refuse mixed lists as kube does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum JsonKind {
    Null,
    Bool,
    Number,
    String,
    Object,
}

/// The common type of the items of both lists (at least one is non-empty).
fn element_kind(live: &[Value], patch: &[Value]) -> Result<JsonKind, SmpError> {
    let mut found = None;
    for item in live.iter().chain(patch) {
        let kind = match item {
            Value::Null => JsonKind::Null,
            Value::Bool(_) => JsonKind::Bool,
            Value::Number(_) => JsonKind::Number,
            Value::String(_) => JsonKind::String,
            Value::Object(_) => JsonKind::Object,
            Value::Array(_) => return Err(SmpError::ListOfLists),
        };
        match found {
            None => found = Some(kind),
            Some(seen) if seen != kind => {
                return Err(SmpError::MixedListElements(display(&Value::Array(patch.to_vec()))));
            }
            Some(_) => {}
        }
    }
    Ok(found.unwrap_or(JsonKind::Null))
}

// ---- ordering ------------------------------------------------------------

/// One item on its way into an ordered list.
struct Ranked {
    /// Position in the order that governs its group (see [`order_items`]).
    rank: usize,
    /// Position in the live list, if it was there.
    live: Option<usize>,
    item: Value,
}

/// Orders a merged list the way kube does. Items named in `wanted` (the
/// patch's list, or `$setElementOrder`) take that order; the others keep
/// their `live` order; then the two runs are interleaved: a live-only item
/// goes first only when both it and the next wanted item were in the live
/// list and it came earlier there. Hence a wanted item that is new to the
/// list is emitted as soon as it is reached.
fn order_items(merged: Vec<Value>, wanted: &[Value], live: &[Value], key: Option<&str>) -> Vec<Value> {
    let total = merged.len();
    let (wanted, live) = (first_positions(wanted), first_positions(live));
    let mut named = Vec::new();
    let mut others = Vec::new();
    for item in merged {
        let id = identity(&item, key).map(id_key);
        let live_at = id.as_ref().and_then(|id| live.get(id).copied());
        match id.as_ref().and_then(|id| wanted.get(id).copied()) {
            Some(rank) => named.push(Ranked { rank, live: live_at, item }),
            None => others.push(Ranked { rank: live_at.unwrap_or(usize::MAX), live: live_at, item }),
        }
    }
    named.sort_by_key(|r| r.rank);
    others.sort_by_key(|r| r.rank);
    interleave(named, others, total)
}

/// Merges the wanted run and the live-only run (see [`order_items`]).
fn interleave(named: Vec<Ranked>, others: Vec<Ranked>, total: usize) -> Vec<Value> {
    let mut out = Vec::with_capacity(total);
    let mut named = named.into_iter().peekable();
    let mut others = others.into_iter().peekable();
    loop {
        let take_other = match (others.peek(), named.peek()) {
            (Some(o), Some(n)) => matches!((o.live, n.live), (Some(a), Some(b)) if a < b),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_other { others.next() } else { named.next() };
        if let Some(ranked) = next {
            out.push(ranked.item);
        }
    }
    out
}

/// What identifies a list item: its merge key's value, or for primitive
/// lists the item itself. `None` for an object without the key.
fn identity<'v>(item: &'v Value, key: Option<&str>) -> Option<&'v Value> {
    match key {
        Some(key) => item.get(key),
        None => Some(item),
    }
}

/// Like [`identity`], but an item without the merge key is the client's error.
fn identity_required<'v>(item: &'v Value, key: Option<&str>) -> Result<&'v Value, SmpError> {
    identity(item, key).ok_or_else(|| match key {
        Some(key) => missing_key_in(item, key),
        None => SmpError::BadSetElementOrder,
    })
}

/// The identities of live items; items without one cannot be matched.
fn identities(items: &[Value], key: Option<&str>) -> Vec<Value> {
    items.iter().filter_map(|item| identity(item, key)).cloned().collect()
}

/// The identities of `$setElementOrder` items, each of which must have one.
fn identities_required(items: &[Value], key: Option<&str>) -> Result<Vec<Value>, SmpError> {
    items.iter().map(|item| identity_required(item, key).cloned()).collect()
}

/// The first position of each identity, by [`id_key`]. Lists are looked up
/// through hashes rather than scanned: a patch may carry thousands of items,
/// and a quadratic merge would let one request hold a core for minutes.
fn first_positions(ids: &[Value]) -> HashMap<String, usize> {
    let mut positions = HashMap::with_capacity(ids.len());
    for (at, id) in ids.iter().enumerate() {
        positions.entry(id_key(id)).or_insert(at);
    }
    positions
}

/// The identity as a hashable string, equal for two identities exactly when
/// Go's `==` on decoded JSON would call them equal: numbers compare by value
/// (Go decodes every number as float64), so `80` and `80.0` are one port.
fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => match n.as_f64() {
            Some(f) => format!("n{f}"),
            None => format!("n{n}"),
        },
        Value::String(s) => format!("s{s}"),
        other => format!("j{other}"),
    }
}

/// True for a list item carrying `$patch`.
fn has_directive(item: &Value) -> bool {
    item.get(PATCH).is_some()
}

/// A live list item as an object (a non-object was refused by
/// [`element_kind`] already, so the fallback is never taken).
fn into_object(value: Value) -> Object {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The error for a patch object that lacks its list's merge key.
fn missing_key(item: &Object, key: &str) -> SmpError {
    SmpError::MissingMergeKey { map: display_map(item), key: key.to_owned() }
}

/// [`missing_key`] for an item that may not even be an object.
fn missing_key_in(item: &Value, key: &str) -> SmpError {
    SmpError::MissingMergeKey { map: display(item), key: key.to_owned() }
}

/// Longest excerpt of a patch quoted in an error message; kube quotes whole
/// lists, which for a large patch makes an error bigger than the request.
const MAX_QUOTE: usize = 512;

/// Compact JSON for error messages, cut at [`MAX_QUOTE`] bytes.
fn display(value: &Value) -> String {
    let mut text = value.to_string();
    if text.len() > MAX_QUOTE {
        let mut cut = MAX_QUOTE;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// [`display`] for an object.
fn display_map(map: &Object) -> String {
    display(&Value::Object(map.clone()))
}

/// The name Go's JSON decoder gives a value's type in its errors.
fn go_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::strategic_schema::{ListStrategy, for_kind};
    use super::{SmpError, apply};

    fn patch(group: &str, kind: &str, original: Value, patch: Value) -> Result<Value, SmpError> {
        apply(&original, &patch, for_kind(group, kind).unwrap())
    }

    fn deployment(original: Value, p: Value) -> Value {
        let out = patch("apps", "Deployment", original, p).unwrap();
        assert_no_directives(&out);
        out
    }

    fn pod(original: Value, p: Value) -> Value {
        let out = patch("", "Pod", original, p).unwrap();
        assert_no_directives(&out);
        out
    }

    fn assert_no_directives(value: &Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    assert!(!key.starts_with('$'), "directive {key} left in output");
                    assert_no_directives(v);
                }
            }
            Value::Array(items) => items.iter().for_each(assert_no_directives),
            _ => {}
        }
    }

    fn names(list: &Value) -> Vec<&str> {
        list.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect()
    }

    fn two_container_deployment() -> Value {
        json!({
            "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
            "spec": {
                "replicas": 2,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [
                        {"name": "app", "image": "app:v1", "args": ["--a", "--b"],
                         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
                         "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                        {"name": "sidecar", "image": "proxy:v1"}
                    ]}
                }
            }
        })
    }

    // ---- maps --------------------------------------------------------

    #[test]
    fn null_deletes_a_label_and_unmatched_null_adds_nothing() {
        let out = deployment(
            two_container_deployment(),
            json!({"metadata": {"labels": {"tier": null, "absent": null, "new": "x"}}}),
        );
        assert_eq!(out["metadata"]["labels"], json!({"app": "web", "new": "x"}));
    }

    #[test]
    fn map_replace_directive_replaces_the_whole_map() {
        let out = deployment(
            two_container_deployment(),
            json!({"metadata": {"labels": {"$patch": "replace", "only": "this"}}}),
        );
        assert_eq!(out["metadata"]["labels"], json!({"only": "this"}));
    }

    #[test]
    fn map_delete_directive_empties_an_existing_map_and_adds_no_missing_one() {
        let out = deployment(
            two_container_deployment(),
            json!({"metadata": {"labels": {"$patch": "delete"}, "annotations": {"$patch": "delete"}}}),
        );
        assert_eq!(out["metadata"]["labels"], json!({}));
        assert!(out["metadata"].get("annotations").is_none());
    }

    #[test]
    fn top_level_replace_keeps_only_the_patch() {
        let out = patch(
            "",
            "ConfigMap",
            json!({"data": {"a": "1"}, "kind": "ConfigMap"}),
            json!({"$patch": "replace", "data": {"b": "2"}}),
        )
        .unwrap();
        assert_eq!(out, json!({"data": {"b": "2"}}));
    }

    #[test]
    fn type_change_replaces_and_scalars_overwrite() {
        let out = patch(
            "",
            "ConfigMap",
            json!({"data": "oops", "immutable": false}),
            json!({"data": {"k": "v"}, "immutable": true}),
        )
        .unwrap();
        assert_eq!(out, json!({"data": {"k": "v"}, "immutable": true}));
    }

    #[test]
    fn null_patch_changes_nothing() {
        let original = json!({"metadata": {"name": "x"}});
        assert_eq!(patch("", "Secret", original.clone(), Value::Null).unwrap(), original);
    }

    // ---- lists merged by key ------------------------------------------

    #[test]
    fn kubectl_three_way_patch_changing_one_image_keeps_the_other_container() {
        // What `kubectl apply` sends after the image of "app" was changed.
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
                "containers": [{"image": "app:v2", "name": "app"}]
            }}}}),
        );
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(containers), ["app", "sidecar"]);
        assert_eq!(containers[0]["image"], "app:v2");
        assert_eq!(containers[0]["env"].as_array().unwrap().len(), 3);
        assert_eq!(containers[0]["args"], json!(["--a", "--b"]));
        assert_eq!(containers[1], json!({"name": "sidecar", "image": "proxy:v1"}));
        assert_eq!(out["spec"]["replicas"], 2);
    }

    #[test]
    fn plain_merge_by_key_without_order_directive_keeps_live_order() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "proxy:v2"}]}}}}),
        );
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(containers), ["app", "sidecar"]);
        assert_eq!(containers[1]["image"], "proxy:v2");
    }

    #[test]
    fn env_var_deleted_by_patch_directive() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "app", "env": [{"name": "B", "$patch": "delete"}, {"name": "A", "value": "one"}]}
            ]}}}}),
        );
        let env = &out["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env, &json!([{"name": "A", "value": "one"}, {"name": "C", "value": "3"}]));
    }

    #[test]
    fn deleting_by_key_removes_every_duplicate_and_missing_keys_are_a_no_op() {
        let original = json!({"spec": {"containers": [
            {"name": "a", "image": "x", "env": [{"name": "D", "value": "1"}, {"name": "E"}, {"name": "D", "value": "2"}]}
        ]}});
        let out = pod(
            original,
            json!({"spec": {"containers": [{"name": "a", "env": [
                {"name": "D", "$patch": "delete"}, {"name": "Z", "$patch": "delete"}
            ]}]}}),
        );
        assert_eq!(out["spec"]["containers"][0]["env"], json!([{"name": "E"}]));
    }

    #[test]
    fn list_replace_directive_replaces_the_list() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "o"}]}}}}),
        );
        assert_eq!(out["spec"]["template"]["spec"]["containers"], json!([{"name": "only", "image": "o"}]));
    }

    #[test]
    fn new_item_without_order_goes_first_as_in_kube() {
        // kube puts an item unknown to the live list before the live-only
        // items when no $setElementOrder says otherwise; the "Update API
        // Objects in Place Using kubectl patch" task page shows the same
        // (the added redis container is listed before nginx).
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "new", "image": "n"}]}}}}),
        );
        assert_eq!(names(&out["spec"]["template"]["spec"]["containers"]), ["new", "app", "sidecar"]);
    }

    #[test]
    fn new_item_with_order_directive_goes_where_it_says() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}, {"name": "new"}],
                "containers": [{"name": "new", "image": "n"}]
            }}}}),
        );
        assert_eq!(names(&out["spec"]["template"]["spec"]["containers"]), ["app", "sidecar", "new"]);
    }

    #[test]
    fn patch_order_wins_over_live_order() {
        let original =
            json!({"spec": {"containers": [{"name": "1"}, {"name": "2", "v": "b"}, {"name": "3"}]}});
        let out = pod(
            original,
            json!({"spec": {"containers": [{"name": "3", "v": "c"}, {"name": "1", "v": "a"}]}}),
        );
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "2", "v": "b"}, {"name": "3", "v": "c"}, {"name": "1", "v": "a"}])
        );
    }

    #[test]
    fn merge_keys_compare_numbers_by_value() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80.0, "name": "http"}]}]}}}}),
        );
        let ports = &out["spec"]["template"]["spec"]["containers"][0]["ports"];
        assert_eq!(ports.as_array().unwrap().len(), 1);
        assert_eq!(ports[0]["name"], "http");
        assert_eq!(ports[0]["protocol"], "TCP");
    }

    #[test]
    fn new_subtrees_lose_their_directives_and_nulls() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}, {"name": "fresh"}],
                "containers": [{"name": "fresh", "image": "f", "workingDir": null,
                                "$setElementOrder/env": [{"name": "X"}],
                                "env": [{"name": "X", "value": "1"}, {"name": "Y", "$patch": "delete"}],
                                "resources": {"$patch": "delete"}}],
                "nodeSelector": {"$retainKeys": ["disk"], "disk": "ssd"}
            }}}}),
        );
        let spec = &out["spec"]["template"]["spec"];
        assert_eq!(
            spec["containers"][2],
            json!({"name": "fresh", "image": "f", "env": [{"name": "X", "value": "1"}]})
        );
        assert_eq!(spec["nodeSelector"], json!({"disk": "ssd"}));
    }

    #[test]
    fn tolerations_and_args_are_replaced_whole() {
        let original = json!({"spec": {
            "tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}],
            "containers": [{"name": "c", "args": ["1", "2", "3"]}]
        }});
        let out = pod(
            original,
            json!({"spec": {"tolerations": [{"key": "b", "operator": "Equal", "value": "v"}],
                            "containers": [{"name": "c", "args": ["9"]}]}}),
        );
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "b", "operator": "Equal", "value": "v"}]));
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["9"]));
    }

    #[test]
    fn pod_status_conditions_merge_by_type() {
        let original = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}
        ], "podIPs": [{"ip": "10.0.0.1"}]}});
        let out = pod(
            original,
            json!({"status": {"conditions": [{"type": "Ready", "status": "True"}], "podIPs": [{"ip": "fd00::1"}]}}),
        );
        assert_eq!(
            out["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}])
        );
        assert_eq!(out["status"]["podIPs"], json!([{"ip": "fd00::1"}, {"ip": "10.0.0.1"}]));
    }

    #[test]
    fn service_ports_merge_by_port() {
        let original =
            json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": 8443}]}});
        let out =
            patch("", "Service", original, json!({"spec": {"ports": [{"port": 443, "targetPort": 9443}]}}))
                .unwrap();
        assert_eq!(
            out["spec"]["ports"],
            json!([{"port": 80, "targetPort": 8080}, {"port": 443, "targetPort": 9443}])
        );
    }

    #[test]
    fn node_addresses_and_conditions_merge_by_type_and_pod_cidrs_as_a_set() {
        let original = json!({
            "spec": {"podCIDRs": ["10.0.0.0/24"]},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.1.1.1"}, {"type": "Hostname", "address": "n1"}],
                       "conditions": [{"type": "Ready", "status": "True"}]}
        });
        let out = patch(
            "",
            "Node",
            original,
            json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]},
                   "status": {"addresses": [{"type": "Hostname", "address": "n1.example"}],
                              "conditions": [{"type": "MemoryPressure", "status": "False"}]}}),
        )
        .unwrap();
        assert_eq!(out["spec"]["podCIDRs"], json!(["10.0.0.0/24", "fd00::/64"]));
        assert_eq!(out["status"]["addresses"][0]["address"], "10.1.1.1");
        assert_eq!(out["status"]["addresses"][1]["address"], "n1.example");
        assert_eq!(out["status"]["conditions"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn owner_references_merge_by_uid() {
        let original =
            json!({"metadata": {"ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "a"}]}});
        let out = patch(
            "batch",
            "Job",
            original,
            json!({"metadata": {"ownerReferences": [{"uid": "u1", "controller": true}, {"uid": "u2", "kind": "CronJob", "name": "c"}]}}),
        )
        .unwrap();
        let refs = out["metadata"]["ownerReferences"].as_array().unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0], json!({"uid": "u1", "kind": "ReplicaSet", "name": "a", "controller": true}));
    }

    #[test]
    fn cron_job_template_reaches_container_env() {
        let original = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
            {"name": "job", "env": [{"name": "A", "value": "1"}]}
        ]}}}}}});
        let out = patch(
            "batch",
            "CronJob",
            original,
            json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
                {"name": "job", "env": [{"name": "B", "value": "2"}]}
            ]}}}}}}),
        )
        .unwrap();
        let env = &out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env.as_array().unwrap().len(), 2);
    }

    #[test]
    fn kubectl_apply_removing_a_container_and_reordering_env() {
        // What `kubectl apply` sends when "sidecar" left the manifest and the
        // env of "app" went from A, B, C to C, A (B removed).
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "app"}],
                "containers": [
                    {"name": "app", "$setElementOrder/env": [{"name": "C"}, {"name": "A"}],
                     "env": [{"name": "B", "$patch": "delete"}]},
                    {"name": "sidecar", "$patch": "delete"}
                ]
            }}}}),
        );
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(containers), ["app"]);
        assert_eq!(containers[0]["env"], json!([{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]));
        assert_eq!(containers[0]["image"], "app:v1");
    }

    #[test]
    fn long_lists_merge_in_linear_time_and_keep_order() {
        let n = 20_000;
        let env: Vec<Value> = (0..n).map(|i| json!({"name": format!("V{i}"), "value": "old"})).collect();
        let finalizers: Vec<Value> = (0..n).map(|i| json!(format!("f{i}"))).collect();
        let original = json!({"metadata": {"finalizers": finalizers},
                              "spec": {"containers": [{"name": "c", "env": env}]}});
        let patch_env: Vec<Value> =
            (0..n).rev().step_by(2).map(|i| json!({"name": format!("V{i}"), "value": "new"})).collect();
        let out = pod(
            original,
            json!({"metadata": {"finalizers": finalizers_tail(n)},
                   "spec": {"containers": [{"name": "c", "env": patch_env}]}}),
        );
        let env = out["spec"]["containers"][0]["env"].as_array().unwrap();
        assert_eq!(env.len(), n);
        assert_eq!(env.iter().filter(|e| e["value"] == "new").count(), n / 2);
        assert_eq!(out["metadata"]["finalizers"].as_array().unwrap().len(), n + 1);
    }

    fn finalizers_tail(n: usize) -> Value {
        json!([format!("f{}", n - 1), "brand-new"])
    }

    // ---- $setElementOrder -----------------------------------------------

    #[test]
    fn set_element_order_reorders_without_changing_items() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}}}}),
        );
        let containers = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(names(containers), ["sidecar", "app"]);
        assert_eq!(containers[1]["image"], "app:v1");
    }

    #[test]
    fn set_element_order_interleaves_server_only_items_by_live_position() {
        // Live list has "9", which the client never knew about.
        let original = json!({"spec": {"containers": [
            {"name": "1", "other": "a"}, {"name": "2"}, {"name": "9"}, {"name": "3"}, {"name": "4"}
        ]}});
        let out = pod(
            original,
            json!({"spec": {"$setElementOrder/containers": [{"name": "2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}]}}),
        );
        assert_eq!(names(&out["spec"]["containers"]), ["2", "1", "9", "4", "3"]);
        assert_eq!(out["spec"]["containers"][1]["other"], "a");
    }

    #[test]
    fn set_element_order_ignores_names_missing_from_the_list() {
        let original = json!({"metadata": {"finalizers": ["1", "3"]}});
        let out = patch(
            "",
            "Namespace",
            original,
            json!({"metadata": {"$setElementOrder/finalizers": ["3", "2", "1"]}}),
        )
        .unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["3", "1"]));
    }

    #[test]
    fn set_element_order_must_agree_with_the_patch_list() {
        let original = json!({"spec": {"containers": [{"name": "1"}, {"name": "3"}, {"name": "2"}]}});
        let err = patch(
            "",
            "Pod",
            original,
            json!({"spec": {"$setElementOrder/containers": [{"name": "1"}, {"name": "2"}, {"name": "3"}],
                            "containers": [{"name": "3", "v": 3}, {"name": "1", "v": 1}]}}),
        )
        .unwrap_err();
        assert!(matches!(err, SmpError::OrderMismatch { .. }));
        assert!(err.to_string().contains("doesn't match $setElementOrder list"));
    }

    // ---- primitive lists -------------------------------------------------

    #[test]
    fn finalizers_union_keeps_order_and_drops_duplicates() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let out =
            patch("", "ConfigMap", original, json!({"metadata": {"finalizers": ["b", "c", "c"]}})).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
    }

    #[test]
    fn delete_from_primitive_list_removes_values_and_creates_no_list() {
        let original = json!({"metadata": {"finalizers": ["a", "b", "c", "b"]}});
        let out = patch(
            "",
            "Secret",
            original,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zzz"],
                                "$deleteFromPrimitiveList/other": ["x"]}}),
        )
        .unwrap();
        assert_eq!(out["metadata"], json!({"finalizers": ["a", "c"]}));
    }

    #[test]
    fn kubectl_style_finalizer_patch_adds_removes_and_orders() {
        // Last applied [a, b], now [a, c]: kubectl sends all three directives.
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let out = patch(
            "coordination.k8s.io",
            "Lease",
            original,
            json!({"metadata": {"$setElementOrder/finalizers": ["a", "c"], "finalizers": ["c"],
                                "$deleteFromPrimitiveList/finalizers": ["b"]}}),
        )
        .unwrap();
        assert_eq!(out["metadata"], json!({"finalizers": ["a", "c"]}));
    }

    #[test]
    fn set_merge_puts_the_patch_order_first_among_known_values() {
        // Same rule as for keyed lists: [1, 2, 3] patched with [3, 1].
        let original = json!({"spec": {"podCIDRs": ["1", "2", "3"]}});
        let out = patch("", "Node", original, json!({"spec": {"podCIDRs": ["3", "1"]}})).unwrap();
        assert_eq!(out["spec"]["podCIDRs"], json!(["2", "3", "1"]));
    }

    // ---- $retainKeys -----------------------------------------------------

    #[test]
    fn retain_keys_switches_deployment_strategy_to_recreate() {
        let out = deployment(
            two_container_deployment(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
        );
        assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn retain_keys_drops_a_volumes_old_source() {
        let original =
            json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]}});
        let out = pod(
            original,
            json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}]}}),
        );
        assert_eq!(
            out["spec"]["volumes"],
            json!([{"name": "v", "configMap": {"name": "cm"}}, {"name": "w", "emptyDir": {}}])
        );
    }

    #[test]
    fn retain_keys_refuses_a_patch_setting_an_unlisted_key() {
        let err = patch(
            "apps",
            "Deployment",
            two_container_deployment(),
            json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": {}}}}),
        )
        .unwrap_err();
        assert_eq!(err, SmpError::BadRetainKeys);
    }

    // ---- malformed patches -----------------------------------------------

    #[test]
    fn patch_that_is_not_an_object_is_refused() {
        let err = patch("", "Pod", json!({}), json!([{"op": "add"}])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            patch("", "Pod", json!({}), json!("x")).unwrap_err(),
            SmpError::PatchNotAnObject("string")
        );
        assert_eq!(patch("", "Pod", json!([]), json!({})).unwrap_err(), SmpError::InvalidDocument);
    }

    #[test]
    fn malformed_directives_are_errors_not_panics() {
        let base = two_container_deployment();
        let cases = [
            (json!({"metadata": {"$patch": "bogus"}}), "unknown patch type: \"bogus\""),
            (json!({"metadata": {"labels": {"$patch": "merge"}}}), "unknown patch type: \"merge\""),
            (json!({"metadata": {"$patch": 7}}), "unknown patch type: 7"),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
                "does not contain declared merge key: name",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}}),
                "does not contain declared merge key",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}}),
                "merging lists cannot yet",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": 1, "name": "a"}]}}}}),
                "unknown patch type",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": ["app"]}}}}),
                "list element types are not identical",
            ),
            (
                json!({"spec": {"template": {"spec": {"containers": [["app"]]}}}}),
                "lists of lists are not supported",
            ),
            (
                json!({"metadata": {"finalizers": [{"a": 1}]}}),
                "cannot merge lists without merge key for finalizers",
            ),
            (
                json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}),
                "invalid patch format of primitive list",
            ),
            (
                json!({"metadata": {"$deleteFromPrimitiveList": ["a"]}}),
                "invalid patch format of primitive list",
            ),
            (
                json!({"metadata": {"$setElementOrderX/finalizers": ["a"]}}),
                "invalid patch format of setElementOrder list",
            ),
            (
                json!({"metadata": {"$setElementOrder/finalizers": "a"}}),
                "invalid patch format of setElementOrder list",
            ),
            (
                json!({"spec": {"template": {"spec": {"$setElementOrder/containers": ["app"]}}}}),
                "does not contain declared merge key",
            ),
            (json!({"spec": {"strategy": {"$retainKeys": "type"}}}), "invalid patch format of retainKeys"),
        ];
        for (p, message) in cases {
            let err = patch("apps", "Deployment", base.clone(), p.clone()).unwrap_err();
            assert!(err.to_string().contains(message), "{p}: got {err}, want {message}");
        }
    }

    #[test]
    fn error_messages_quote_at_most_a_bounded_excerpt() {
        let huge: Vec<Value> =
            (0..10_000).map(|i| json!({"name": format!("c{i}")})).chain([json!("x")]).collect();
        let err = patch("", "Pod", json!({}), json!({"spec": {"containers": huge}})).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("list element types are not identical: [{\"name\":\"c0\"}"));
        assert!(message.len() < 1024, "{} bytes", message.len());
    }

    // ---- schema ----------------------------------------------------------

    #[test]
    fn every_required_kind_has_metadata() {
        let kinds = [
            ("", "Namespace"),
            ("", "ConfigMap"),
            ("", "Secret"),
            ("", "ServiceAccount"),
            ("", "Service"),
            ("", "Endpoints"),
            ("", "Pod"),
            ("", "Event"),
            ("", "Node"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("batch", "Job"),
            ("batch", "CronJob"),
            ("coordination.k8s.io", "Lease"),
        ];
        for (group, kind) in kinds {
            let node = for_kind(group, kind).unwrap();
            let meta = node.field("metadata").and_then(|f| f.node).unwrap();
            assert_eq!(meta.field("finalizers").unwrap().list, ListStrategy::MergeSet, "{kind}");
        }
        assert!(for_kind("", "Widget").is_none());
        assert!(for_kind("apps", "Pod").is_none());
        let pod = for_kind("", "Pod").unwrap();
        let spec = pod.field("spec").and_then(|f| f.node).unwrap();
        assert!(spec.field("tolerations").is_none());
        assert!(spec.field("volumes").unwrap().retain_keys);
        assert_eq!(spec.field("hostAliases").unwrap().list, ListStrategy::MergeByKey("ip"));
    }
}
