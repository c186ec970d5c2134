//! `apiserver/src/protobuf/schema.rs`: the protobuf decoder's tables (`super::Message`,
//! `super::Field`) for every message, and the kinds whose bodies decode.

use super::{header, lit};
use crate::model::{Elem, Field, Model, Shape};

/// The output, relative to `apiserver/`.
pub const PATH: &str = "src/protobuf/schema.rs";

pub fn emit(model: &Model) -> String {
    let mut out = header(&format!(
        "The protobuf messages reachable from the kinds `super::decode` accepts ({} of them), each as\n\
         a table of its fields: number, JSON name, type, and when Go's encoding/json writes it. A Go\n\
         pointer is Pointer; an embedded struct Inline; a list or map OmitEmpty (left out when empty);\n\
         a struct (message, Time, IntOrString, Quantity...) Always, since omitempty never omits one;\n\
         any other value OmitEmpty with omitempty or omitzero, else Always.",
        model.messages.len()
    ));
    out.push_str("use super::{Card, Field, Message, Presence, Type};\n\n");
    out.push_str(
        "/// The kinds whose protobuf bodies decode: (apiVersion, kind, message); apiVersion \"*\" is any\n\
         /// apiVersion.\n\
         pub(crate) static KINDS: &[(&str, &str, &Message)] = &[\n",
    );
    for kind in &model.kinds {
        out.push_str(&format!(
            "    ({}, {}, &{}),\n",
            lit(&kind.api_version),
            lit(&kind.kind),
            model.messages[kind.message].static_name
        ));
    }
    out.push_str("];\n");
    for message in &model.messages {
        out.push_str(&format!("\npub(crate) static {}: Message = Message {{\n", message.static_name));
        out.push_str(&format!("    name: {},\n", lit(&message.proto_name)));
        if message.fields.is_empty() {
            out.push_str("    fields: &[],\n");
        } else {
            out.push_str("    fields: &[\n");
            for field in &message.fields {
                out.push_str(&format!(
                    "        Field {{ number: {}, json: {}, ty: {}, card: Card::{}, presence: Presence::{} }},\n",
                    field.number,
                    lit(field.json_name()),
                    ty(model, field.elem),
                    card(field.shape),
                    presence(field)
                ));
            }
            out.push_str("    ],\n");
        }
        out.push_str("};\n");
    }
    out
}

fn ty(model: &Model, elem: Elem) -> String {
    let name = match elem {
        Elem::Message(m) => return format!("Type::Message(&{})", model.messages[m].static_name),
        Elem::String => "String",
        Elem::Bytes => "Bytes",
        Elem::Bool => "Bool",
        Elem::Int32 => "Int32",
        Elem::Int64 => "Int64",
        Elem::Time => "Time",
        Elem::MicroTime => "MicroTime",
        Elem::FieldsV1 => "FieldsV1",
        Elem::IntOrString => "IntOrString",
        Elem::Quantity => "Quantity",
        Elem::RawExtension => "RawExtension",
    };
    format!("Type::{name}")
}

fn card(shape: Shape) -> &'static str {
    match shape {
        Shape::Value | Shape::Pointer => "Single",
        Shape::List => "Repeated",
        Shape::Map => "Map",
    }
}

/// When Go's encoding/json writes the field (see the header of the output).
fn presence(field: &Field) -> &'static str {
    if field.json.is_none() {
        return "Inline";
    }
    match field.shape {
        Shape::List | Shape::Map => "OmitEmpty",
        Shape::Pointer => "Pointer",
        Shape::Value if field.elem.is_struct() => "Always",
        Shape::Value if field.omitempty || field.omitzero => "OmitEmpty",
        Shape::Value => "Always",
    }
}
