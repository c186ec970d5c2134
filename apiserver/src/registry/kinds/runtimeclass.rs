//! node.k8s.io/v1 RuntimeClasses: the container runtime configurations a
//! pod may ask for, by the handler name the node's runtime knows. The
//! handler is a DNS label and never changes.

use k8s_openapi::api::node::v1 as node;
use serde_json::{Value, json};

use super::{Kind, field};
use crate::errors::ApiError;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::metadata::dns_label_errors;
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "RuntimeClass.node.k8s.io";

pub fn kind() -> Kind {
    Kind::typed::<node::RuntimeClass>(
        Resource::new("node.k8s.io", "RuntimeClass", "runtimeclasses").cluster_scoped(),
        RuntimeClassStrategy,
    )
}

#[derive(Debug)]
struct RuntimeClassStrategy;

impl Strategy for RuntimeClassStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::NODE_V1_RUNTIME_CLASS)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let handler = object["handler"].as_str().unwrap_or_default();
        let causes = dns_label_errors(handler)
            .iter()
            .map(|why| field::invalid("handler", &json!(handler), why))
            .collect();
        field::refuse(KIND, object, causes)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        field::refuse(
            KIND,
            new,
            field::immutable("handler", &new["handler"], &old["handler"]).into_iter().collect(),
        )
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Handler", "string", "The runtime handler on the node that runs the class's pods."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    vec![table::name(object), table::s(table::str_at(object, &["handler"])), table::age(object, now)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_is_a_fixed_dns_label() {
        let strategy = RuntimeClassStrategy;
        let gvisor = json!({"metadata": {"name": "gvisor"}, "handler": "runsc"});
        assert!(strategy.validate(&gvisor).is_ok());
        assert_eq!(PRINTER.cells(&gvisor, 0)[..2], [json!("gvisor"), json!("runsc")]);
        let err = strategy
            .validate(&json!({"metadata": {"name": "x"}, "handler": "Run_SC"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label"), "{err}");
        let err = strategy.validate(&json!({"metadata": {"name": "x"}})).unwrap_err().to_string();
        assert!(err.contains("handler: Invalid value: \"\""), "{err}");
        let moved = json!({"metadata": {"name": "gvisor"}, "handler": "kata"});
        let err = strategy.validate_update(&moved, &gvisor).unwrap_err().to_string();
        assert!(err.contains("handler: Invalid value: \"kata\": field is immutable"), "{err}");
    }
}
