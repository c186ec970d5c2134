//! What admission plugins are told about a write (kube's
//! `admission.Attributes`).

use serde_json::Value;

use std::sync::Arc;

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
}
