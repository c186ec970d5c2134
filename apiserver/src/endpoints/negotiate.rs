//! What a client's `Accept` header asks for: the shape of the answer (the objects themselves, a
//! Table of them, or only their metadata) and its encoding (JSON or Kubernetes protobuf).
//!
//! As kube's negotiation, the media ranges are tried in the client's order of preference (by
//! `q`, then as written) and the first one rtcd can serve wins; so client-go's
//! `application/vnd.kubernetes.protobuf, application/json` gets protobuf, and kubectl's
//! `application/json;as=Table;v=v1;g=meta.k8s.io, application/json` a Table. Tables are JSON only
//! (kube's Table has no protobuf form), so a protobuf Table range is passed over. A header that
//! names nothing rtcd serves gets JSON objects.

use crate::errors::ApiError;

/// How the client wants objects: as themselves, as a Table, or as their metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Object,
    /// `includeObject`: None, Metadata (default) or Object.
    Table(IncludeObject),
    /// `as=PartialObjectMetadata` (a list: `PartialObjectMetadataList`): kind, apiVersion and
    /// metadata only, what metadata informers (kube's garbage collector) read.
    Metadata,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

/// How the answer's bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    /// `application/vnd.kubernetes.protobuf`; answers whose kind has no protobuf message (custom
    /// resources) are written in JSON.
    Protobuf,
}

/// The shape and encoding an `Accept` header asks for.
pub fn negotiate(accept: &str, include_object: Option<&str>) -> Result<(Shape, Encoding), ApiError> {
    for range in &ranked(accept) {
        let Some(encoding) = range.encoding() else { continue };
        match (range.wants(), encoding) {
            (Some(As::Table), Encoding::Json) => {
                return Ok((Shape::Table(include(include_object)?), encoding));
            }
            (Some(As::Table), Encoding::Protobuf) | (Some(As::Unknown), _) => continue,
            (Some(As::Metadata), _) => return Ok((Shape::Metadata, encoding)),
            (None, _) => return Ok((Shape::Object, encoding)),
        }
    }
    Ok((Shape::Object, Encoding::Json))
}

/// The media types (`type/subtype`, lowercase, parameters dropped) an `Accept` header names,
/// most preferred first; `*/*` when it names none.
pub fn preferred_media_types(accept: &str) -> Vec<String> {
    let types: Vec<String> =
        ranked(accept).into_iter().map(|range| range.media_type).filter(|t| !t.is_empty()).collect();
    if types.is_empty() { vec!["*/*".to_string()] } else { types }
}

/// The header's media ranges by the client's preference: by `q` (refused ones, `q=0` or not a
/// number, left out), equal preferences in the client's order.
fn ranked(accept: &str) -> Vec<MediaRange<'_>> {
    let mut ranges: Vec<(f32, MediaRange<'_>)> = accept
        .split(',')
        .map(MediaRange::parse)
        .filter_map(|range| Some((range.quality()?, range)))
        .filter(|(q, _)| *q > 0.0)
        .collect();
    // stable: equal preferences keep the client's order
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranges.into_iter().map(|(_, range)| range).collect()
}

fn include(include_object: Option<&str>) -> Result<IncludeObject, ApiError> {
    match include_object {
        None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
        Some("None") => Ok(IncludeObject::None),
        Some("Object") => Ok(IncludeObject::Object),
        Some(other) => Err(ApiError::BadRequest(format!(
            "includeObject: Unsupported value: \"{other}\": supported values: \"Metadata\", \"None\", \"Object\""
        ))),
    }
}

/// One media range of an `Accept` header: `type/subtype;param=value;...`.
struct MediaRange<'a> {
    media_type: String,
    params: Vec<(String, &'a str)>,
}

/// What a range's `as=` parameter converts objects to.
enum As {
    Table,
    Metadata,
    Unknown,
}

impl<'a> MediaRange<'a> {
    fn parse(text: &'a str) -> MediaRange<'a> {
        let mut parts = text.split(';').map(str::trim);
        let media_type = parts.next().unwrap_or_default().to_ascii_lowercase();
        let params = parts
            .filter_map(|param| param.split_once('='))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().trim_matches('"')))
            .collect();
        MediaRange { media_type, params }
    }

    fn param(&self, name: &str) -> Option<&'a str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// `q`, 1 when absent; None when it is not a number.
    fn quality(&self) -> Option<f32> {
        match self.param("q") {
            None => Some(1.0),
            Some(q) => q.parse().ok(),
        }
    }

    fn encoding(&self) -> Option<Encoding> {
        match self.media_type.as_str() {
            "application/json" | "application/*" | "*/*" | "" => Some(Encoding::Json),
            crate::protobuf::PROTOBUF => Some(Encoding::Protobuf),
            _ => None,
        }
    }

    fn wants(&self) -> Option<As> {
        let target = self.param("as")?;
        if self.param("g") != Some("meta.k8s.io") {
            return Some(As::Unknown);
        }
        Some(match target {
            "Table" => As::Table,
            "PartialObjectMetadata" | "PartialObjectMetadataList" => As::Metadata,
            _ => As::Unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn got(accept: &str) -> (Shape, Encoding) {
        negotiate(accept, None).unwrap()
    }

    #[test]
    fn client_go_gets_protobuf_and_kubectl_a_table() {
        let protobuf = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(got(protobuf), (Shape::Object, Encoding::Protobuf));
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(got(kubectl), (Shape::Table(IncludeObject::Metadata), Encoding::Json));
        assert_eq!(got(""), (Shape::Object, Encoding::Json));
        assert_eq!(got("*/*"), (Shape::Object, Encoding::Json));
    }

    #[test]
    fn preference_and_fallbacks() {
        // q orders; equal q keeps the client's order
        assert_eq!(got("application/json;q=0.5, application/vnd.kubernetes.protobuf").1, Encoding::Protobuf);
        assert_eq!(got("application/json, application/vnd.kubernetes.protobuf").1, Encoding::Json);
        // no protobuf Table: the next range serves
        let table_pb = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json";
        assert_eq!(got(table_pb), (Shape::Object, Encoding::Json));
        // what metadata informers send
        let metadata = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(got(metadata), (Shape::Metadata, Encoding::Protobuf));
        // a conversion rtcd does not know is passed over
        assert_eq!(got("application/json;as=Other;g=x.io, application/yaml, */*").0, Shape::Object);
    }

    #[test]
    fn a_bad_include_object_is_refused_with_kubes_text() {
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
        let err = negotiate(table, Some("Everything")).unwrap_err();
        assert!(err.to_string().contains("supported values: \"Metadata\", \"None\", \"Object\""), "{err}");
    }
}
