//! Regular expressions in RE2 syntax, as Go's regexp reads them (schema
//! `pattern`s, CEL's `matches`), compiled within a bounded size: a CRD's
//! checks and its objects' validation compile with the same bound, so a
//! pattern a CRD was stored with always compiles when its objects are
//! checked.
//!
//! Go's Perl classes are ASCII (`\d` is `[0-9]`, `\w` `[0-9A-Za-z_]`, `\s`
//! `[\t\n\f\r ]`); the regex crate's are Unicode, hundreds of times larger
//! once compiled (`(\w\d){200}` passes the size bound) and matching more.
//! They are spelled out as Go reads them before compiling.

use regex::{Regex, RegexBuilder};

/// The most a compiled pattern may take.
const SIZE_LIMIT: usize = 1 << 20;

pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&as_go_reads(pattern)).size_limit(SIZE_LIMIT).build()
}

/// `pattern` with its Perl classes spelled out as the ASCII classes Go
/// gives them; everything else as written. A class inside brackets
/// becomes a nested class, which the regex crate unites with the rest.
fn as_go_reads(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else {
            // A trailing backslash: left for the compiler to refuse.
            out.push(c);
            break;
        };
        let class = match escaped {
            'd' => "[0-9]",
            'D' => "[^0-9]",
            'w' => "[0-9A-Za-z_]",
            'W' => "[^0-9A-Za-z_]",
            's' => r"[\t\n\f\r ]",
            'S' => r"[^\t\n\f\r ]",
            _ => {
                out.push(c);
                out.push(escaped);
                continue;
            }
        };
        out.push_str(class);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_are_asciis_as_in_go() {
        let digits = compile(r"^\d+$").unwrap();
        assert!(digits.is_match("0123"));
        assert!(!digits.is_match("١٢٣"), "Arabic-Indic digits are not \\d in Go");
        let word = compile(r"^[\w.-]+$").unwrap();
        assert!(word.is_match("a_b.c-9"));
        assert!(!word.is_match("é"));
        assert!(compile(r"^\W\S\s$").unwrap().is_match("é\u{00e9} "));
        assert!(compile(r"^a\\d$").unwrap().is_match(r"a\d"), "an escaped backslash stays one");
    }

    #[test]
    fn repeated_classes_fit_the_bound_as_they_do_in_go() {
        let repeated = compile(r"(\w\d){200}").unwrap();
        assert!(repeated.is_match(&"a1".repeat(200)));
        assert!(compile(r"\").is_err());
    }
}
