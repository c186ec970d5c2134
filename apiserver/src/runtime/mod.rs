//! Objects as JSON values: reading and writing their metadata (`meta`) and
//! status conditions (`conditions`),
//! decoding request bodies into a kind's type (`decode`), resource
//! quantities (`quantity`), values as Go prints them (`golang`), the JSONPath of printer columns (`jsonpath`), schema patterns (`pattern`),
//! answers in kube's field order (`json_order`), a read-only view over an
//! `openAPIV3Schema` node (`schema_view`). Protobuf bodies are in `crate::protobuf`.

pub mod conditions;
pub mod decode;
pub mod golang;
pub mod ip;
pub mod json_order;
pub mod jsonpath;
pub mod meta;
pub mod pattern;
pub mod quantity;
pub mod schema_view;

pub use decode::{Expected, FieldValidation};
