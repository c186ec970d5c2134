//! `kubectl get` columns of a custom resource: Name, then the version's
//! `additionalPrinterColumns` (an `Age` column from the creation time when
//! it has none), each cell read through the column's JSONPath and typed as
//! the column says, as kube's CRD table convertor does.

use serde_json::{Value, json};

use crate::runtime::jsonpath::JsonPath;
use crate::table::{self, ColumnDefinition};

#[derive(Debug, Clone)]
pub struct Column {
    definition: ColumnDefinition,
    path: JsonPath,
}

/// A version's columns (Name excluded).
#[derive(Debug, Clone)]
pub struct Columns(Vec<Column>);

impl Columns {
    /// From a version's `additionalPrinterColumns` (checked when the CRD
    /// was validated; a column whose path does not parse is left out).
    pub fn of_version(version: &Value) -> Columns {
        let declared = version.get("additionalPrinterColumns").and_then(Value::as_array);
        let age = [json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
            "description": "How long ago the object was created (from metadata.creationTimestamp)."})];
        let declared = match declared {
            Some(columns) if !columns.is_empty() => columns.as_slice(),
            _ => &age,
        };
        Columns(declared.iter().filter_map(column).collect())
    }

    pub fn definitions(&self) -> Vec<ColumnDefinition> {
        let mut all = vec![table::NAME.definition()];
        all.extend(self.0.iter().map(|c| c.definition.clone()));
        all
    }

    pub fn cells(&self, object: &Value, now: i64) -> Vec<Value> {
        let mut cells = vec![table::name(object)];
        cells.extend(self.0.iter().map(|c| cell(&c.definition.type_, c.path.first(object), now)));
        cells
    }
}

fn column(declared: &Value) -> Option<Column> {
    let text = |key: &str| declared.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let json_path = text("jsonPath");
    let path = JsonPath::parse(&json_path).ok()?;
    let description = match text("description") {
        d if d.is_empty() => format!("Custom resource definition column (in JSONPath format): {json_path}"),
        d => d,
    };
    let priority = declared.get("priority").and_then(Value::as_i64).unwrap_or(0);
    Some(Column {
        definition: ColumnDefinition {
            name: text("name"),
            type_: text("type"),
            format: text("format"),
            description,
            priority: i32::try_from(priority).unwrap_or(0),
        },
        path,
    })
}

/// A value as the column's type shows it; null when it is not of that
/// type (kube leaves such cells empty).
fn cell(type_: &str, value: Option<&Value>, now: i64) -> Value {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Value::Null };
    match (type_, value) {
        ("integer", Value::Number(n)) => {
            n.as_i64().map(Value::from).or_else(|| n.as_f64().map(|f| json!(f as i64))).unwrap_or_default()
        }
        ("number", Value::Number(n)) => n.as_f64().map(Value::from).unwrap_or_default(),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(raw)) => match table::parse_rfc3339(raw) {
            Some(at) => json!(table::human_duration(now - at)),
            None => json!("<invalid>"),
        },
        ("string", Value::String(s)) => json!(s),
        // A string column prints any value, as jsonpath prints it.
        ("string", other) => json!(other.to_string()),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_read_typed_cells_and_default_to_age() {
        let version = json!({"additionalPrinterColumns": [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "priority": 1, "description": "Ready?"},
            {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
            {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
            {"name": "Since", "type": "date", "jsonPath": ".status.since"},
        ]});
        let columns = Columns::of_version(&version);
        let definitions = columns.definitions();
        let names: Vec<_> = definitions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["Name", "Replicas", "Ready", "Ratio", "On", "Since"]);
        assert_eq!(
            definitions[1].description,
            "Custom resource definition column (in JSONPath format): .spec.replicas"
        );
        assert_eq!((definitions[2].priority, definitions[2].description.as_str()), (1, "Ready?"));
        let now = table::parse_rfc3339("2026-01-01T00:10:00Z").unwrap();
        let object = json!({"metadata": {"name": "w"},
            "spec": {"replicas": 3, "ratio": 2, "on": "yes"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "since": "2026-01-01T00:00:00Z"}});
        assert_eq!(
            columns.cells(&object, now),
            vec![json!("w"), json!(3), json!("True"), json!(2.0), Value::Null, json!("10m")]
        );
        let bare = Columns::of_version(&json!({"name": "v1"}));
        assert_eq!(bare.definitions()[1].name, "Age");
        assert_eq!(bare.definitions()[1].type_, "date");
    }
}
