//! flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfigurations: how much
//! of the server's concurrency a class of requests gets (nominal shares,
//! what it lends and may borrow) and what happens to requests over it
//! (queued by shuffle sharding, or rejected). `exempt` alone is of type
//! Exempt; the mandatory levels' specs are fixed.

use k8s_openapi::api::flowcontrol::v1 as flowcontrol;
use serde_json::{Value, json};

use super::{bootstrap, conditions_causes, fixed_spec_cause};
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::TypeNode;
use crate::registry::kinds::Kind;
use crate::registry::kinds::field::{forbidden, invalid, not_supported, required};
use crate::registry::{Resource, Strategy};
use crate::runtime::meta;
use crate::table::{self, Printer};

const EXEMPT: &str = "exempt";
const TYPES: [&str; 2] = ["Exempt", "Limited"];
const RESPONSES: [&str; 2] = ["Queue", "Reject"];
/// kube's defaults for a limited level and its queues.
const DEFAULT_SHARES: i64 = 30;
const DEFAULT_QUEUES: i64 = 64;
const DEFAULT_HAND_SIZE: i64 = 8;
const DEFAULT_QUEUE_LENGTH: i64 = 50;
/// kube's most queues, and the most hash bits shuffle sharding may need.
const MAX_QUEUES: i64 = 10_000_000;
const MAX_HASH_BITS: i64 = 60;

pub fn kind() -> Kind {
    Kind::typed::<flowcontrol::PriorityLevelConfiguration>(
        Resource::new(super::GROUP, "PriorityLevelConfiguration", "prioritylevelconfigurations")
            .cluster_scoped()
            .with_status(),
        PriorityLevelStrategy,
    )
}

#[derive(Debug)]
struct PriorityLevelStrategy;

impl Strategy for PriorityLevelStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        super::patch_schema("PriorityLevelConfiguration")
    }

    fn set_defaults(&self, object: &mut Value) {
        let spec = &mut object["spec"];
        if spec["limited"].is_object() {
            let limited = &mut spec["limited"];
            default(limited, "nominalConcurrencyShares", DEFAULT_SHARES);
            default(limited, "lendablePercent", 0);
            let queuing = &mut limited["limitResponse"]["queuing"];
            if queuing.is_object() {
                for (field, value) in [
                    ("queues", DEFAULT_QUEUES),
                    ("handSize", DEFAULT_HAND_SIZE),
                    ("queueLengthLimit", DEFAULT_QUEUE_LENGTH),
                ] {
                    if queuing[field].as_i64().unwrap_or(0) == 0 {
                        queuing[field] = json!(value);
                    }
                }
            }
        }
        if spec["exempt"].is_object() {
            default(&mut spec["exempt"], "nominalConcurrencyShares", 0);
            default(&mut spec["exempt"], "lendablePercent", 0);
        }
    }

    /// A new level's status is the controller's to write.
    fn prepare_for_create(&self, object: &mut Value) {
        object["status"] = json!({});
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let name = meta::name_of(object);
        let mut causes = spec_causes(name, &object["spec"]);
        let mandatory = bootstrap::mandatory_priority_levels();
        causes.extend(fixed_spec_cause(object, mandatory, |fixed| self.set_defaults(fixed)));
        causes.extend(conditions_causes(&object["status"]));
        refuse(object, causes)
    }

    fn validate_status_update(&self, new: &Value, _old: &Value) -> Result<(), ApiError> {
        refuse(new, conditions_causes(&new["status"]))
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// Sets `field` of `block` to `value` when it is not given.
fn default(block: &mut Value, field: &str, value: i64) {
    if block[field].is_null() {
        block[field] = json!(value);
    }
}

fn refuse(object: &Value, causes: Vec<Cause>) -> Result<(), ApiError> {
    super::super::field::refuse("PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io", object, causes)
}

fn spec_causes(name: &str, spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let kind = spec["type"].as_str().unwrap_or_default();
    if (name == EXEMPT) != (kind == "Exempt") {
        causes.push(invalid(
            "spec.type",
            &json!(kind),
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    match kind {
        "Exempt" => {
            if !spec["limited"].is_null() {
                causes.push(forbidden("spec.limited", "must be nil if the type is not Limited"));
            }
            if spec["exempt"].is_object() {
                causes.extend(shares_causes(&spec["exempt"], "spec.exempt"));
            }
        }
        "Limited" => {
            if !spec["exempt"].is_null() {
                causes.push(forbidden("spec.exempt", "must be nil if the type is Limited"));
            }
            match &spec["limited"] {
                Value::Null => {
                    causes.push(required("spec.limited", "must not be empty when type is Limited"))
                }
                limited => causes.extend(limited_causes(limited, "spec.limited")),
            }
        }
        _ => causes.push(not_supported("spec.type", kind, &TYPES)),
    }
    causes
}

/// The shares a level has, and the part it lends.
fn shares_causes(block: &Value, at: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(shares) = block["nominalConcurrencyShares"].as_i64().filter(|s| *s < 0) {
        causes.push(invalid(
            &format!("{at}.nominalConcurrencyShares"),
            &json!(shares),
            "must be a non-negative integer",
        ));
    }
    if let Some(lendable) = block["lendablePercent"].as_i64().filter(|p| !(0..=100).contains(p)) {
        causes.push(invalid(
            &format!("{at}.lendablePercent"),
            &json!(lendable),
            "must be between 0 and 100, inclusive",
        ));
    }
    causes
}

fn limited_causes(limited: &Value, at: &str) -> Vec<Cause> {
    let mut causes = shares_causes(limited, at);
    if let Some(borrowing) = limited["borrowingLimitPercent"].as_i64().filter(|p| *p < 0) {
        let why = "if specified, must be a non-negative integer";
        causes.push(invalid(&format!("{at}.borrowingLimitPercent"), &json!(borrowing), why));
    }
    let response = &limited["limitResponse"];
    let at = format!("{at}.limitResponse");
    let kind = response["type"].as_str().unwrap_or_default();
    match (kind, &response["queuing"]) {
        ("Reject", Value::Null) => {}
        ("Reject", _) => causes.push(forbidden(
            &format!("{at}.queuing"),
            "must be nil if limited.limitResponse.type is not Limited",
        )),
        ("Queue", Value::Null) => causes.push(required(
            &format!("{at}.queuing"),
            "must not be empty if limited.limitResponse.type is Limited",
        )),
        ("Queue", queuing) => causes.extend(queuing_causes(queuing, &format!("{at}.queuing"))),
        _ => causes.push(not_supported(&format!("{at}.type"), kind, &RESPONSES)),
    }
    causes
}

fn queuing_causes(queuing: &Value, at: &str) -> Vec<Cause> {
    let number = |field: &str| queuing[field].as_i64().unwrap_or(0);
    let (length, queues, hand) = (number("queueLengthLimit"), number("queues"), number("handSize"));
    let mut causes = Vec::new();
    if length <= 0 {
        causes.push(invalid(&format!("{at}.queueLengthLimit"), &json!(length), "must be positive"));
    }
    if queues <= 0 {
        causes.push(invalid(&format!("{at}.queues"), &json!(queues), "must be positive"));
    } else if queues > MAX_QUEUES {
        let why = format!("must not be greater than {MAX_QUEUES}");
        causes.push(invalid(&format!("{at}.queues"), &json!(queues), &why));
    }
    let hand_at = format!("{at}.handSize");
    if hand <= 0 {
        causes.push(invalid(&hand_at, &json!(hand), "must be positive"));
    } else if hand > queues {
        causes.push(invalid(
            &hand_at,
            &json!(hand),
            &format!("should not be greater than queues ({queues})"),
        ));
    } else if entropy_bits(queues, hand) > MAX_HASH_BITS {
        let why = format!(
            "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
        );
        causes.push(invalid(&hand_at, &json!(hand), &why));
    }
    causes
}

/// The hash bits shuffle sharding needs to deal `hand` cards from a deck
/// of `deck`.
fn entropy_bits(deck: i64, hand: i64) -> i64 {
    ((deck as f64).log2() * hand as f64).ceil() as i64
}

/// kube's printer: the type and, for a limited level, its shares and
/// queues (`<none>` where there are none).
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Type", "string", "Whether the level is Exempt or Limited."),
        table::col("NominalConcurrencyShares", "string", "The level's share of the server's concurrency."),
        table::col("Queues", "string", "How many queues requests wait in."),
        table::col("HandSize", "string", "How many queues each flow is dealt."),
        table::col("QueueLengthLimit", "string", "How many requests a queue holds."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let limited = &object["spec"]["limited"];
    let queuing = &limited["limitResponse"]["queuing"];
    let or_none = |value: &Value| if value.is_null() { json!("<none>") } else { value.clone() };
    let shares =
        if limited.is_object() { or_none(&limited["nominalConcurrencyShares"]) } else { json!("<none>") };
    vec![
        table::name(object),
        table::s(table::str_at(object, &["spec", "type"])),
        shares,
        or_none(&queuing["queues"]),
        or_none(&queuing["handSize"]),
        or_none(&queuing["queueLengthLimit"]),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(name: &str, spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": name}, "spec": spec});
        PriorityLevelStrategy.set_defaults(&mut object);
        object
    }

    fn causes(object: &Value) -> Vec<String> {
        match PriorityLevelStrategy.validate(object) {
            Ok(()) => Vec::new(),
            Err(ApiError::Invalid { causes, .. }) => {
                causes.into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect()
            }
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn a_limited_level_gets_kubes_defaults() {
        let object = level(
            "mine",
            json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}),
        );
        assert_eq!(
            object["spec"]["limited"],
            json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}})
        );
        assert_eq!(causes(&object), Vec::<String>::new());
        assert_eq!(
            PRINTER.cells(&object, 0)[..6],
            [json!("mine"), json!("Limited"), json!(30), json!(64), json!(8), json!(50)]
        );
    }

    #[test]
    fn bad_levels_are_refused_with_kubes_texts() {
        let object = level("mine", json!({"type": "Exempt", "limited": {"nominalConcurrencyShares": 1}}));
        assert_eq!(
            causes(&object),
            [
                "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'",
                "spec.limited: Forbidden: must be nil if the type is not Limited",
            ]
        );
        let object = level(
            "mine",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": -1,
            "lendablePercent": 101, "borrowingLimitPercent": -5,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 20, "queueLengthLimit": -1}}}}),
        );
        assert_eq!(
            causes(&object),
            [
                "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
                "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
                "spec.limited.borrowingLimitPercent: Invalid value: -5: if specified, must be a non-negative integer",
                "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
                "spec.limited.limitResponse.queuing.handSize: Invalid value: 20: required entropy bits of deckSize 128 and handSize 20 should not be greater than 60",
            ]
        );
        let object = level(
            "mine",
            json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject", "queuing": {}}}}),
        );
        assert_eq!(
            causes(&object),
            [
                "spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited"
            ]
        );
    }

    #[test]
    fn the_exempt_level_prints_no_queues() {
        let object = level("exempt", json!({"type": "Exempt", "exempt": {}}));
        assert_eq!(object["spec"]["exempt"], json!({"nominalConcurrencyShares": 0, "lendablePercent": 0}));
        let cells = PRINTER.cells(&object, 0);
        assert_eq!(
            cells[1..6],
            [json!("Exempt"), json!("<none>"), json!("<none>"), json!("<none>"), json!("<none>")]
        );
    }
}
