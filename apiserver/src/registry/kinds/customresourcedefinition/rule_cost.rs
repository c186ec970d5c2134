//! kube's static cost check of a CRD's `x-kubernetes-validations`: each
//! rule's estimated cost, times the most times it can run in one object
//! (the product of `maxItems`/`maxProperties` above it, or what fits in a
//! request), must stay within a limit per expression, and all of them
//! within a limit for the whole schema.
//!
//! The estimate here is a lower bound of kube's (see
//! `admission::cel::estimate`), so a rule is refused only where kube's
//! estimate is certainly more than 100 times over the limit: the refusal
//! then reads as kube's, word for word ("more than 100x"). A rule this
//! estimate puts within 100x is accepted (kube may refuse it with a smaller
//! factor); the runtime cost limits stop it if it runs long.

use serde_json::Value;

use crate::admission::cel::{self, Declarations, Kind, Shape, Step};
use crate::errors::Cause;
use crate::registry::kinds::field::forbidden;
use crate::runtime::schema_view::Node;

/// kube's limit on one expression's estimated cost (times its cardinality).
const EXPRESSION_LIMIT: u64 = 10_000_000;
/// kube's limit on the estimated cost of every expression of a schema.
const SCHEMA_LIMIT: u64 = 100_000_000;
/// Past this factor kube stops printing the factor: the only one this
/// estimate can vouch for.
const REFUSED_FACTOR: u64 = 100;
/// kube's largest request, from which it bounds what a schema leaves
/// unbounded.
const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;
/// The longest string a request can hold (without its quotes).
const MAX_STRING: u64 = MAX_REQUEST_BYTES - 2;
/// How many of the most expensive expressions kube names.
const NAMED: usize = 4;

const PER_EXPRESSION_REFUSAL: &str = " exceeds budget by factor of more than 100x (try simplifying the rule, \
    or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";
const CONTRIBUTED: &str =
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema";
const SCHEMA_COST: &str = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema";

/// Whether `cause` refuses one expression for its own cost: kube lets an
/// unchanged schema keep those on update.
pub fn is_per_expression(cause: &Cause) -> bool {
    cause.message.starts_with("Forbidden: estimated ")
}

/// The cost refusals of `schema` (a version's `openAPIV3Schema`, at `at`).
/// Expressions that do not compile are left to the schema's other checks.
pub fn causes(schema: &Value, at: &str) -> Vec<Cause> {
    let mut walk = Walk::default();
    walk.node(Node(schema), at, Some(1), true);
    let total = walk.costs.iter().fold(0u64, |sum, (_, cost)| sum.saturating_add(*cost));
    if total > SCHEMA_LIMIT.saturating_mul(REFUSED_FACTOR) {
        let mut expensive: Vec<_> =
            walk.costs.iter().filter(|(_, cost)| *cost >= SCHEMA_LIMIT / 100).collect();
        expensive.sort_by_key(|(_, cost)| std::cmp::Reverse(*cost));
        for (path, _) in expensive.into_iter().take(NAMED) {
            walk.out.push(forbidden(path, CONTRIBUTED));
        }
        walk.out.push(forbidden(at, &format!("{SCHEMA_COST}{PER_EXPRESSION_REFUSAL}")));
    }
    walk.out
}

#[derive(Default)]
struct Walk {
    /// Every expression's estimated cost, by its path.
    costs: Vec<(String, u64)>,
    out: Vec<Cause>,
}

impl Walk {
    /// The rules of `node` and below; `cardinality` is how many times the
    /// node can occur in one object, None when a list or map above it is
    /// unbounded.
    fn node(&mut self, node: Node<'_>, at: &str, cardinality: Option<u64>, resource_root: bool) {
        let declared = Declared { node, resource_root };
        let rules = node.0.get("x-kubernetes-validations").and_then(Value::as_array);
        for (i, rule) in rules.into_iter().flatten().enumerate() {
            let times = cardinality.unwrap_or_else(|| MAX_REQUEST_BYTES / (min_size(node) + 1));
            let at = format!("{at}.x-kubernetes-validations[{i}]");
            if let Some(cost) = estimate(rule, "rule", &declared) {
                self.observe(format!("{at}.rule"), cost.saturating_mul(times), "estimated rule cost");
            }
            if let Some(cost) = estimate(rule, "messageExpression", &declared) {
                self.observe(format!("{at}.messageExpression"), cost, "estimated messageExpression cost");
            }
        }
        let below = cardinality.and_then(|c| max_elements(node).map(|m| c.saturating_mul(m)));
        for (name, property) in node.properties().into_iter().flatten() {
            let property = Node(property);
            self.node(property, &format!("{at}.properties[{name}]"), below, property.embedded_resource());
        }
        if let Some(items) = node.items() {
            self.node(items, &format!("{at}.items"), below, items.embedded_resource());
        }
        if let Some(values) = node.additional_properties() {
            self.node(values, &format!("{at}.additionalProperties"), below, values.embedded_resource());
        }
    }

    fn observe(&mut self, path: String, cost: u64, name: &str) {
        if cost > EXPRESSION_LIMIT.saturating_mul(REFUSED_FACTOR) {
            self.out.push(forbidden(&path, &format!("{name}{PER_EXPRESSION_REFUSAL}")));
        }
        self.costs.push((path, cost));
    }
}

fn estimate(rule: &Value, key: &str, declared: &Declared<'_>) -> Option<u64> {
    let text = rule.get(key).and_then(Value::as_str).filter(|t| !t.trim().is_empty())?;
    cel::estimated_cost(text, declared).ok()
}

/// How many elements of `node` each occurrence of it can hold, as kube
/// multiplies cardinalities: None for a list or map without a bound.
fn max_elements(node: Node<'_>) -> Option<u64> {
    match node.type_() {
        "object" if node.0.get("additionalProperties").is_some_and(|a| !a.is_null()) => {
            node.count("maxProperties")
        }
        "array" => node.count("maxItems"),
        _ => Some(1),
    }
}

/// The fewest bytes a value of `node` takes in JSON, as kube reckons it
/// (an object counts its required fields without defaults). Never below
/// kube's: a larger minimum only makes the estimate smaller.
fn min_size(node: Node<'_>) -> u64 {
    if node.int_or_string() {
        return 1;
    }
    match (node.type_(), node.format()) {
        ("string", "duration") => 3,
        ("string", "date") => 12,
        ("string", "date-time") => 21,
        ("string", _) => 2,
        ("boolean", _) => 4,
        ("object", _) if node.properties().is_some() => {
            let required = node.required().filter_map(|name| Some((name, node.property(name)?)));
            let fields = required.filter(|(_, field)| field.default().is_none() && declared_type(*field));
            fields.fold(2, |sum, (name, field)| sum + name.len() as u64 + min_size(field) + 4)
        }
        ("integer" | "number", _) => 1,
        _ => 2,
    }
}

/// Whether kube gives the node a CEL type at all.
fn declared_type(node: Node<'_>) -> bool {
    node.int_or_string() || !node.type_().is_empty()
}

/// The declarations of one rule: `self` and `oldSelf` are the node the
/// rule is attached to.
struct Declared<'a> {
    node: Node<'a>,
    resource_root: bool,
}

impl Declarations for Declared<'_> {
    fn shape(&self, variable: &str, path: &[Step]) -> Option<Shape> {
        if variable != "self" && variable != "oldSelf" {
            return None;
        }
        let mut at = At::Schema(self.node, self.resource_root);
        for step in path {
            at = at.step(step)?;
        }
        at.shape()
    }
}

/// Where a path has led.
#[derive(Clone, Copy)]
enum At<'a> {
    /// A schema node, and whether it is a resource's root (which has
    /// `kind`, `apiVersion` and `metadata` whether declared or not).
    Schema(Node<'a>, bool),
    /// A resource's `metadata` the schema does not declare.
    Metadata,
    /// A string nothing bounds (`kind`, `metadata.name`, ...).
    AnyString,
}

impl<'a> At<'a> {
    fn step(self, step: &Step) -> Option<At<'a>> {
        match (self, step) {
            (At::Schema(node, root), Step::Field(name)) => match node.property(name) {
                Some(field) => Some(At::Schema(field, field.embedded_resource())),
                None if root && (name == "kind" || name == "apiVersion") => Some(At::AnyString),
                None if root && name == "metadata" => Some(At::Metadata),
                None => None,
            },
            (At::Schema(node, _), Step::Items) => node.items().map(|i| At::Schema(i, i.embedded_resource())),
            (At::Schema(node, _), Step::Values) => {
                node.additional_properties().map(|v| At::Schema(v, v.embedded_resource()))
            }
            (At::Metadata, Step::Field(name)) if name == "name" || name == "generateName" => {
                Some(At::AnyString)
            }
            _ => None,
        }
    }

    fn shape(self) -> Option<Shape> {
        match self {
            At::Schema(node, _) => shape(node),
            At::Metadata => Some(Shape { kind: Kind::Object, max_size: 0 }),
            At::AnyString => Some(Shape { kind: Kind::String, max_size: MAX_STRING }),
        }
    }
}

/// A node's kind and size as kube's CEL types give them.
fn shape(node: Node<'_>) -> Option<Shape> {
    let max_length = node.count("maxLength");
    if node.int_or_string() {
        let max_size = max_length.map_or(MAX_STRING, |m| m.saturating_mul(4));
        return Some(Shape { kind: Kind::Other, max_size });
    }
    let (kind, max_size) = match node.type_() {
        "string" => match node.format() {
            "byte" => (Kind::Bytes, max_length.unwrap_or(MAX_STRING)),
            // Durations and timestamps: sizes too small to matter.
            "duration" | "date" | "date-time" => (Kind::Other, 0),
            _ => (Kind::String, string_max(node, max_length)),
        },
        "array" => {
            let items = node.items()?;
            (Kind::List, node.count("maxItems").unwrap_or(MAX_STRING / (min_size(items) + 1)))
        }
        "object" => match node.additional_properties() {
            Some(values) => {
                (Kind::Map, node.count("maxProperties").unwrap_or(MAX_STRING / (min_size(values) + 6)))
            }
            None => (Kind::Object, 0),
        },
        "boolean" | "integer" | "number" => (Kind::Other, 0),
        _ => return None,
    };
    Some(Shape { kind, max_size })
}

/// A string's most characters: four per declared one (kube reasons in
/// bytes), else its longest enum value, else what a request holds.
fn string_max(node: Node<'_>, max_length: Option<u64>) -> u64 {
    if let Some(max) = max_length {
        return max.saturating_mul(4);
    }
    match node.enum_values() {
        Some(values) if !values.is_empty() => {
            values.iter().filter_map(Value::as_str).map(|v| v.len() as u64).max().unwrap_or(0)
        }
        _ => MAX_STRING,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The estimate of `rule` on `node`, as a rule attached there sees it.
    fn cost(node: &Value, rule: &str) -> u64 {
        cel::estimated_cost(rule, &Declared { node: Node(node), resource_root: false }).unwrap()
    }

    fn list_of(items: Value) -> Value {
        json!({"type": "array", "items": items})
    }

    /// kube's estimates for these (from its own estimator's tests): where
    /// this walk models every part, it arrives at the same number.
    #[test]
    fn fully_modelled_rules_cost_what_kube_estimates() {
        let numbers = list_of(json!({"type": "number"}));
        assert_eq!(cost(&numbers, "self.all(x, true)"), 4_718_591);
        assert_eq!(cost(&list_of(json!({"type": "string"})), "self.all(x, true)"), 3_145_727);
        assert_eq!(cost(&list_of(json!({"type": "boolean"})), "self.all(x, true)"), 1_887_437);
        let map = json!({"type": "object", "additionalProperties": {"type": "number"}});
        assert_eq!(cost(&map, "self.all(x, true)"), 1_348_169);
        let mut bounded = numbers.clone();
        bounded["maxItems"] = json!(10);
        assert_eq!(cost(&bounded, "self.all(x, true)"), 32);
        let string = json!({"type": "string"});
        assert_eq!(cost(&string, "self.contains('test')"), 314_574);
        assert_eq!(cost(&string, "self.matches('x')"), 314_574);
        assert_eq!(cost(&string, r#""".matches("(((((((((())))))))))[0-9]")"#), 7);
        assert_eq!(cost(&string, "self.matches('')"), 1);
        assert_eq!(cost(&string, "self.startsWith('test')"), 2);
        assert_eq!(cost(&json!({"type": "string", "maxLength": 10}), "self.contains('test')"), 5);
        assert_eq!(cost(&list_of(json!({"type": "string"})), "self[1] == self[1]"), 314_577);
        assert_eq!(cost(&numbers, "self[1] == 0.0"), 2);
        assert_eq!(cost(&map, "has(self.x)"), 0);
    }

    /// Where kube knows more (the result types of comparisons and
    /// conversions), the walk stays under its number, never over.
    #[test]
    fn partly_modelled_rules_cost_no_more_than_kube_estimates() {
        let string = json!({"type": "string"});
        let concat = cost(&string, r#"size(self + "hello") > size("hello")"#);
        assert!((314_570..=314_578).contains(&concat), "{concat}");
        let durations = list_of(json!({"type": "string", "format": "duration"}));
        assert!(cost(&durations, "self[0].getHours() == 2") <= 4);
        let nested = list_of(json!({"type": "number"}));
        let mut ten = nested.clone();
        ten["maxItems"] = json!(10);
        let quadratic = cost(&ten, "self.all(x, self.all(y, true))");
        assert!((300..=352).contains(&quadratic), "{quadratic}");
    }

    fn spec_with(rules: Value, properties: Value) -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": rules, "properties": properties}}})
    }

    const AT: &str = "spec.validation.openAPIV3Schema";

    #[test]
    fn a_rule_kube_puts_over_100x_is_refused_with_its_text() {
        let schema = spec_with(
            json!([{"rule": "self.n >= 0"}, {"rule": "self.names.all(n, n.matches('^[a-z]+$'))"}]),
            json!({"n": {"type": "integer"}, "names": list_of(json!({"type": "string"}))}),
        );
        let causes = causes(&schema, AT);
        let fields: Vec<_> = causes.iter().map(|c| (c.field.as_str(), c.message.as_str())).collect();
        assert_eq!(
            fields[0],
            (
                "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule",
                "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the \
                 rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
            )
        );
        // So far over, it also takes the whole schema over its budget.
        assert_eq!(
            fields[1],
            (
                "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule",
                "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
            )
        );
        assert_eq!(fields[2].0, AT);
        assert_eq!(fields.len(), 3, "{fields:#?}");
        assert!(is_per_expression(&causes[0]) && !is_per_expression(&causes[1]));
    }

    #[test]
    fn bounds_on_the_lists_and_strings_make_the_same_rule_acceptable() {
        let schema = spec_with(
            json!([{"rule": "self.names.all(n, n.matches('^[a-z]+$'))"}]),
            json!({"names": {"type": "array", "maxItems": 100,
                "items": {"type": "string", "maxLength": 63}}}),
        );
        assert_eq!(causes(&schema, AT), vec![]);
    }

    #[test]
    fn a_rule_on_every_item_of_an_unbounded_list_counts_each_item() {
        // One evaluation is cheap (about 800), but it runs on each of the
        // million strings a request can hold: fifteen such rules are more
        // than 100x kube's budget for the whole schema.
        let rules: Vec<Value> = (0..15).map(|i| json!({"rule": format!("self.matches('^{i}$')")})).collect();
        let item = json!({"type": "string", "maxLength": 2000, "x-kubernetes-validations": rules});
        let schema = spec_with(json!([]), json!({"names": list_of(item)}));
        let causes = causes(&schema, AT);
        let messages: Vec<_> = causes.iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(messages.len(), 5, "{messages:#?}");
        for message in &messages[..4] {
            assert!(
                message.starts_with(&format!("{AT}.properties[spec].properties[names].items.x-kubernetes-validations["))
                    && message.ends_with("].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"),
                "{message}"
            );
        }
        assert_eq!(
            messages[4],
            format!(
                "{AT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema \
                 exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, \
                 maxProperties, and maxLength where arrays, maps, and strings are declared)"
            )
        );
        assert!(!causes.iter().any(is_per_expression));
    }

    #[test]
    fn a_costly_message_expression_is_refused_on_its_own() {
        let schema = spec_with(
            json!([{"rule": "true", "messageExpression": "self.names.map(a, self.names.map(b, a + b)).join(',')"}]),
            json!({"names": list_of(json!({"type": "string"}))}),
        );
        let causes = causes(&schema, AT);
        assert_eq!(
            causes[0].field,
            format!("{AT}.properties[spec].x-kubernetes-validations[0].messageExpression")
        );
        assert!(causes[0].message.starts_with(
            "Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x"
        ));
    }

    #[test]
    fn the_resource_root_has_kind_and_metadata_even_undeclared() {
        let root = json!({"type": "object", "properties": {}});
        let declared = Declared { node: Node(&root), resource_root: true };
        assert_eq!(
            declared.shape("self", &[Step::Field("metadata".into()), Step::Field("name".into())]),
            Some(Shape { kind: Kind::String, max_size: MAX_STRING })
        );
        assert_eq!(declared.shape("self", &[Step::Field("spec".into())]), None);
        assert_eq!(declared.shape("params", &[]), None);
    }
}
