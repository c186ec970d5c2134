//! TaintNodesByCondition: a node joins tainted `not-ready:NoSchedule`, so
//! nothing is scheduled onto it before its controller says it is ready.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::pod_defaults::NOT_READY;
use super::{Attributes, Operation, Plugin};
use crate::errors::ApiError;

#[derive(Debug)]
pub struct TaintNodesByCondition;

#[async_trait]
impl Plugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        if attributes.operation != Operation::Create || !attributes.is("", "nodes") {
            return Ok(());
        }
        let Some(node) = attributes.object.as_mut().filter(|n| n.is_object()) else { return Ok(()) };
        if !node["spec"].is_object() {
            node["spec"] = json!({});
        }
        let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
        // A taint is the same one when key and effect match.
        if taints.iter().any(|t| t["key"] == NOT_READY && t["effect"] == "NoSchedule") {
            return Ok(());
        }
        let mut taints: Vec<Value> = taints;
        taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
        node["spec"]["taints"] = Value::Array(taints);
        Ok(())
    }
}
