//! core/v1 PodTemplates: pod templates kept for controllers and tools to
//! start pods from; the pod spec is defaulted as a workload's template is.

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::Kind;
use crate::patch::strategic_schema::{TypeNode, nodes};
use crate::registry::defaults::{self, pod_spec};
use crate::registry::{Resource, Strategy};
use crate::table::{self, Printer};

pub fn kind() -> Kind {
    Kind::typed::<core::PodTemplate>(
        Resource::new("", "PodTemplate", "podtemplates").returns_deleted_object(),
        PodTemplateStrategy,
    )
}

#[derive(Debug)]
struct PodTemplateStrategy;

impl Strategy for PodTemplateStrategy {
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        Some(&nodes::CORE_V1_POD_TEMPLATE)
    }

    /// The template is what a PodTemplate's generation counts.
    fn spec_changed(&self, old: &Value, new: &Value) -> bool {
        old.get("template") != new.get("template")
    }

    fn set_defaults(&self, object: &mut Value) {
        if let Some(template) = defaults::object_at(object, "template") {
            pod_spec::template(template);
        }
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

/// kube's printer: the template's containers, images and pod labels (no
/// age column).
static PRINTER: Printer = Printer {
    columns: &[
        table::NAME,
        table::col("Containers", "string", "The names of the containers in the template."),
        table::col("Images", "string", "The images of the containers in the template."),
        table::col("Pod Labels", "string", "The labels the template gives its pods."),
    ],
    cells,
};

fn cells(object: &Value, _now: i64) -> Vec<Value> {
    let [containers, images] = table::container_cells(table::at(object, &["template", "spec"]));
    let labels = table::format_labels(table::at(object, &["template", "metadata", "labels"]));
    vec![table::name(object), containers, images, table::s(labels)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_is_defaulted_and_printed_as_kube_does() {
        let mut t = json!({"metadata": {"name": "t"}, "template": {"metadata": {"labels": {"b": "2", "a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "busybox:1"}]}}});
        PodTemplateStrategy.set_defaults(&mut t);
        assert_eq!(t["template"]["spec"]["restartPolicy"], "Always");
        assert_eq!(t["template"]["spec"]["containers"][1]["imagePullPolicy"], "IfNotPresent");
        let cells = PRINTER.cells(&t, 0);
        assert_eq!(cells, [json!("t"), json!("c,d"), json!("nginx,busybox:1"), json!("a=1,b=2")]);
    }
}
