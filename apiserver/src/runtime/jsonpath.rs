//! The JSONPath subset printer columns use (`.status.replicas`,
//! `.spec.ports[0].port`, `.items[*].name`,
//! `.status.conditions[?(@.type=="Ready")].status`): kube evaluates them
//! with client-go's jsonpath; these are the forms CRDs use.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    /// `[?(@.a.b=="v")]`: items whose path holds that value.
    Filter(Vec<String>, Value),
}

#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath(Vec<Step>);

impl JsonPath {
    /// Parses `.a.b[0]`, also wrapped in `{...}` as kube allows; the
    /// reason it cannot otherwise.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let inner = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')).unwrap_or(text).trim();
        let mut rest = inner.strip_prefix('$').unwrap_or(inner);
        if rest.is_empty() {
            return Err("empty path".to_string());
        }
        let mut steps = Vec::new();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let name = &after[..end];
                if name.is_empty() {
                    return Err(format!("unexpected path string: {rest:?}"));
                }
                steps.push(if name == "*" { Step::All } else { Step::Field(name.to_string()) });
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = closing_bracket(after).ok_or_else(|| "unterminated array".to_string())?;
                steps.push(bracket(after[..end].trim())?);
                rest = &after[end + 1..];
            } else {
                return Err(format!("unrecognized character in action: {rest:?}"));
            }
        }
        Ok(JsonPath(steps))
    }

    /// The first value the path reaches in `object`.
    pub fn first<'a>(&self, object: &'a Value) -> Option<&'a Value> {
        let mut current = vec![object];
        for step in &self.0 {
            current = current.into_iter().flat_map(|v| apply(step, v)).collect();
        }
        current.into_iter().next()
    }
}

/// Where the `]` closing a bracket ends, quotes skipped.
fn closing_bracket(text: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, ']') => return Some(i),
            _ => {}
        }
    }
    None
}

fn bracket(inside: &str) -> Result<Step, String> {
    if inside == "*" {
        return Ok(Step::All);
    }
    if let Some(quoted) = unquote(inside) {
        return Ok(Step::Field(quoted.to_string()));
    }
    if let Ok(index) = inside.parse::<i64>() {
        return Ok(Step::Index(index));
    }
    let filter = inside
        .strip_prefix("?(")
        .and_then(|f| f.strip_suffix(')'))
        .ok_or_else(|| format!("unsupported array index {inside:?}"))?;
    let (left, right) = filter.split_once("==").ok_or_else(|| format!("unsupported filter {filter:?}"))?;
    let path = left.trim().strip_prefix("@.").ok_or_else(|| format!("unsupported filter {filter:?}"))?;
    let right = right.trim();
    let value = match unquote(right) {
        Some(text) => Value::String(text.to_string()),
        None => serde_json::from_str(right).map_err(|_| format!("unsupported filter value {right:?}"))?,
    };
    Ok(Step::Filter(path.split('.').map(str::to_string).collect(), value))
}

fn unquote(text: &str) -> Option<&str> {
    ['"', '\''].into_iter().find_map(|q| text.strip_prefix(q).and_then(|t| t.strip_suffix(q)))
}

fn apply<'a>(step: &Step, value: &'a Value) -> Vec<&'a Value> {
    match (step, value) {
        (Step::Field(name), Value::Object(fields)) => fields.get(name).into_iter().collect(),
        (Step::Index(i), Value::Array(items)) => {
            let at = if *i < 0 { items.len() as i64 + i } else { *i };
            usize::try_from(at).ok().and_then(|at| items.get(at)).into_iter().collect()
        }
        (Step::All, Value::Array(items)) => items.iter().collect(),
        (Step::All, Value::Object(fields)) => fields.values().collect(),
        (Step::Filter(path, wanted), Value::Array(items)) => items
            .iter()
            .filter(|item| path.iter().try_fold(*item, |v, name| v.get(name)) == Some(wanted))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_reach_fields_items_and_filtered_items() {
        let object = json!({"spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}], "a.b": "dotted"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}});
        let first = |p: &str| JsonPath::parse(p).unwrap().first(&object).cloned();
        assert_eq!(first(".spec.replicas"), Some(json!(3)));
        assert_eq!(first("{.spec.ports[1].port}"), Some(json!(443)));
        assert_eq!(first(".spec.ports[-1].port"), Some(json!(443)));
        assert_eq!(first(".spec.ports[*].port"), Some(json!(80)));
        assert_eq!(first(".spec['a.b']"), Some(json!("dotted")));
        assert_eq!(first(".status.conditions[?(@.type==\"Synced\")].status"), Some(json!("False")));
        assert_eq!(first(".status.conditions[?(@.type=='Gone')].status"), None);
        assert_eq!(first(".spec.missing"), None);
        assert_eq!(first(".spec.ports[7]"), None);
    }

    #[test]
    fn malformed_paths_are_refused() {
        for bad in ["", ".", "spec", ".spec[", ".spec[x]", ".a[?(@.b)]", "..a"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }
}
