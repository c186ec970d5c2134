//! The Swagger 2.0 document in protobuf: gnostic's `openapi.v2.Document` (google/gnostic-models,
//! `openapiv2/OpenAPIv2.proto`), which client-go asks `/openapi/v2` for
//! (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) and decodes with
//! `proto.Unmarshal`.
//!
//! kube-openapi makes these bytes by parsing the JSON document with gnostic and marshalling the
//! result; this module does the same walk over the JSON: map entries in the JSON's order, `x-`
//! keys into `vendor_extension`, values gnostic keeps as YAML (extensions, defaults, enums,
//! examples) as their JSON text (which is YAML). Only the messages and fields the document
//! uses are declared; their numbers are the .proto's.

use prost::Message as _;
use serde_json::{Map, Value};

/// The protobuf bytes of `swagger` (a document made by [`super::document`]).
pub fn encode(swagger: &Value) -> Vec<u8> {
    document(swagger).encode_to_vec()
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, optional, tag = "13")]
    pub security_definitions: Option<SecurityDefinitions>,
    #[prost(message, repeated, tag = "16")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub description: String,
}

/// A value gnostic keeps as YAML text (`google.protobuf.Any value = 1` is never set).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    #[prost(string, tag = "2")]
    pub yaml: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedAny {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PathItem {
    #[prost(string, tag = "1")]
    pub r#ref: String,
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `ParametersItem { oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ParametersItem {
    #[prost(oneof = "ParametersItemOneof", tags = "1, 2")]
    pub oneof: Option<ParametersItemOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParametersItemOneof {
    #[prost(message, tag = "1")]
    Parameter(Box<Parameter>),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct JsonReference {
    #[prost(string, tag = "1")]
    pub r#ref: String,
    #[prost(string, tag = "2")]
    pub description: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Parameter {
    #[prost(oneof = "ParameterOneof", tags = "1, 2")]
    pub oneof: Option<ParameterOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParameterOneof {
    #[prost(message, tag = "1")]
    BodyParameter(Box<BodyParameter>),
    #[prost(message, tag = "2")]
    NonBodyParameter(NonBodyParameter),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// By `in`: header and path parameters share one numbering, query and formData another.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NonBodyParameter {
    #[prost(oneof = "NonBodyParameterOneof", tags = "1, 2, 3, 4")]
    pub oneof: Option<NonBodyParameterOneof>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum NonBodyParameterOneof {
    #[prost(message, tag = "1")]
    Header(PathOrHeaderParameter),
    #[prost(message, tag = "2")]
    FormData(QueryOrFormParameter),
    #[prost(message, tag = "3")]
    Query(QueryOrFormParameter),
    #[prost(message, tag = "4")]
    Path(PathOrHeaderParameter),
}

/// `QueryParameterSubSchema` / `FormDataParameterSubSchema` (the fields the document uses).
#[derive(Clone, PartialEq, prost::Message)]
pub struct QueryOrFormParameter {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(bool, tag = "5")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(string, tag = "7")]
    pub format: String,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "21")]
    pub r#enum: Vec<Any>,
    #[prost(message, repeated, tag = "23")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `PathParameterSubSchema` / `HeaderParameterSubSchema` (the fields the document uses).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PathOrHeaderParameter {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub r#type: String,
    #[prost(string, tag = "6")]
    pub format: String,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(message, repeated, tag = "22")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
    #[prost(message, repeated, tag = "2")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedResponseValue {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

/// `ResponseValue { oneof { Response response = 1; JsonReference json_reference = 2; } }`:
/// the document has only responses.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseValue {
    #[prost(message, optional, tag = "1")]
    pub response: Option<Response>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `SchemaItem { oneof { Schema schema = 1; FileSchema file_schema = 2; } }`: no file
/// responses here.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchemaItem {
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    #[prost(string, tag = "1")]
    pub r#ref: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(string, tag = "3")]
    pub title: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    #[prost(double, tag = "7")]
    pub maximum: f64,
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "9")]
    pub minimum: f64,
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    #[prost(string, tag = "13")]
    pub pattern: String,
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(message, optional, boxed, tag = "21")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    #[prost(string, tag = "26")]
    pub discriminator: String,
    #[prost(bool, tag = "27")]
    pub read_only: bool,
    #[prost(message, optional, tag = "30")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct AdditionalPropertiesItem {
    #[prost(oneof = "AdditionalProperties", tags = "1, 2")]
    pub oneof: Option<AdditionalProperties>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AdditionalProperties {
    #[prost(message, tag = "1")]
    Schema(Box<Schema>),
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeItem {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Properties {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSchema {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Definitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityRequirement {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedStringArray>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedStringArray {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<StringArray>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSecurityDefinitionsItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<SecurityDefinitionsItem>,
}

/// `SecurityDefinitionsItem`'s oneof: the document has only API-key schemes (field 2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitionsItem {
    #[prost(message, optional, tag = "2")]
    pub api_key_security: Option<ApiKeySecurity>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ApiKeySecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(string, tag = "4")]
    pub description: String,
}

// ---- From the JSON document ----

fn document(v: &Value) -> Document {
    Document {
        swagger: string(v, "swagger"),
        info: v.get("info").map(|info| Info {
            title: string(info, "title"),
            version: string(info, "version"),
            description: string(info, "description"),
        }),
        paths: v.get("paths").map(paths),
        definitions: v.get("definitions").map(|d| Definitions { additional_properties: named_schemas(d) }),
        security: array(v, "security").map(security_requirement).collect(),
        security_definitions: v.get("securityDefinitions").map(security_definitions),
        vendor_extension: extensions(v),
    }
}

fn paths(v: &Value) -> Paths {
    Paths {
        vendor_extension: extensions(v),
        path: entries(v)
            .filter(|(name, _)| name.starts_with('/'))
            .map(|(name, item)| NamedPathItem { name: name.clone(), value: Some(path_item(item)) })
            .collect(),
    }
}

fn path_item(v: &Value) -> PathItem {
    let op = |method: &str| v.get(method).map(operation);
    PathItem {
        r#ref: string(v, "$ref"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: array(v, "parameters").map(parameters_item).collect(),
        vendor_extension: extensions(v),
    }
}

fn operation(v: &Value) -> Operation {
    Operation {
        tags: strings(v, "tags"),
        summary: string(v, "summary"),
        description: string(v, "description"),
        operation_id: string(v, "operationId"),
        produces: strings(v, "produces"),
        consumes: strings(v, "consumes"),
        parameters: array(v, "parameters").map(parameters_item).collect(),
        responses: v.get("responses").map(responses),
        schemes: strings(v, "schemes"),
        deprecated: boolean(v, "deprecated"),
        vendor_extension: extensions(v),
    }
}

fn parameters_item(v: &Value) -> ParametersItem {
    let oneof = if v.get("$ref").is_some() {
        ParametersItemOneof::JsonReference(JsonReference {
            r#ref: string(v, "$ref"),
            description: string(v, "description"),
        })
    } else {
        ParametersItemOneof::Parameter(Box::new(parameter(v)))
    };
    ParametersItem { oneof: Some(oneof) }
}

fn parameter(v: &Value) -> Parameter {
    let location = string(v, "in");
    let oneof = match location.as_str() {
        "body" => ParameterOneof::BodyParameter(Box::new(BodyParameter {
            description: string(v, "description"),
            name: string(v, "name"),
            r#in: location,
            required: boolean(v, "required"),
            schema: v.get("schema").map(schema),
            vendor_extension: extensions(v),
        })),
        "query" | "formData" => {
            let sub = QueryOrFormParameter {
                required: boolean(v, "required"),
                description: string(v, "description"),
                name: string(v, "name"),
                allow_empty_value: boolean(v, "allowEmptyValue"),
                r#type: string(v, "type"),
                format: string(v, "format"),
                unique_items: boolean(v, "uniqueItems"),
                r#enum: array(v, "enum").map(any).collect(),
                vendor_extension: extensions(v),
                r#in: location,
            };
            ParameterOneof::NonBodyParameter(NonBodyParameter {
                oneof: Some(if sub.r#in == "query" {
                    NonBodyParameterOneof::Query(sub)
                } else {
                    NonBodyParameterOneof::FormData(sub)
                }),
            })
        }
        _ => {
            let sub = PathOrHeaderParameter {
                required: boolean(v, "required"),
                description: string(v, "description"),
                name: string(v, "name"),
                r#type: string(v, "type"),
                format: string(v, "format"),
                unique_items: boolean(v, "uniqueItems"),
                r#enum: array(v, "enum").map(any).collect(),
                vendor_extension: extensions(v),
                r#in: location,
            };
            ParameterOneof::NonBodyParameter(NonBodyParameter {
                oneof: Some(if sub.r#in == "header" {
                    NonBodyParameterOneof::Header(sub)
                } else {
                    NonBodyParameterOneof::Path(sub)
                }),
            })
        }
    };
    Parameter { oneof: Some(oneof) }
}

fn responses(v: &Value) -> Responses {
    Responses {
        response_code: entries(v)
            .filter(|(code, _)| !code.starts_with("x-"))
            .map(|(code, response)| NamedResponseValue {
                name: code.clone(),
                value: Some(ResponseValue {
                    response: Some(Response {
                        description: string(response, "description"),
                        schema: response.get("schema").map(|s| SchemaItem { schema: Some(schema(s)) }),
                        vendor_extension: extensions(response),
                    }),
                }),
            })
            .collect(),
        vendor_extension: extensions(v),
    }
}

fn schema(v: &Value) -> Schema {
    Schema {
        r#ref: string(v, "$ref"),
        format: string(v, "format"),
        title: string(v, "title"),
        description: string(v, "description"),
        default: v.get("default").map(any),
        multiple_of: number(v, "multipleOf"),
        maximum: number(v, "maximum"),
        exclusive_maximum: boolean(v, "exclusiveMaximum"),
        minimum: number(v, "minimum"),
        exclusive_minimum: boolean(v, "exclusiveMinimum"),
        max_length: integer(v, "maxLength"),
        min_length: integer(v, "minLength"),
        pattern: string(v, "pattern"),
        max_items: integer(v, "maxItems"),
        min_items: integer(v, "minItems"),
        unique_items: boolean(v, "uniqueItems"),
        max_properties: integer(v, "maxProperties"),
        min_properties: integer(v, "minProperties"),
        required: strings(v, "required"),
        r#enum: array(v, "enum").map(any).collect(),
        additional_properties: v.get("additionalProperties").map(|extra| {
            let oneof = match extra {
                Value::Bool(allowed) => AdditionalProperties::Boolean(*allowed),
                other => AdditionalProperties::Schema(Box::new(schema(other))),
            };
            Box::new(AdditionalPropertiesItem { oneof: Some(oneof) })
        }),
        r#type: v.get("type").map(|t| TypeItem {
            value: match t {
                Value::Array(types) => types.iter().filter_map(Value::as_str).map(str::to_string).collect(),
                other => other.as_str().map(str::to_string).into_iter().collect(),
            },
        }),
        items: v.get("items").map(|items| ItemsItem {
            schema: match items {
                Value::Array(each) => each.iter().map(schema).collect(),
                one => vec![schema(one)],
            },
        }),
        all_of: array(v, "allOf").map(schema).collect(),
        properties: v.get("properties").map(|p| Properties { additional_properties: named_schemas(p) }),
        discriminator: string(v, "discriminator"),
        read_only: boolean(v, "readOnly"),
        example: v.get("example").map(any),
        vendor_extension: extensions(v),
    }
}

fn named_schemas(v: &Value) -> Vec<NamedSchema> {
    entries(v).map(|(name, s)| NamedSchema { name: name.clone(), value: Some(schema(s)) }).collect()
}

fn security_requirement(v: &Value) -> SecurityRequirement {
    SecurityRequirement {
        additional_properties: entries(v)
            .map(|(name, scopes)| NamedStringArray {
                name: name.clone(),
                value: Some(StringArray {
                    value: scopes
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                }),
            })
            .collect(),
    }
}

fn security_definitions(v: &Value) -> SecurityDefinitions {
    SecurityDefinitions {
        additional_properties: entries(v)
            .map(|(name, scheme)| NamedSecurityDefinitionsItem {
                name: name.clone(),
                value: Some(SecurityDefinitionsItem {
                    api_key_security: Some(ApiKeySecurity {
                        r#type: string(scheme, "type"),
                        name: string(scheme, "name"),
                        r#in: string(scheme, "in"),
                        description: string(scheme, "description"),
                    }),
                }),
            })
            .collect(),
    }
}

/// The object's `x-` keys, as gnostic keeps them.
fn extensions(v: &Value) -> Vec<NamedAny> {
    entries(v)
        .filter(|(key, _)| key.starts_with("x-"))
        .map(|(key, value)| NamedAny { name: key.clone(), value: Some(any(value)) })
        .collect()
}

/// A value as YAML text: its compact JSON, which every YAML parser reads back the same.
fn any(v: &Value) -> Any {
    Any { yaml: serde_json::to_string(v).unwrap_or_default() }
}

fn entries(v: &Value) -> impl Iterator<Item = (&String, &Value)> {
    v.as_object().into_iter().flat_map(Map::iter)
}

fn array<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn string(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    array(v, key).filter_map(Value::as_str).map(str::to_string).collect()
}

fn boolean(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn number(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn integer(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}
