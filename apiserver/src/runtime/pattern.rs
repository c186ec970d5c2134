//! The `pattern` of an OpenAPI schema (RE2 syntax, as Go's regexp reads
//! it), compiled within a bounded size: a CRD's checks and its objects'
//! validation compile with the same bound, so a pattern a CRD was stored
//! with always compiles when its objects are checked.

use regex::{Regex, RegexBuilder};

pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).size_limit(1 << 20).build()
}
