//! Objects as JSON values: reading and writing their metadata (`meta`) and
//! decoding request bodies into a kind's type (`decode`), resource
//! quantities (`quantity`), the JSONPath of printer columns (`jsonpath`), schema patterns (`pattern`). Protobuf bodies
//! are in `crate::protobuf`.

pub mod decode;
pub mod jsonpath;
pub mod meta;
pub mod pattern;
pub mod quantity;

pub use decode::{Expected, FieldValidation};
