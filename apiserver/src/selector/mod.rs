//! Label and field selectors from list and watch query parameters
//! (`?labelSelector=…`, `?fieldSelector=…`).
//!
//! Both follow kube-apiserver's grammar, its per-resource field labels and its
//! error texts (`object`: the structured `metav1.LabelSelector` of
//! objects such as webhook configurations), so clients (kubectl, client-go informers) get the same 400s
//! and the same objects back as from the real server.

mod fields;
mod labels;
pub mod object;

pub use fields::{FieldLabels, FieldSelector, FieldSet, Refusal};

/// Helpers for kinds' field values, rendered as kube renders them.
pub mod attrs {
    pub use super::fields::{boolean, integer, text};
}
pub use labels::{LabelSelector, LabelSet, Labels};

/// kube's label key (qualified name) and label value checks, shared with
/// object metadata validation so both refuse with the same texts.
pub mod validation {
    pub use super::go_quote;
    pub use super::labels::{label_value_errors, qualified_name_errors};
}

/// Why a selector was refused; every variant is a 400 Bad Request whose
/// message (`Display`) is the one kube-apiserver sends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// `labelSelector` does not parse, or names an invalid key or value.
    #[error("{0}")]
    Label(String),
    /// `fieldSelector` does not parse (a term without operator, a bad escape).
    #[error("{0}")]
    Field(String),
    /// A field label the resource does not let clients select on.
    #[error("{message}")]
    UnsupportedField { label: String, message: String },
}

/// Go's `%q`: kube quotes bad values this way inside its messages.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
