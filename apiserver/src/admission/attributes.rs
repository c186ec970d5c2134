//! What admission plugins are told about a write (kube's
//! `admission.Attributes`).

use std::sync::Arc;

use serde_json::Value;

use super::Notes;
use crate::errors::{ApiError, Cause};
use crate::fieldmanager::FieldManager;
use crate::request::UserInfo;

/// The verb, as admission names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    /// Connect-style subresources (exec, attach, port-forward) as they come.
    Connect,
}

impl Operation {
    /// `CREATE`, `UPDATE`, ... as AdmissionReview and audit spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupVersionKind {
    pub group: String,
    pub version: String,
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupVersionResource {
    pub group: String,
    pub version: String,
    pub resource: String,
}

/// One write, as a plugin sees it.
#[derive(Debug, Clone)]
pub struct Attributes {
    pub user: Arc<UserInfo>,
    pub operation: Operation,
    pub kind: GroupVersionKind,
    pub resource: GroupVersionResource,
    /// `status`, `scale`; None for the object itself.
    pub subresource: Option<String>,
    /// Empty for a create with generateName (the name comes later).
    pub name: String,
    /// None for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The object as it would be stored (None for a delete).
    pub object: Option<Value>,
    /// The object as stored now (None for a create).
    pub old_object: Option<Value>,
    /// The request's options (CreateOptions, UpdateOptions, DeleteOptions).
    pub options: Value,
    pub dry_run: bool,
    /// The request's warnings and audit annotations, shared by every plugin.
    pub notes: Arc<Notes>,
    /// Makes an object changed from outside (a webhook's patch) what
    /// decoding would have made of it: unknown fields dropped, defaults set.
    pub normalize: Option<Normalize>,
    /// Where the mutating chain is in kube's reinvocation.
    pub reinvocation: Reinvocation,
    /// The kind's field manager: how an apply configuration (a mutating
    /// policy's) merges into the object. None where the object admitted is
    /// not the kind's own (a Scale).
    pub field_manager: Option<Arc<FieldManager>>,
}

/// An object as the store would decode and default it.
#[derive(Clone)]
pub struct Normalize(pub Arc<dyn Fn(Value) -> Result<Value, ApiError> + Send + Sync>);

impl std::fmt::Debug for Normalize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Normalize")
    }
}

/// kube's reinvocation: when a webhook changes the object after an
/// `IfNeeded` webhook saw it, the whole mutating chain runs once more, and
/// of the webhooks only those marked are called again.
#[derive(Debug, Clone, Default)]
pub struct Reinvocation {
    /// 0, then 1 for the one extra round.
    pub round: u8,
    /// Whether round 1 is to run.
    pub requested: bool,
    /// The `IfNeeded` webhooks called so far (`<configuration>/<name>`).
    pub called: Vec<String>,
    /// Those to call again in round 1.
    pub marked: Vec<String>,
    /// The object as the last webhook left it.
    pub last_output: Option<Value>,
}

impl Attributes {
    /// Whether the write is to `resource` of `group` itself (no subresource).
    pub fn is(&self, group: &str, resource: &str) -> bool {
        self.resource.group == group && self.resource.resource == resource && self.subresource.is_none()
    }

    /// Whether the object written is a Namespace.
    pub fn is_namespace(&self) -> bool {
        self.kind.group.is_empty() && self.kind.kind == "Namespace"
    }

    /// The written object's `spec`, for plugins that fill it in (None when
    /// there is no object, or its spec is not an object).
    pub fn spec_mut(&mut self) -> Option<&mut Value> {
        self.object.as_mut().and_then(|object| object.get_mut("spec")).filter(|spec| spec.is_object())
    }

    /// `<resource>[.<group>]`, as kube names a resource in messages.
    pub fn qualified_resource(&self) -> String {
        match self.resource.group.as_str() {
            "" => self.resource.resource.clone(),
            group => format!("{}.{group}", self.resource.resource),
        }
    }

    /// A plugin's refusal as kube's `admission.NewForbidden` writes it:
    /// `<resource> "<name>" is forbidden: <why>`, the name being the
    /// request's, else the object's, else its generateName, else `Unknown`.
    pub fn forbidden(&self, why: impl Into<String>) -> ApiError {
        self.forbidden_because(why, Vec::new())
    }

    /// As `forbidden`, with `causes` in the Status details.
    pub fn forbidden_because(&self, why: impl Into<String>, causes: Vec<Cause>) -> ApiError {
        ApiError::ForbiddenFor {
            qualified: self.qualified_resource(),
            name: self.name_for_messages(),
            why: why.into(),
            causes,
        }
    }

    fn name_for_messages(&self) -> String {
        let metadata = self.object.as_ref().map(|o| &o["metadata"]);
        let from_object = |field: &str| metadata.and_then(|m| m[field].as_str()).filter(|s| !s.is_empty());
        if !self.name.is_empty() {
            return self.name.clone();
        }
        from_object("name").or_else(|| from_object("generateName")).unwrap_or("Unknown").to_string()
    }
}
