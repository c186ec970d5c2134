//! What the server needs to know to serve one kind of object: its names,
//! scope, subresources and where its objects live in storage. Built-in kinds
//! describe themselves in `kinds/`; CustomResourceDefinitions will make the
//! same description at runtime.

use super::scale::ScalePaths;

/// One served resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// API group; "" for the core (legacy) group.
    pub group: String,
    pub version: String,
    pub kind: String,
    /// The plural resource name in URLs (`configmaps`).
    pub plural: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    /// `kubectl get <category>` lists every resource in it (`all`).
    pub categories: Vec<String>,
    /// Where objects live under the etcd prefix: kube-apiserver's own
    /// choices, so an etcd written by one reads the same in the other.
    pub storage_prefix: String,
    pub has_status: bool,
    /// Where the `scale` subresource finds replicas, when it is served.
    pub scale: Option<ScalePaths>,
    /// Objects that storage removes after this many seconds (Events).
    pub ttl_seconds: Option<i64>,
    /// Whether a delete answers with the deleted object rather than a
    /// Status (kube's store `ReturnDeletedObject`).
    pub returns_deleted: bool,
    /// Subresources besides status and scale, each served by its own
    /// handler (a pod's binding and eviction).
    pub actions: &'static [Action],
    /// Another resource (group, plural) whose objects these are, in
    /// another shape: events.k8s.io Events are core Events.
    pub shares_storage_of: Option<(&'static str, &'static str)>,
}

/// A subresource with its own handler: what discovery says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    pub name: &'static str,
    /// The group, version and kind of the object it takes and answers.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub verbs: &'static [&'static str],
}

/// What kube-scheduler posts: `pods/binding`.
pub const POD_BINDING: Action =
    Action { name: "binding", group: "", version: "v1", kind: "Binding", verbs: &["create"] };
/// What `kubectl drain` posts: `pods/eviction`.
pub const POD_EVICTION: Action =
    Action { name: "eviction", group: "policy", version: "v1", kind: "Eviction", verbs: &["create"] };
/// What `kubectl debug` patches: `pods/ephemeralcontainers`.
pub const POD_EPHEMERAL_CONTAINERS: Action = Action {
    name: "ephemeralcontainers",
    group: "",
    version: "v1",
    kind: "Pod",
    verbs: &["get", "patch", "update"],
};
/// What `kubectl patch --subresource resize` writes: `pods/resize`.
pub const POD_RESIZE: Action =
    Action { name: "resize", group: "", version: "v1", kind: "Pod", verbs: &["get", "patch", "update"] };
/// What the namespace lifecycle writes: `namespaces/finalize`.
pub const NAMESPACE_FINALIZE: Action =
    Action { name: "finalize", group: "", version: "v1", kind: "Namespace", verbs: &["update"] };
/// `kubectl create token`: `serviceaccounts/token`.
pub const SERVICE_ACCOUNT_TOKEN: Action = Action {
    name: "token",
    group: "authentication.k8s.io",
    version: "v1",
    kind: "TokenRequest",
    verbs: &["create"],
};

impl Resource {
    /// A namespaced resource in `group`/`v1` stored under its plural, with no
    /// short names, categories or subresources: adjust with the builders.
    pub fn new(group: &str, kind: &str, plural: &str) -> Resource {
        Resource {
            group: group.to_string(),
            version: "v1".to_string(),
            kind: kind.to_string(),
            plural: plural.to_string(),
            namespaced: true,
            short_names: Vec::new(),
            categories: Vec::new(),
            storage_prefix: plural.to_string(),
            has_status: false,
            scale: None,
            ttl_seconds: None,
            returns_deleted: false,
            actions: &[],
            shares_storage_of: None,
        }
    }

    pub fn cluster_scoped(mut self) -> Self {
        self.namespaced = false;
        self
    }

    pub fn short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|n| n.to_string()).collect();
        self
    }

    /// In kubectl's `all` category.
    pub fn in_all(mut self) -> Self {
        self.categories = vec!["all".to_string()];
        self
    }

    /// In the `api-extensions` category: what extends the API (CRDs,
    /// admission configurations), `kubectl get api-extensions`.
    pub fn in_api_extensions(mut self) -> Self {
        self.categories = vec!["api-extensions".to_string()];
        self
    }

    pub fn stored_under(mut self, prefix: &str) -> Self {
        self.storage_prefix = prefix.to_string();
        self
    }

    pub fn with_status(mut self) -> Self {
        self.has_status = true;
        self
    }

    /// The scale subresource of kube's workloads (`.spec.replicas`).
    pub fn with_scale(mut self) -> Self {
        self.scale = Some(ScalePaths::Workload);
        self
    }

    /// A delete answers with the object deleted, as kube's stores of pods,
    /// services, claims and a few more do.
    pub fn returns_deleted_object(mut self) -> Self {
        self.returns_deleted = true;
        self
    }

    /// The scale subresource of ReplicationControllers (`.spec.replicas`,
    /// a plain label map as selector).
    pub fn with_controller_scale(mut self) -> Self {
        self.scale = Some(ScalePaths::ReplicationController);
        self
    }

    /// Subresources served by their own handlers.
    pub fn with_actions(mut self, actions: &'static [Action]) -> Self {
        self.actions = actions;
        self
    }

    /// Stored under the same keys as the resource `plural` of `group`.
    pub fn sharing_storage_of(mut self, group: &'static str, plural: &'static str) -> Self {
        self.shares_storage_of = Some((group, plural));
        self
    }

    /// The action subresource named `name`, if this resource serves it.
    pub fn action(&self, name: &str) -> Option<&'static Action> {
        self.actions.iter().find(|a| a.name == name)
    }

    pub fn with_ttl(mut self, seconds: i64) -> Self {
        self.ttl_seconds = Some(seconds);
        self
    }

    /// `v1` or `apps/v1`, as in `apiVersion`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// `configmaps` or `deployments.apps`, as kube names a resource in errors.
    pub fn qualified_name(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `ConfigMap` or `Deployment.apps`, as kube names a kind in errors.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() { self.kind.clone() } else { format!("{}.{}", self.kind, self.group) }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// `singularName` in discovery: the kind in lower case.
    pub fn singular(&self) -> String {
        self.kind.to_lowercase()
    }

    /// The verbs of the resource itself, as discovery lists them: every
    /// one, but namespaces are not deleted as a collection (kube's
    /// namespace store has no DeleteCollection).
    pub fn verbs(&self) -> &'static [&'static str] {
        const ALL: &[&str] =
            &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
        const NAMESPACES: &[&str] = &["create", "delete", "get", "list", "patch", "update", "watch"];
        if self.is("", "namespaces") { NAMESPACES } else { ALL }
    }

    /// Subresources served besides the object itself.
    pub fn subresources(&self) -> &'static [&'static str] {
        match (self.has_status, self.scale.is_some()) {
            (true, true) => &["status", "scale"],
            (true, false) => &["status"],
            (false, true) => &["scale"],
            (false, false) => &[],
        }
    }

    pub fn is(&self, group: &str, plural: &str) -> bool {
        self.group == group && self.plural == plural
    }
}
