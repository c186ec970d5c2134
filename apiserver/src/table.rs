//! Server-side Table output: what a client gets when it asks for
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, i.e. the columns
//! and cells `kubectl get` (and `kubectl get -o wide`) prints.
//!
//! The column names, types, formats and priorities are the ones
//! kube-apiserver's printers send for each kind, and each cell is computed the
//! way those printers compute it. Like kube-apiserver, the server always
//! produces the wide cells: `cells` returns one value per column of `columns`,
//! priority-1 columns included, and kubectl drops the priority-1 columns
//! unless `-o wide` was asked for.
//!
//! Objects are read as stored JSON (`serde_json::Value`). Any field may be
//! missing or of the wrong type; nothing here panics. A missing value prints
//! as kube prints it (`<none>`, `<unknown>`, `0`, an empty string, ...). Where
//! kube's defaulting or create strategy always fills a field before an object
//! is stored, a missing field is read as that default (a Service's type
//! `ClusterIP`, a port's protocol `TCP`, `replicas` 1, a Pod's phase `Pending`,
//! a Namespace's phase `Active`, a Secret's type `Opaque`), so objects stored
//! without defaulting still print like kube's.
//!
//! Resources without a dedicated printer get kube's default table: `Name`
//! and `Created At`.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// One column of a Table (`meta.k8s.io/v1` `TableColumnDefinition`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnDefinition {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i32,
}

/// How one kind prints in `kubectl get`: its columns and how each object
/// fills them. Kind modules name theirs (`table::POD`), or build one from
/// [`Col`]s and the helpers here.
#[derive(Debug)]
pub struct Printer {
    pub columns: &'static [Col],
    /// One cell per column (wide ones included), ages measured to `now`.
    pub cells: fn(&Value, i64) -> Vec<Value>,
}

impl Printer {
    /// The column definitions, as a Table carries them.
    pub fn columns(&self) -> Vec<ColumnDefinition> {
        self.columns.iter().map(Col::definition).collect()
    }

    /// The cells of one object's row, one per column (wide columns
    /// included). `now_unix_seconds` is the moment ages are measured to.
    pub fn cells(&self, object: &Value, now_unix_seconds: i64) -> Vec<Value> {
        (self.cells)(object, now_unix_seconds)
    }
}

/// kube's default table, for kinds without a printer: Name and Created At.
pub static DEFAULT: Printer = Printer { columns: DEFAULT_COLS, cells: |o, _| default_cells(o) };
pub static NAMESPACE: Printer = Printer { columns: NAMESPACE_COLS, cells: namespace_cells };
pub static CONFIGMAP: Printer = Printer { columns: CONFIGMAP_COLS, cells: configmap_cells };
pub static SECRET: Printer = Printer { columns: SECRET_COLS, cells: secret_cells };
pub static SERVICEACCOUNT: Printer = Printer { columns: SERVICEACCOUNT_COLS, cells: serviceaccount_cells };
pub static SERVICE: Printer = Printer { columns: SERVICE_COLS, cells: service_cells };
pub static ENDPOINTS: Printer = Printer { columns: ENDPOINTS_COLS, cells: endpoints_cells };
pub static POD: Printer = Printer { columns: POD_COLS, cells: pod_cells };
pub static EVENT: Printer = Printer { columns: EVENT_COLS, cells: event_cells };
pub static NODE: Printer = Printer { columns: NODE_COLS, cells: node_cells };
pub static DEPLOYMENT: Printer = Printer { columns: DEPLOYMENT_COLS, cells: deployment_cells };
pub static REPLICASET: Printer = Printer { columns: REPLICASET_COLS, cells: replicaset_cells };
pub static STATEFULSET: Printer = Printer { columns: STATEFULSET_COLS, cells: statefulset_cells };
pub static DAEMONSET: Printer = Printer { columns: DAEMONSET_COLS, cells: daemonset_cells };
pub static JOB: Printer = Printer { columns: JOB_COLS, cells: job_cells };
pub static CRONJOB: Printer = Printer { columns: CRONJOB_COLS, cells: cronjob_cells };
pub static LEASE: Printer = Printer { columns: LEASE_COLS, cells: lease_cells };
pub static ROLE_BINDING: Printer = Printer { columns: ROLE_BINDING_COLS, cells: role_binding_cells };

/// kube's HumanDuration: a short, approximate rendering of a duration in
/// seconds ("5s", "3m12s", "5h", "2d3h", "3y", ...). Up to one second in the
/// future counts as "0s" (clock skew); further in the future is "<invalid>".
pub fn human_duration(seconds: i64) -> String {
    let s = seconds;
    if s < -1 {
        return "<invalid>".to_string();
    }
    if s < 0 {
        return "0s".to_string();
    }
    if s < 2 * 60 {
        return format!("{s}s");
    }
    let minutes = s / 60;
    if minutes < 10 {
        return match s % 60 {
            0 => format!("{minutes}m"),
            rest => format!("{minutes}m{rest}s"),
        };
    }
    if minutes < 3 * 60 {
        return format!("{minutes}m");
    }
    let hours = s / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            rest => format!("{hours}h{rest}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 8 * 24 {
        return match hours % 24 {
            0 => format!("{days}d"),
            rest => format!("{days}d{rest}h"),
        };
    }
    if hours < 2 * 365 * 24 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 8 * 365 * 24 {
        return match days % 365 {
            0 => format!("{years}y"),
            rest => format!("{years}y{rest}d"),
        };
    }
    format!("{years}y")
}

/// RFC 3339 ("2026-11-23T12:00:00Z", with fractional seconds or an offset)
/// to unix seconds; None if unparsable.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    s.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

/// Unix seconds as RFC 3339 in UTC, whole seconds ("2026-11-23T12:00:00Z").
fn format_rfc3339(unix: i64) -> String {
    jiff::Timestamp::from_second(unix)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// The age of a timestamp at `now`, or "<unknown>" when it is missing.
fn since(ts: Option<i64>, now: i64) -> String {
    match ts {
        Some(t) => human_duration(now.saturating_sub(t)),
        None => "<unknown>".to_string(),
    }
}

// ---------------------------------------------------------------------------
// Reading stored JSON without trusting its shape

/// The value at `path`, if every step is an object holding the next key and
/// the value there is not null.
pub(crate) fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, key| cur.as_object()?.get(*key)).filter(|v| !v.is_null())
}

pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    at(v, path).and_then(Value::as_str).unwrap_or("")
}

/// A string field, or `default` when it is missing, empty or not a string.
pub(crate) fn str_or<'a>(v: &'a Value, path: &[&str], default: &'a str) -> &'a str {
    match str_at(v, path) {
        "" => default,
        s => s,
    }
}

pub(crate) fn int_at(v: &Value, path: &[&str]) -> i64 {
    at(v, path).and_then(as_int).unwrap_or(0)
}

pub(crate) fn opt_int_at(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(as_int)
}

fn as_int(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_u64().map(|u| i64::try_from(u).unwrap_or(i64::MAX)))
}

pub(crate) fn bool_at(v: &Value, path: &[&str]) -> Option<bool> {
    at(v, path).and_then(Value::as_bool)
}

pub(crate) fn arr_at<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    at(v, path).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

pub(crate) fn len_at(v: &Value, path: &[&str]) -> i64 {
    let n = match at(v, path) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn ts_at(v: &Value, path: &[&str]) -> Option<i64> {
    at(v, path).and_then(Value::as_str).and_then(parse_rfc3339)
}

fn is_object_at(v: &Value, path: &[&str]) -> bool {
    at(v, path).is_some_and(Value::is_object)
}

pub(crate) fn name(o: &Value) -> Value {
    s(str_at(o, &["metadata", "name"]))
}

pub(crate) fn age(o: &Value, now: i64) -> Value {
    s(since(ts_at(o, &["metadata", "creationTimestamp"]), now))
}

pub(crate) fn s(text: impl Into<String>) -> Value {
    Value::String(text.into())
}

pub(crate) fn n(i: i64) -> Value {
    Value::from(i)
}

fn count(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

/// A map of labels as `k=v` pairs sorted by key, or "<none>".
pub(crate) fn format_labels(v: Option<&Value>) -> String {
    let pairs: Vec<String> = v
        .and_then(Value::as_object)
        .map(|m| {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.into_iter()
                .filter_map(|k| m.get(k).and_then(Value::as_str).map(|val| format!("{k}={val}")))
                .collect()
        })
        .unwrap_or_default();
    if pairs.is_empty() { "<none>".to_string() } else { pairs.join(",") }
}

/// A `metav1.LabelSelector` in selector syntax (`app=web,tier in (a,b),!x`),
/// requirements sorted by key; "" for an absent or empty selector; `Err` for
/// one that is not a valid selector.
fn selector_string(sel: Option<&Value>) -> Result<String, ()> {
    let Some(sel) = sel else { return Ok(String::new()) };
    let sel = sel.as_object().ok_or(())?;
    let mut reqs: Vec<(String, String)> = Vec::new();
    match sel.get("matchLabels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, val) in m {
                let val = val.as_str().ok_or(())?;
                if k.is_empty() {
                    return Err(());
                }
                reqs.push((k.clone(), format!("{k}={val}")));
            }
        }
        Some(_) => return Err(()),
    }
    match sel.get("matchExpressions") {
        None | Some(Value::Null) => {}
        Some(Value::Array(exprs)) => {
            for e in exprs {
                let key = str_at(e, &["key"]);
                if key.is_empty() {
                    return Err(());
                }
                let mut values = Vec::new();
                for val in arr_at(e, &["values"]) {
                    values.push(val.as_str().ok_or(())?);
                }
                values.sort_unstable();
                let text = match str_at(e, &["operator"]) {
                    "In" | "NotIn" if values.is_empty() => return Err(()),
                    "In" => format!("{key} in ({})", values.join(",")),
                    "NotIn" => format!("{key} notin ({})", values.join(",")),
                    "Exists" | "DoesNotExist" if !values.is_empty() => return Err(()),
                    "Exists" => key.to_string(),
                    "DoesNotExist" => format!("!{key}"),
                    _ => return Err(()),
                };
                reqs.push((key.to_string(), text));
            }
        }
        Some(_) => return Err(()),
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(reqs.into_iter().map(|(_, text)| text).collect::<Vec<_>>().join(","))
}

/// A selector as the workload printers show it: "<none>" when empty,
/// "<error>" when invalid.
pub(crate) fn format_selector(sel: Option<&Value>) -> String {
    match selector_string(sel) {
        Ok(text) if text.is_empty() => "<none>".to_string(),
        Ok(text) => text,
        Err(()) => "<error>".to_string(),
    }
}

/// Container names and images, each joined with ",".
pub(crate) fn container_cells(pod_spec: Option<&Value>) -> [Value; 2] {
    let containers = pod_spec.map(|spec| arr_at(spec, &["containers"])).unwrap_or(&[]);
    let names: Vec<&str> = containers.iter().map(|c| str_at(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| str_at(c, &["image"])).collect();
    [s(names.join(",")), s(images.join(","))]
}

/// The type of the first condition of `type_`, compared with "True".
fn first_condition_true(conditions: &[Value], type_: &str) -> bool {
    conditions
        .iter()
        .find(|c| str_at(c, &["type"]) == type_)
        .is_some_and(|c| str_at(c, &["status"]) == "True")
}

// ---------------------------------------------------------------------------
// Kinds and their columns

/// One column: its name, type, format, priority (1: `-o wide` only) and
/// description, as kube's printers declare them.
#[derive(Debug)]
pub struct Col {
    name: &'static str,
    ty: &'static str,
    format: &'static str,
    priority: i32,
    desc: &'static str,
}

impl Col {
    /// The column as a Table describes it.
    pub fn definition(&self) -> ColumnDefinition {
        ColumnDefinition {
            name: self.name.to_string(),
            type_: self.ty.to_string(),
            format: self.format.to_string(),
            description: self.desc.to_string(),
            priority: self.priority,
        }
    }
}

/// A column shown by plain `kubectl get`.
pub const fn col(name: &'static str, ty: &'static str, desc: &'static str) -> Col {
    Col { name, ty, format: "", priority: 0, desc }
}

/// A column shown only with `-o wide` (priority 1).
pub const fn wide(name: &'static str, ty: &'static str, desc: &'static str) -> Col {
    Col { name, ty, format: "", priority: 1, desc }
}

pub(crate) const NAME: Col = Col {
    name: "Name",
    ty: "string",
    format: "name",
    priority: 0,
    desc: "The object's name, unique among objects of its kind in its namespace (or in the cluster for cluster-scoped kinds).",
};
pub(crate) const AGE: Col =
    col("Age", "string", "How long ago the object was created (from metadata.creationTimestamp).");
pub(crate) const CONTAINERS: Col =
    wide("Containers", "string", "The names of the containers in the pod template.");
pub(crate) const IMAGES: Col = wide("Images", "string", "The images of the containers in the pod template.");
pub(crate) const SELECTOR: Col =
    wide("Selector", "string", "The label selector that picks the pods this object manages.");

const NAMESPACE_COLS: &[Col] = &[NAME, col("Status", "string", "The namespace's lifecycle phase."), AGE];
const CONFIGMAP_COLS: &[Col] =
    &[NAME, col("Data", "string", "How many keys the config map holds (data and binaryData)."), AGE];
const SECRET_COLS: &[Col] = &[
    NAME,
    col("Type", "string", "The secret's type, which says how its data is meant to be used."),
    col("Data", "string", "How many keys the secret holds."),
    AGE,
];
const SERVICEACCOUNT_COLS: &[Col] =
    &[NAME, col("Secrets", "string", "How many secrets are listed on the service account."), AGE];
const SERVICE_COLS: &[Col] = &[
    NAME,
    col("Type", "string", "How the service is exposed (ClusterIP, NodePort, LoadBalancer, ExternalName)."),
    col("Cluster-IP", "string", "The virtual IP the service is reachable at inside the cluster."),
    col("External-IP", "string", "The addresses the service is reachable at from outside the cluster."),
    col("Port(s)", "string", "The ports the service exposes, with node ports and protocols."),
    AGE,
    wide("Selector", "string", "The labels of the pods the service sends traffic to."),
];
const ENDPOINTS_COLS: &[Col] =
    &[NAME, col("Endpoints", "string", "The first few address:port pairs backing the service."), AGE];
const POD_COLS: &[Col] = &[
    NAME,
    col("Ready", "string", "How many of the pod's containers are ready, out of how many."),
    col("Status", "string", "A summary of the state of the pod and its containers."),
    col(
        "Restarts",
        "string",
        "How often the pod's containers have restarted, and how long ago the last restart was.",
    ),
    AGE,
    wide("IP", "string", "The pod's IP address."),
    wide("Node", "string", "The node the pod is bound to."),
    wide("Nominated Node", "string", "The node the scheduler nominated for the pod after preempting others."),
    wide(
        "Readiness Gates",
        "string",
        "How many of the pod's readiness gates are satisfied, out of how many.",
    ),
];
const EVENT_COLS: &[Col] = &[
    col("Last Seen", "string", "How long ago the event last occurred."),
    col("Type", "string", "The kind of event (Normal or Warning)."),
    col("Reason", "string", "A short machine-readable reason for the event."),
    col("Object", "string", "The object the event is about, as kind/name."),
    wide("Subobject", "string", "The part of the object the event is about (a field path)."),
    wide("Source", "string", "The component (and host) that reported the event."),
    col("Message", "string", "A human-readable description of the event."),
    wide("First Seen", "string", "How long ago the event first occurred."),
    wide("Count", "string", "How many times the event has occurred."),
    Col { priority: 1, ..NAME },
];
const NODE_COLS: &[Col] = &[
    NAME,
    col("Status", "string", "Whether the node is ready, and whether scheduling on it is disabled."),
    col("Roles", "string", "The node's roles, from its node-role labels."),
    AGE,
    col("Version", "string", "The kubelet version the node runs."),
    wide("Internal-IP", "string", "The node's first internal IP address."),
    wide("External-IP", "string", "The node's first external IP address."),
    wide("OS-Image", "string", "The operating system image the node reports."),
    wide("Kernel-Version", "string", "The kernel version the node reports."),
    wide("Container-Runtime", "string", "The container runtime and version the node reports."),
];
const DEPLOYMENT_COLS: &[Col] = &[
    NAME,
    col("Ready", "string", "How many pods are ready, out of how many are wanted."),
    col("Up-to-date", "string", "How many pods run the current pod template."),
    col("Available", "string", "How many pods are available to serve."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const REPLICASET_COLS: &[Col] = &[
    NAME,
    col("Desired", "integer", "How many pods are wanted."),
    col("Current", "integer", "How many pods exist."),
    col("Ready", "integer", "How many pods are ready."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const STATEFULSET_COLS: &[Col] = &[
    NAME,
    col("Ready", "string", "How many pods are ready, out of how many are wanted."),
    AGE,
    CONTAINERS,
    IMAGES,
];
const DAEMONSET_COLS: &[Col] = &[
    NAME,
    col("Desired", "integer", "How many nodes should run the daemon pod."),
    col("Current", "integer", "How many nodes run at least one daemon pod."),
    col("Ready", "integer", "How many nodes run a ready daemon pod."),
    col("Up-to-date", "integer", "How many nodes run the current pod template."),
    col("Available", "integer", "How many nodes run an available daemon pod."),
    col("Node Selector", "string", "The node labels a node needs to run the daemon pod."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const JOB_COLS: &[Col] = &[
    NAME,
    col("Status", "string", "Whether the job is running, complete, failed, suspended or terminating."),
    col("Completions", "string", "How many pods succeeded, out of how many completions are wanted."),
    col("Duration", "string", "How long the job ran, or has been running."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const CRONJOB_COLS: &[Col] = &[
    NAME,
    col("Schedule", "string", "The cron schedule jobs are created on."),
    col("Timezone", "string", "The time zone the schedule is read in."),
    col("Suspend", "boolean", "Whether creating new jobs is suspended."),
    col("Active", "integer", "How many jobs are running."),
    col("Last Schedule", "string", "How long ago a job was last scheduled."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
const LEASE_COLS: &[Col] = &[NAME, col("Holder", "string", "The identity currently holding the lease."), AGE];
/// RoleBindings and ClusterRoleBindings alike.
const ROLE_BINDING_COLS: &[Col] = &[
    NAME,
    col("Role", "string", "The role the binding grants, as kind/name (roleRef)."),
    AGE,
    wide("Users", "string", "The users the binding names."),
    wide("Groups", "string", "The groups the binding names."),
    wide("ServiceAccounts", "string", "The service accounts the binding names, as namespace/name."),
];
const DEFAULT_COLS: &[Col] = &[
    NAME,
    Col {
        name: "Created At",
        ty: "date",
        format: "",
        priority: 0,
        desc: "When the object was created (metadata.creationTimestamp).",
    },
];

// ---------------------------------------------------------------------------
// Cells, per kind

fn default_cells(o: &Value) -> Vec<Value> {
    let created = match at(o, &["metadata", "creationTimestamp"]) {
        Some(Value::String(raw)) => parse_rfc3339(raw).map(format_rfc3339).unwrap_or_else(|| raw.clone()),
        // kube formats the zero time when the field is unset.
        _ => "0001-01-01T00:00:00Z".to_string(),
    };
    vec![name(o), s(created)]
}

fn namespace_cells(o: &Value, now: i64) -> Vec<Value> {
    vec![name(o), s(str_or(o, &["status", "phase"], "Active")), age(o, now)]
}

fn configmap_cells(o: &Value, now: i64) -> Vec<Value> {
    let keys = len_at(o, &["data"]).saturating_add(len_at(o, &["binaryData"]));
    vec![name(o), n(keys), age(o, now)]
}

fn secret_cells(o: &Value, now: i64) -> Vec<Value> {
    vec![name(o), s(str_or(o, &["type"], "Opaque")), n(len_at(o, &["data"])), age(o, now)]
}

fn serviceaccount_cells(o: &Value, now: i64) -> Vec<Value> {
    vec![name(o), n(count(arr_at(o, &["secrets"]).len())), age(o, now)]
}

fn service_cells(o: &Value, now: i64) -> Vec<Value> {
    let svc_type = str_or(o, &["spec", "type"], "ClusterIP");
    let cluster_ip = match arr_at(o, &["spec", "clusterIPs"]).first() {
        Some(first) => first.as_str().unwrap_or(""),
        None => str_at(o, &["spec", "clusterIP"]),
    };
    let cluster_ip = if cluster_ip.is_empty() { "<none>" } else { cluster_ip };
    let ports: Vec<String> = arr_at(o, &["spec", "ports"])
        .iter()
        .map(|p| {
            let port = int_at(p, &["port"]);
            let protocol = str_or(p, &["protocol"], "TCP");
            match int_at(p, &["nodePort"]) {
                np if np > 0 => format!("{port}:{np}/{protocol}"),
                _ => format!("{port}/{protocol}"),
            }
        })
        .collect();
    let ports = if ports.is_empty() { "<none>".to_string() } else { ports.join(",") };
    vec![
        name(o),
        s(svc_type),
        s(cluster_ip),
        s(service_external_ip(o, svc_type)),
        s(ports),
        age(o, now),
        s(format_labels(at(o, &["spec", "selector"]))),
    ]
}

fn service_external_ip(o: &Value, svc_type: &str) -> String {
    let external: Vec<&str> = arr_at(o, &["spec", "externalIPs"]).iter().filter_map(Value::as_str).collect();
    match svc_type {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".to_string(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            // Ingress points, each its IP or else its hostname, deduplicated
            // and sorted. The server always renders the wide (unclipped) form.
            let lb: BTreeSet<&str> = arr_at(o, &["status", "loadBalancer", "ingress"])
                .iter()
                .map(|ing| match str_at(ing, &["ip"]) {
                    "" => str_at(ing, &["hostname"]),
                    ip => ip,
                })
                .filter(|a| !a.is_empty())
                .collect();
            let mut all: Vec<&str> = lb.into_iter().collect();
            if all.is_empty() && external.is_empty() {
                return "<pending>".to_string();
            }
            all.extend(external);
            all.join(",")
        }
        "ExternalName" => str_at(o, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

fn endpoints_cells(o: &Value, now: i64) -> Vec<Value> {
    vec![name(o), s(format_endpoints(arr_at(o, &["subsets"]))), age(o, now)]
}

/// The first three endpoints (`ip:port`, or bare IPs for subsets without
/// ports), then "+ N more..." for the rest.
fn format_endpoints(subsets: &[Value]) -> String {
    const MAX: usize = 3;
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut list: Vec<String> = Vec::new();
    let mut total = 0usize;
    let mut more = false;
    for subset in subsets {
        let addresses = arr_at(subset, &["addresses"]);
        let ports = arr_at(subset, &["ports"]);
        let port_numbers: Vec<Option<i64>> = if ports.is_empty() {
            vec![None]
        } else {
            ports.iter().map(|p| Some(int_at(p, &["port"]))).collect()
        };
        for port in port_numbers {
            total += addresses.len();
            for addr in addresses {
                if list.len() == MAX {
                    more = true;
                    break;
                }
                let ip = str_at(addr, &["ip"]);
                list.push(match port {
                    None => ip.to_string(),
                    Some(p) if ip.contains(':') => format!("[{ip}]:{p}"),
                    Some(p) => format!("{ip}:{p}"),
                });
            }
        }
    }
    let joined = list.join(",");
    if more { format!("{joined} + {} more...", total.saturating_sub(MAX)) } else { joined }
}

fn pod_cells(o: &Value, now: i64) -> Vec<Value> {
    let status = at(o, &["status"]).unwrap_or(&Value::Null);
    let spec = at(o, &["spec"]).unwrap_or(&Value::Null);
    let conditions = arr_at(status, &["conditions"]);
    let phase = str_or(status, &["phase"], "Pending");

    let mut reason = str_or(status, &["reason"], phase).to_string();
    if conditions
        .iter()
        .any(|c| str_at(c, &["type"]) == "PodScheduled" && str_at(c, &["reason"]) == "SchedulingGated")
    {
        reason = "SchedulingGated".to_string();
    }

    let init_specs = arr_at(spec, &["initContainers"]);
    let is_sidecar = |c: &Value| str_at(c, &["restartPolicy"]) == "Always";
    let sidecar_named =
        |name: &str| init_specs.iter().find(|c| str_at(c, &["name"]) == name).is_some_and(is_sidecar);
    let total = arr_at(spec, &["containers"]).len() + init_specs.iter().filter(|c| is_sidecar(c)).count();

    let mut ready = 0usize;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut last_restart: Option<i64> = None;
    let mut last_sidecar_restart: Option<i64> = None;
    let later = |cur: Option<i64>, t: Option<i64>| match (cur, t) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let finished = |c: &Value| ts_at(c, &["lastState", "terminated", "finishedAt"]);

    let mut initializing = false;
    for (i, c) in arr_at(status, &["initContainerStatuses"]).iter().enumerate() {
        let rc = int_at(c, &["restartCount"]);
        restarts = restarts.saturating_add(rc);
        last_restart = later(last_restart, finished(c));
        let sidecar = sidecar_named(str_at(c, &["name"]));
        if sidecar {
            sidecar_restarts = sidecar_restarts.saturating_add(rc);
            last_sidecar_restart = later(last_sidecar_restart, finished(c));
        }
        let terminated = at(c, &["state", "terminated"]).filter(|t| t.is_object());
        let waiting_reason = str_at(c, &["state", "waiting", "reason"]);
        if terminated.is_some_and(|t| int_at(t, &["exitCode"]) == 0) {
            continue;
        }
        if sidecar && bool_at(c, &["started"]) == Some(true) {
            if bool_at(c, &["ready"]) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            match (str_at(t, &["reason"]), int_at(t, &["signal"])) {
                ("", 0) => format!("Init:ExitCode:{}", int_at(t, &["exitCode"])),
                ("", signal) => format!("Init:Signal:{signal}"),
                (r, _) => format!("Init:{r}"),
            }
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }

    if !initializing || first_condition_true(conditions, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for c in arr_at(status, &["containerStatuses"]).iter().rev() {
            restarts = restarts.saturating_add(int_at(c, &["restartCount"]));
            last_restart = later(last_restart, finished(c));
            let terminated = at(c, &["state", "terminated"]).filter(|t| t.is_object());
            let waiting_reason = str_at(c, &["state", "waiting", "reason"]);
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                reason = match (str_at(t, &["reason"]), int_at(t, &["signal"])) {
                    ("", 0) => format!("ExitCode:{}", int_at(t, &["exitCode"])),
                    ("", signal) => format!("Signal:{signal}"),
                    (r, _) => r.to_string(),
                };
            } else if bool_at(c, &["ready"]) == Some(true) && is_object_at(c, &["state", "running"]) {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = conditions
                .iter()
                .any(|c| str_at(c, &["type"]) == "Ready" && str_at(c, &["status"]) == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.to_string();
        }
    }

    if at(o, &["metadata", "deletionTimestamp"]).is_some() {
        if str_at(status, &["reason"]) == "NodeLost" {
            reason = "Unknown".to_string();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".to_string();
        }
    }

    let restarts_text = match last_restart {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", since(Some(t), now)),
        _ => restarts.to_string(),
    };

    let pod_ip = match arr_at(status, &["podIPs"]).first() {
        Some(first) => str_at(first, &["ip"]),
        None => str_at(status, &["podIP"]),
    };
    let gates = arr_at(spec, &["readinessGates"]);
    let gates_text = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let satisfied =
            gates.iter().filter(|g| first_condition_true(conditions, str_at(g, &["conditionType"]))).count();
        format!("{satisfied}/{}", gates.len())
    };
    vec![
        name(o),
        s(format!("{ready}/{total}")),
        s(reason),
        s(restarts_text),
        age(o, now),
        s(none_if_empty(pod_ip)),
        s(none_if_empty(str_at(spec, &["nodeName"]))),
        s(none_if_empty(str_at(status, &["nominatedNodeName"]))),
        s(gates_text),
    ]
}

fn none_if_empty(text: &str) -> &str {
    if text.is_empty() { "<none>" } else { text }
}

fn event_cells(o: &Value, now: i64) -> Vec<Value> {
    let first = match ts_at(o, &["firstTimestamp"]) {
        Some(t) => since(Some(t), now),
        None => since(ts_at(o, &["eventTime"]), now),
    };
    let mut last = match ts_at(o, &["lastTimestamp"]) {
        Some(t) => since(Some(t), now),
        None => first.clone(),
    };
    let mut times = int_at(o, &["count"]);
    if is_object_at(o, &["series"]) {
        last = since(ts_at(o, &["series", "lastObservedTime"]), now);
        times = int_at(o, &["series", "count"]);
    } else if times == 0 {
        // Events written through the newer API leave count unset.
        times = 1;
    }
    let kind = str_at(o, &["involvedObject", "kind"]).to_lowercase();
    let target = match str_at(o, &["involvedObject", "name"]) {
        "" => kind,
        obj_name => format!("{kind}/{obj_name}"),
    };
    let component = str_or(o, &["source", "component"], str_at(o, &["reportingComponent"]));
    let host = str_or(o, &["source", "host"], str_at(o, &["reportingInstance"]));
    let source = if host.is_empty() { component.to_string() } else { format!("{component}, {host}") };
    vec![
        s(last),
        s(str_at(o, &["type"])),
        s(str_at(o, &["reason"])),
        s(target),
        s(str_at(o, &["involvedObject", "fieldPath"])),
        s(source),
        s(str_at(o, &["message"]).trim()),
        s(first),
        n(times),
        name(o),
    ]
}

fn node_cells(o: &Value, now: i64) -> Vec<Value> {
    let ready = arr_at(o, &["status", "conditions"]).iter().rfind(|c| str_at(c, &["type"]) == "Ready");
    let mut status = vec![match ready {
        Some(c) if str_at(c, &["status"]) == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if bool_at(o, &["spec", "unschedulable"]) == Some(true) {
        status.push("SchedulingDisabled");
    }

    let mut roles = BTreeSet::new();
    if let Some(labels) = at(o, &["metadata", "labels"]).and_then(Value::as_object) {
        for (key, value) in labels {
            if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role.to_string());
                }
            } else if key == "kubernetes.io/role" {
                match value.as_str() {
                    Some(role) if !role.is_empty() => {
                        roles.insert(role.to_string());
                    }
                    _ => {}
                }
            }
        }
    }
    let roles =
        if roles.is_empty() { "<none>".to_string() } else { roles.into_iter().collect::<Vec<_>>().join(",") };

    let address = |type_: &str| {
        arr_at(o, &["status", "addresses"])
            .iter()
            .find(|a| str_at(a, &["type"]) == type_)
            .map_or("<none>", |a| str_at(a, &["address"]))
    };
    let info = |field: &str| str_or(o, &["status", "nodeInfo", field], "<unknown>");
    vec![
        name(o),
        s(status.join(",")),
        s(roles),
        age(o, now),
        s(str_at(o, &["status", "nodeInfo", "kubeletVersion"])),
        s(address("InternalIP")),
        s(address("ExternalIP")),
        s(info("osImage")),
        s(info("kernelVersion")),
        s(info("containerRuntimeVersion")),
    ]
}

/// `spec.replicas`, which kube defaults to 1.
fn desired_replicas(o: &Value) -> i64 {
    opt_int_at(o, &["spec", "replicas"]).unwrap_or(1)
}

fn deployment_cells(o: &Value, now: i64) -> Vec<Value> {
    let [containers, images] = container_cells(at(o, &["spec", "template", "spec"]));
    let selector = selector_string(at(o, &["spec", "selector"])).unwrap_or_else(|()| "<invalid>".to_string());
    vec![
        name(o),
        s(format!("{}/{}", int_at(o, &["status", "readyReplicas"]), desired_replicas(o))),
        n(int_at(o, &["status", "updatedReplicas"])),
        n(int_at(o, &["status", "availableReplicas"])),
        age(o, now),
        containers,
        images,
        s(selector),
    ]
}

fn replicaset_cells(o: &Value, now: i64) -> Vec<Value> {
    let [containers, images] = container_cells(at(o, &["spec", "template", "spec"]));
    vec![
        name(o),
        n(desired_replicas(o)),
        n(int_at(o, &["status", "replicas"])),
        n(int_at(o, &["status", "readyReplicas"])),
        age(o, now),
        containers,
        images,
        s(format_selector(at(o, &["spec", "selector"]))),
    ]
}

fn statefulset_cells(o: &Value, now: i64) -> Vec<Value> {
    let [containers, images] = container_cells(at(o, &["spec", "template", "spec"]));
    vec![
        name(o),
        s(format!("{}/{}", int_at(o, &["status", "readyReplicas"]), desired_replicas(o))),
        age(o, now),
        containers,
        images,
    ]
}

fn daemonset_cells(o: &Value, now: i64) -> Vec<Value> {
    let [containers, images] = container_cells(at(o, &["spec", "template", "spec"]));
    vec![
        name(o),
        n(int_at(o, &["status", "desiredNumberScheduled"])),
        n(int_at(o, &["status", "currentNumberScheduled"])),
        n(int_at(o, &["status", "numberReady"])),
        n(int_at(o, &["status", "updatedNumberScheduled"])),
        n(int_at(o, &["status", "numberAvailable"])),
        s(format_labels(at(o, &["spec", "template", "spec", "nodeSelector"]))),
        age(o, now),
        containers,
        images,
        s(format_selector(at(o, &["spec", "selector"]))),
    ]
}

fn job_cells(o: &Value, now: i64) -> Vec<Value> {
    let succeeded = int_at(o, &["status", "succeeded"]);
    let completions = match opt_int_at(o, &["spec", "completions"]) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int_at(o, &["spec", "parallelism"]) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (ts_at(o, &["status", "startTime"]), ts_at(o, &["status", "completionTime"])) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.saturating_sub(start)),
        (Some(start), Some(end)) => human_duration(end.saturating_sub(start)),
    };
    let conditions = arr_at(o, &["status", "conditions"]);
    let status = if first_condition_true(conditions, "Complete") {
        "Complete"
    } else if first_condition_true(conditions, "Failed") {
        "Failed"
    } else if at(o, &["metadata", "deletionTimestamp"]).is_some() {
        "Terminating"
    } else if first_condition_true(conditions, "Suspended") {
        "Suspended"
    } else if first_condition_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let [containers, images] = container_cells(at(o, &["spec", "template", "spec"]));
    vec![
        name(o),
        s(status),
        s(completions),
        s(duration),
        age(o, now),
        containers,
        images,
        s(format_selector(at(o, &["spec", "selector"]))),
    ]
}

fn cronjob_cells(o: &Value, now: i64) -> Vec<Value> {
    let last_schedule = match ts_at(o, &["status", "lastScheduleTime"]) {
        Some(t) => since(Some(t), now),
        None => "<none>".to_string(),
    };
    // kube sends this cell as a string even though the column says boolean.
    let suspend = match bool_at(o, &["spec", "suspend"]) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let [containers, images] = container_cells(at(o, &["spec", "jobTemplate", "spec", "template", "spec"]));
    vec![
        name(o),
        s(str_at(o, &["spec", "schedule"])),
        s(at(o, &["spec", "timeZone"]).and_then(Value::as_str).unwrap_or("<none>")),
        s(suspend),
        n(count(arr_at(o, &["status", "active"]).len())),
        s(last_schedule),
        age(o, now),
        containers,
        images,
        s(format_selector(at(o, &["spec", "jobTemplate", "spec", "selector"]))),
    ]
}

fn lease_cells(o: &Value, now: i64) -> Vec<Value> {
    vec![name(o), s(str_at(o, &["spec", "holderIdentity"])), age(o, now)]
}

fn role_binding_cells(o: &Value, now: i64) -> Vec<Value> {
    let role = format!("{}/{}", str_at(o, &["roleRef", "kind"]), str_at(o, &["roleRef", "name"]));
    let (mut users, mut groups, mut service_accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in arr_at(o, &["subjects"]) {
        let name = str_at(subject, &["name"]);
        match str_at(subject, &["kind"]) {
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            "ServiceAccount" => service_accounts.push(format!("{}/{name}", str_at(subject, &["namespace"]))),
            _ => {}
        }
    }
    vec![
        name(o),
        s(role),
        age(o, now),
        s(users.join(", ")),
        s(groups.join(", ")),
        s(service_accounts.join(", ")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_795_154_400; // 2026-11-20T06:00:00Z

    /// The printer each served resource uses (what its kind module names).
    fn printer(group: &str, resource: &str) -> &'static Printer {
        match (group, resource) {
            ("", "namespaces") => &NAMESPACE,
            ("", "configmaps") => &CONFIGMAP,
            ("", "secrets") => &SECRET,
            ("", "serviceaccounts") => &SERVICEACCOUNT,
            ("", "services") => &SERVICE,
            ("", "endpoints") => &ENDPOINTS,
            ("", "pods") => &POD,
            ("", "events") => &EVENT,
            ("", "nodes") => &NODE,
            ("apps", "deployments") => &DEPLOYMENT,
            ("apps", "replicasets") => &REPLICASET,
            ("apps", "statefulsets") => &STATEFULSET,
            ("apps", "daemonsets") => &DAEMONSET,
            ("batch", "jobs") => &JOB,
            ("batch", "cronjobs") => &CRONJOB,
            ("coordination.k8s.io", "leases") => &LEASE,
            ("rbac.authorization.k8s.io", "rolebindings" | "clusterrolebindings") => &ROLE_BINDING,
            _ => &DEFAULT,
        }
    }

    fn columns(group: &str, resource: &str) -> Vec<ColumnDefinition> {
        printer(group, resource).columns()
    }

    fn cells(group: &str, resource: &str, object: &Value, now: i64) -> Vec<Value> {
        printer(group, resource).cells(object, now)
    }

    fn names(group: &str, resource: &str) -> Vec<String> {
        columns(group, resource).into_iter().map(|c| c.name).collect()
    }

    fn created(secs_ago: i64) -> String {
        format_rfc3339(NOW - secs_ago)
    }

    #[test]
    fn now_constant_is_what_it_says() {
        assert_eq!(parse_rfc3339("2026-11-20T06:00:00Z"), Some(NOW));
    }

    #[test]
    fn column_names_per_kind() {
        assert_eq!(names("", "namespaces"), ["Name", "Status", "Age"]);
        assert_eq!(names("", "configmaps"), ["Name", "Data", "Age"]);
        assert_eq!(names("", "secrets"), ["Name", "Type", "Data", "Age"]);
        assert_eq!(names("", "serviceaccounts"), ["Name", "Secrets", "Age"]);
        assert_eq!(
            names("", "services"),
            ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
        );
        assert_eq!(names("", "endpoints"), ["Name", "Endpoints", "Age"]);
        assert_eq!(
            names("", "pods"),
            ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"]
        );
        assert_eq!(
            names("", "events"),
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
        assert_eq!(
            names("", "nodes"),
            [
                "Name",
                "Status",
                "Roles",
                "Age",
                "Version",
                "Internal-IP",
                "External-IP",
                "OS-Image",
                "Kernel-Version",
                "Container-Runtime"
            ]
        );
        assert_eq!(
            names("apps", "deployments"),
            ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
        );
        assert_eq!(
            names("apps", "replicasets"),
            ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"]
        );
        assert_eq!(names("apps", "statefulsets"), ["Name", "Ready", "Age", "Containers", "Images"]);
        assert_eq!(
            names("apps", "daemonsets"),
            [
                "Name",
                "Desired",
                "Current",
                "Ready",
                "Up-to-date",
                "Available",
                "Node Selector",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        assert_eq!(
            names("batch", "jobs"),
            ["Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]
        );
        assert_eq!(
            names("batch", "cronjobs"),
            [
                "Name",
                "Schedule",
                "Timezone",
                "Suspend",
                "Active",
                "Last Schedule",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        assert_eq!(names("coordination.k8s.io", "leases"), ["Name", "Holder", "Age"]);
        for bindings in ["rolebindings", "clusterrolebindings"] {
            assert_eq!(
                names("rbac.authorization.k8s.io", bindings),
                ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
            );
        }
        // Roles have no printer of their own in kube: the default table.
        assert_eq!(names("rbac.authorization.k8s.io", "clusterroles"), ["Name", "Created At"]);
        // Unknown resources, and known plurals in another group, get the default table.
        assert_eq!(names("example.com", "widgets"), ["Name", "Created At"]);
        assert_eq!(names("", "deployments"), ["Name", "Created At"]);
    }

    #[test]
    fn wide_columns_have_priority_one() {
        let wide_of = |g: &str, r: &str| -> Vec<String> {
            columns(g, r).into_iter().filter(|c| c.priority == 1).map(|c| c.name).collect()
        };
        assert_eq!(wide_of("", "pods"), ["IP", "Node", "Nominated Node", "Readiness Gates"]);
        assert_eq!(wide_of("", "services"), ["Selector"]);
        assert_eq!(wide_of("apps", "deployments"), ["Containers", "Images", "Selector"]);
        assert_eq!(
            wide_of("", "nodes"),
            ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"]
        );
        assert_eq!(wide_of("", "events"), ["Subobject", "Source", "First Seen", "Count", "Name"]);
        assert!(wide_of("", "namespaces").is_empty());
        assert!(columns("", "pods").iter().all(|c| c.priority == 0 || c.priority == 1));
    }

    #[test]
    fn column_types_and_formats() {
        let cols = columns("", "pods");
        assert_eq!((cols[0].type_.as_str(), cols[0].format.as_str()), ("string", "name"));
        assert_eq!(cols[3].type_, "string"); // Restarts is a string ("2 (5m ago)")
        assert!(cols[1..].iter().all(|c| c.format.is_empty()));
        let rs = columns("apps", "replicasets");
        assert_eq!(rs[1].type_, "integer");
        let cj = columns("batch", "cronjobs");
        assert_eq!((cj[3].name.as_str(), cj[3].type_.as_str()), ("Suspend", "boolean"));
        assert_eq!(cj[4].type_, "integer");
        let def = columns("x.io", "things");
        assert_eq!(def[1].type_, "date");
        let ev = columns("", "events");
        assert_eq!((ev[9].format.as_str(), ev[9].priority), ("name", 1));
        for (g, r) in [("", "secrets"), ("apps", "deployments"), ("", "nodes")] {
            assert!(columns(g, r).iter().all(|c| !c.description.is_empty()));
        }
    }

    #[test]
    fn column_definition_serializes_like_kube() -> Result<(), serde_json::Error> {
        let v = serde_json::to_value(&columns("", "pods")[5])?;
        assert_eq!(v["name"], "IP");
        assert_eq!(v["type"], "string");
        assert_eq!(v["format"], "");
        assert_eq!(v["priority"], 1);
        assert!(v["description"].is_string());
        assert!(v.get("type_").is_none());
        Ok(())
    }

    #[test]
    fn deployment_ready_and_wide() {
        let d = json!({
            "metadata": {"name": "web", "creationTimestamp": created(300)},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web", "tier": "fe"}},
                "template": {"spec": {"containers": [
                    {"name": "nginx", "image": "nginx:1.27"},
                    {"name": "sidecar", "image": "busybox"}
                ]}}
            },
            "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
        });
        assert_eq!(
            cells("apps", "deployments", &d, NOW),
            vec![
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("5m"),
                json!("nginx,sidecar"),
                json!("nginx:1.27,busybox"),
                json!("app=web,tier=fe")
            ]
        );
        // No status yet, replicas defaulted to 1.
        let fresh = json!({"metadata": {"name": "x"}, "spec": {}});
        let c = cells("apps", "deployments", &fresh, NOW);
        assert_eq!(c[1], json!("0/1"));
        assert_eq!(c[4], json!("<unknown>"));
        assert_eq!(c[7], json!(""));
    }

    #[test]
    fn service_ports_and_ips() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": created(59)},
            "spec": {
                "type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}],
                "selector": {"app": "web"}
            }
        });
        assert_eq!(
            cells("", "services", &svc, NOW),
            vec![
                json!("web"),
                json!("ClusterIP"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80/TCP,443/TCP"),
                json!("59s"),
                json!("app=web")
            ]
        );
        let np = json!({"spec": {"type": "NodePort", "clusterIP": "None",
            "ports": [{"port": 53, "nodePort": 30053, "protocol": "UDP"}, {"port": 8080}],
            "externalIPs": ["1.2.3.4"]}});
        let c = cells("", "services", &np, NOW);
        assert_eq!(c[2], json!("None"));
        assert_eq!(c[3], json!("1.2.3.4"));
        assert_eq!(c[4], json!("53:30053/UDP,8080/TCP"));
        assert_eq!(c[6], json!("<none>"));
        let lb = json!({"spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {}}});
        let c = cells("", "services", &lb, NOW);
        assert_eq!(
            (c[2].clone(), c[3].clone(), c[4].clone()),
            (json!("<none>"), json!("<pending>"), json!("<none>"))
        );
        let lb = json!({"spec": {"type": "LoadBalancer", "externalIPs": ["9.9.9.9"]},
            "status": {"loadBalancer": {"ingress": [{"hostname": "b.example.com"}, {"ip": "5.6.7.8"}, {"ip": "5.6.7.8"}]}}});
        assert_eq!(cells("", "services", &lb, NOW)[3], json!("5.6.7.8,b.example.com,9.9.9.9"));
        let ext = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}});
        assert_eq!(cells("", "services", &ext, NOW)[3], json!("db.example.com"));
        let odd = json!({"spec": {"type": "Weird"}});
        assert_eq!(cells("", "services", &odd, NOW)[3], json!("<unknown>"));
        // Type missing: read as the default ClusterIP.
        assert_eq!(cells("", "services", &json!({}), NOW)[1], json!("ClusterIP"));
    }

    #[test]
    fn human_duration_boundaries() {
        let cases = [
            (-5, "<invalid>"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (5, "5s"),
            (119, "119s"),
            (120, "2m"),
            (192, "3m12s"),
            (599, "9m59s"),
            (600, "10m"),
            (659, "10m"),
            (179 * 60 + 59, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 59 * 60 + 59, "3h59m"),
            (5 * 3600, "5h"),
            (8 * 3600 - 1, "7h59m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 3599, "47h"),
            (48 * 3600, "2d"),
            (51 * 3600, "2d3h"),
            (8 * 86_400 - 1, "7d23h"),
            (8 * 86_400, "8d"),
            (2 * 365 * 86_400 - 1, "729d"),
            (2 * 365 * 86_400, "2y"),
            (3 * 365 * 86_400, "3y"),
            (3 * 365 * 86_400 + 86_400 * 10, "3y10d"),
            (8 * 365 * 86_400 - 1, "7y364d"),
            (8 * 365 * 86_400, "8y"),
            (20 * 365 * 86_400 + 86_400 * 100, "20y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
        assert_eq!(human_duration(i64::MIN), "<invalid>");
        assert_eq!(human_duration(i64::MAX), format!("{}y", i64::MAX / 86_400 / 365));
    }

    #[test]
    fn parse_rfc3339_cases() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-11-23T12:00:00Z"), Some(1_795_435_200));
        assert_eq!(parse_rfc3339("2026-11-23T12:00:00.999999999Z"), Some(1_795_435_200));
        assert_eq!(parse_rfc3339("2026-11-23T12:00:00.5+01:00"), Some(1_795_435_200 - 3600));
        assert_eq!(parse_rfc3339("2026-11-23T12:00:00-05:30"), Some(1_795_435_200 + 5 * 3600 + 1800));
        assert_eq!(parse_rfc3339("2026-11-23t12:00:00z"), Some(1_795_435_200));
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59Z"), Some(-1));
        assert_eq!(parse_rfc3339("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(parse_rfc3339("0001-01-01T00:00:00Z"), Some(-62_135_596_800));
        for bad in [
            "",
            "2026-11-23",
            "2026-11-23T12:00:00",
            "2026-11-23T12:00:00ZZ",
            "2026-11-23T12:00:00.Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-23T24:00:00Z",
            "2026-11-23T12:60:00Z",
            "2026-11-23T12:00:00+1:00",
            "2026-11-23 12:00:00",
            "2026-1a-23T12:00:00Z",
            "+026-11-23T12:00:00Z",
            "2026-11-23T12:00:00Zé",
            "é026-11-23T12:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
        assert_eq!(parse_rfc3339("2026-11-23 12:00:00Z"), Some(1_795_435_200));
    }

    #[test]
    fn rfc3339_round_trip() {
        for t in [0, -1, 951_782_400, 1_795_435_200, -62_135_596_800] {
            let text = format_rfc3339(t);
            assert_eq!(parse_rfc3339(&text), Some(t), "{text}");
        }
        assert_eq!(format_rfc3339(1_795_435_200), "2026-11-23T12:00:00Z");
    }

    #[test]
    fn default_table_cells() {
        let o = json!({"metadata": {"name": "w", "creationTimestamp": "2026-11-23T13:00:00+01:00"}});
        assert_eq!(cells("example.com", "widgets", &o, NOW), vec![json!("w"), json!("2026-11-23T12:00:00Z")]);
        assert_eq!(
            cells("example.com", "widgets", &json!({}), NOW),
            vec![json!(""), json!("0001-01-01T00:00:00Z")]
        );
    }

    #[test]
    fn malformed_objects_give_a_cell_per_column() {
        let kinds = [
            ("", "namespaces"),
            ("", "configmaps"),
            ("", "secrets"),
            ("", "serviceaccounts"),
            ("", "services"),
            ("", "endpoints"),
            ("", "pods"),
            ("", "events"),
            ("", "nodes"),
            ("apps", "deployments"),
            ("apps", "replicasets"),
            ("apps", "statefulsets"),
            ("apps", "daemonsets"),
            ("batch", "jobs"),
            ("batch", "cronjobs"),
            ("coordination.k8s.io", "leases"),
            ("rbac.authorization.k8s.io", "rolebindings"),
            ("x.io", "others"),
        ];
        let objects = [
            json!(null),
            json!(5),
            json!("pod"),
            json!([1, 2]),
            json!({}),
            json!({"metadata": 5, "spec": "x", "status": []}),
            json!({"metadata": {"name": 7, "creationTimestamp": "yesterday", "labels": [1], "deletionTimestamp": 3},
                   "spec": {"replicas": "three", "ports": [5, {"port": "80"}], "containers": "c", "selector": 9,
                            "template": {"spec": {"containers": [null, 3, {"name": 1}]}}, "type": 4,
                            "initContainers": [{"restartPolicy": 1}], "readinessGates": [null],
                            "completions": -1, "jobTemplate": [], "suspend": "yes", "timeZone": 3},
                   "status": {"conditions": [null, {"type": 1}], "containerStatuses": [null, {"state": 1}],
                              "initContainerStatuses": [{"state": {"terminated": 1}}, {"restartCount": "x"}],
                              "podIPs": [5], "addresses": {}, "loadBalancer": {"ingress": [7]},
                              "lastScheduleTime": 1, "active": {}, "nodeInfo": []},
                   "subsets": [{"addresses": [{"ip": 5}], "ports": [{}]}, 3],
                   "data": 3, "binaryData": {"a": 1}, "secrets": {}, "series": [], "involvedObject": "x",
                   "count": 1.5}),
            json!({"spec": {"replicas": i64::MIN, "selector": {"matchLabels": {"a": 1}}}, "status": {"readyReplicas": u64::MAX}}),
        ];
        for (g, r) in kinds {
            let width = columns(g, r).len();
            for o in &objects {
                let row = cells(g, r, o, NOW);
                assert_eq!(row.len(), width, "{g}/{r} {o}");
                assert!(row.iter().all(|c| c.is_string() || c.is_i64()), "{g}/{r} {o}: {row:?}");
            }
            // Extreme clocks do not overflow.
            assert_eq!(cells(g, r, &objects[6], i64::MIN).len(), width);
            assert_eq!(cells(g, r, &objects[6], i64::MAX).len(), width);
        }
        let empty_pod = cells("", "pods", &json!({}), NOW);
        assert_eq!(
            empty_pod,
            vec![
                json!(""),
                json!("0/0"),
                json!("Pending"),
                json!("0"),
                json!("<unknown>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
        );
        let ds = cells(
            "apps",
            "daemonsets",
            &json!({"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}}}),
            NOW,
        );
        assert_eq!(ds[10], json!("<error>"));
        let dep = cells("apps", "deployments", &json!({"spec": {"selector": 5}}), NOW);
        assert_eq!(dep[7], json!("<invalid>"));
    }

    fn pod(status: Value) -> Value {
        json!({
            "metadata": {"name": "p", "creationTimestamp": created(3 * 3600 + 120)},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": status
        })
    }

    fn pod_status_cells(status: Value) -> (String, String, String) {
        let c = cells("", "pods", &pod(status), NOW);
        let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
        (text(&c[1]), text(&c[2]), text(&c[3]))
    }

    #[test]
    fn pod_running() {
        let running = json!({"running": {"startedAt": created(600)}});
        let status = json!({
            "phase": "Running", "podIP": "10.0.0.5", "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 0, "state": running},
                {"name": "b", "ready": true, "restartCount": 2, "state": running,
                 "lastState": {"terminated": {"exitCode": 1, "finishedAt": created(330)}}}
            ]
        });
        let c = cells("", "pods", &pod(status), NOW);
        assert_eq!(
            c,
            vec![
                json!("p"),
                json!("2/2"),
                json!("Running"),
                json!("2 (5m30s ago)"),
                json!("3h2m"),
                json!("10.0.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn pod_statuses() {
        assert_eq!(pod_status_cells(json!({})), ("0/2".into(), "Pending".into(), "0".into()));
        assert_eq!(pod_status_cells(json!({"phase": "Pending"})).1, "Pending");
        // A waiting reason wins (the first container's, as kube walks them backwards).
        let waiting = json!({"phase": "Pending", "containerStatuses": [
            {"name": "a", "state": {"waiting": {"reason": "ImagePullBackOff"}}},
            {"name": "b", "state": {"waiting": {"reason": "ContainerCreating"}}}
        ]});
        assert_eq!(pod_status_cells(waiting).1, "ImagePullBackOff");
        let crash = json!({"phase": "Running", "containerStatuses": [
            {"name": "a", "ready": false, "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
            {"name": "b", "ready": true, "state": {"running": {}}}
        ]});
        assert_eq!(pod_status_cells(crash), ("1/2".into(), "CrashLoopBackOff".into(), "4".into()));
        let done = json!({"phase": "Succeeded", "containerStatuses": [
            {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]});
        assert_eq!(pod_status_cells(done).1, "Completed");
        let signal = json!({"phase": "Failed", "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]});
        assert_eq!(pod_status_cells(signal).1, "Signal:9");
        let exit = json!({"phase": "Failed", "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 2}}}]});
        assert_eq!(pod_status_cells(exit).1, "ExitCode:2");
        // One container completed while another still runs.
        let partly = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}], "containerStatuses": [
            {"name": "a", "ready": true, "state": {"running": {}}},
            {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
        ]});
        assert_eq!(pod_status_cells(partly).1, "NotReady");
        let evicted = json!({"phase": "Failed", "reason": "Evicted"});
        assert_eq!(pod_status_cells(evicted).1, "Evicted");
        let gated = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]});
        assert_eq!(pod_status_cells(gated).1, "SchedulingGated");
    }

    #[test]
    fn pod_terminating_and_unknown() {
        let mut p = pod(json!({"phase": "Running"}));
        p["metadata"]["deletionTimestamp"] = json!(created(1));
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Terminating"));
        p["status"] = json!({"phase": "Succeeded"});
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Succeeded"));
        p["status"] = json!({"phase": "Running", "reason": "NodeLost"});
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Unknown"));
    }

    #[test]
    fn pod_init_containers() {
        let mut p = pod(json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "state": {"running": {}}}
        ]}));
        p["spec"]["initContainers"] = json!([{"name": "i1"}, {"name": "i2"}, {"name": "i3"}]);
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Init:1/3"));
        p["status"]["initContainerStatuses"][1]["state"] = json!({"waiting": {"reason": "ErrImagePull"}});
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Init:ErrImagePull"));
        p["status"]["initContainerStatuses"][1]["state"] = json!({"waiting": {"reason": "PodInitializing"}});
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Init:1/3"));
        p["status"]["initContainerStatuses"][1]["state"] = json!({"terminated": {"exitCode": 3}});
        p["status"]["initContainerStatuses"][1]["restartCount"] = json!(5);
        let c = cells("", "pods", &p, NOW);
        assert_eq!((c[2].clone(), c[3].clone()), (json!("Init:ExitCode:3"), json!("5")));
        p["status"]["initContainerStatuses"][1]["state"] =
            json!({"terminated": {"exitCode": 1, "reason": "Error"}});
        assert_eq!(cells("", "pods", &p, NOW)[2], json!("Init:Error"));
    }

    #[test]
    fn pod_sidecar_counts_toward_ready() {
        let mut p = pod(json!({
            "phase": "Running",
            "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
            "initContainerStatuses": [{"name": "proxy", "started": true, "ready": true, "restartCount": 1,
                "state": {"running": {}}, "lastState": {"terminated": {"finishedAt": created(90)}}}],
            "containerStatuses": [
                {"name": "a", "ready": true, "state": {"running": {}}},
                {"name": "b", "ready": false, "state": {"running": {}}}
            ]
        }));
        p["spec"]["initContainers"] = json!([{"name": "proxy", "restartPolicy": "Always"}]);
        let c = cells("", "pods", &p, NOW);
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone()),
            (json!("2/3"), json!("Running"), json!("1 (90s ago)"))
        );
    }

    #[test]
    fn pod_readiness_gates_and_nominated() {
        let mut p = pod(json!({"phase": "Pending", "nominatedNodeName": "n2", "conditions": [
            {"type": "example.com/lb", "status": "True"}, {"type": "example.com/dns", "status": "False"}]}));
        p["spec"]["readinessGates"] = json!([{"conditionType": "example.com/lb"}, {"conditionType": "example.com/dns"}, {"conditionType": "x"}]);
        let c = cells("", "pods", &p, NOW);
        assert_eq!((c[5].clone(), c[7].clone(), c[8].clone()), (json!("<none>"), json!("n2"), json!("1/3")));
    }

    #[test]
    fn simple_kinds() {
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": created(3 * 86_400 + 5 * 3600)}, "status": {"phase": "Terminating"}});
        assert_eq!(
            cells("", "namespaces", &ns, NOW),
            vec![json!("default"), json!("Terminating"), json!("3d5h")]
        );
        assert_eq!(cells("", "namespaces", &json!({}), NOW)[1], json!("Active"));
        let cm =
            json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(cells("", "configmaps", &cm, NOW)[1], json!(3));
        let sec = json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
        assert_eq!(cells("", "secrets", &sec, NOW)[1..3], [json!("kubernetes.io/tls"), json!(2)]);
        assert_eq!(cells("", "secrets", &json!({}), NOW)[1..3], [json!("Opaque"), json!(0)]);
        let sa = json!({"metadata": {"name": "default"}, "secrets": [{"name": "t"}]});
        assert_eq!(cells("", "serviceaccounts", &sa, NOW)[1], json!(1));
        let lease = json!({"metadata": {"name": "kube-scheduler"}, "spec": {"holderIdentity": "node1_abc"}});
        assert_eq!(cells("coordination.k8s.io", "leases", &lease, NOW)[1], json!("node1_abc"));
        assert_eq!(cells("coordination.k8s.io", "leases", &json!({}), NOW)[1], json!(""));
    }

    #[test]
    fn role_binding_cells_group_subjects_by_kind() {
        let binding = json!({
            "metadata": {"name": "dev-view", "creationTimestamp": created(90)},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "jane"},
                {"kind": "ServiceAccount", "name": "ci", "namespace": "dev"},
                {"kind": "Group", "name": "devs"},
                {"kind": "User", "name": "joe"},
            ],
        });
        assert_eq!(
            cells("rbac.authorization.k8s.io", "rolebindings", &binding, NOW),
            [
                json!("dev-view"),
                json!("ClusterRole/view"),
                json!("90s"),
                json!("jane, joe"),
                json!("devs"),
                json!("dev/ci")
            ]
        );
        let empty = cells("rbac.authorization.k8s.io", "clusterrolebindings", &json!({}), NOW);
        assert_eq!(empty[1..], [json!("/"), json!("<unknown>"), json!(""), json!(""), json!("")]);
    }

    #[test]
    fn endpoints_formatting() {
        let ep = |subsets: Value| cells("", "endpoints", &json!({"subsets": subsets}), NOW)[1].clone();
        assert_eq!(ep(json!(null)), json!("<none>"));
        assert_eq!(ep(json!([])), json!("<none>"));
        assert_eq!(
            ep(json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}]}])),
            json!("10.0.0.1:80,10.0.0.2:80")
        );
        assert_eq!(ep(json!([{"addresses": [{"ip": "10.0.0.1"}]}])), json!("10.0.0.1"));
        assert_eq!(
            ep(json!([{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 443}]}])),
            json!("[fd00::1]:443")
        );
        assert_eq!(
            ep(
                json!([{"addresses": [{"ip": "a"}, {"ip": "b"}, {"ip": "c"}], "ports": [{"port": 1}, {"port": 2}]}])
            ),
            json!("a:1,b:1,c:1 + 3 more...")
        );
        assert_eq!(ep(json!([{"notReadyAddresses": [{"ip": "a"}], "ports": [{"port": 1}]}])), json!(""));
    }

    #[test]
    fn events() {
        let ev = json!({
            "metadata": {"name": "p.1234"},
            "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{a}"},
            "reason": "Pulled", "type": "Normal", "message": "  Pulled image  \n",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": created(3600), "lastTimestamp": created(60), "count": 4
        });
        assert_eq!(
            cells("", "events", &ev, NOW),
            vec![
                json!("60s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/p"),
                json!("spec.containers{a}"),
                json!("kubelet, n1"),
                json!("Pulled image"),
                json!("60m"),
                json!(4),
                json!("p.1234")
            ]
        );
        let newer = json!({
            "metadata": {"name": "e"}, "involvedObject": {"kind": "Node"},
            "eventTime": "2026-11-20T05:59:00.123456Z", "reportingComponent": "sched", "reportingInstance": ""
        });
        let c = cells("", "events", &newer, NOW);
        assert_eq!(
            (c[0].clone(), c[3].clone(), c[5].clone(), c[7].clone(), c[8].clone()),
            (json!("60s"), json!("node"), json!("sched"), json!("60s"), json!(1))
        );
        let series =
            json!({"eventTime": created(600), "series": {"count": 7, "lastObservedTime": created(10)}});
        let c = cells("", "events", &series, NOW);
        assert_eq!((c[0].clone(), c[7].clone(), c[8].clone()), (json!("10s"), json!("10m"), json!(7)));
        let bare = cells("", "events", &json!({}), NOW);
        assert_eq!((bare[0].clone(), bare[7].clone()), (json!("<unknown>"), json!("<unknown>")));
    }

    #[test]
    fn nodes() {
        let node = json!({
            "metadata": {"name": "n1", "creationTimestamp": created(10 * 86_400), "labels": {
                "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x",
                "kubernetes.io/role": "worker", "other": "y"}},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "192.168.1.10"}],
                "nodeInfo": {"kubeletVersion": "v1.37.0", "osImage": "Debian", "kernelVersion": "6.12",
                             "containerRuntimeVersion": "containerd://2.1"}
            }
        });
        assert_eq!(
            cells("", "nodes", &node, NOW),
            vec![
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,worker"),
                json!("10d"),
                json!("v1.37.0"),
                json!("192.168.1.10"),
                json!("<none>"),
                json!("Debian"),
                json!("6.12"),
                json!("containerd://2.1")
            ]
        );
        let bare = cells(
            "",
            "nodes",
            &json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}),
            NOW,
        );
        assert_eq!(
            bare[1..],
            [
                json!("NotReady"),
                json!("<none>"),
                json!("<unknown>"),
                json!(""),
                json!("<none>"),
                json!("<none>"),
                json!("<unknown>"),
                json!("<unknown>"),
                json!("<unknown>")
            ]
        );
        assert_eq!(cells("", "nodes", &json!({}), NOW)[1], json!("Unknown"));
    }

    #[test]
    fn workloads() {
        let tmpl = json!({"spec": {"containers": [{"name": "c", "image": "i"}], "nodeSelector": {"os": "linux", "arch": "arm64"}}});
        let rs = json!({"metadata": {"name": "rs"}, "spec": {"replicas": 3, "template": tmpl,
            "selector": {"matchLabels": {"app": "a"}, "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "api"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "zz", "operator": "Exists"},
                {"key": "canary", "operator": "DoesNotExist"}]}},
            "status": {"replicas": 3, "readyReplicas": 1}});
        assert_eq!(
            cells("apps", "replicasets", &rs, NOW),
            vec![
                json!("rs"),
                json!(3),
                json!(3),
                json!(1),
                json!("<unknown>"),
                json!("c"),
                json!("i"),
                json!("app=a,!canary,env notin (dev),tier in (api,web),zz")
            ]
        );
        let sts =
            json!({"metadata": {"name": "db"}, "spec": {"template": tmpl}, "status": {"readyReplicas": 1}});
        assert_eq!(cells("apps", "statefulsets", &sts, NOW)[1], json!("1/1"));
        let ds = json!({"metadata": {"name": "ds"}, "spec": {"template": tmpl, "selector": {"matchLabels": {"k": "v"}}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                       "updatedNumberScheduled": 3, "numberAvailable": 2}});
        assert_eq!(
            cells("apps", "daemonsets", &ds, NOW),
            vec![
                json!("ds"),
                json!(3),
                json!(3),
                json!(2),
                json!(3),
                json!(2),
                json!("arch=arm64,os=linux"),
                json!("<unknown>"),
                json!("c"),
                json!("i"),
                json!("k=v")
            ]
        );
        assert_eq!(cells("apps", "daemonsets", &json!({}), NOW)[6], json!("<none>"));
        assert_eq!(cells("apps", "replicasets", &json!({}), NOW)[7], json!("<none>"));
    }

    #[test]
    fn jobs_and_cronjobs() {
        let job = json!({"metadata": {"name": "j", "creationTimestamp": created(400)},
            "spec": {"completions": 3, "parallelism": 2, "template": {"spec": {"containers": [{"name": "w", "image": "busybox"}]}},
                     "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}}},
            "status": {"succeeded": 3, "startTime": created(400), "completionTime": created(280),
                       "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}});
        assert_eq!(
            cells("batch", "jobs", &job, NOW),
            vec![
                json!("j"),
                json!("Complete"),
                json!("3/3"),
                json!("2m"),
                json!("6m40s"),
                json!("w"),
                json!("busybox"),
                json!("batch.kubernetes.io/controller-uid=u")
            ]
        );
        let running = json!({"spec": {"parallelism": 4}, "status": {"active": 4, "startTime": created(30)}});
        let c = cells("batch", "jobs", &running, NOW);
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone()),
            (json!("Running"), json!("0/1 of 4"), json!("30s"))
        );
        let c = cells("batch", "jobs", &json!({}), NOW);
        assert_eq!((c[1].clone(), c[2].clone(), c[3].clone()), (json!("Running"), json!("0/1"), json!("")));
        let failed = json!({"status": {"conditions": [{"type": "Failed", "status": "True"}]}});
        assert_eq!(cells("batch", "jobs", &failed, NOW)[1], json!("Failed"));
        let suspended = json!({"status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(cells("batch", "jobs", &suspended, NOW)[1], json!("Suspended"));
        let deleting = json!({"metadata": {"deletionTimestamp": created(1)}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(cells("batch", "jobs", &deleting, NOW)[1], json!("Terminating"));

        let cj = json!({"metadata": {"name": "cj", "creationTimestamp": created(86_400)},
            "spec": {"schedule": "*/5 * * * *", "suspend": false, "timeZone": "Europe/Paris",
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}}},
            "status": {"active": [{"name": "cj-1"}], "lastScheduleTime": created(75)}});
        assert_eq!(
            cells("batch", "cronjobs", &cj, NOW),
            vec![
                json!("cj"),
                json!("*/5 * * * *"),
                json!("Europe/Paris"),
                json!("False"),
                json!(1),
                json!("75s"),
                json!("24h"),
                json!("w"),
                json!("i"),
                json!("<none>")
            ]
        );
        let c = cells("batch", "cronjobs", &json!({"spec": {"suspend": true}}), NOW);
        assert_eq!(
            (c[2].clone(), c[3].clone(), c[4].clone(), c[5].clone()),
            (json!("<none>"), json!("True"), json!(0), json!("<none>"))
        );
        assert_eq!(cells("batch", "cronjobs", &json!({}), NOW)[3], json!("<unset>"));
    }
}
