//! `matches` as the server runs it: RE2 syntax read as Go reads it (see
//! `runtime::pattern`), each distinct pattern compiled once (the cel crate
//! compiles it on every call: a rule over a thousand strings compiled it a
//! thousand times), and each call charged as cel-go charges it: the
//! string's traversal times the pattern's length.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cel::ExecutionError;
use cel::common::ast::CallExpr;
use cel::common::types::{CelBool, CelString};
use cel::common::value::CowVal;
use regex::Regex;

use super::cost;

/// The name `matches` calls are rewritten to; `@` keeps it out of what an
/// expression can write.
pub(super) const MATCHES: &str = "@matches";

/// Patterns kept compiled; past this the cache starts over, so that a
/// stream of distinct patterns costs compiles, not memory.
const CACHED_PATTERNS: usize = 64;

/// cel-go's cost factors for `matches`: per character of the string
/// scanned, and per character of the pattern.
const TRAVERSAL_FACTOR: f64 = 0.1;
const PATTERN_FACTOR: f64 = 0.25;

type Compiled = Result<Arc<Regex>, String>;

static CACHE: LazyLock<Mutex<HashMap<String, Compiled>>> = LazyLock::new(Mutex::default);

/// Rewrites `s.matches(p)` and `matches(s, p)` to `@matches(s, p)`.
pub(super) fn meter_call(call: &mut CallExpr) {
    if call.func_name != "matches" {
        return;
    }
    let receiver = call.target.is_some() && call.args.len() == 1;
    let global = call.target.is_none() && call.args.len() == 2;
    if !(receiver || global) {
        return;
    }
    if let Some(target) = call.target.take() {
        call.args.insert(0, *target);
    }
    call.func_name = MATCHES.to_string();
}

/// `@matches(s, p)`: whether `p` matches somewhere in `s`.
pub(super) fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let strings = (
        args.first().and_then(|s| s.downcast_ref::<CelString>()),
        args.get(1).and_then(|p| p.downcast_ref::<CelString>()),
    );
    let (Some(text), Some(pattern)) = strings else {
        let types = args.iter().map(|a| a.get_type().name().to_string()).collect();
        return Err(ExecutionError::no_such_member_overload("matches", types));
    };
    let (text, pattern) = (text.inner(), pattern.inner());
    cost::charge(charge_for(text.chars().count(), pattern.chars().count()))?;
    let regex = compiled(pattern).map_err(|e| ExecutionError::function_error("matches", e))?;
    Ok(CowVal::owned(CelBool::from(regex.is_match(text))))
}

/// cel-go's runtime cost of matching a pattern of `pattern` characters in
/// a string of `text` characters.
fn charge_for(text: usize, pattern: usize) -> u64 {
    let traversal = ((1.0 + text as f64) * TRAVERSAL_FACTOR).ceil();
    let pattern = (pattern as f64 * PATTERN_FACTOR).ceil();
    (traversal * pattern) as u64
}

fn compiled(pattern: &str) -> Compiled {
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = cache.get(pattern) {
        return found.clone();
    }
    let made = crate::runtime::pattern::compile(pattern)
        .map(Arc::new)
        .map_err(|e| format!("'{pattern}' not a valid regex:\n{e}"));
    if cache.len() >= CACHED_PATTERNS {
        cache.clear();
    }
    cache.insert(pattern.to_string(), made.clone());
    made
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_and_reused() {
        let first = compiled("^a+b$").unwrap();
        let again = compiled("^a+b$").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(compiled("(").unwrap_err().starts_with("'(' not a valid regex"));
    }

    #[test]
    fn matching_costs_what_cel_go_charges() {
        // ceil((1 + 400) * 0.1) * ceil(9 * 0.25)
        assert_eq!(charge_for(400, 9), 41 * 3);
        assert_eq!(charge_for(0, 1), 1);
    }
}
