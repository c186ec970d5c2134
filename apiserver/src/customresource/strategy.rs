//! What a custom resource does differently from the defaults of
//! [`Strategy`]: its schema defaults, validates and (through its codec)
//! prunes it; its generation counts every change outside metadata; its
//! columns are the CRD's; strategic merge patch is refused (no Go type to
//! read patch tags from), as kube refuses it.

use serde_json::Value;

use super::defaults::apply_defaults;
use super::printer::Columns;
use super::validation::Validator;
use crate::errors::{ApiError, Cause};
use crate::registry::Strategy;
use crate::registry::scale::{self, ScalePaths};
use crate::runtime::meta;
use crate::table::ColumnDefinition;

#[derive(Debug)]
pub struct CustomResourceStrategy {
    /// `Widget.example.com`, as errors name the kind.
    qualified_kind: String,
    validator: Validator,
    /// Where the scale subresource keeps replicas, checked on every write.
    scale: Option<ScalePaths>,
    columns: Columns,
    /// `widgets.example.com` when the CRD is being deleted: no new objects.
    terminating: Option<String>,
}

impl CustomResourceStrategy {
    pub fn new(qualified_kind: String, schema: Value, columns: Columns) -> CustomResourceStrategy {
        CustomResourceStrategy {
            qualified_kind,
            validator: Validator::new(schema),
            scale: None,
            columns,
            terminating: None,
        }
    }

    /// With the scale subresource's replicas at `paths`.
    pub fn with_scale(mut self, paths: Option<ScalePaths>) -> Self {
        self.scale = paths;
        self
    }

    /// Refusing creates (its CRD is being deleted), naming the resource as
    /// `widgets.example.com`.
    pub fn terminating(mut self, qualified_resource: String) -> Self {
        self.terminating = Some(qualified_resource);
        self
    }

    /// The schema's causes, then the scale subresource's (kube's order).
    fn refuse(&self, object: &Value, mut causes: Vec<Cause>) -> Result<(), ApiError> {
        if let Some(paths) = &self.scale {
            causes.extend(scale::causes(paths, object));
        }
        if causes.is_empty() {
            return Ok(());
        }
        Err(ApiError::Invalid {
            kind: self.qualified_kind.clone(),
            name: meta::name_of(object).to_string(),
            causes,
        })
    }
}

impl Strategy for CustomResourceStrategy {
    fn builtin_finalizer_rule(&self) -> bool {
        false
    }

    /// Anything but metadata (status too, unless the status subresource
    /// keeps it apart, in which case it is the old one here).
    fn spec_changed(&self, old: &Value, new: &Value) -> bool {
        outside_metadata(old) != outside_metadata(new)
    }

    fn set_defaults(&self, object: &mut Value) {
        apply_defaults(object, self.validator.schema());
    }

    fn check_create(&self, name: &str) -> Result<(), ApiError> {
        match &self.terminating {
            Some(qualified) => Err(ApiError::ForbiddenFor {
                qualified: qualified.clone(),
                name: name.to_string(),
                why: "create not allowed while custom resource definition is terminating".into(),
                causes: Vec::new(),
            }),
            None => Ok(()),
        }
    }

    fn validate(&self, object: &Value) -> Result<(), ApiError> {
        self.refuse(object, self.validator.validate(object))
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.refuse(new, self.validator.validate_update(new, old))
    }

    fn table_columns(&self) -> Vec<ColumnDefinition> {
        self.columns.definitions()
    }

    fn table_cells(&self, object: &Value, now_unix_seconds: i64) -> Vec<Value> {
        self.columns.cells(object, now_unix_seconds)
    }
}

/// What generation counts: everything but metadata and the type (which
/// names the version read through, not a change).
fn outside_metadata(object: &Value) -> Vec<(&String, &Value)> {
    let counted = |k: &String| !matches!(k.as_str(), "metadata" | "apiVersion" | "kind");
    object.as_object().into_iter().flatten().filter(|(k, _)| counted(k)).collect()
}
