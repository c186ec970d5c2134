//! The labels of kube's request families, derived as kube derives them
//! (`endpoints/metrics`): the verb from the HTTP method and the scope
//! (`CanonicalVerb`: LIST for a collection GET), then WATCH for `?watch=`,
//! APPLY for an apply patch, CONNECT for the connect subresources, `other`
//! for anything else (`cleanVerb`); the scope from the RequestInfo
//! (`CleanScope`); `dry_run` from the query (`cleanDryRun`); and which
//! answers kube records the size of.

use std::borrow::Cow;

use axum::http::{Method, Request, header};

use super::tracker::Route;
use crate::request::RequestInfo;

/// `metrics.APIServerComponent`.
pub const APISERVER: &str = "apiserver";
/// Subresources reported as CONNECT whatever the method (`validConnectRequests`).
const CONNECT_SUBRESOURCES: &[&str] = &["log", "exec", "portforward", "attach", "proxy"];
/// Subresources whose routes kube installs as CONNECT actions (no response size).
const CONNECT_ACTIONS: &[&str] = &["exec", "attach", "portforward", "proxy"];
/// `types.ApplyPatchType`, compared as kube does: the whole header.
const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// What a request's labels are read from, taken as it comes in (before
/// the chain consumes it).
#[derive(Debug)]
pub struct Incoming {
    pub(super) info: Option<RequestInfo>,
    method: Method,
    /// `?watch=` with a value other than `0` or `false` (`getVerbIfWatch`).
    watch: bool,
    /// A PATCH with the apply patch content type.
    apply: bool,
    dry_run: &'static str,
}

impl Incoming {
    pub fn of<B>(request: &Request<B>) -> Incoming {
        let query = request.uri().query().unwrap_or_default();
        let content_type = request.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes());
        Incoming {
            info: request.extensions().get::<RequestInfo>().cloned(),
            method: request.method().clone(),
            watch: watch_param(query),
            apply: content_type == Some(APPLY_PATCH.as_bytes()),
            dry_run: dry_run(query),
        }
    }
}

/// One series' label values (borrowed from the request).
#[derive(Debug, Clone, Copy)]
pub(super) struct Labels<'a> {
    pub(super) verb: &'static str,
    pub(super) dry_run: &'static str,
    group: &'a str,
    version: &'a str,
    resource: &'a str,
    subresource: &'a str,
    pub(super) scope: &'static str,
    component: &'static str,
}

impl<'a> Labels<'a> {
    pub(super) fn full(&self) -> [&'a str; 8] {
        let l = *self;
        [l.verb, l.dry_run, l.group, l.version, l.resource, l.subresource, l.scope, l.component]
    }

    pub(super) fn with_code(&self, code: &'a str) -> [&'a str; 9] {
        let l = *self;
        [l.verb, l.dry_run, l.group, l.version, l.resource, l.subresource, l.scope, l.component, code]
    }

    pub(super) fn without_dry_run(&self) -> [&'a str; 7] {
        let l = *self;
        [l.verb, l.group, l.version, l.resource, l.subresource, l.scope, l.component]
    }

    pub(super) fn termination(&self, code: &'a str) -> [&'a str; 8] {
        let l = *self;
        [l.verb, l.group, l.version, l.resource, l.subresource, l.scope, l.component, code]
    }

    pub(super) fn to_owned(self) -> OwnedLabels {
        OwnedLabels {
            verb: self.verb,
            dry_run: self.dry_run,
            group: self.group.to_string(),
            version: self.version.to_string(),
            resource: self.resource.to_string(),
            subresource: self.subresource.to_string(),
            scope: self.scope,
            component: self.component,
        }
    }
}

/// Labels kept until a streamed answer ends.
#[derive(Debug)]
pub(super) struct OwnedLabels {
    verb: &'static str,
    dry_run: &'static str,
    group: String,
    version: String,
    resource: String,
    subresource: String,
    scope: &'static str,
    component: &'static str,
}

impl OwnedLabels {
    pub(super) fn borrow(&self) -> Labels<'_> {
        Labels {
            verb: self.verb,
            dry_run: self.dry_run,
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
            subresource: &self.subresource,
            scope: self.scope,
            component: self.component,
        }
    }
}

/// The labels of a request an instrumented handler took (None: it is not
/// counted).
pub(super) fn route_labels(incoming: &Incoming, route: Route) -> Option<Labels<'_>> {
    match (route, &incoming.info) {
        (Route::Unrouted, _) => None,
        (Route::Resource, Some(RequestInfo::Resource(_))) => Some(filter_labels(incoming, APISERVER, "")),
        (Route::Resource, _) => None,
        (Route::NonResource { subresource, component }, _) => Some(Labels {
            verb: reported_verb(&incoming.method, "", incoming.watch, incoming.apply, false),
            dry_run: incoming.dry_run,
            group: "",
            version: "",
            resource: "",
            subresource,
            scope: "",
            component,
        }),
    }
}

/// The labels kube's filter-level recorders (RecordDroppedRequest,
/// RecordRequestTermination, RecordLongRunning) read off the RequestInfo;
/// a non-resource request's subresource is given (its path, or nothing).
pub(super) fn filter_labels<'a>(
    incoming: &'a Incoming,
    component: &'static str,
    non_resource: &'a str,
) -> Labels<'a> {
    let scope = incoming.info.as_ref().map_or("", clean_scope);
    let (group, version, resource, subresource, connect) = match &incoming.info {
        Some(RequestInfo::Resource(r)) => {
            let subresource = r.subresource.as_deref().unwrap_or_default();
            let connect = CONNECT_SUBRESOURCES.contains(&subresource);
            (r.group.as_str(), r.version.as_str(), r.resource.as_str(), subresource, connect)
        }
        _ => ("", "", "", non_resource, false),
    };
    Labels {
        verb: reported_verb(&incoming.method, scope, incoming.watch, incoming.apply, connect),
        dry_run: incoming.dry_run,
        group,
        version,
        resource,
        subresource,
        scope,
        component,
    }
}

/// Whether kube records the answer's size: its route's verb is GET or LIST
/// (the instrumented non-resource handlers are all GET).
pub(super) fn wants_size(incoming: &Incoming, route: Route) -> bool {
    match (route, &incoming.info) {
        (Route::NonResource { .. }, _) => true,
        (Route::Resource, Some(RequestInfo::Resource(r))) => {
            let connect_action = r.subresource.as_deref().is_some_and(|s| CONNECT_ACTIONS.contains(&s));
            matches!(incoming.method, Method::GET | Method::HEAD) && !connect_action
        }
        _ => false,
    }
}

/// kube's `CleanScope`.
pub fn clean_scope(info: &RequestInfo) -> &'static str {
    match info {
        RequestInfo::Resource(r) if r.name.is_some() || r.verb == "create" => "resource",
        RequestInfo::Resource(r) if r.namespace.is_some() => "namespace",
        RequestInfo::Resource(_) => "cluster",
        RequestInfo::NonResource { .. } => "",
    }
}

/// kube's reported verb: `cleanVerb(CanonicalVerb(method, scope), ...)`.
pub fn reported_verb(method: &Method, scope: &str, watch: bool, apply: bool, connect: bool) -> &'static str {
    let collection = scope != "resource" && !scope.is_empty();
    let mut verb = match *method {
        Method::GET | Method::HEAD if collection => "LIST",
        Method::GET | Method::HEAD => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::CONNECT => "CONNECT",
        // Not among kube's valid request methods.
        _ => "other",
    };
    if watch && *method == Method::GET {
        verb = "WATCH";
    }
    if verb == "PATCH" && apply {
        verb = "APPLY";
    }
    if connect {
        verb = "CONNECT";
    }
    verb
}

/// `getVerbIfWatch`'s test: the first `watch` value is not `0` or `false`.
pub fn watch_param(query: &str) -> bool {
    query_values(query, "watch").next().is_some_and(|v| !matches!(v.to_lowercase().as_str(), "0" | "false"))
}

/// kube's `cleanDryRun`: "" without `dryRun`, "All" when every value is
/// (the only valid one), "invalid" otherwise.
pub fn dry_run(query: &str) -> &'static str {
    if !query.contains("dryRun") {
        return "";
    }
    let mut values = query_values(query, "dryRun").peekable();
    if values.peek().is_none() {
        return "";
    }
    match values.all(|v| v == "All") {
        true => "All",
        false => "invalid",
    }
}

/// The values of `key` in a query string, decoded as Go's `url.ParseQuery`
/// decodes them (pairs that do not decode are skipped); borrowed unless
/// escaped.
fn query_values<'a>(query: &'a str, key: &'a str) -> impl Iterator<Item = Cow<'a, str>> + 'a {
    query.split('&').filter(|pair| !pair.is_empty() && !pair.contains(';')).filter_map(move |pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (unescape(k)? == key).then(|| unescape(v)).flatten()
    })
}

/// Go's `QueryUnescape`: `+` is a space, `%XX` a byte; None if malformed.
fn unescape(text: &str) -> Option<Cow<'_, str>> {
    if !text.contains(['%', '+']) {
        return Some(Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
}

/// A request as the chain hands it to `observe`, for tests.
#[cfg(test)]
pub(super) fn incoming(method: Method, path: &str, query: &str, content_type: Option<&str>) -> Incoming {
    let uri = if query.is_empty() { path.to_string() } else { format!("{path}?{query}") };
    let mut request = Request::builder().method(method.clone()).uri(uri);
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    let mut request = request.body(()).unwrap_or_default();
    let info = RequestInfo::parse(&method, path, watch_param(query));
    request.extensions_mut().insert(info);
    Incoming::of(&request)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(verb, scope)` as kube labels a routed request.
    fn verb_and_scope(
        method: Method,
        path: &str,
        query: &str,
        content_type: Option<&str>,
    ) -> (String, String) {
        let incoming = incoming(method, path, query, content_type);
        let labels = route_labels(&incoming, Route::Resource).unwrap();
        (labels.verb.to_string(), labels.scope.to_string())
    }

    #[test]
    fn verbs_and_scopes_are_kubes() {
        let cm = "/api/v1/namespaces/default/configmaps";
        let cases = [
            (Method::GET, format!("{cm}/a"), "", None, ("GET", "resource")),
            (Method::HEAD, format!("{cm}/a"), "", None, ("GET", "resource")),
            (Method::GET, cm.to_string(), "", None, ("LIST", "namespace")),
            (Method::GET, "/api/v1/configmaps".to_string(), "", None, ("LIST", "cluster")),
            (Method::GET, cm.to_string(), "watch=true", None, ("WATCH", "namespace")),
            (Method::GET, cm.to_string(), "watch=1&resourceVersion=5", None, ("WATCH", "namespace")),
            (Method::GET, cm.to_string(), "watch=false", None, ("LIST", "namespace")),
            (Method::GET, cm.to_string(), "watch=0", None, ("LIST", "namespace")),
            (Method::GET, format!("{cm}/a"), "watch=yes", None, ("WATCH", "resource")),
            (Method::POST, cm.to_string(), "", None, ("POST", "resource")),
            (Method::PUT, format!("{cm}/a"), "", None, ("PUT", "resource")),
            (
                Method::PATCH,
                format!("{cm}/a"),
                "",
                Some("application/merge-patch+json"),
                ("PATCH", "resource"),
            ),
            (
                Method::PATCH,
                format!("{cm}/a"),
                "",
                Some("application/apply-patch+yaml"),
                ("APPLY", "resource"),
            ),
            // kube compares the whole header: parameters make it a PATCH.
            (
                Method::PATCH,
                format!("{cm}/a"),
                "",
                Some("application/apply-patch+yaml; charset=utf-8"),
                ("PATCH", "resource"),
            ),
            (Method::DELETE, format!("{cm}/a"), "", None, ("DELETE", "resource")),
            (Method::DELETE, cm.to_string(), "", None, ("DELETE", "namespace")),
            (
                Method::DELETE,
                "/apis/storage.k8s.io/v1/storageclasses".to_string(),
                "",
                None,
                ("DELETE", "cluster"),
            ),
            (
                Method::GET,
                "/api/v1/namespaces/default/pods/p/log".to_string(),
                "",
                None,
                ("CONNECT", "resource"),
            ),
            (
                Method::POST,
                "/api/v1/namespaces/default/pods/p/exec".to_string(),
                "",
                None,
                ("CONNECT", "resource"),
            ),
            (Method::GET, "/api/v1/namespaces/default".to_string(), "", None, ("GET", "resource")),
            (Method::OPTIONS, format!("{cm}/a"), "", None, ("other", "resource")),
        ];
        for (method, path, query, content_type, (verb, scope)) in cases {
            let got = verb_and_scope(method.clone(), &path, query, content_type);
            assert_eq!(
                got,
                (verb.to_string(), scope.to_string()),
                "{method} {path}?{query} {content_type:?}"
            );
        }
    }

    #[test]
    fn dry_run_is_cleaned_as_kube_cleans_it() {
        assert_eq!(dry_run(""), "");
        assert_eq!(dry_run("limit=5"), "");
        assert_eq!(dry_run("dryRun=All"), "All");
        assert_eq!(dry_run("dryRun=All&dryRun=All"), "All");
        assert_eq!(dry_run("dryRun=all"), "invalid");
        assert_eq!(dry_run("dryRun="), "invalid");
        assert_eq!(dry_run("dryRunX=1"), "");
        // kube looks for the raw text first.
        assert_eq!(dry_run("dry%52un=All"), "");
        assert_eq!(dry_run("dryRun=All&x=1&dry%52un=All"), "All", "keys are unescaped");
    }

    #[test]
    fn non_resource_handlers_are_labelled_as_kube_labels_them() {
        let healthz = incoming(Method::GET, "/healthz", "", None);
        let route = Route::NonResource { subresource: "/healthz", component: "" };
        let labels = route_labels(&healthz, route).unwrap();
        assert_eq!(labels.with_code("200"), ["GET", "", "", "", "", "/healthz", "", "", "200"]);
        assert!(route_labels(&healthz, Route::Unrouted).is_none());
        assert!(
            route_labels(&healthz, Route::Resource).is_none(),
            "a non-resource request has no resource route"
        );
    }
}
