//! networking.k8s.io/v1 IngressClasses: which controller implements the
//! Ingresses that name a class, with an optional reference to its
//! parameters. The controller never changes; a parameters reference's scope
//! defaults to Cluster.

use k8s_openapi::api::networking::v1 as networking;
use serde_json::{Value, json};

use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, field};
use crate::registry::{Resource, Strategy, defaults};
use crate::table::{self, Printer};

const KIND: &str = "IngressClass.networking.k8s.io";
/// The annotation that makes a class the default for Ingresses without one.
pub const DEFAULT_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";
const MAX_CONTROLLER_LENGTH: usize = 250;

pub fn kind() -> Kind {
    Kind::typed::<networking::IngressClass>(
        Resource::new("networking.k8s.io", "IngressClass", "ingressclasses").cluster_scoped(),
        IngressClassStrategy,
    )
}

#[derive(Debug)]
struct IngressClassStrategy;

impl Strategy for IngressClassStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::NETWORKING_V1_INGRESS_CLASS)
    }

    /// kube's `SetDefaults_IngressClass`.
    fn set_defaults(&self, object: &mut Value) {
        let parameters =
            defaults::present(object, "spec").and_then(|spec| defaults::present(spec, "parameters"));
        if let Some(parameters) = parameters {
            defaults::pointer(parameters, "scope", json!("Cluster"));
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let spec = &object["spec"];
        let mut causes = controller_causes(spec["controller"].as_str().unwrap_or_default());
        if spec["parameters"].is_object() {
            causes.extend(parameters_causes(&spec["parameters"]));
        }
        field::refuse(KIND, object, causes)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate(new)?;
        let changed =
            field::immutable("spec.controller", &new["spec"]["controller"], &old["spec"]["controller"]);
        field::refuse(KIND, new, changed.into_iter().collect())
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// A controller is a domain-prefixed path (`example.com/ingress-nginx`) of
/// at most 250 characters.
fn controller_causes(controller: &str) -> Vec<Cause> {
    const AT: &str = "spec.controller";
    if controller.is_empty() {
        return vec![field::required(AT, "")];
    }
    let mut causes = Vec::new();
    if controller.len() > MAX_CONTROLLER_LENGTH {
        causes.push(field::cause(
            "FieldValueTooLong",
            AT,
            format!("Too long: may not be more than {MAX_CONTROLLER_LENGTH} bytes"),
        ));
    }
    let domain = controller.split_once('/').map(|(domain, _)| domain);
    let domain_fits = domain.is_some_and(|d| crate::registry::metadata::dns_subdomain_errors(d).is_empty());
    if !domain_fits {
        causes.push(field::invalid(
            AT,
            &json!(controller),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        ));
    }
    causes
}

/// kube's checks of a parameters reference: kind and name given, a known
/// scope, and a namespace exactly when the scope is Namespace.
fn parameters_causes(parameters: &Value) -> Vec<Cause> {
    const AT: &str = "spec.parameters";
    let mut causes = Vec::new();
    for key in ["kind", "name"] {
        if !defaults::is_set(parameters, key) {
            causes.push(field::required(&format!("{AT}.{key}"), ""));
        }
    }
    let namespaced = defaults::is_set(parameters, "namespace");
    match parameters["scope"].as_str().unwrap_or_default() {
        "Cluster" if namespaced => {
            causes
                .push(field::forbidden(&format!("{AT}.namespace"), "`parameters.scope` is set to 'Cluster'"));
        }
        "Namespace" if !namespaced => {
            causes.push(field::required(
                &format!("{AT}.namespace"),
                "`parameters.scope` is set to 'Namespace'",
            ));
        }
        "Cluster" | "Namespace" => {}
        other => causes.push(field::not_supported(&format!("{AT}.scope"), other, &["Cluster", "Namespace"])),
    }
    causes
}

static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Controller", "string", "The controller that implements the class."),
        table::col("Parameters", "string", "The resource holding the class's parameters."),
        table::AGE,
    ],
    cells,
};

fn cells(object: &Value, now: i64) -> Vec<Value> {
    let parameters = match table::at(object, &["spec", "parameters"]) {
        Some(p) => {
            let group = table::str_at(p, &["apiGroup"]);
            let kind = table::str_at(p, &["kind"]);
            let kind = if p["apiGroup"].is_string() { format!("{kind}.{group}") } else { kind.to_string() };
            format!("{kind}/{}", table::str_at(p, &["name"]))
        }
        None => "<none>".to_string(),
    };
    vec![
        table::name(object),
        table::s(table::str_at(object, &["spec", "controller"])),
        table::s(parameters),
        table::age(object, now),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(spec: Value) -> Value {
        json!({"metadata": {"name": "nginx"}, "spec": spec})
    }

    #[test]
    fn a_class_names_its_controller_once() {
        let strategy = IngressClassStrategy;
        assert!(strategy.validate(&class(json!({"controller": "k8s.io/ingress-nginx"}))).is_ok());
        let err = strategy.validate(&class(json!({}))).unwrap_err().to_string();
        assert!(err.contains("spec.controller: Required value"), "{err}");
        let err = strategy.validate(&class(json!({"controller": "nginx"}))).unwrap_err().to_string();
        assert!(err.contains("must be a domain-prefixed path (such as \"acme.io/foo\")"), "{err}");
        let old = class(json!({"controller": "k8s.io/ingress-nginx"}));
        let new = class(json!({"controller": "example.com/other"}));
        let err = strategy.validate_update(&new, &old).unwrap_err().to_string();
        assert!(
            err.contains("spec.controller: Invalid value: \"example.com/other\": field is immutable"),
            "{err}"
        );
    }

    #[test]
    fn parameters_default_to_cluster_scope_and_print_as_kind_group_name() {
        let strategy = IngressClassStrategy;
        let mut c = class(json!({"controller": "k8s.io/ingress-nginx",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}));
        strategy.set_defaults(&mut c);
        assert_eq!(c["spec"]["parameters"]["scope"], "Cluster");
        assert!(strategy.validate(&c).is_ok());
        assert_eq!(PRINTER.cells(&c, 0)[2], json!("IngressParameters.k8s.example.com/external-lb"));
        c["spec"]["parameters"]["namespace"] = json!("default");
        let err = strategy.validate(&c).unwrap_err().to_string();
        assert!(
            err.contains("spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"),
            "{err}"
        );
        let bare = class(json!({"controller": "k8s.io/ingress-nginx"}));
        assert_eq!(PRINTER.cells(&bare, 0)[1..3], [json!("k8s.io/ingress-nginx"), json!("<none>")]);
    }
}
