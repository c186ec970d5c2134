use serde_json::json;

use super::*;

fn schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["replicas"], "properties": {
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "exclusiveMaximum": true, "maximum": 1.5},
        "color": {"type": "string", "enum": ["red", "green"]},
        "size": {"type": "integer", "enum": [1, 2]},
        "name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[a-z]+$"},
        "when": {"type": "string", "format": "date-time"},
        "port": {"x-kubernetes-int-or-string": true},
        "items": {"type": "array", "maxItems": 3, "minItems": 2, "items": {"type": "string"}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
            "items": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}}}},
        "labels": {"type": "object", "maxProperties": 2, "minProperties": 1, "additionalProperties": {"type": "string"}},
        "note": {"type": "string", "nullable": true},
    }}}})
}

/// `field: message` of each cause, as the 422's message lists them.
fn causes(object: Value) -> Vec<String> {
    Validator::new(schema()).validate(&object).iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
}

#[test]
fn a_valid_object_has_no_causes() {
    let object = json!({"spec": {"replicas": 3, "ratio": 1, "color": "red", "size": 2.0, "name": "abc",
        "when": "2026-01-01T00:00:00Z", "port": "http", "items": ["a", "b"], "tags": ["a", "b"],
        "ports": [{"port": 80}, {"port": 443}], "labels": {"a": "b"}, "note": null}});
    assert_eq!(causes(object), Vec::<String>::new());
}

#[test]
fn each_check_answers_with_kubes_text() {
    let expect = |spec: Value, wanted: &[&str]| assert_eq!(causes(json!({"spec": spec})), wanted, "{spec}");
    expect(json!({}), &["spec.replicas: Required value"]);
    expect(
        json!({"replicas": "three"}),
        &[
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
        ],
    );
    expect(
        json!({"replicas": 1.5}),
        &[
            r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
        ],
    );
    expect(
        json!({"replicas": 0}),
        &["spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"],
    );
    expect(
        json!({"replicas": 11}),
        &["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"],
    );
    expect(
        json!({"replicas": 1, "ratio": 1.5}),
        &["spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"],
    );
    expect(
        json!({"replicas": 1, "color": "purple"}),
        &[r#"spec.color: Unsupported value: "purple": supported values: "red", "green""#],
    );
    expect(
        json!({"replicas": 1, "size": 3}),
        &[r#"spec.size: Unsupported value: 3: supported values: "1", "2""#],
    );
    expect(
        json!({"replicas": 1, "name": "ab"}),
        &[r#"spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long"#],
    );
    expect(json!({"replicas": 1, "name": "abcdef"}), &["spec.name: Too long: may not be more than 5 bytes"]);
    expect(
        json!({"replicas": 1, "name": "ABC"}),
        &[r#"spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'"#],
    );
    expect(
        json!({"replicas": 1, "when": "yesterday"}),
        &[
            r#"spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday""#,
        ],
    );
    expect(
        json!({"replicas": 1, "port": true}),
        &[
            r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
        ],
    );
    expect(
        json!({"replicas": 1, "items": ["a", "b", "c", "d"]}),
        &["spec.items: Too many: 4: must have at most 3 items"],
    );
    expect(
        json!({"replicas": 1, "items": ["a"]}),
        &["spec.items: Invalid value: 1: spec.items in body should have at least 2 items"],
    );
    expect(
        json!({"replicas": 1, "items": ["a", null]}),
        &[r#"spec.items[1]: Invalid value: "null": spec.items[1] in body must be of type string: "null""#],
    );
    expect(json!({"replicas": 1, "tags": ["a", "b", "a"]}), &[r#"spec.tags[2]: Duplicate value: "a""#]);
    expect(
        json!({"replicas": 1, "ports": [{"port": 80}, {"port": 80}, {}]}),
        &[r#"spec.ports[2].port: Required value"#, r#"spec.ports[1]: Duplicate value: {"port":80}"#],
    );
    expect(
        json!({"replicas": 1, "labels": {"a": "1", "b": "2", "c": "3"}}),
        &["spec.labels: Too many: 3: must have at most 2 items"],
    );
    expect(
        json!({"replicas": 1, "labels": {}}),
        &["spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"],
    );
}

#[test]
fn an_update_is_not_refused_for_what_it_left_as_it_was() {
    let validator = Validator::new(schema());
    // Stored before the schema gained its maximum.
    let old = json!({"spec": {"replicas": 50, "name": "abc"}});
    let renamed = json!({"spec": {"replicas": 50, "name": "abd"}});
    assert!(validator.validate_update(&renamed, &old).is_empty());
    let raised = json!({"spec": {"replicas": 60, "name": "abc"}});
    let causes: Vec<_> = validator.validate_update(&raised, &old).into_iter().map(|c| c.field).collect();
    assert_eq!(causes, ["spec.replicas"]);
    // A missing required field is about its parent: once that changes, it is reported.
    let old = json!({"spec": {"name": "abc"}});
    let new = json!({"spec": {"name": "abd"}});
    assert_eq!(
        validator.validate_update(&new, &old).len(),
        1,
        "spec changed, so the missing field is reported"
    );
}

fn ruled() -> Validator {
    Validator::new(json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.min <= self.max"},
            {"rule": "self.max < 100", "messageExpression": "'max is ' + string(self.max)"},
            {"rule": "self.max != 13", "message": "unlucky", "reason": "FieldValueForbidden", "fieldPath": ".max"},
        ],
        "properties": {
            "min": {"type": "integer"},
            "max": {"type": "integer"},
            "replicas": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 0"}]},
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "name is immutable"}]},
        },
    }}}))
}

fn rule_causes(causes: Vec<Cause>) -> Vec<String> {
    causes.iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
}

#[test]
fn cel_rules_answer_with_their_message_or_rule() {
    let validator = ruled();
    assert!(
        validator.validate(&json!({"spec": {"min": 1, "max": 2, "replicas": 0, "name": "a"}})).is_empty()
    );
    assert_eq!(
        rule_causes(validator.validate(&json!({"spec": {"min": 5, "max": 2, "replicas": -1}}))),
        // A node's rules before its children's, as kube walks them.
        [
            "spec: Invalid value: failed rule: self.min <= self.max",
            "spec.replicas: Invalid value: -1: failed rule: self >= 0",
        ]
    );
    assert_eq!(
        rule_causes(validator.validate(&json!({"spec": {"min": 1, "max": 200}}))),
        ["spec: Invalid value: max is 200"]
    );
    let forbidden = validator.validate(&json!({"spec": {"min": 1, "max": 13}}));
    assert_eq!(rule_causes(forbidden.clone()), ["spec.max: Forbidden: unlucky"]);
    assert_eq!(forbidden[0].reason, "FieldValueForbidden");
}

#[test]
fn transition_rules_judge_changes_only() {
    let validator = ruled();
    let old = json!({"spec": {"min": 1, "max": 2, "name": "a"}});
    assert!(validator.validate_update(&json!({"spec": {"min": 0, "max": 2, "name": "a"}}), &old).is_empty());
    assert_eq!(
        rule_causes(validator.validate_update(&json!({"spec": {"min": 1, "max": 2, "name": "b"}}), &old)),
        [r#"spec.name: Invalid value: "b": name is immutable"#]
    );
    // A value stored before a rule existed is not judged while it stays...
    let stored = json!({"spec": {"min": 9, "max": 2, "name": "a"}});
    let relabelled = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"min": 9, "max": 2, "name": "a"}});
    assert!(validator.validate_update(&relabelled, &stored).is_empty());
    // ...and is once it changes.
    let changed = json!({"spec": {"min": 9, "max": 2, "name": "a", "replicas": 1}});
    assert_eq!(
        rule_causes(validator.validate_update(&changed, &stored)),
        ["spec: Invalid value: failed rule: self.min <= self.max"]
    );
}

#[test]
fn schema_errors_keep_rules_from_running() {
    let causes = rule_causes(ruled().validate(&json!({"spec": {"min": "x", "max": 2}})));
    assert_eq!(
        causes,
        [
            r#"spec.min: Invalid value: "string": spec.min in body must be of type integer: "string""#,
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ]
    );
}

#[test]
fn a_huge_enum_is_listed_in_part_and_failures_stop_at_the_bound() {
    let allowed: Vec<String> = (0..50_000).map(|i| format!("v{i}")).collect();
    let validator = Validator::new(json!({"type": "object", "properties": {"items": {"type": "array",
        "items": {"type": "string", "enum": allowed}}}}));
    let causes = validator.validate(&json!({"items": vec!["nope"; 20_000]}));
    assert_eq!(causes.len(), 4096);
    let message = &causes[0].message;
    assert!(message.starts_with(r#"Unsupported value: "nope": supported values: "v0", "v1", "#), "{message}");
    assert!(message.len() < 9 << 10, "{} bytes", message.len());
    let shown = message.matches("\"v").count();
    assert!(
        message.ends_with(&format!(", and {} more", 50_000 - shown)),
        "{}",
        &message[message.len() - 40..]
    );
}
