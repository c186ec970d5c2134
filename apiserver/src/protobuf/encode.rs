//! Answers in Kubernetes protobuf: the JSON objects the apiserver works on, written as the Go
//! code generated from kube's `generated.proto` writes the same Go objects.
//!
//! What is written, field by field, follows gogo-protobuf's generated marshallers, so Go clients
//! (kube-controller-manager, kube-scheduler, kubelet, every typed clientset) decode exactly the
//! object they would have decoded from the JSON answer:
//! * fields in increasing number; a Go value field (string, number, bool, struct) is always
//!   written, zero when the JSON lacks it; a Go pointer only when the JSON has it (not null);
//! * an embedded struct that Go flattens in JSON is its own message field, written from the
//!   parent's JSON object;
//! * lists element by element (numbers unpacked), maps as entries sorted by key, both key and
//!   value written;
//! * `Time` and `MicroTime` as {seconds, nanos} (the zero time as an empty message),
//!   `IntOrString` as {type, intVal, strVal}, `Quantity` as {string}, `FieldsV1` and
//!   `RawExtension` as {raw} holding their JSON.
//!
//! A JSON key the kind's message has no field for is an error, never a silent loss: the caller
//! answers JSON instead. An object is framed as [`super::decode`] reads it: the magic `k8s\0`,
//! then runtime.Unknown {typeMeta {apiVersion, kind}, raw, contentEncoding, contentType}; a list
//! is its own `<Kind>List` message {metadata: ListMeta = 1, items = 2}. Watch events are
//! length-prefixed WatchEvent messages whose object is such a framed object.

use base64::Engine as _;
use serde_json::{Map, Value};

use super::schema::{KINDS, META_V1_LIST_META, META_V1_OBJECT_META};
use super::{ANY_VERSION, Card, Field, LEN, MAGIC, Message, Presence, Type, VARINT};

/// The media type of a watch stream in protobuf.
pub const PROTOBUF_WATCH: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// Why an answer cannot be written in protobuf (it is then written in JSON).
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error("{kind} in {api_version} has no protobuf message")]
    UnsupportedKind { api_version: String, kind: String },
    #[error("{message} has no field for {key:?}")]
    UnknownField { message: &'static str, key: String },
    #[error("{message}.{field}: {reason}")]
    Invalid { message: &'static str, field: &'static str, reason: String },
}

/// The message answers of `kind` in `api_version` are written in; the rows that accept any
/// apiVersion (DeleteOptions) are request bodies only.
fn message_of(api_version: &str, kind: &str) -> Option<&'static Message> {
    KINDS
        .iter()
        .find(|(v, k, _)| *v != ANY_VERSION && *v == api_version && *k == kind)
        .map(|(_, _, message)| *message)
}

/// Whether answers of `kind` in `api_version` can be written in protobuf at all.
pub fn supports(api_version: &str, kind: &str) -> bool {
    message_of(api_version, kind).is_some()
}

/// A whole answer (an object, a `<Kind>List` of them, a Status) as a protobuf body.
pub fn body(value: &Value) -> Result<Vec<u8>, EncodeError> {
    let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default();
    let unsupported =
        || EncodeError::UnsupportedKind { api_version: api_version.to_owned(), kind: kind.to_owned() };
    let empty = Map::new();
    let object = value.as_object().unwrap_or(&empty);
    let mut raw = Vec::with_capacity(1024);
    match message_of(api_version, kind) {
        Some(message) => encode_message(message, object, true, &mut raw)?,
        None => {
            let item_kind = kind.strip_suffix("List").ok_or_else(unsupported)?;
            let item = message_of(api_version, item_kind).ok_or_else(unsupported)?;
            encode_list(item, object, &mut raw)?
        }
    }
    Ok(framed(api_version, kind, &raw))
}

/// One watch event: its length (4 bytes, big endian), then WatchEvent {type = 1, object = 2
/// (a RawExtension whose raw is the framed object)}.
pub fn watch_event(event_type: &str, framed_object: &[u8]) -> Vec<u8> {
    let mut raw_extension = Vec::with_capacity(framed_object.len() + 8);
    write_len(&mut raw_extension, 1, framed_object);
    let mut event = Vec::with_capacity(raw_extension.len() + 16);
    write_len(&mut event, 1, event_type.as_bytes());
    write_len(&mut event, 2, &raw_extension);
    let mut out = Vec::with_capacity(event.len() + 4);
    out.extend((event.len() as u32).to_be_bytes());
    out.extend(event);
    out
}

/// The magic and the runtime.Unknown envelope around a message, as Go's protobuf serializer
/// writes them (empty contentEncoding and contentType included).
fn framed(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    write_len(&mut type_meta, 1, api_version.as_bytes());
    write_len(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend(MAGIC);
    write_len(&mut out, 1, &type_meta);
    write_len(&mut out, 2, raw);
    write_len(&mut out, 3, b"");
    write_len(&mut out, 4, b"");
    out
}

/// A `<Kind>List`: metadata (ListMeta) = 1, items = 2.
fn encode_list(
    item: &'static Message,
    list: &Map<String, Value>,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let empty = Map::new();
    for key in list.keys() {
        if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "items") {
            return Err(EncodeError::UnknownField { message: "a list", key: key.clone() });
        }
    }
    let meta = list.get("metadata").and_then(Value::as_object).unwrap_or(&empty);
    nested(out, 1, |out| encode_message(&META_V1_LIST_META, meta, false, out))?;
    for object in list.get("items").and_then(Value::as_array).into_iter().flatten() {
        let object = object.as_object().ok_or_else(|| EncodeError::Invalid {
            message: item.name,
            field: "items",
            reason: "an item is not an object".to_owned(),
        })?;
        nested(out, 2, |out| encode_message(item, object, true, out))?;
    }
    Ok(())
}

/// A message from its JSON object. `root`: the object carries apiVersion and kind, which are the
/// envelope's, not the message's. An object nested in another (a StatefulSet's claim templates)
/// may carry them too; kube's messages have no TypeMeta, so protobuf leaves them out, as kube's.
fn encode_message(
    message: &'static Message,
    object: &Map<String, Value>,
    root: bool,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let has_type_meta = root || is_object(message);
    for key in object.keys() {
        let type_meta = has_type_meta && matches!(key.as_str(), "apiVersion" | "kind");
        if !type_meta && !has_field(message, key) {
            return Err(EncodeError::UnknownField { message: message.name, key: key.clone() });
        }
    }
    encode_fields(message, object, out)
}

/// A message's fields from a JSON object whose keys are known to be its (or, for an embedded
/// struct, its parent's).
fn encode_fields(
    message: &'static Message,
    object: &Map<String, Value>,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    for field in message.fields {
        if field.presence == Presence::Inline {
            let Type::Message(inner) = field.ty else { continue };
            nested(out, field.number, |out| encode_fields(inner, object, out))?;
            continue;
        }
        let value = object.get(field.json).filter(|v| !v.is_null());
        encode_field(message, field, value, out)?;
    }
    Ok(())
}

/// Whether a message is a Kubernetes object (it has ObjectMeta), whose Go struct embeds TypeMeta.
fn is_object(message: &'static Message) -> bool {
    message.fields.iter().any(|field| {
        field.json == "metadata"
            && matches!(field.ty, Type::Message(m) if std::ptr::eq(m, &META_V1_OBJECT_META))
    })
}

/// Whether `key` is one of the message's JSON names, its embedded structs' included.
fn has_field(message: &'static Message, key: &str) -> bool {
    message.fields.iter().any(|field| match (field.presence, field.ty) {
        (Presence::Inline, Type::Message(inner)) => has_field(inner, key),
        _ => field.json == key,
    })
}

fn encode_field(
    message: &'static Message,
    field: &'static Field,
    value: Option<&Value>,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let invalid = |reason: &str| EncodeError::Invalid {
        message: message.name,
        field: field.json,
        reason: reason.to_owned(),
    };
    match field.card {
        Card::Repeated => {
            let Some(value) = value else { return Ok(()) };
            let items = value.as_array().ok_or_else(|| invalid("not a list"))?;
            for item in items {
                write_value(field, field.ty, Some(item), out).map_err(|r| invalid(&r))?;
            }
        }
        Card::Map => {
            let Some(value) = value else { return Ok(()) };
            let map = value.as_object().ok_or_else(|| invalid("not an object"))?;
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                let entry_value = Some(&map[key]).filter(|v| !v.is_null());
                nested(out, field.number, |entry| {
                    write_len(entry, 1, key.as_bytes());
                    write_value_as(2, field.ty, entry_value, entry)
                })
                .map_err(|r| invalid(&r))?;
            }
        }
        Card::Single => {
            if field.presence == Presence::Pointer && value.is_none() {
                return Ok(());
            }
            write_value(field, field.ty, value, out).map_err(|r| invalid(&r))?;
        }
    }
    Ok(())
}

fn write_value(field: &Field, ty: Type, value: Option<&Value>, out: &mut Vec<u8>) -> Result<(), String> {
    write_value_as(field.number, ty, value, out)
}

/// One value of type `ty` as field `number`; `None` writes the type's zero value.
fn write_value_as(number: u32, ty: Type, value: Option<&Value>, out: &mut Vec<u8>) -> Result<(), String> {
    match ty {
        Type::String => write_len(out, number, string(value)?.as_bytes()),
        Type::Bytes => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(string(value)?)
                .map_err(|e| format!("not base64: {e}"))?;
            write_len(out, number, &bytes);
        }
        Type::Bool => {
            let b = match value {
                None => false,
                Some(v) => v.as_bool().ok_or("not a boolean")?,
            };
            write_varint_field(out, number, u64::from(b));
        }
        Type::Int32 => {
            let n = integer(value)?;
            let n = i32::try_from(n).map_err(|_| format!("{n} is out of range for int32"))?;
            // negative int32s are sign-extended to ten bytes, as Go writes them
            write_varint_field(out, number, i64::from(n) as u64);
        }
        Type::Int64 => write_varint_field(out, number, integer(value)? as u64),
        Type::Message(inner) => {
            let empty = Map::new();
            let object = match value {
                None => &empty,
                Some(v) => v.as_object().ok_or("not an object")?,
            };
            nested(out, number, |out| encode_message(inner, object, false, out))
                .map_err(|e| e.to_string())?;
        }
        Type::Time => nested(out, number, |out| timestamp(value, false, out))?,
        Type::MicroTime => nested(out, number, |out| timestamp(value, true, out))?,
        Type::FieldsV1 | Type::RawExtension => nested(out, number, |raw| {
            if let Some(value) = value {
                write_len(raw, 1, &serde_json::to_vec(value).map_err(|e| e.to_string())?);
            }
            Ok::<(), String>(())
        })?,
        Type::IntOrString => nested(out, number, |intstr| {
            match value {
                Some(Value::String(s)) => {
                    write_varint_field(intstr, 1, 1);
                    write_varint_field(intstr, 2, 0);
                    write_len(intstr, 3, s.as_bytes());
                }
                other => {
                    let n = integer(other)?;
                    let n = i32::try_from(n).map_err(|_| format!("{n} is out of range for int32"))?;
                    write_varint_field(intstr, 1, 0);
                    write_varint_field(intstr, 2, i64::from(n) as u64);
                    write_len(intstr, 3, b"");
                }
            }
            Ok::<(), String>(())
        })?,
        Type::Quantity => {
            let text = match value {
                None => "0",
                Some(Value::String(s)) => s.as_str(),
                Some(Value::Number(n)) => {
                    let text = n.to_string();
                    write_len_nested(out, number, text.as_bytes());
                    return Ok(());
                }
                Some(_) => return Err("not a string".to_owned()),
            };
            write_len_nested(out, number, text.as_bytes());
        }
    }
    Ok(())
}

fn string(value: Option<&Value>) -> Result<&str, String> {
    match value {
        None => Ok(""),
        Some(v) => v.as_str().ok_or_else(|| "not a string".to_owned()),
    }
}

fn integer(value: Option<&Value>) -> Result<i64, String> {
    match value {
        None => Ok(0),
        Some(v) => v.as_i64().ok_or_else(|| format!("{v} is not an integer")),
    }
}

/// meta/v1 Time or MicroTime as {seconds = 1, nanos = 2}; absent, the zero time: an empty
/// message, as Go writes it.
fn timestamp(value: Option<&Value>, micro: bool, out: &mut Vec<u8>) -> Result<(), String> {
    let Some(value) = value else { return Ok(()) };
    let text = value.as_str().ok_or("a time is not a string")?;
    let time: jiff::Timestamp = text.parse().map_err(|e| format!("{text:?} is not an RFC 3339 time: {e}"))?;
    let nanos = if micro { time.subsec_microsecond() * 1000 } else { 0 };
    write_varint_field(out, 1, time.as_second() as u64);
    write_varint_field(out, 2, i64::from(nanos) as u64);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Wire format.

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn write_key(out: &mut Vec<u8>, number: u32, wire: u8) {
    write_varint(out, u64::from(number) << 3 | u64::from(wire));
}

fn write_varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    write_key(out, number, VARINT);
    write_varint(out, value);
}

/// A length-delimited field whose body `write` appends to `out` in place: its length is put in
/// front of it afterwards (one move of the body, no buffer of its own).
fn nested<E>(
    out: &mut Vec<u8>,
    number: u32,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    write_key(out, number, LEN);
    let start = out.len();
    write(out)?;
    let (mut length, mut used) = ([0u8; 10], 0);
    let mut value = (out.len() - start) as u64;
    while value >= 0x80 {
        length[used] = (value as u8) | 0x80;
        value >>= 7;
        used += 1;
    }
    length[used] = value as u8;
    out.splice(start..start, length[..=used].iter().copied());
    Ok(())
}

/// A message of one string field (a Quantity) as field `number`.
fn write_len_nested(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    let written: Result<(), std::convert::Infallible> = nested(out, number, |inner| {
        write_len(inner, 1, bytes);
        Ok(())
    });
    let Ok(()) = written;
}

fn write_len(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    write_key(out, number, LEN);
    write_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}
