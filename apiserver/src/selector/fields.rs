//! Field selectors: `field=value`, `field==value`, `field!=value`, joined by
//! commas (AND), with `\,` `\=` `\\` escapes in values.
//!
//! Which field labels a resource accepts, the refusal text, and how each
//! field's value is rendered mirror kube-apiserver's per-kind field-label
//! conversion funcs and `GetAttrs`, so `kubectl --field-selector` and
//! informers behave the same against this server.

use serde_json::Value;

use super::{SelectorError, go_quote};

/// A parsed `fieldSelector`: every term must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// In kube's order (sorted by the raw term), which decides which bad
    /// label is reported first and which name `exact_name` gives.
    terms: Vec<Term>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    field: String,
    /// Unescaped.
    value: String,
    negated: bool,
}

impl FieldSelector {
    /// Parses the query parameter; `""` selects everything. Field labels are
    /// not checked here: that needs the resource (`check_supported`).
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut parts = split_terms(s);
        parts.sort_unstable();
        let mut terms = Vec::with_capacity(parts.len());
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((field, op, raw)) = split_term(part) else {
                return Err(SelectorError::Field(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            let value = unescape(raw).map_err(SelectorError::Field)?;
            terms.push(Term { field: field.to_string(), value, negated: op == "!=" });
        }
        Ok(FieldSelector { terms })
    }

    /// True when the selector restricts nothing.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Every field label this selector names must be supported by `resource`,
    /// else the 400 message kube gives (`field label not supported: spec.foo`,
    /// or for kinds without their own labels `"spec.foo" is not a known field
    /// selector: only "metadata.name", "metadata.namespace"`).
    pub fn check_supported(&self, labels: &FieldLabels) -> Result<(), SelectorError> {
        self.terms.iter().try_for_each(|t| labels.convert(&t.field).map(|_| ()))
    }

    /// Whether `object` (its JSON as stored) satisfies every term. A label the
    /// resource does not support reads as "" (callers reject those first).
    pub fn matches(&self, labels: &FieldLabels, object: &Value) -> bool {
        self.matches_attributes(labels, &labels.attributes(object))
    }

    /// Whether an object whose selectable fields are `attributes` satisfies
    /// every term.
    pub fn matches_attributes(&self, labels: &FieldLabels, attributes: &FieldSet) -> bool {
        self.terms.iter().all(|t| {
            let field = labels.convert(&t.field).unwrap_or(&t.field);
            let have = attributes.get(field).unwrap_or_default();
            (have == t.value) != t.negated
        })
    }

    /// The name asked for by `metadata.name=<n>` (or `==`), if any: lets the
    /// server read one key instead of a list.
    pub fn exact_name(&self) -> Option<&str> {
        self.terms.iter().find(|t| !t.negated && t.field == "metadata.name").map(|t| t.value.as_str())
    }
}

/// Splits at commas not preceded by a backslash; escapes stay in place.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(s.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    terms.push(s.get(start..).unwrap_or_default());
    terms
}

/// The first operator from the left, trying `!=`, then `==`, then `=` at
/// each position; the field part is taken verbatim (no trimming, as in kube).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = term.get(i..).unwrap_or_default();
        for op in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((term.get(..i).unwrap_or_default(), op, value));
            }
        }
    }
    None
}

/// Undoes `\\`, `\,` and `\=`; anything else escaped, or a bare `,`/`=`, is refused.
fn unescape(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!("invalid field selector: invalid escape sequence: \\{c}"));
            }
            out.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            // kube prints the rune as a number here (Go's %v of a rune).
            ',' | '=' => {
                return Err(format!("invalid field selector: unescaped character in value: {}", c as u32));
            }
            c => out.push(c),
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// How a kind refuses a label it does not support: each kube conversion func
/// words it its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Kinds with their own conversion func (core kinds).
    NotSupported,
    /// batch/v1 Job's conversion func.
    Job,
    /// Kinds without a conversion func: kube's default, metadata only.
    MetadataOnly,
    /// Conversion funcs that name the group, version and kind they refuse
    /// for (`resource.k8s.io/v1, Kind=ResourceSlice`).
    ForKind(&'static str),
}

/// What one kind lets clients select on: kube's field-label conversion func
/// (which labels, how others are refused, old names) and `GetAttrs` (the
/// value of each field). Each kind module declares its own.
#[derive(Debug, Clone, Copy)]
pub struct FieldLabels {
    pub accepted: &'static [&'static str],
    pub refusal: Refusal,
    /// Old labels kube still converts (`spec.host` for pods' `spec.nodeName`).
    pub aliases: &'static [(&'static str, &'static str)],
    /// Cluster-scoped kinds have no `metadata.namespace` attribute.
    pub cluster_scoped: bool,
    /// The value of a field other than `metadata.name`/`metadata.namespace`,
    /// rendered as kube renders it; None when the kind has no such attribute.
    pub value: fn(&Value, &str) -> Option<String>,
}

impl FieldLabels {
    /// kube's default for kinds without a conversion func.
    pub const METADATA_ONLY: FieldLabels = FieldLabels {
        accepted: &["metadata.name", "metadata.namespace"],
        refusal: Refusal::MetadataOnly,
        aliases: &[],
        cluster_scoped: false,
        value: no_value,
    };

    /// The label kube would select on for `label`, or its refusal.
    fn convert<'a>(&self, label: &'a str) -> Result<&'a str, SelectorError> {
        if let Some((_, to)) = self.aliases.iter().find(|(from, _)| *from == label) {
            return Ok(to);
        }
        if self.accepted.contains(&label) {
            return Ok(label);
        }
        let message = match self.refusal {
            Refusal::NotSupported => format!("field label not supported: {label}"),
            Refusal::Job => format!("field label {} not supported for Job", go_quote(label)),
            Refusal::ForKind(kind) => format!("field label not supported for {kind}: {label}"),
            Refusal::MetadataOnly => format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(label)
            ),
        };
        Err(SelectorError::UnsupportedField { label: label.to_string(), message })
    }

    /// The value kube's `GetAttrs` gives `field` for this object, rendered as
    /// kube renders it: strings as they are ("" when absent), booleans
    /// `true`/`false` and integers in decimal (their Go zero value when
    /// absent). `None` when the kind has no such selectable field (kube
    /// compares those as "").
    pub fn value(&self, object: &Value, field: &str) -> Option<String> {
        match field {
            "metadata.name" => Some(text(object, &["metadata", "name"])),
            "metadata.namespace" if !self.cluster_scoped => Some(text(object, &["metadata", "namespace"])),
            _ => (self.value)(object, field),
        }
    }
}

impl FieldLabels {
    /// Every selectable field's value for `object`, so an object held
    /// encoded is decoded once for all the selectors it is matched against.
    pub fn attributes(&self, object: &Value) -> FieldSet {
        let fields = self.accepted.iter().chain(self.aliases.iter().map(|(_, to)| to));
        FieldSet(fields.map(|field| (*field, self.value(object, field).map(Into::into))).collect())
    }
}

/// The values of one object's selectable fields (kube's `GetAttrs`); a
/// field the kind does not have reads as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet(Box<[Attribute]>);

/// A field label and its value (None: the kind has no such attribute).
type Attribute = (&'static str, Option<Box<str>>);

impl FieldSet {
    fn get(&self, field: &str) -> Option<&str> {
        self.0.iter().find(|(name, _)| *name == field).and_then(|(_, value)| value.as_deref())
    }
}

fn no_value(_: &Value, _: &str) -> Option<String> {
    None
}

fn at<'v>(object: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(object, |v, k| v.get(*k))
}

/// A string attribute: "" when absent.
pub fn text(object: &Value, path: &[&str]) -> String {
    at(object, path).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A boolean attribute: `false` when absent.
pub fn boolean(object: &Value, path: &[&str]) -> String {
    at(object, path).and_then(Value::as_bool).unwrap_or(false).to_string()
}

/// An integer attribute: `0` when absent.
pub fn integer(object: &Value, path: &[&str]) -> String {
    at(object, path).and_then(Value::as_i64).unwrap_or(0).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::kinds;
    use serde_json::json;

    /// The field labels of each kind, as its module declares them.
    fn labels(group: &str, resource: &str) -> &'static FieldLabels {
        match (group, resource) {
            ("", "pods") => &kinds::pod::FIELDS,
            ("", "nodes") => &kinds::node::FIELDS,
            ("", "namespaces") => &kinds::namespace::FIELDS,
            ("", "secrets") => &kinds::secret::FIELDS,
            ("", "services") => &kinds::service::FIELDS,
            ("", "events") => &kinds::event::FIELDS,
            ("batch", "jobs") => &kinds::job::FIELDS,
            ("apps", "replicasets") => &kinds::replicaset::FIELDS,
            _ => &FieldLabels::METADATA_ONLY,
        }
    }

    fn sel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap()
    }

    fn err(s: &str) -> String {
        FieldSelector::parse(s).expect_err(s).to_string()
    }

    fn unsupported(s: &str, group: &str, resource: &str) -> String {
        sel(s).check_supported(labels(group, resource)).expect_err(s).to_string()
    }

    #[test]
    fn empty_selects_everything() {
        for s in ["", ",", ",,"] {
            let f = sel(s);
            assert!(f.is_empty());
            assert!(f.matches(labels("", "configmaps"), &json!({})));
            assert_eq!(f.exact_name(), None);
        }
    }

    #[test]
    fn operators_and_exact_name() {
        assert_eq!(sel("metadata.name=foo").exact_name(), Some("foo"));
        assert_eq!(sel("metadata.name==foo").exact_name(), Some("foo"));
        assert_eq!(sel("metadata.name!=foo").exact_name(), None);
        assert_eq!(sel("metadata.namespace=ns,metadata.name=foo").exact_name(), Some("foo"));
        let cm = json!({"metadata": {"name": "foo", "namespace": "ns"}});
        assert!(sel("metadata.name=foo").matches(labels("", "configmaps"), &cm));
        assert!(sel("metadata.name==foo,metadata.namespace=ns").matches(labels("", "configmaps"), &cm));
        assert!(!sel("metadata.name!=foo").matches(labels("", "configmaps"), &cm));
        assert!(sel("metadata.name!=bar").matches(labels("", "configmaps"), &cm));
        assert!(!sel("metadata.namespace=other").matches(labels("", "configmaps"), &cm));
        // An empty value selects objects whose field is empty or absent.
        assert!(
            sel("metadata.namespace=").matches(labels("", "configmaps"), &json!({"metadata": {"name": "x"}}))
        );
    }

    #[test]
    fn escapes() {
        let f = sel(r"metadata.name=a\,b\=c\\d");
        assert_eq!(f.exact_name(), Some(r"a,b=c\d"));
        assert!(f.matches(labels("", "configmaps"), &json!({"metadata": {"name": r"a,b=c\d"}})));
        // The escaped comma does not split the selector.
        let two = sel(r"metadata.name=x\,y,metadata.namespace=n");
        assert!(
            two.matches(labels("", "configmaps"), &json!({"metadata": {"name": "x,y", "namespace": "n"}}))
        );
        assert_eq!(err(r"a=b\q"), r"invalid field selector: invalid escape sequence: \q");
        assert_eq!(err(r"a=b\"), r"invalid field selector: invalid escape sequence: \");
        assert_eq!(err("a=b=c"), "invalid field selector: unescaped character in value: 61");
        assert_eq!(err("a==b=c"), "invalid field selector: unescaped character in value: 61");
    }

    #[test]
    fn syntax_errors() {
        assert_eq!(err("a"), "invalid selector: 'a'; can't understand 'a'");
        assert_eq!(
            err("metadata.name=x,bogus"),
            "invalid selector: 'metadata.name=x,bogus'; can't understand 'bogus'"
        );
        assert!(matches!(FieldSelector::parse("a"), Err(SelectorError::Field(_))));
        // `!` alone is not an operator; the first `=` is.
        let f = sel("a!b=c");
        assert_eq!(f.terms, vec![Term { field: "a!b".into(), value: "c".into(), negated: false }]);
    }

    #[test]
    fn supported_labels_and_refusals() {
        assert_eq!(
            unsupported("spec.foo=x", "", "configmaps"),
            "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        assert_eq!(unsupported("spec.foo=x", "", "pods"), "field label not supported: spec.foo");
        assert_eq!(
            unsupported("status.failed=1", "batch", "jobs"),
            "field label \"status.failed\" not supported for Job"
        );
        assert_eq!(
            unsupported("metadata.namespace=x", "", "nodes"),
            "field label not supported: metadata.namespace"
        );
        assert_eq!(
            unsupported("status.replicas=0", "apps", "replicasets"),
            "\"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        // The first refusal in kube's (sorted) order is the one reported.
        assert_eq!(unsupported("z.b=1,a.b=2", "", "pods"), "field label not supported: a.b");
        // No trimming: a space belongs to the label.
        assert_eq!(unsupported("metadata.name =x", "", "pods"), "field label not supported: metadata.name ");
        assert!(matches!(
            sel("x=1").check_supported(labels("", "pods")),
            Err(SelectorError::UnsupportedField { label, .. }) if label == "x"
        ));

        for (s, group, resource) in [
            ("metadata.name=a,metadata.namespace=b", "", "configmaps"),
            ("metadata.name=a,metadata.namespace=b", "coordination.k8s.io", "leases"),
            ("metadata.name=a,metadata.namespace=b", "apps", "deployments"),
            ("spec.nodeName=n,status.phase=Running,spec.host=n,status.podIPs=x", "", "pods"),
            ("spec.hostNetwork=true,spec.restartPolicy=Always,status.nominatedNodeName=", "", "pods"),
            ("spec.unschedulable=true,metadata.name=n", "", "nodes"),
            ("status.phase=Active", "", "namespaces"),
            ("type=Opaque", "", "secrets"),
            ("spec.clusterIP=None,spec.type=ClusterIP", "", "services"),
            ("involvedObject.kind=Pod,reason=Failed,source=kubelet,type=Warning", "", "events"),
            ("involvedObject.fieldPath=x,reportingComponent=y,involvedObject.uid=u", "", "events"),
            ("status.successful=1", "batch", "jobs"),
        ] {
            assert_eq!(sel(s).check_supported(labels(group, resource)), Ok(()), "{s} on {resource}");
        }
    }

    #[test]
    fn other_resource_fields() {
        let node = json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true}});
        assert!(sel("spec.unschedulable=true").matches(labels("", "nodes"), &node));
        assert!(
            sel("spec.unschedulable=false")
                .matches(labels("", "nodes"), &json!({"metadata": {"name": "n2"}}))
        );

        let job = json!({"metadata": {"name": "j"}, "status": {"succeeded": 3}});
        assert_eq!(labels("batch", "jobs").value(&job, "status.successful").as_deref(), Some("3"));
        assert!(
            sel("status.successful=0").matches(labels("batch", "jobs"), &json!({"metadata": {"name": "j"}}))
        );

        let secret = json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls"});
        assert!(sel("type=kubernetes.io/tls").matches(labels("", "secrets"), &secret));
        assert!(!sel("type=Opaque").matches(labels("", "secrets"), &secret));

        let ns = json!({"metadata": {"name": "kube-system"}, "status": {"phase": "Active"}});
        assert!(sel("status.phase=Active,metadata.name=kube-system").matches(labels("", "namespaces"), &ns));

        let svc = json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.10"}});
        assert!(sel("spec.type=NodePort,spec.clusterIP=10.96.0.10").matches(labels("", "services"), &svc));
    }
}
