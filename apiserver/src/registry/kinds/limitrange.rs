//! v1 LimitRanges: per-namespace bounds and defaults for what containers and
//! pods ask for, enforced by the LimitRanger admission plugin. Stored with
//! kube's defaults (a Container item's `default` from its `max`, its
//! `defaultRequest` from `default`, then from `min`) and validated as kube
//! validates them.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1 as core;
use serde_json::{Map, Value};

use super::Kind;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::{Resource, Strategy};
use crate::runtime::quantity::Quantity;

pub fn kind() -> Kind {
    Kind::typed::<core::LimitRange>(
        Resource::new("", "LimitRange", "limitranges").short_names(&["limits"]),
        LimitRangeStrategy,
    )
}

#[derive(Debug)]
struct LimitRangeStrategy;

impl Strategy for LimitRangeStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_LIMIT_RANGE)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn set_defaults(&self, object: &mut Value) {
        set_defaults(object);
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        super::field::refuse("LimitRange", object, validate(object))
    }
}

/// kube's `SetDefaults_LimitRangeItem`, for Container items.
fn set_defaults(object: &mut Value) {
    let Some(items) = object["spec"]["limits"].as_array_mut() else { return };
    for item in items.iter_mut().filter(|i| i["type"] == "Container") {
        let fill = |item: &mut Value, into: &str, from: &str| {
            let source = item[from].as_object().cloned().unwrap_or_default();
            let mut target = item[into].as_object().cloned().unwrap_or_default();
            for (resource, value) in source {
                target.entry(resource).or_insert(value);
            }
            if !target.is_empty() {
                item[into] = Value::Object(target);
            }
        };
        fill(item, "default", "max");
        fill(item, "defaultRequest", "default");
        fill(item, "defaultRequest", "min");
    }
}

const TYPES: [&str; 3] = ["Pod", "Container", "PersistentVolumeClaim"];

fn invalid(field: String, value: &str, why: String) -> Cause {
    Cause { reason: "FieldValueInvalid", field, message: format!("Invalid value: \"{value}\": {why}") }
}

/// The quantities of one item field, by resource; unreadable ones become
/// causes.
fn quantities(item: &Value, field: &str, path: &str, causes: &mut Vec<Cause>) -> Vec<(String, Quantity)> {
    let empty = Map::new();
    let mut out = Vec::new();
    for (resource, value) in item[field].as_object().unwrap_or(&empty) {
        let text = value.as_str().unwrap_or_default();
        match Quantity::parse(text) {
            Ok(q) => out.push((resource.clone(), q)),
            Err(why) => causes.push(invalid(format!("{path}.{field}[{resource}]"), text, why)),
        }
    }
    out
}

/// kube's `ValidateLimitRange` (types, duplicates, Pod items without
/// defaults, PVC items with a storage bound, and min ≤ defaultRequest ≤
/// default ≤ max, ratio ≥ 1 and within max/min, per resource).
fn validate(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, item) in object["spec"]["limits"].as_array().into_iter().flatten().enumerate() {
        let path = format!("spec.limits[{i}]");
        let kind = item["type"].as_str().unwrap_or_default();
        if !TYPES.contains(&kind) && !kind.contains('/') {
            causes.push(invalid(
                format!("{path}.type"),
                kind,
                "must be a standard limit type or fully qualified".into(),
            ));
        }
        if !seen.insert(kind.to_string()) {
            causes.push(Cause {
                reason: "FieldValueDuplicate",
                field: format!("{path}.type"),
                message: format!("Duplicate value: \"{kind}\""),
            });
        }
        let max = quantities(item, "max", &path, &mut causes);
        let min = quantities(item, "min", &path, &mut causes);
        let (mut default, mut default_request) = (Vec::new(), Vec::new());
        if kind == "Pod" {
            for field in ["default", "defaultRequest"] {
                if item[field].as_object().is_some_and(|m| !m.is_empty()) {
                    causes.push(Cause {
                        reason: "FieldValueForbidden",
                        field: format!("{path}.{field}"),
                        message: "Forbidden: may not be specified when `type` is 'Pod'".into(),
                    });
                }
            }
        } else {
            default = quantities(item, "default", &path, &mut causes);
            default_request = quantities(item, "defaultRequest", &path, &mut causes);
        }
        if kind == "PersistentVolumeClaim"
            && item["min"].get("storage").is_none()
            && item["max"].get("storage").is_none()
        {
            causes.push(Cause {
                reason: "FieldValueRequired",
                field: format!("{path}.limits"),
                message: "Required value: either minimum or maximum storage value is required, but neither was provided"
                    .into(),
            });
        }
        let ratio = quantities(item, "maxLimitRequestRatio", &path, &mut causes);
        let resources: BTreeSet<&String> = [&max, &min, &default, &default_request, &ratio]
            .iter()
            .flat_map(|l| l.iter().map(|(r, _)| r))
            .collect();
        for resource in resources {
            let find =
                |list: &[(String, Quantity)]| list.iter().find(|(r, _)| r == resource).map(|(_, q)| *q);
            let (lo, hi, def, req, ratio) =
                (find(&min), find(&max), find(&default), find(&default_request), find(&ratio));
            causes.extend(ordering(&path, resource, lo, hi, def, req, ratio));
        }
    }
    causes
}

/// The per-resource checks of one item, in kube's order.
fn ordering(
    path: &str,
    resource: &str,
    min: Option<Quantity>,
    max: Option<Quantity>,
    default: Option<Quantity>,
    request: Option<Quantity>,
    ratio: Option<Quantity>,
) -> Vec<Cause> {
    use std::cmp::Ordering::{Greater, Less};
    let mut causes = Vec::new();
    let mut check = |fails: bool, field: &str, value: &Quantity, why: String| {
        if fails {
            causes.push(invalid(format!("{path}.{field}[{resource}]"), &value.canonical(), why));
        }
    };
    let gt =
        |a: Option<Quantity>, b: Option<Quantity>| a.zip(b).is_some_and(|(a, b)| a.cmp_value(&b) == Greater);
    let show = |q: Option<Quantity>| q.map(|q| q.canonical()).unwrap_or_default();
    if let Some(lo) = min {
        check(
            gt(min, max),
            "min",
            &lo,
            format!("min value {} is greater than max value {}", show(min), show(max)),
        );
    }
    if let Some(req) = request {
        check(
            gt(min, request),
            "defaultRequest",
            &req,
            format!("min value {} is greater than default request value {}", show(min), show(request)),
        );
        check(
            gt(request, max),
            "defaultRequest",
            &req,
            format!("default request value {} is greater than max value {}", show(request), show(max)),
        );
        check(
            gt(request, default),
            "defaultRequest",
            &req,
            format!(
                "default request value {} is greater than default limit value {}",
                show(request),
                show(default)
            ),
        );
    }
    if let Some(lo) = min {
        check(
            gt(min, default),
            "default",
            &lo,
            format!("min value {} is greater than default value {}", show(min), show(default)),
        );
    }
    if let Some(hi) = max {
        check(
            gt(default, max),
            "default",
            &hi,
            format!("default value {} is greater than max value {}", show(default), show(max)),
        );
    }
    if let Some(r) = ratio {
        let below_one = r.cmp_value(&Quantity::from_milli(1000)) == Less;
        check(below_one, "maxLimitRequestRatio", &r, format!("ratio {} is less than 1", r.canonical()));
        if let (Some(lo), Some(hi)) = (min, max) {
            let limit = hi.milli_value() as f64 / lo.milli_value() as f64;
            let over = r.milli_value() as f64 / 1000.0 > limit;
            check(
                over,
                "maxLimitRequestRatio",
                &r,
                format!("ratio {} is greater than max/min = {limit:.6}", r.canonical()),
            );
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn container_items_get_kubes_defaults() {
        let mut range = json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"}, "default": {"memory": "512Mi"}},
            {"type": "Pod", "max": {"cpu": "4"}},
        ]}});
        set_defaults(&mut range);
        let container = &range["spec"]["limits"][0];
        assert_eq!(container["default"], json!({"cpu": "2", "memory": "512Mi"}));
        assert_eq!(container["defaultRequest"], json!({"cpu": "2", "memory": "512Mi"}));
        assert!(range["spec"]["limits"][1].get("default").is_none());
        let mut only_min = json!({"spec": {"limits": [{"type": "Container", "min": {"cpu": "100m"}}]}});
        set_defaults(&mut only_min);
        assert_eq!(only_min["spec"]["limits"][0]["defaultRequest"], json!({"cpu": "100m"}));
    }

    #[test]
    fn inconsistent_ranges_are_invalid_with_kubes_texts() {
        let range = json!({"metadata": {"name": "r"}, "spec": {"limits": [
            {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
            {"type": "Container"},
            {"type": "Pod", "default": {"cpu": "1"}},
            {"type": "Widget"},
            {"type": "Pod2", "maxLimitRequestRatio": {"cpu": "500m"}},
        ]}});
        let messages: Vec<String> =
            validate(&range).into_iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
        assert_eq!(
            messages,
            [
                "spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1",
                "spec.limits[1].type: Duplicate value: \"Container\"",
                "spec.limits[2].default: Forbidden: may not be specified when `type` is 'Pod'",
                "spec.limits[3].type: Invalid value: \"Widget\": must be a standard limit type or fully qualified",
                "spec.limits[4].type: Invalid value: \"Pod2\": must be a standard limit type or fully qualified",
                "spec.limits[4].maxLimitRequestRatio[cpu]: Invalid value: \"500m\": ratio 500m is less than 1",
            ]
        );
        let ratio = json!({"spec": {"limits": [{"type": "Container", "min": {"cpu": "1"}, "max": {"cpu": "2"}, "maxLimitRequestRatio": {"cpu": "3"}}]}});
        let messages: Vec<String> = validate(&ratio).into_iter().map(|c| c.message).collect();
        assert_eq!(messages, ["Invalid value: \"3\": ratio 3 is greater than max/min = 2.000000"]);
        let unreadable = json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "lots"}}]}});
        assert_eq!(validate(&unreadable)[0].field, "spec.limits[0].max[cpu]");
    }
}
