//! `status.conditions` kept as kube keeps them: one condition per type,
//! its `lastTransitionTime` moved only when its status changes (what
//! `meta.SetStatusCondition` and each kind's own setter do).

use serde_json::{Value, json};

/// The condition of `kind` in `object`'s status, if there is one.
pub fn find<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object["status"]["conditions"].as_array()?.iter().find(|c| c["type"] == kind)
}

/// Puts `condition` in place of the one of its type, or adds it; its
/// transition time is the old one while the status stays, else `now`.
pub fn set(object: &mut Value, mut condition: Value, now: &str) {
    let Some(list) = list_mut(object) else { return };
    let was = list.iter().position(|c| c["type"] == condition["type"]);
    let stays = was.is_some_and(|i| list[i]["status"] == condition["status"]);
    condition["lastTransitionTime"] = match was {
        Some(i) if stays && !list[i]["lastTransitionTime"].is_null() => list[i]["lastTransitionTime"].clone(),
        _ => json!(now),
    };
    match was {
        Some(i) => list[i] = condition,
        None => list.push(condition),
    }
}

/// As [`set`] for a pod, whose conditions also carry the time they were
/// last probed (kept from the old condition, null for a new one).
pub fn set_on_pod(pod: &mut Value, mut condition: Value, now: &str) {
    let kind = condition["type"].as_str().unwrap_or_default().to_string();
    condition["lastProbeTime"] = find(pod, &kind).map_or(Value::Null, |was| was["lastProbeTime"].clone());
    set(pod, condition, now);
}

/// The status's condition list, made when absent (None when the object or
/// its status is not an object).
fn list_mut(object: &mut Value) -> Option<&mut Vec<Value>> {
    let fields = object.as_object_mut()?;
    let status = fields.entry("status").or_insert_with(|| json!({}));
    if status.is_null() {
        *status = json!({});
    }
    let conditions = status.as_object_mut()?.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    conditions.as_array_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_moves_its_transition_time_only_when_its_status_changes() {
        let mut object = json!({"metadata": {"name": "x"}});
        set(&mut object, json!({"type": "Ready", "status": "False", "reason": "Starting"}), "t1");
        set(&mut object, json!({"type": "Ready", "status": "False", "reason": "Waiting"}), "t2");
        assert_eq!(find(&object, "Ready").unwrap()["lastTransitionTime"], "t1");
        assert_eq!(find(&object, "Ready").unwrap()["reason"], "Waiting");
        set(&mut object, json!({"type": "Ready", "status": "True"}), "t3");
        set(&mut object, json!({"type": "Other", "status": "True"}), "t4");
        let conditions = object["status"]["conditions"].as_array().unwrap();
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[0]["lastTransitionTime"], "t3");
    }

    #[test]
    fn pods_keep_their_probe_times() {
        let mut pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True", "lastProbeTime": "p0", "lastTransitionTime": "t0"}]}});
        set_on_pod(&mut pod, json!({"type": "Ready", "status": "True"}), "t1");
        set_on_pod(&mut pod, json!({"type": "PodScheduled", "status": "True"}), "t1");
        let conditions = pod["status"]["conditions"].as_array().unwrap();
        assert_eq!(
            (conditions[0]["lastProbeTime"].as_str(), conditions[0]["lastTransitionTime"].as_str()),
            (Some("p0"), Some("t0"))
        );
        assert!(conditions[1]["lastProbeTime"].is_null());
    }
}
