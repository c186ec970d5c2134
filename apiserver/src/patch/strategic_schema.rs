//! The patch metadata strategic merge patch needs for the built-in kinds.
//!
//! kube-apiserver reads it from the `patchStrategy` / `patchMergeKey` struct
//! tags of the Go types in k8s.io/api; we have no Go types, so the tags are
//! recorded in `apiserver/codegen/api/kube-types.txt` and `rtcd-apiserver-codegen`
//! turns them into `nodes`: a static tree of [`TypeNode`]s, one per message
//! (`nodes::CORE_V1_POD_SPEC`), listing the fields that carry a tag or lead to a
//! struct that does. A field that is not listed is plain: objects under it merge
//! key by key and lists under it are replaced whole, which is exactly what an
//! untagged Go field gets. Notably untagged, hence replaced whole: `tolerations`,
//! `args`/`command`, `envFrom`, `node.spec.taints`, `namespace.spec.finalizers`,
//! `serviceAccount.imagePullSecrets`, `endpoints.subsets`,
//! `statefulSet.spec.volumeClaimTemplates`, `managedFields`.

#[rustfmt::skip]
pub(crate) mod nodes;

/// How a list-valued field is combined with the live list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// No `patchStrategy` tag: the patch's list replaces the live one.
    Replace,
    /// `patchStrategy:"merge"` with `patchMergeKey`: items are objects
    /// identified by the value of this key.
    MergeByKey(&'static str),
    /// `patchStrategy:"merge"` on a list of primitives: a set union that
    /// keeps order (`metadata.finalizers`, `node.spec.podCIDRs`).
    MergeSet,
}

/// The patch metadata of one field of a [`TypeNode`].
#[derive(Debug)]
pub struct FieldMeta {
    /// The JSON name of the field.
    pub name: &'static str,
    /// How the field is patched when it holds a list.
    pub list: ListStrategy,
    /// `patchStrategy` includes `retainKeys`. Clients (kubectl) use it to
    /// decide when to send a `$retainKeys` directive; the server honours the
    /// directive wherever it appears, as kube-apiserver does, so this is a
    /// record of the tag rather than a gate.
    pub retain_keys: bool,
    /// `patchStrategy:"replace"` on a struct-valued field
    /// (`podDisruptionBudget.spec.selector`): kube replaces the live value with
    /// the patch's instead of merging the two.
    pub replace: bool,
    /// The type of the field's value; for a list, the type of each item.
    /// `None` means plain (nothing tagged below).
    pub node: Option<&'static TypeNode>,
}

/// A Go struct as far as strategic merge patch cares: its tagged fields and
/// the fields that lead to tagged structs.
#[derive(Debug)]
pub struct TypeNode {
    /// The Go type name, for error messages and debugging.
    pub name: &'static str,
    /// The fields with patch metadata; every other field is plain.
    pub fields: &'static [FieldMeta],
}

impl TypeNode {
    /// The metadata of field `name`, if it has any.
    pub fn field(&self, name: &str) -> Option<&FieldMeta> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A type with no tagged fields anywhere below it (maps, labels, data...).
pub static PLAIN: TypeNode = TypeNode { name: "", fields: &[] };

/// The patch metadata of a built-in kind (`group` is `""` for core), or
/// `None` if strategic merge patch is not supported for it — kube answers
/// 415 for custom resources, which have no Go types to read tags from.
pub fn for_kind(group: &str, kind: &str) -> Option<&'static TypeNode> {
    nodes::KINDS.iter().find(|(g, k, _)| *g == group && *k == kind).map(|(_, _, node)| *node)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata of the field at `path` below `node`, through the nodes of the fields above it.
    fn at(node: &'static TypeNode, path: &[&str]) -> &'static FieldMeta {
        let (last, above) = path.split_last().unwrap();
        let node = above.iter().fold(node, |node, name| node.field(name).and_then(|f| f.node).unwrap());
        node.field(last).unwrap_or_else(|| panic!("{path:?}"))
    }

    #[test]
    fn kinds_resolve_to_the_nodes_of_their_messages() {
        assert!(std::ptr::eq(for_kind("", "Pod").unwrap(), &nodes::CORE_V1_POD));
        assert!(std::ptr::eq(for_kind("apps", "Deployment").unwrap(), &nodes::APPS_V1_DEPLOYMENT));
        // DeleteOptions decodes in any group version but is not a resource
        assert!(for_kind("", "DeleteOptions").is_none());
    }

    #[test]
    fn pod_disruption_budget() {
        let pdb = for_kind("policy", "PodDisruptionBudget").unwrap();
        assert_eq!(at(pdb, &["status", "conditions"]).list, ListStrategy::MergeByKey("type"));
        assert_eq!(at(pdb, &["metadata", "finalizers"]).list, ListStrategy::MergeSet);
        let selector = at(pdb, &["spec", "selector"]);
        assert!(selector.replace && selector.node.is_none());
    }

    #[test]
    fn embedded_structs_and_replaced_lists_keep_their_tags() {
        let pod = for_kind("", "Pod").unwrap();
        // EphemeralContainer embeds EphemeralContainerCommon, which carries the tags
        let env = at(pod, &["spec", "ephemeralContainers", "env"]);
        assert_eq!(env.list, ListStrategy::MergeByKey("name"));
        assert_eq!(at(pod, &["spec", "evictionResponders"]).list, ListStrategy::MergeByKey("name"));
        // containerStatuses is replaced whole; its items' own tags are still known
        let statuses = at(pod, &["status", "containerStatuses"]);
        assert_eq!(statuses.list, ListStrategy::Replace);
        assert_eq!(at(statuses.node.unwrap(), &["volumeMounts"]).list, ListStrategy::MergeByKey("mountPath"));
        let strategy = at(for_kind("apps", "Deployment").unwrap(), &["spec", "strategy"]);
        assert!(strategy.retain_keys && !strategy.replace);
    }
}
