//! resource.k8s.io/v1 ResourceClaimTemplates: what kube-controller-manager
//! makes a ResourceClaim from for each pod that names the template. Neither
//! the template's claim spec nor its metadata change once made.

use k8s_openapi::api::resource::v1 as resource;
use serde_json::Value;

use super::admin_access::AdminAccess;
use super::claim_spec;
use crate::errors::{ApiError, Cause};
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::kinds::{Kind, KindContext, field};
use crate::registry::metadata::{annotation_causes, label_causes};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

const KIND: &str = "ResourceClaimTemplate.resource.k8s.io";

/// What a template's metadata may carry into its claims (kube's
/// `ValidateTemplateObjectMeta`).
const TEMPLATE_METADATA: [&str; 2] = ["labels", "annotations"];

pub fn kind(context: &KindContext) -> Kind {
    Kind::typed::<resource::ResourceClaimTemplate>(
        Resource::new("resource.k8s.io", "ResourceClaimTemplate", "resourceclaimtemplates")
            .returns_deleted_object(),
        TemplateStrategy,
    )
    .with_hooks(AdminAccess::new(context, KIND, "/spec/spec/devices/requests"))
}

#[derive(Debug)]
struct TemplateStrategy;

impl Strategy for TemplateStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::RESOURCE_V1_RESOURCE_CLAIM_TEMPLATE)
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn set_defaults(&self, object: &mut Value) {
        if let Some(spec) = object.pointer_mut("/spec/spec").filter(|spec| spec.is_object()) {
            claim_spec::set_defaults(spec);
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        let mut causes = metadata_causes(&object["spec"]["metadata"]);
        causes.extend(claim_spec::causes(&object["spec"]["spec"], "spec.spec"));
        field::refuse(KIND, object, causes)
    }

    /// kube's `ValidateResourceClaimTemplateUpdate`: the whole spec is
    /// immutable.
    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        field::refuse(KIND, new, field::immutable("spec", &new["spec"], &old["spec"]).into_iter().collect())
    }

    fn printer(&self) -> &'static Printer {
        &table::DEFAULT
    }
}

/// Labels and annotations only; anything else in the template's metadata
/// would be silently lost, so kube refuses it.
fn metadata_causes(metadata: &Value) -> Vec<Cause> {
    let Some(fields) = metadata.as_object() else { return Vec::new() };
    let mut causes = Vec::new();
    for (key, value) in fields {
        if !TEMPLATE_METADATA.contains(&key.as_str()) && !is_go_zero(value) {
            causes.push(field::forbidden(&format!("spec.metadata.{key}"), "cannot be set"));
        }
    }
    let mut contents = label_causes(metadata);
    contents.extend(annotation_causes(metadata));
    for mut cause in contents {
        cause.field = format!("spec.{}", cause.field);
        causes.push(cause);
    }
    causes
}

/// Whether Go would hold this field as its zero value (what kube's allow
/// list does not count as set).
fn is_go_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_carries_labels_and_a_claim_spec_only() {
        let strategy = TemplateStrategy;
        let mut template = json!({"metadata": {"name": "gpu", "namespace": "ns"}, "spec": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
        }});
        strategy.set_defaults(&mut template);
        assert_eq!(template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"], 1);
        assert!(strategy.validate(&template).is_ok());
        let mut named = template.clone();
        named["spec"]["metadata"]["name"] = json!("fixed");
        let err = strategy.validate(&named).unwrap_err().to_string();
        assert!(err.contains("spec.metadata.name: Forbidden: cannot be set"), "{err}");
        let err = strategy.validate_update(&named, &template).unwrap_err().to_string();
        assert!(err.contains("spec: Invalid value: ") && err.ends_with("field is immutable"), "{err}");
    }
}
