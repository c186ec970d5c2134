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
    pub fn check_supported(&self, group: &str, resource: &str) -> Result<(), SelectorError> {
        self.terms.iter().try_for_each(|t| convert(group, resource, &t.field).map(|_| ()))
    }

    /// Whether `object` (its JSON as stored) satisfies every term. A label the
    /// resource does not support reads as "" (callers reject those first).
    pub fn matches(&self, group: &str, resource: &str, object: &Value) -> bool {
        self.terms.iter().all(|t| {
            let field = convert(group, resource, &t.field).unwrap_or(&t.field);
            let have = field_value(group, resource, object, field).unwrap_or_default();
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
#[derive(Clone, Copy)]
enum Refusal {
    /// Kinds with their own conversion func (core kinds).
    NotSupported,
    /// batch/v1 Job's conversion func.
    Job,
    /// Kinds without a conversion func: kube's default, metadata only.
    MetadataOnly,
}

const METADATA_ONLY: &[&str] = &["metadata.name", "metadata.namespace"];
const POD_LABELS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];
const EVENT_LABELS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
];

/// The field labels a resource accepts (kube's conversion funcs for v1 of
/// each group). Cluster-scoped nodes and namespaces do not accept
/// `metadata.namespace`; apps/v1 kinds, including ReplicaSet's
/// `status.replicas`, fall back to the metadata-only default as in kube.
fn accepted(group: &str, resource: &str) -> (&'static [&'static str], Refusal) {
    match (group, resource) {
        ("", "pods") => (POD_LABELS, Refusal::NotSupported),
        ("", "nodes") => (&["metadata.name", "spec.unschedulable"], Refusal::NotSupported),
        ("", "namespaces") => (&["status.phase", "metadata.name"], Refusal::NotSupported),
        ("", "secrets") => (&["type", "metadata.namespace", "metadata.name"], Refusal::NotSupported),
        ("", "services") => {
            (&["metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"], Refusal::NotSupported)
        }
        ("", "events") => (EVENT_LABELS, Refusal::NotSupported),
        ("batch", "jobs") => (&["metadata.name", "metadata.namespace", "status.successful"], Refusal::Job),
        _ => (METADATA_ONLY, Refusal::MetadataOnly),
    }
}

/// The label kube would select on for `label`, or its refusal.
fn convert<'a>(group: &str, resource: &str, label: &'a str) -> Result<&'a str, SelectorError> {
    // Old v1 clients ask for pods by `spec.host`.
    if (group, resource, label) == ("", "pods", "spec.host") {
        return Ok("spec.nodeName");
    }
    let (labels, refusal) = accepted(group, resource);
    if labels.contains(&label) {
        return Ok(label);
    }
    let message = match refusal {
        Refusal::NotSupported => format!("field label not supported: {label}"),
        Refusal::Job => format!("field label {} not supported for Job", go_quote(label)),
        Refusal::MetadataOnly => format!(
            "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
            go_quote(label)
        ),
    };
    Err(SelectorError::UnsupportedField { label: label.to_string(), message })
}

/// The value kube's `GetAttrs` gives `field` for this object, rendered as kube
/// renders it: strings as they are ("" when absent), booleans `true`/`false`
/// and integers in decimal (their Go zero value when absent). `None` when the
/// resource has no such selectable field (kube compares those as "").
pub fn field_value(group: &str, resource: &str, object: &Value, field: &str) -> Option<String> {
    let text = |path: &[&str]| Some(string_at(object, path));
    let cluster_scoped = matches!((group, resource), ("", "nodes") | ("", "namespaces"));
    match field {
        "metadata.name" => return text(&["metadata", "name"]),
        "metadata.namespace" if !cluster_scoped => return text(&["metadata", "namespace"]),
        _ => {}
    }
    match (group, resource, field) {
        ("", "pods", "spec.nodeName" | "spec.host") => text(&["spec", "nodeName"]),
        ("", "pods", "spec.restartPolicy") => text(&["spec", "restartPolicy"]),
        ("", "pods", "spec.schedulerName") => text(&["spec", "schedulerName"]),
        ("", "pods", "spec.serviceAccountName") => text(&["spec", "serviceAccountName"]),
        ("", "pods", "spec.hostNetwork") => Some(bool_at(object, &["spec", "hostNetwork"])),
        ("", "pods", "status.phase") => text(&["status", "phase"]),
        ("", "pods", "status.podIP") => Some(pod_ip(object)),
        ("", "pods", "status.nominatedNodeName") => text(&["status", "nominatedNodeName"]),
        ("", "nodes", "spec.unschedulable") => Some(bool_at(object, &["spec", "unschedulable"])),
        ("", "namespaces", "status.phase") => text(&["status", "phase"]),
        ("", "secrets", "type") => text(&["type"]),
        ("", "services", "spec.clusterIP") => text(&["spec", "clusterIP"]),
        ("", "services", "spec.type") => text(&["spec", "type"]),
        ("", "events", "source") => {
            // kube falls back to the reporting controller for newer events.
            let component = string_at(object, &["source", "component"]);
            if component.is_empty() { text(&["reportingComponent"]) } else { Some(component) }
        }
        ("", "events", "reason" | "reportingComponent" | "type") => text(&[field]),
        ("", "events", _) => {
            let sub = field.strip_prefix("involvedObject.")?;
            EVENT_LABELS.contains(&field).then(|| string_at(object, &["involvedObject", sub]))
        }
        ("batch", "jobs", "status.successful") => Some(int_at(object, &["status", "succeeded"])),
        // In kube's attributes, though apps/v1 does not accept the label.
        ("apps", "replicasets", "status.replicas") => Some(int_at(object, &["status", "replicas"])),
        _ => None,
    }
}

fn at<'v>(object: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(object, |v, k| v.get(*k))
}

fn string_at(object: &Value, path: &[&str]) -> String {
    at(object, path).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn bool_at(object: &Value, path: &[&str]) -> String {
    at(object, path).and_then(Value::as_bool).unwrap_or(false).to_string()
}

fn int_at(object: &Value, path: &[&str]) -> String {
    at(object, path).and_then(Value::as_i64).unwrap_or(0).to_string()
}

/// kube reads the primary IP from `status.podIPs[0]`; v1 objects written
/// with only `status.podIP` convert to that same list.
fn pod_ip(object: &Value) -> String {
    at(object, &["status", "podIPs"])
        .and_then(|ips| ips.get(0))
        .and_then(|ip| ip.get("ip"))
        .and_then(Value::as_str)
        .map_or_else(|| string_at(object, &["status", "podIP"]), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sel(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap()
    }

    fn err(s: &str) -> String {
        FieldSelector::parse(s).expect_err(s).to_string()
    }

    fn unsupported(s: &str, group: &str, resource: &str) -> String {
        sel(s).check_supported(group, resource).expect_err(s).to_string()
    }

    #[test]
    fn empty_selects_everything() {
        for s in ["", ",", ",,"] {
            let f = sel(s);
            assert!(f.is_empty());
            assert!(f.matches("", "configmaps", &json!({})));
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
        assert!(sel("metadata.name=foo").matches("", "configmaps", &cm));
        assert!(sel("metadata.name==foo,metadata.namespace=ns").matches("", "configmaps", &cm));
        assert!(!sel("metadata.name!=foo").matches("", "configmaps", &cm));
        assert!(sel("metadata.name!=bar").matches("", "configmaps", &cm));
        assert!(!sel("metadata.namespace=other").matches("", "configmaps", &cm));
        // An empty value selects objects whose field is empty or absent.
        assert!(sel("metadata.namespace=").matches("", "configmaps", &json!({"metadata": {"name": "x"}})));
    }

    #[test]
    fn escapes() {
        let f = sel(r"metadata.name=a\,b\=c\\d");
        assert_eq!(f.exact_name(), Some(r"a,b=c\d"));
        assert!(f.matches("", "configmaps", &json!({"metadata": {"name": r"a,b=c\d"}})));
        // The escaped comma does not split the selector.
        let two = sel(r"metadata.name=x\,y,metadata.namespace=n");
        assert!(two.matches("", "configmaps", &json!({"metadata": {"name": "x,y", "namespace": "n"}})));
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
            sel("x=1").check_supported("", "pods"),
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
            assert_eq!(sel(s).check_supported(group, resource), Ok(()), "{s} on {resource}");
        }
    }

    #[test]
    fn pod_fields() {
        let running = json!({
            "metadata": {"name": "p1", "namespace": "default"},
            "spec": {"nodeName": "node-a", "restartPolicy": "Always", "hostNetwork": true},
            "status": {"phase": "Running", "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}
        });
        let pending =
            json!({"metadata": {"name": "p2", "namespace": "default"}, "status": {"phase": "Pending"}});
        let f = sel("status.phase=Running");
        assert!(f.matches("", "pods", &running));
        assert!(!f.matches("", "pods", &pending));
        assert!(sel("status.phase!=Running").matches("", "pods", &pending));
        assert!(sel("status.phase!=Succeeded,status.phase!=Failed").matches("", "pods", &running));
        assert!(sel("spec.nodeName=node-a").matches("", "pods", &running));
        assert!(sel("spec.host=node-a").matches("", "pods", &running));
        assert!(sel("spec.nodeName=").matches("", "pods", &pending));
        assert!(sel("spec.hostNetwork=true").matches("", "pods", &running));
        assert!(sel("spec.hostNetwork=false").matches("", "pods", &pending));
        assert!(sel("status.podIP=10.0.0.1").matches("", "pods", &running));
        // Accepted, but kube has no such attribute: it reads as "".
        assert!(!sel("status.podIPs=10.0.0.1").matches("", "pods", &running));
        assert!(sel("status.podIPs=").matches("", "pods", &running));
        assert_eq!(field_value("", "pods", &running, "status.podIPs"), None);
        let legacy = json!({"status": {"podIP": "10.0.0.9"}});
        assert_eq!(field_value("", "pods", &legacy, "status.podIP").as_deref(), Some("10.0.0.9"));
    }

    #[test]
    fn other_resource_fields() {
        let node = json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": true}});
        assert!(sel("spec.unschedulable=true").matches("", "nodes", &node));
        assert!(sel("spec.unschedulable=false").matches("", "nodes", &json!({"metadata": {"name": "n2"}})));

        let job = json!({"metadata": {"name": "j"}, "status": {"succeeded": 3}});
        assert_eq!(field_value("batch", "jobs", &job, "status.successful").as_deref(), Some("3"));
        assert!(sel("status.successful=0").matches("batch", "jobs", &json!({"metadata": {"name": "j"}})));

        let secret = json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls"});
        assert!(sel("type=kubernetes.io/tls").matches("", "secrets", &secret));
        assert!(!sel("type=Opaque").matches("", "secrets", &secret));

        let ns = json!({"metadata": {"name": "kube-system"}, "status": {"phase": "Active"}});
        assert!(sel("status.phase=Active,metadata.name=kube-system").matches("", "namespaces", &ns));

        let svc = json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.10"}});
        assert!(sel("spec.type=NodePort,spec.clusterIP=10.96.0.10").matches("", "services", &svc));

        let event = json!({
            "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p1", "uid": "u-1"},
            "reason": "Scheduled", "type": "Normal", "reportingComponent": "default-scheduler"
        });
        assert!(
            sel("involvedObject.kind=Pod,involvedObject.name=p1,involvedObject.uid=u-1")
                .matches("", "events", &event)
        );
        assert!(sel("involvedObject.namespace=").matches("", "events", &event));
        // `source` falls back to reportingComponent when source.component is empty.
        assert!(sel("source=default-scheduler").matches("", "events", &event));
        let kubelet = json!({"source": {"component": "kubelet"}, "reportingComponent": "x"});
        assert_eq!(field_value("", "events", &kubelet, "source").as_deref(), Some("kubelet"));
        assert_eq!(field_value("", "events", &event, "involvedObject.bogus"), None);
    }
}
