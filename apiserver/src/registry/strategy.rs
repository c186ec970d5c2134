//! What one kind does differently from the others (kube's `RESTCreateStrategy`,
//! `RESTUpdateStrategy`, `RESTDeleteStrategy`, field-label conversion and
//! table convertor, in one trait): every method has the behaviour most kinds
//! want, so a kind module overrides only what is its own.
//!
//! The generic [`super::Store`] owns everything common to all objects
//! (metadata, generation, status kept apart, finalizers, preconditions); a
//! strategy never sees storage. Work that needs storage around a write (a
//! Service's cluster IP) is a [`WriteHooks`] of the kind.

use std::fmt::Debug;

use async_trait::async_trait;
use serde_json::Value;

use crate::errors::ApiError;
use crate::patch::strategic_schema::TypeNode;
use crate::request::UserInfo;
use crate::selector::FieldLabels;
use crate::table::{ColumnDefinition, Printer};

/// Which names objects of a kind may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// DNS subdomain (RFC 1123): at most 253 characters, dots allowed.
    Subdomain,
    /// DNS label (RFC 1123): at most 63 characters, no dots (namespaces).
    Label,
    /// DNS label (RFC 1035): as a label, starting with a letter (services).
    Dns1035Label,
    /// Any path segment: not `.` or `..`, no `/` or `%` (RBAC objects,
    /// whose names carry colons).
    PathSegment,
    /// An IP address in canonical form (IPAddresses, named by the address
    /// they hold).
    IpAddress,
}

pub trait Strategy: Send + Sync + Debug {
    /// The kind's strategic merge patch metadata (merge keys, strategies),
    /// from the generated tables; None refuses strategic merge patches, as
    /// kube refuses them for custom resources.
    fn patch_schema(&self) -> Option<&'static TypeNode> {
        None
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Whether the object has a `spec` whose changes bump `generation`.
    fn tracks_generation(&self) -> bool {
        true
    }

    /// Whether a finalizer without a `/` must be one of kube's standard
    /// ones: the rule of kube's own kinds, which extension kinds (CRDs and
    /// custom resources) do not follow.
    fn builtin_finalizer_rule(&self) -> bool {
        true
    }

    /// Whether an update changed what `generation` counts: the spec.
    fn spec_changed(&self, old: &Value, new: &Value) -> bool {
        old.get("spec") != new.get("spec")
    }

    /// Whether clients write `status` with the object itself (nodes), rather
    /// than only through the status subresource.
    fn status_with_object(&self) -> bool {
        false
    }

    /// kube's defaulting of a body as it is decoded (create, update and the
    /// result of a patch), before admission sees it.
    fn set_defaults(&self, _object: &mut Value) {}

    /// The kind's part of a new object (defaults, initial status), after the
    /// server's metadata is filled in.
    fn prepare_for_create(&self, _object: &mut Value) {}

    /// The kind's part of a replacing object: what it keeps from `old`.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Records who asked for a new object, where the kind keeps that
    /// (a CertificateSigningRequest's requester).
    fn stamp_requester(&self, _object: &mut Value, _user: &UserInfo) {}

    /// Carries over, after a write through `subresource` took what it
    /// owns, what the kind keeps besides (a CSR's approval through its
    /// status).
    fn prepare_subresource_update(&self, _subresource: &str, _new: &mut Value, _old: &Value) {}

    /// Refuses an object the kind cannot hold (422 with causes).
    fn validate(&self, _object: &Value) -> Result<(), ApiError> {
        Ok(())
    }

    /// Refuses a replacing object the kind cannot hold, or a change the
    /// kind does not allow (a live Pod's containers).
    fn validate_update(&self, new: &Value, _old: &Value) -> Result<(), ApiError> {
        self.validate(new)
    }

    /// The checks of a write through `subresource` (None: the object
    /// itself), which changes only what the subresource owns; a kind with
    /// its own rules for one (a pod's ephemeral containers) says them.
    fn validate_subresource_update(
        &self,
        subresource: Option<&str>,
        new: &Value,
        old: &Value,
    ) -> Result<(), ApiError> {
        match subresource {
            Some("status") => self.validate_status_update(new, old),
            _ => self.validate_update(new, old),
        }
    }

    /// The checks of a write through `/status`: kube validates the status
    /// alone there; the whole object, unless the kind says otherwise.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Result<(), ApiError> {
        self.validate_update(new, old)
    }

    /// kube's `CheckGracefulDelete`: for a kind whose objects are deleted
    /// gracefully (pods), how many seconds the object being deleted is
    /// given, from the client's `gracePeriodSeconds` (`requested`, never
    /// negative here) and the object; None for kinds that go at once.
    fn grace_period(&self, _object: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether a delete always goes through a deletionTimestamp, whatever
    /// the finalizers (namespaces: their contents go first).
    fn delete_is_graceful(&self) -> bool {
        false
    }

    /// Refuses creating any object at all (a custom resource whose CRD is
    /// being deleted).
    fn check_create(&self, _name: &str) -> Result<(), ApiError> {
        Ok(())
    }

    /// Refuses deleting object `name` whatever it holds (kube's system
    /// PriorityClasses).
    fn check_delete(&self, _name: &str) -> Result<(), ApiError> {
        Ok(())
    }

    /// What the kind changes on an object marked for deletion.
    fn prepare_for_delete(&self, _object: &mut Value) {}

    /// The field labels `fieldSelector` may name.
    fn field_labels(&self) -> &'static FieldLabels {
        &FieldLabels::METADATA_ONLY
    }

    /// The columns of `kubectl get`.
    fn printer(&self) -> &'static Printer {
        &crate::table::DEFAULT
    }

    /// A Table's column definitions: the printer's, unless the kind's
    /// columns are only known at runtime (custom resources).
    fn table_columns(&self) -> Vec<ColumnDefinition> {
        self.printer().columns()
    }

    /// One object's cells, one per column of [`Strategy::table_columns`].
    fn table_cells(&self, object: &Value, now_unix_seconds: i64) -> Vec<Value> {
        self.printer().cells(object, now_unix_seconds)
    }
}

/// What must happen in storage around a kind's writes (kube's store
/// `BeginCreate` / `AfterDelete` decorators).
#[async_trait]
pub trait WriteHooks: Send + Sync + Debug {
    /// Before a new object is stored: may change it and take resources for
    /// it. The returned undo runs if the object is not stored after all.
    async fn begin_create(&self, object: &mut Value, dry_run: bool) -> Result<Option<Undo>, ApiError>;

    /// After an object has been removed from storage.
    async fn after_delete(&self, object: &Value);

    /// After an update has been stored: what `old` held and `new` does not
    /// may be given back.
    async fn after_update(&self, _old: &Value, _new: &Value) {}
}

/// Gives back what a `begin_create` took.
pub type Undo = Box<dyn FnOnce() -> futures_util::future::BoxFuture<'static, ()> + Send>;
