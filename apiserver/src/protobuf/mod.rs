//! Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), turned into the
//! JSON the rest of the apiserver works on.
//!
//! client-go's typed clientsets send create, update and delete bodies as protobuf, with no JSON
//! fallback. A body is the 4-byte magic `k8s\0` and a `runtime.Unknown` envelope: `typeMeta`
//! (field 1: apiVersion 1, kind 2), `raw` (field 2: the object's own message), `contentEncoding`
//! (3) and `contentType` (4), as apimachinery's runtime/serializer/protobuf writes it.
//!
//! The object's message is read by a small protobuf wire reader driven by [`schema`]: one
//! generated table per message type (field number → JSON name, type, and when Go writes it). The
//! JSON is what Go's encoding/json makes of the Go object the protobuf decodes to, which is what
//! kubectl would have sent as JSON:
//! * a pointer field (`*int32`, `*bool`, `*string`, `*Struct`) is written when the protobuf has
//!   it, even as 0, false, "" or `{}` (`replicas: 0`, `gracePeriodSeconds: 0`);
//! * a value field with `omitempty` is left out when zero; a value field without is always
//!   written; a value struct (`spec`, `status`, `resources`) is always written, `{}` at least;
//! * lists and maps are left out when empty, and so is any field whose JSON would be `null`
//!   (a zero `Time`; Go writes `null` there, or with `omitzero` nothing, and `null` for the few
//!   empty lists without `omitempty`: to a decoder null and absent are the same);
//! * embedded structs (`VolumeSource` in `Volume`, `LocalObjectReference` in the key selectors,
//!   `ProbeHandler` in `Probe`) are flattened into their parent;
//! * `Time` is RFC 3339 in seconds (`2006-01-02T15:04:05Z`), `MicroTime` in microseconds,
//!   `IntOrString` an int or a string, `Quantity` its string as sent (Go clients send the
//!   canonical form; it is not re-canonicalised here), bytes are standard base64, `FieldsV1` and
//!   `RawExtension` the JSON their raw bytes hold; strings that are not UTF-8 get U+FFFD, as Go's
//!   JSON encoder writes them.
//!
//! Decoding follows the Go code generated for these types: unknown fields are skipped, the last
//! value of a repeated singular field wins, repeated occurrences of a message field are merged,
//! repeated numbers are accepted packed or not. The envelope's contentType is ignored, as Go
//! does; a contentEncoding is refused. Anything malformed is an error, never a panic.
//!
//! The schema and the kinds that decode are generated (`schema.rs`, by `rtcd-apiserver-codegen`)
//! from `apiserver/codegen/api/kube-types.txt`, which records the Kubernetes API at a newer commit
//! than the k8s-pb crate's 1.35, so fields added in 1.36 and 1.37 decode. To add a kind, see that
//! file's header.

#[rustfmt::skip]
pub(crate) mod schema;
pub mod encode;
#[cfg(test)]
mod tests;

use base64::Engine as _;
use serde_json::{Map, Value};

use schema::KINDS;

/// The media type client-go sends.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The prefix of every Kubernetes protobuf body.
const MAGIC: &[u8; 4] = b"k8s\0";

/// Nesting deeper than this is refused. The schema has no cycles (the generator refuses them) and
/// its deepest nesting is 13 messages, so this is only a guard.
const MAX_DEPTH: usize = 64;

/// The apiVersion of a [`KINDS`] row that accepts any apiVersion: client-go encodes
/// `DeleteOptions` in the group version of the typed client sending it (`v1` from the core client,
/// as kubectl drain's pod deletes show; `apps/v1` and so on from the others).
const ANY_VERSION: &str = "*";

/// Why a protobuf body could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    #[error("the protobuf body is empty")]
    Empty,
    #[error("the body is not Kubernetes protobuf: it does not start with the prefix \"k8s\\x00\"")]
    NotProtobuf,
    #[error("the protobuf body does not name its {0}")]
    MissingTypeMeta(&'static str),
    #[error("protobuf bodies of kind {kind} in {api_version} are not supported (JSON bodies are)")]
    UnsupportedKind { api_version: String, kind: String },
    #[error("protobuf bodies with content encoding {0:?} are not supported")]
    UnsupportedEncoding(String),
    #[error("malformed protobuf in {message}: {reason}")]
    Malformed { message: &'static str, reason: &'static str },
    #[error("invalid {field} in {message}: {reason}")]
    Invalid { message: &'static str, field: &'static str, reason: String },
}

/// Decodes a protobuf body (the 4-byte magic `k8s\0` followed by a runtime.Unknown envelope
/// whose typeMeta names apiVersion/kind and whose raw bytes are the object's message) into the
/// object's JSON, as the same object would be written in JSON by kubectl, with apiVersion and
/// kind filled from the envelope.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    if body.is_empty() {
        return Err(ProtobufError::Empty);
    }
    let envelope = body.strip_prefix(MAGIC).ok_or(ProtobufError::NotProtobuf)?;
    if envelope.is_empty() {
        return Err(ProtobufError::Empty);
    }
    let unknown = Unknown::decode(envelope)?;
    if !unknown.content_encoding.is_empty() {
        return Err(ProtobufError::UnsupportedEncoding(unknown.content_encoding));
    }
    if unknown.kind.is_empty() {
        return Err(ProtobufError::MissingTypeMeta("kind"));
    }
    if unknown.api_version.is_empty() {
        return Err(ProtobufError::MissingTypeMeta("apiVersion"));
    }
    let message = KINDS
        .iter()
        .find(|(api_version, kind, _)| {
            (*api_version == unknown.api_version || *api_version == ANY_VERSION) && *kind == unknown.kind
        })
        .map(|(_, _, message)| *message)
        .ok_or_else(|| ProtobufError::UnsupportedKind {
            api_version: unknown.api_version.clone(),
            kind: unknown.kind.clone(),
        })?;
    let chunks: &[&[u8]] = match &unknown.raw {
        Some(raw) => &[raw],
        None => &[],
    };
    let mut object = decode_message(message, chunks, 0)?;
    object.insert("apiVersion".to_owned(), Value::String(unknown.api_version));
    object.insert("kind".to_owned(), Value::String(unknown.kind));
    Ok(Value::Object(object))
}

/// The runtime.Unknown envelope.
struct Unknown<'a> {
    api_version: String,
    kind: String,
    raw: Option<&'a [u8]>,
    content_encoding: String,
}

impl<'a> Unknown<'a> {
    const NAME: &'static str = "the runtime.Unknown envelope";

    fn decode(data: &'a [u8]) -> Result<Self, ProtobufError> {
        let malformed = |reason| ProtobufError::Malformed { message: Self::NAME, reason };
        let mut unknown = Unknown {
            api_version: String::new(),
            kind: String::new(),
            raw: None,
            content_encoding: String::new(),
        };
        let mut reader = Reader(data);
        while !reader.is_empty() {
            let (number, wire) = reader.key().map_err(malformed)?;
            match (number, wire) {
                (1, LEN) => {
                    // typeMeta; repeated occurrences merge
                    let [api_version, kind] =
                        scalars(reader.bytes().map_err(malformed)?, [(1, LEN), (2, LEN)]).map_err(
                            |reason| ProtobufError::Malformed { message: "the envelope's typeMeta", reason },
                        )?;
                    if let Some(Raw::Len(v)) = api_version {
                        unknown.api_version = String::from_utf8_lossy(v).into_owned();
                    }
                    if let Some(Raw::Len(v)) = kind {
                        unknown.kind = String::from_utf8_lossy(v).into_owned();
                    }
                }
                (2, LEN) => unknown.raw = Some(reader.bytes().map_err(malformed)?),
                (3, LEN) => {
                    unknown.content_encoding =
                        String::from_utf8_lossy(reader.bytes().map_err(malformed)?).into_owned()
                }
                (4, LEN) => reader.skip(LEN).map_err(malformed)?,
                (1..=4, _) => return Err(malformed("a field has the wrong wire type")),
                _ => reader.skip(wire).map_err(malformed)?,
            }
        }
        Ok(unknown)
    }
}

// ---------------------------------------------------------------------------------------------
// The schema's types (the generated tables in `schema` are made of these).

/// A protobuf message: its fields, in increasing field number.
pub(crate) struct Message {
    /// The full protobuf name, for errors.
    name: &'static str,
    fields: &'static [Field],
}

/// One field of a message.
pub(crate) struct Field {
    number: u32,
    /// Its JSON name; empty for an embedded struct whose fields are flattened into the parent.
    json: &'static str,
    /// Its type, or for a map the type of its values (keys are strings).
    ty: Type,
    card: Card,
    presence: Presence,
}

/// A field's type.
#[derive(Clone, Copy)]
pub(crate) enum Type {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    Message(&'static Message),
    /// meta/v1 Time: seconds (nanos are dropped, as Go does), RFC 3339 in seconds.
    Time,
    /// meta/v1 MicroTime: RFC 3339 in microseconds.
    MicroTime,
    /// meta/v1 FieldsV1: its raw bytes are JSON.
    FieldsV1,
    /// util/intstr IntOrString: an int or a string.
    IntOrString,
    /// api/resource Quantity: its string.
    Quantity,
    /// runtime RawExtension: its raw bytes are an object's JSON (ControllerRevision's `data`).
    RawExtension,
}

/// Single, list or map.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Card {
    Single,
    Repeated,
    Map,
}

/// When a single field is written to JSON (lists and maps: when not empty).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    /// A Go pointer: written when the protobuf has it, whatever its value.
    Pointer,
    /// A Go value with `omitempty`: written when not zero.
    OmitEmpty,
    /// A Go value without `omitempty`, or a struct: always written (zero when absent), unless
    /// its JSON is `null`.
    Always,
    /// An embedded Go struct: its fields are written into the parent object.
    Inline,
}

// ---------------------------------------------------------------------------------------------
// Wire format.

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// A field's value as read from the wire.
#[derive(Clone, Copy)]
enum Raw<'a> {
    Varint(u64),
    Len(&'a [u8]),
}

/// Reads protobuf wire data; every read checks its bounds.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn varint(&mut self) -> Result<u64, &'static str> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.0.split_first().ok_or("unexpected end of data")?;
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err("a varint is longer than 10 bytes")
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        if n > self.0.len() {
            return Err("unexpected end of data");
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn bytes(&mut self) -> Result<&'a [u8], &'static str> {
        let len = self.varint()?;
        self.take(usize::try_from(len).map_err(|_| "a length is too large")?)
    }

    /// A field's number and wire type.
    fn key(&mut self) -> Result<(u64, u8), &'static str> {
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err("invalid field number");
        }
        Ok((number, (key & 7) as u8))
    }

    fn skip(&mut self, wire: u8) -> Result<(), &'static str> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.take(4).map(drop),
            3 | 4 => Err("protobuf groups are not supported"),
            _ => Err("invalid wire type"),
        }
    }

    /// A field's value; the caller has checked that `wire` is varint or length-delimited.
    fn value(&mut self, wire: u8) -> Result<Raw<'a>, &'static str> {
        match wire {
            VARINT => self.varint().map(Raw::Varint),
            _ => self.bytes().map(Raw::Len),
        }
    }
}

/// The last value of each of the given (number, wire type) fields of a small message; other
/// fields are skipped.
fn scalars<const N: usize>(
    data: &[u8],
    wanted: [(u64, u8); N],
) -> Result<[Option<Raw<'_>>; N], &'static str> {
    let mut out = [None; N];
    let mut reader = Reader(data);
    while !reader.is_empty() {
        let (number, wire) = reader.key()?;
        match wanted.iter().position(|(n, _)| *n == number) {
            Some(i) if wanted[i].1 == wire => out[i] = Some(reader.value(wire)?),
            Some(_) => return Err("a field has the wrong wire type"),
            None => reader.skip(wire)?,
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Messages to JSON.

/// What was read for one field of a message.
#[derive(Default)]
struct Slot<'a> {
    /// Single fields: every occurrence (a message's merge; a scalar's last wins). Lists: every
    /// element. Maps: every entry.
    values: Vec<Raw<'a>>,
}

fn wire_of(ty: Type) -> u8 {
    match ty {
        Type::Bool | Type::Int32 | Type::Int64 => VARINT,
        _ => LEN,
    }
}

/// Decodes a message, given as the chunks whose concatenation is its encoding (a message field
/// that occurs more than once is the merge of its occurrences), into its JSON object.
fn decode_message(
    message: &'static Message,
    chunks: &[&[u8]],
    depth: usize,
) -> Result<Map<String, Value>, ProtobufError> {
    let malformed = |reason| ProtobufError::Malformed { message: message.name, reason };
    if depth > MAX_DEPTH {
        return Err(malformed("messages nested too deeply"));
    }
    let mut slots: Vec<Slot<'_>> = message.fields.iter().map(|_| Slot::default()).collect();
    for chunk in chunks {
        let mut reader = Reader(chunk);
        while !reader.is_empty() {
            let (number, wire) = reader.key().map_err(malformed)?;
            let Ok(index) = message.fields.binary_search_by_key(&number, |f| u64::from(f.number)) else {
                reader.skip(wire).map_err(malformed)?;
                continue;
            };
            let (field, slot) = (&message.fields[index], &mut slots[index]);
            let expected = if field.card == Card::Map { LEN } else { wire_of(field.ty) };
            if wire == expected {
                slot.values.push(reader.value(wire).map_err(malformed)?);
            } else if wire == LEN && field.card == Card::Repeated && expected == VARINT {
                // packed repeated numbers
                let mut packed = Reader(reader.bytes().map_err(malformed)?);
                while !packed.is_empty() {
                    slot.values.push(Raw::Varint(packed.varint().map_err(malformed)?));
                }
            } else {
                return Err(malformed("a field has the wrong wire type"));
            }
        }
    }

    let mut out = Map::new();
    for (field, slot) in message.fields.iter().zip(&slots) {
        let value = match field.card {
            Card::Repeated => {
                if slot.values.is_empty() {
                    continue;
                }
                let items =
                    slot.values.iter().map(|raw| to_json(message, field, field.ty, Some(*raw), depth));
                Value::Array(items.collect::<Result<_, _>>()?)
            }
            Card::Map => {
                if slot.values.is_empty() {
                    continue;
                }
                let mut map = Map::new();
                for raw in &slot.values {
                    let Raw::Len(entry) = raw else { continue };
                    let wanted = [(1, LEN), (2, wire_of(field.ty))];
                    let [key, value] = scalars(entry, wanted).map_err(malformed)?;
                    let key = match key {
                        Some(Raw::Len(key)) => String::from_utf8_lossy(key).into_owned(),
                        _ => String::new(),
                    };
                    let value = match (value, field.ty) {
                        // an entry without its value: "" rather than Go's null for bytes
                        (None, Type::Bytes) => Value::String(String::new()),
                        _ => to_json(message, field, field.ty, value, depth)?,
                    };
                    map.insert(key, value);
                }
                Value::Object(map)
            }
            Card::Single => match field.ty {
                Type::Message(inner) => {
                    if field.presence == Presence::Pointer && slot.values.is_empty() {
                        continue;
                    }
                    let chunks: Vec<&[u8]> = slot
                        .values
                        .iter()
                        .filter_map(|raw| if let Raw::Len(b) = raw { Some(*b) } else { None })
                        .collect();
                    let object = decode_message(inner, &chunks, depth + 1)?;
                    if field.presence == Presence::Inline {
                        out.extend(object);
                        continue;
                    }
                    Value::Object(object)
                }
                ty => {
                    let last = slot.values.last().copied();
                    match field.presence {
                        Presence::Pointer if last.is_none() => continue,
                        Presence::Always if last.is_none() && matches!(ty, Type::Bytes) => continue,
                        _ => {}
                    }
                    // IntOrString, FieldsV1 and RawExtension are ordinary messages in Go: repeated
                    // occurrences merge, which is decoding their concatenation. Time, MicroTime and
                    // Quantity decode each occurrence afresh: the last one wins, as for scalars.
                    let merged: Vec<u8>;
                    let last = match ty {
                        Type::IntOrString | Type::FieldsV1 | Type::RawExtension if slot.values.len() > 1 => {
                            merged = slot
                                .values
                                .iter()
                                .flat_map(|raw| if let Raw::Len(b) = raw { *b } else { &[] })
                                .copied()
                                .collect();
                            Some(Raw::Len(&merged))
                        }
                        _ => last,
                    };
                    let value = to_json(message, field, ty, last, depth)?;
                    if field.presence == Presence::OmitEmpty && is_zero(&value) {
                        continue;
                    }
                    value
                }
            },
        };
        if !value.is_null() {
            out.insert(field.json.to_owned(), value);
        }
    }
    Ok(out)
}

/// Go's zero values, as `omitempty` sees them.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// One value of a field (a single field's last value, a list element, a map value), or the
/// zero value of its type when absent.
fn to_json(
    message: &'static Message,
    field: &'static Field,
    ty: Type,
    raw: Option<Raw<'_>>,
    depth: usize,
) -> Result<Value, ProtobufError> {
    let invalid =
        |reason: String| ProtobufError::Invalid { message: message.name, field: field.json, reason };
    let bytes = match raw {
        Some(Raw::Len(bytes)) => Some(bytes),
        _ => None,
    };
    let number = match raw {
        Some(Raw::Varint(n)) => n,
        _ => 0,
    };
    Ok(match ty {
        Type::String => Value::String(String::from_utf8_lossy(bytes.unwrap_or_default()).into_owned()),
        Type::Bytes => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes.unwrap_or_default()))
        }
        Type::Bool => Value::Bool(number != 0),
        // Go converts the varint to the field's type, dropping the high bits
        Type::Int32 => Value::from(number as i32),
        Type::Int64 => Value::from(number as i64),
        Type::Message(inner) => Value::Object(decode_message(inner, bytes.as_slice(), depth + 1)?),
        Type::Time => time(bytes, false).map_err(invalid)?,
        Type::MicroTime => time(bytes, true).map_err(invalid)?,
        Type::FieldsV1 => fields_v1(bytes).map_err(invalid)?,
        Type::IntOrString => int_or_string(bytes).map_err(invalid)?,
        Type::Quantity => quantity(bytes).map_err(invalid)?,
        Type::RawExtension => raw_extension(bytes).map_err(invalid)?,
    })
}

// ---------------------------------------------------------------------------------------------
// Types with their own JSON form.

/// meta/v1 Time or MicroTime {seconds = 1, nanos = 2}: an empty message is the zero time, which
/// Go writes as null. Time drops the nanoseconds; MicroTime truncates them to microseconds.
fn time(data: Option<&[u8]>, micro: bool) -> Result<Value, String> {
    let Some(data) = data.filter(|d| !d.is_empty()) else {
        return Ok(Value::Null);
    };
    let [seconds, nanos] = scalars(data, [(1, VARINT), (2, VARINT)]).map_err(str::to_owned)?;
    let seconds = match seconds {
        Some(Raw::Varint(s)) => s as i64,
        _ => 0,
    };
    let nanos = match nanos {
        Some(Raw::Varint(n)) if micro => i64::from(n as i32),
        _ => 0,
    };
    // time.Unix(seconds, nanos truncated to microseconds), normalised
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos - nanos % 1000);
    let (seconds, micros) = (total.div_euclid(1_000_000_000), total.rem_euclid(1_000_000_000) / 1000);
    // Go's zero time, 0001-01-01T00:00:00Z, is written as null
    if seconds == -62_135_596_800 && micros == 0 {
        return Ok(Value::Null);
    }
    let out_of_range = || format!("time {seconds}s since 1970 is outside years 0-9999");
    let seconds = i64::try_from(seconds).map_err(|_| out_of_range())?;
    // A civil (UTC) date-time: jiff's Timestamp stops a day short of the
    // end of year 9999, which Go still writes.
    let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
    let span = jiff::Span::new().try_seconds(seconds).map_err(|_| out_of_range())?;
    let time = epoch.checked_add(span).map_err(|_| out_of_range())?;
    if !(0..=9999).contains(&time.year()) {
        return Err(out_of_range());
    }
    let whole = time.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(Value::String(if micro { format!("{whole}.{micros:06}Z") } else { format!("{whole}Z") }))
}

/// util/intstr IntOrString {type = 1, intVal = 2, strVal = 3}: type 0 is the int, 1 the string.
fn int_or_string(data: Option<&[u8]>) -> Result<Value, String> {
    let [ty, int_val, str_val] =
        scalars(data.unwrap_or_default(), [(1, VARINT), (2, VARINT), (3, LEN)]).map_err(str::to_owned)?;
    match ty {
        None | Some(Raw::Varint(0)) => Ok(Value::from(match int_val {
            Some(Raw::Varint(n)) => n as i32,
            _ => 0,
        })),
        Some(Raw::Varint(1)) => Ok(Value::String(match str_val {
            Some(Raw::Len(s)) => String::from_utf8_lossy(s).into_owned(),
            _ => String::new(),
        })),
        _ => Err("IntOrString has a type that is neither int (0) nor string (1)".to_owned()),
    }
}

/// api/resource Quantity {string = 1}: without its string it is Go's zero quantity, "0". The
/// string is passed on as sent (Go clients send the canonical form).
fn quantity(data: Option<&[u8]>) -> Result<Value, String> {
    let [string] = scalars(data.unwrap_or_default(), [(1, LEN)]).map_err(str::to_owned)?;
    match string {
        None => Ok(Value::String("0".to_owned())),
        Some(Raw::Len([])) => Err("a quantity is empty".to_owned()),
        Some(Raw::Len(s)) => Ok(Value::String(String::from_utf8_lossy(s).into_owned())),
        Some(Raw::Varint(_)) => Err("a quantity is not a string".to_owned()),
    }
}

/// meta/v1 FieldsV1 {raw = 1}: the raw bytes are the JSON; none is null.
fn fields_v1(data: Option<&[u8]>) -> Result<Value, String> {
    let [raw] = scalars(data.unwrap_or_default(), [(1, LEN)]).map_err(str::to_owned)?;
    match raw {
        Some(Raw::Len(raw)) if !raw.is_empty() => serde_json::from_slice(raw)
            .map_err(|e| format!("fieldsV1 is not JSON (only JSON managed fields are supported): {e}")),
        _ => Ok(Value::Null),
    }
}

/// runtime RawExtension {raw = 1}: Go writes the raw bytes as they are, which for an object a
/// client sends (the patch a ControllerRevision's `data` holds) is its JSON; none is null. Bytes
/// that are not JSON (an object in protobuf) are an error.
fn raw_extension(data: Option<&[u8]>) -> Result<Value, String> {
    let [raw] = scalars(data.unwrap_or_default(), [(1, LEN)]).map_err(str::to_owned)?;
    match raw {
        Some(Raw::Len(raw)) if !raw.is_empty() => serde_json::from_slice(raw)
            .map_err(|e| format!("the raw extension is not JSON (only JSON objects are supported): {e}")),
        _ => Ok(Value::Null),
    }
}
