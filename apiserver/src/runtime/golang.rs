//! Decoded JSON values as Go prints them (`%T`, `%v`): kube's error texts
//! name the values they found this way (unstructured accessors, conversion
//! webhooks' checks), and clients show those texts as they are.

use serde_json::Value;

/// Go's `%T` of a decoded JSON value.
pub fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` of a decoded JSON value (maps with their keys sorted, as Go
/// prints them).
pub fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => go_float(f),
            (None, None) => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(fields) => {
            let mut pairs: Vec<_> = fields.iter().map(|(k, v)| format!("{k}:{}", go_value(v))).collect();
            pairs.sort();
            format!("map[{}]", pairs.join(" "))
        }
    }
}

/// Go's `%v` of a float64: its shortest digits, in exponent form
/// (`1e+06`) below 1e-4 and from 1e6 up.
pub fn go_float(f: f64) -> String {
    let exponent = format!("{f:e}");
    let (mantissa, power) = exponent.split_once('e').unwrap_or((&exponent, "0"));
    let power: i32 = power.parse().unwrap_or(0);
    if f != 0.0 && !(-4..6).contains(&power) {
        let sign = if power < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", power.abs())
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(go_value(&json!({"b": [1, true], "a": null})), "map[a:<nil> b:[1 true]]");
        assert_eq!(
            (go_type(&json!(1)), go_type(&json!(1.5)), go_type(&json!({}))),
            ("int64", "float64", "map[string]interface {}")
        );
        assert_eq!(go_type(&json!([])), "[]interface {}");
    }

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(123456.5), "123456.5");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(1.25e21), "1.25e+21");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(0.0), "0");
    }
}
