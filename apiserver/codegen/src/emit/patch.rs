//! `apiserver/src/patch/strategic_schema/nodes.rs`: strategic merge patch metadata, one
//! `TypeNode` per message (the fields that carry a patch tag or lead to a message that does,
//! embedded structs' fields in their place), and the kinds by group and kind.

use super::{header, lit};
use crate::model::{Elem, Field, Model, PatchStrategy, Shape};

/// The output, relative to `apiserver/`.
pub const PATH: &str = "src/patch/strategic_schema/nodes.rs";

pub fn emit(model: &Model) -> String {
    let mut out = header(
        "Strategic merge patch metadata: the patchStrategy and patchMergeKey tags of every message\n\
         reachable from the kinds, as a tree of `TypeNode`s. A node lists the fields with a tag, and\n\
         the fields whose message has tagged fields below it; every other field is plain.",
    );
    out.push_str(
        "#![allow(dead_code, reason = \"every message has its node, for per-kind code to name\")]\n\n\
         use super::{FieldMeta, ListStrategy, TypeNode};\n\n\
         /// The kinds with patch metadata: (group, kind, node); the group of core is \"\".\n\
         pub(crate) static KINDS: &[(&str, &str, &TypeNode)] = &[\n",
    );
    let mut listed = std::collections::HashSet::new();
    for kind in &model.kinds {
        let Some(group) = kind.group() else { continue };
        // Looked up by group and kind: the first version listed stands for the others.
        if !listed.insert((group, kind.kind.as_str())) {
            continue;
        }
        out.push_str(&format!(
            "    ({}, {}, &{}),\n",
            lit(group),
            lit(&kind.kind),
            model.messages[kind.message].static_name
        ));
    }
    out.push_str("];\n");

    let tagged = Tagged::new(model);
    for (m, message) in model.messages.iter().enumerate() {
        out.push_str(&format!("\npub(crate) static {}: TypeNode = TypeNode {{\n", message.static_name));
        out.push_str(&format!("    name: {},\n", lit(&message.name)));
        let fields = tagged.fields(m);
        if fields.is_empty() {
            out.push_str("    fields: &[],\n");
        } else {
            out.push_str("    fields: &[\n");
            for field in fields {
                out.push_str(&format!(
                    "        FieldMeta {{ name: {}, list: {}, retain_keys: {}, replace: {}, node: {} }},\n",
                    lit(field.json_name()),
                    list(field),
                    field.patch_strategy.is_some_and(PatchStrategy::retains_keys),
                    field.patch_strategy == Some(PatchStrategy::Replace),
                    match tagged.node(field) {
                        Some(inner) => format!("Some(&{})", model.messages[inner].static_name),
                        None => "None".to_owned(),
                    }
                ));
            }
            out.push_str("    ],\n");
        }
        out.push_str("};\n");
    }
    out
}

fn list(field: &Field) -> String {
    match (field.patch_strategy.is_some_and(PatchStrategy::merges), &field.patch_merge_key) {
        (true, Some(key)) => format!("ListStrategy::MergeByKey({})", lit(key)),
        (true, None) => "ListStrategy::MergeSet".to_owned(),
        (false, _) => "ListStrategy::Replace".to_owned(),
    }
}

/// Which messages have tagged fields at or below them.
struct Tagged<'a> {
    model: &'a Model,
    /// Per message: some field is tagged, or leads to a tagged message.
    tagged: Vec<bool>,
}

impl<'a> Tagged<'a> {
    fn new(model: &'a Model) -> Self {
        let mut this = Tagged { model, tagged: Vec::new() };
        // The model has no cycles, so a message's answer only needs its fields' messages'.
        let mut memo = vec![None; model.messages.len()];
        for m in 0..model.messages.len() {
            this.compute(m, &mut memo);
        }
        this.tagged = memo.into_iter().map(|t| t.unwrap_or(false)).collect();
        this
    }

    fn compute(&self, m: usize, memo: &mut Vec<Option<bool>>) -> bool {
        if let Some(known) = memo[m] {
            return known;
        }
        let mut tagged = false;
        for field in self.model.json_fields(m) {
            let below = match (field.elem, field.shape) {
                (Elem::Message(inner), Shape::Value | Shape::Pointer | Shape::List) => {
                    self.compute(inner, memo)
                }
                _ => false,
            };
            tagged |= below || field.patch_strategy.is_some();
        }
        memo[m] = Some(tagged);
        tagged
    }

    /// The message of a field's value (a list's items), when something below it is tagged.
    /// Map values are plain: a node describes a struct's fields, not a map's keys.
    fn node(&self, field: &Field) -> Option<usize> {
        match (field.elem, field.shape) {
            (Elem::Message(inner), Shape::Value | Shape::Pointer | Shape::List) if self.tagged[inner] => {
                Some(inner)
            }
            _ => None,
        }
    }

    /// The fields of message `m`'s node.
    fn fields(&self, m: usize) -> Vec<&'a Field> {
        let model: &'a Model = self.model;
        model
            .json_fields(m)
            .into_iter()
            .filter(|f| f.patch_strategy.is_some() || self.node(f).is_some())
            .collect()
    }
}
