//! The Pod Security Standards' checks, each with upstream's reason and
//! detail texts (pod-security-admission's `policy` package), run in its
//! order: the baseline checks sorted by ID, then the restricted ones; at
//! restricted, a restricted check replaces the baseline check it tightens.
//! Every check reads the pod spec as JSON and visits init, regular and
//! ephemeral containers in that order.

use serde_json::Value;

/// A failed check: its reason, and the detail in parentheses after it.
pub type Failure = (&'static str, String);

type Check = fn(&Value) -> Option<Failure>;

/// Baseline: what any pod may not do.
const BASELINE: [(&str, Check); 12] = [
    ("appArmorProfile", app_armor),
    ("capabilities_baseline", capabilities_baseline),
    ("hostNamespaces", host_namespaces),
    ("hostPathVolumes", host_path_volumes),
    ("hostPorts", host_ports),
    ("hostProbesAndHostLifecycle", host_probes),
    ("privileged", privileged),
    ("procMount", proc_mount),
    ("seLinuxOptions", se_linux),
    ("seccompProfile_baseline", seccomp_baseline),
    ("sysctls", sysctls),
    ("windowsHostProcess", windows_host_process),
];

/// Restricted, with the baseline checks each one replaces.
const RESTRICTED: [(&str, Check, Option<&str>); 6] = [
    ("allowPrivilegeEscalation", allow_privilege_escalation, None),
    ("capabilities_restricted", capabilities_restricted, Some("capabilities_baseline")),
    ("restrictedVolumes", restricted_volumes, Some("hostPathVolumes")),
    ("runAsNonRoot", run_as_non_root, None),
    ("runAsUser", run_as_user, None),
    ("seccompProfile_restricted", seccomp_restricted, Some("seccompProfile_baseline")),
];

/// The failures of `spec` at `restricted` or baseline.
pub fn evaluate(spec: &Value, restricted: bool) -> Vec<Failure> {
    let replaced: Vec<&str> =
        if restricted { RESTRICTED.iter().filter_map(|(_, _, r)| *r).collect() } else { Vec::new() };
    let baseline = BASELINE.iter().filter(|(id, _)| !replaced.contains(id)).map(|(_, check)| *check);
    let tighter = RESTRICTED.iter().filter(|_| restricted).map(|(_, check, _)| *check);
    baseline.chain(tighter).filter_map(|check| check(spec)).collect()
}

/// kube's aggregate: `reason (detail), reason (detail)`.
pub fn describe(failures: &[Failure]) -> String {
    failures.iter().map(|(reason, detail)| format!("{reason} ({detail})")).collect::<Vec<_>>().join(", ")
}

fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(|f| spec[f].as_array().into_iter().flatten())
}

fn name(container: &Value) -> String {
    container["name"].as_str().unwrap_or_default().to_string()
}

/// `"a", "b"`.
fn join_quote(items: &[String]) -> String {
    items.iter().map(|i| format!("\"{i}\"")).collect::<Vec<_>>().join(", ")
}

fn plural<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 { singular } else { plural }
}

/// `container "a"` or `containers "a", "b"`.
fn these_containers(names: &[String]) -> String {
    format!("{} {}", plural("container", "containers", names.len()), join_quote(names))
}

fn sorted_unique(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}

fn privileged(spec: &Value) -> Option<Failure> {
    let bad: Vec<String> =
        containers(spec).filter(|c| c["securityContext"]["privileged"] == true).map(name).collect();
    (!bad.is_empty()).then(|| {
        ("privileged", format!("{} must not set securityContext.privileged=true", these_containers(&bad)))
    })
}

fn host_namespaces(spec: &Value) -> Option<Failure> {
    let set: Vec<&str> =
        [("hostNetwork", "hostNetwork=true"), ("hostPID", "hostPID=true"), ("hostIPC", "hostIPC=true")]
            .into_iter()
            .filter(|(field, _)| spec[*field] == true)
            .map(|(_, text)| text)
            .collect();
    (!set.is_empty()).then(|| ("host namespaces", set.join(", ")))
}

fn host_path_volumes(spec: &Value) -> Option<Failure> {
    let volumes = spec["volumes"].as_array().into_iter().flatten();
    let bad: Vec<String> = volumes.filter(|v| v["hostPath"].is_object()).map(name).collect();
    (!bad.is_empty()).then(|| {
        ("hostPath volumes", format!("{} {}", plural("volume", "volumes", bad.len()), join_quote(&bad)))
    })
}

fn host_ports(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut ports = Vec::new();
    for container in containers(spec) {
        let used: Vec<String> = container["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["hostPort"].as_i64().filter(|port| *port != 0))
            .map(|port| port.to_string())
            .collect();
        if !used.is_empty() {
            bad.push(name(container));
            ports.extend(used);
        }
    }
    let ports = sorted_unique(ports);
    (!bad.is_empty()).then(|| {
        let detail = format!(
            "{} {} {} {}",
            these_containers(&bad),
            plural("uses", "use", bad.len()),
            plural("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        );
        ("hostPort", detail)
    })
}

/// The capabilities a baseline container may add.
const DEFAULT_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn added(container: &Value) -> impl Iterator<Item = &str> {
    container["securityContext"]["capabilities"]["add"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn capabilities_baseline(spec: &Value) -> Option<Failure> {
    adding_beyond(spec, &DEFAULT_CAPABILITIES).map(|detail| ("non-default capabilities", detail))
}

/// `containers "a" must not include "X" in ...add` for additions outside
/// `allowed`.
fn adding_beyond(spec: &Value, allowed: &[&str]) -> Option<String> {
    let mut bad = Vec::new();
    let mut capabilities = Vec::new();
    for container in containers(spec) {
        let beyond: Vec<String> =
            added(container).filter(|c| !allowed.contains(c)).map(str::to_string).collect();
        if !beyond.is_empty() {
            bad.push(name(container));
            capabilities.extend(beyond);
        }
    }
    (!bad.is_empty()).then(|| {
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            these_containers(&bad),
            join_quote(&sorted_unique(capabilities))
        )
    })
}

fn capabilities_restricted(spec: &Value) -> Option<Failure> {
    let missing_drop: Vec<String> = containers(spec)
        .filter(|c| {
            !c["securityContext"]["capabilities"]["drop"]
                .as_array()
                .is_some_and(|d| d.iter().any(|x| x == "ALL"))
        })
        .map(name)
        .collect();
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            these_containers(&missing_drop)
        ));
    }
    details.extend(adding_beyond(spec, &["NET_BIND_SERVICE"]));
    (!details.is_empty()).then(|| ("unrestricted capabilities", details.join("; ")))
}

fn allow_privilege_escalation(spec: &Value) -> Option<Failure> {
    if spec["os"]["name"] == "windows" {
        return None;
    }
    let bad: Vec<String> = containers(spec)
        .filter(|c| c["securityContext"]["allowPrivilegeEscalation"] != false)
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "allowPrivilegeEscalation != false",
            format!("{} must set securityContext.allowPrivilegeEscalation=false", these_containers(&bad)),
        )
    })
}

/// A pod in its own user namespace may run as root inside it.
fn user_namespaced(spec: &Value) -> bool {
    spec["hostUsers"] == false
}

fn run_as_non_root(spec: &Value) -> Option<Failure> {
    if user_namespaced(spec) {
        return None;
    }
    let pod = &spec["securityContext"]["runAsNonRoot"];
    let mut setters = Vec::new();
    if *pod == false {
        setters.push("pod".to_string());
    }
    let pod_says_yes = *pod == true;
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for container in containers(spec) {
        match container["securityContext"]["runAsNonRoot"].as_bool() {
            Some(false) => explicit.push(name(container)),
            Some(true) => {}
            None if !pod_says_yes => implicit.push(name(container)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(these_containers(&explicit));
    }
    if !setters.is_empty() {
        return Some((
            "runAsNonRoot != true",
            format!("{} must not set securityContext.runAsNonRoot=false", setters.join(" and ")),
        ));
    }
    (!implicit.is_empty()).then(|| {
        (
            "runAsNonRoot != true",
            format!("pod or {} must set securityContext.runAsNonRoot=true", these_containers(&implicit)),
        )
    })
}

fn run_as_user(spec: &Value) -> Option<Failure> {
    if user_namespaced(spec) {
        return None;
    }
    let mut setters = Vec::new();
    if spec["securityContext"]["runAsUser"] == 0 {
        setters.push("pod".to_string());
    }
    let root: Vec<String> =
        containers(spec).filter(|c| c["securityContext"]["runAsUser"] == 0).map(name).collect();
    if !root.is_empty() {
        setters.push(these_containers(&root));
    }
    (!setters.is_empty())
        .then(|| ("runAsUser=0", format!("{} must not set runAsUser=0", setters.join(" and "))))
}

fn seccomp_type(context: &Value) -> Option<&str> {
    context["seccompProfile"]
        .is_object()
        .then(|| context["seccompProfile"]["type"].as_str().unwrap_or_default())
}

/// Baseline forbids only an explicit `Unconfined`.
fn seccomp_baseline(spec: &Value) -> Option<Failure> {
    let mut setters = Vec::new();
    if seccomp_type(&spec["securityContext"]) == Some("Unconfined") {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = containers(spec)
        .filter(|c| seccomp_type(&c["securityContext"]) == Some("Unconfined"))
        .map(name)
        .collect();
    if !bad.is_empty() {
        setters.push(these_containers(&bad));
    }
    (!setters.is_empty()).then(|| {
        (
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to \"Unconfined\"",
                setters.join(" and ")
            ),
        )
    })
}

/// Restricted wants `RuntimeDefault` or `Localhost`, from the pod or
/// every container.
fn seccomp_restricted(spec: &Value) -> Option<Failure> {
    if spec["os"]["name"] == "windows" {
        return None;
    }
    let valid = |t: &str| matches!(t, "RuntimeDefault" | "Localhost");
    let mut setters = Vec::new();
    let mut bad_values = Vec::new();
    let pod_set = match seccomp_type(&spec["securityContext"]) {
        Some(t) if valid(t) => true,
        Some(t) => {
            setters.push("pod".to_string());
            bad_values.push(t.to_string());
            false
        }
        None => false,
    };
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for container in containers(spec) {
        match seccomp_type(&container["securityContext"]) {
            Some(t) if !valid(t) => {
                explicit.push(name(container));
                bad_values.push(t.to_string());
            }
            Some(_) => {}
            None if !pod_set => implicit.push(name(container)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(these_containers(&explicit));
    }
    if !setters.is_empty() {
        let values = join_quote(&sorted_unique(bad_values));
        return Some((
            "seccompProfile",
            format!("{} must not set securityContext.seccompProfile.type to {values}", setters.join(" and ")),
        ));
    }
    (!implicit.is_empty()).then(|| {
        let detail = format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            these_containers(&implicit)
        );
        ("seccompProfile", detail)
    })
}

/// `pod and containers "a"`-style setters of a field, from the pod's
/// security context and each container's.
fn setters(spec: &Value, bad: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut setters = Vec::new();
    if bad(&spec["securityContext"]) {
        setters.push("pod".to_string());
    }
    let containers: Vec<String> = containers(spec).filter(|c| bad(&c["securityContext"])).map(name).collect();
    if !containers.is_empty() {
        setters.push(these_containers(&containers));
    }
    setters
}

/// AppArmor: only `RuntimeDefault` or `Localhost` may be asked for (the
/// deprecated annotations are not read here).
fn app_armor(spec: &Value) -> Option<Failure> {
    let bad_type = |context: &Value| {
        context["appArmorProfile"].is_object()
            && !matches!(context["appArmorProfile"]["type"].as_str(), Some("RuntimeDefault" | "Localhost"))
    };
    let who = setters(spec, bad_type);
    if who.is_empty() {
        return None;
    }
    let mut values: Vec<String> = std::iter::once(&spec["securityContext"])
        .chain(containers(spec).map(|c| &c["securityContext"]))
        .filter(|context| bad_type(context))
        .map(|context| context["appArmorProfile"]["type"].as_str().unwrap_or_default().to_string())
        .collect();
    values = sorted_unique(values);
    let reason = plural("forbidden AppArmor profile", "forbidden AppArmor profiles", values.len());
    Some((
        reason,
        format!("{} must not set AppArmor profile type to {}", who.join(" and "), join_quote(&values)),
    ))
}

fn host_probes(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut hosts = Vec::new();
    for container in containers(spec) {
        let handlers = ["livenessProbe", "readinessProbe", "startupProbe"]
            .iter()
            .map(|p| &container[*p])
            .chain(["postStart", "preStop"].iter().map(|h| &container["lifecycle"][*h]));
        let found: Vec<String> = handlers
            .flat_map(|h| [&h["httpGet"]["host"], &h["tcpSocket"]["host"]])
            .filter_map(Value::as_str)
            .filter(|host| !host.is_empty())
            .map(str::to_string)
            .collect();
        if !found.is_empty() {
            bad.push(name(container));
            hosts.extend(found);
        }
    }
    let (bad, hosts) = (sorted_unique(bad), sorted_unique(hosts));
    (!bad.is_empty()).then(|| {
        let detail = format!(
            "{} {} {} {}",
            these_containers(&bad),
            plural("uses", "use", bad.len()),
            plural("probe or lifecycle host", "probe or lifecycle hosts", hosts.len()),
            join_quote(&hosts)
        );
        ("probe or lifecycle host", detail)
    })
}

fn proc_mount(spec: &Value) -> Option<Failure> {
    if user_namespaced(spec) {
        return None;
    }
    let mut bad = Vec::new();
    let mut kinds = Vec::new();
    for container in containers(spec) {
        if let Some(kind) = container["securityContext"]["procMount"].as_str().filter(|k| *k != "Default") {
            bad.push(name(container));
            kinds.push(kind.to_string());
        }
    }
    (!bad.is_empty()).then(|| {
        (
            "procMount",
            format!(
                "{} must not set securityContext.procMount to {}",
                these_containers(&bad),
                join_quote(&sorted_unique(kinds))
            ),
        )
    })
}

/// SELinux: only the container types, and neither user nor role.
fn se_linux(spec: &Value) -> Option<Failure> {
    const TYPES: [&str; 5] = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];
    let contexts: Vec<&Value> = std::iter::once(&spec["securityContext"])
        .chain(containers(spec).map(|c| &c["securityContext"]))
        .collect();
    let options = |context: &Value| context["seLinuxOptions"].clone();
    let invalid = |context: &Value| {
        let o = options(context);
        o.is_object()
            && (!TYPES.contains(&o["type"].as_str().unwrap_or_default())
                || o["user"].as_str().is_some_and(|u| !u.is_empty())
                || o["role"].as_str().is_some_and(|r| !r.is_empty()))
    };
    let who = setters(spec, invalid);
    if who.is_empty() {
        return None;
    }
    let bad_types: Vec<String> = contexts
        .iter()
        .map(|c| options(c))
        .filter(|o| o.is_object())
        .map(|o| o["type"].as_str().unwrap_or_default().to_string())
        .filter(|t| !TYPES.contains(&t.as_str()))
        .collect();
    let bad_types = sorted_unique(bad_types);
    let mut data = Vec::new();
    if !bad_types.is_empty() {
        data.push(format!("{} {}", plural("type", "types", bad_types.len()), join_quote(&bad_types)));
    }
    let set =
        |field: &str| contexts.iter().any(|c| options(c)[field].as_str().is_some_and(|v| !v.is_empty()));
    if set("user") {
        data.push("user may not be set".into());
    }
    if set("role") {
        data.push("role may not be set".into());
    }
    Some((
        "seLinuxOptions",
        format!("{} set forbidden securityContext.seLinuxOptions: {}", who.join(" and "), data.join("; ")),
    ))
}

/// The sysctls any pod may set (upstream's latest list).
const SAFE_SYSCTLS: [&str; 14] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_notsent_lowat",
];

fn sysctls(spec: &Value) -> Option<Failure> {
    let forbidden: Vec<&str> = spec["securityContext"]["sysctls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .filter(|s| !SAFE_SYSCTLS.contains(s))
        .collect();
    (!forbidden.is_empty()).then(|| ("forbidden sysctls", forbidden.join(", ")))
}

fn windows_host_process(spec: &Value) -> Option<Failure> {
    let who = setters(spec, |context| context["windowsOptions"]["hostProcess"] == true);
    (!who.is_empty()).then(|| {
        (
            "hostProcess",
            format!("{} must not set securityContext.windowsOptions.hostProcess=true", who.join(" and ")),
        )
    })
}

/// The volume types restricted allows.
const ALLOWED_VOLUMES: [&str; 9] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

fn restricted_volumes(spec: &Value) -> Option<Failure> {
    let mut bad = Vec::new();
    let mut types = Vec::new();
    for volume in spec["volumes"].as_array().into_iter().flatten() {
        let fields: Vec<&str> = volume
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .filter(|k| *k != "name")
            .collect();
        if fields.iter().any(|f| ALLOWED_VOLUMES.contains(f)) {
            continue;
        }
        bad.push(name(volume));
        types.push(fields.first().map_or("unknown", |f| f).to_string());
    }
    let types = sorted_unique(types);
    (!bad.is_empty()).then(|| {
        let detail = format!(
            "{} {} {} {} {}",
            plural("volume", "volumes", bad.len()),
            join_quote(&bad),
            plural("uses", "use", bad.len()),
            plural("restricted volume type", "restricted volume types", types.len()),
            join_quote(&types)
        );
        ("restricted volume types", detail)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_privileged_pod_fails_both_levels_with_upstreams_texts_in_upstreams_order() {
        let spec =
            json!({"containers": [{"name": "c", "securityContext": {"privileged": true}}], "hostPID": true});
        assert_eq!(
            describe(&evaluate(&spec, false)),
            "host namespaces (hostPID=true), privileged (container \"c\" must not set securityContext.privileged=true)"
        );
        assert_eq!(
            describe(&evaluate(&spec, true)),
            "host namespaces (hostPID=true), privileged (container \"c\" must not set securityContext.privileged=true), \
             allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), \
             unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), \
             runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), \
             seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"
        );
    }

    #[test]
    fn the_other_baseline_checks_speak_as_upstream() {
        let spec = json!({
            "securityContext": {"sysctls": [{"name": "kernel.msgmax"}, {"name": "net.ipv4.tcp_syncookies"}],
                "seLinuxOptions": {"type": "spc_t", "user": "root"}},
            "containers": [{"name": "a", "securityContext": {"procMount": "Unmasked", "appArmorProfile": {"type": "Unconfined"},
                "windowsOptions": {"hostProcess": true}},
                "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}}]});
        assert_eq!(
            describe(&evaluate(&spec, false)),
            "forbidden AppArmor profile (container \"a\" must not set AppArmor profile type to \"Unconfined\"), \
             probe or lifecycle host (container \"a\" uses probe or lifecycle host \"10.0.0.1\"), \
             procMount (container \"a\" must not set securityContext.procMount to \"Unmasked\"), \
             seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type \"spc_t\"; user may not be set), \
             forbidden sysctls (kernel.msgmax), \
             hostProcess (container \"a\" must not set securityContext.windowsOptions.hostProcess=true)"
        );
    }

    #[test]
    fn a_compliant_pod_passes_and_each_rule_names_what_breaks_it() {
        let good = json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "a", "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
            "volumes": [{"name": "data", "emptyDir": {}}]});
        assert!(evaluate(&good, true).is_empty());
        let bad = json!({"containers": [
                {"name": "a", "ports": [{"hostPort": 80}, {"hostPort": 8080}], "securityContext": {"capabilities": {"add": ["NET_ADMIN", "CHOWN"]}}},
                {"name": "b", "securityContext": {"runAsUser": 0, "seccompProfile": {"type": "Unconfined"}}}],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}, {"name": "nfs", "nfs": {"server": "s", "path": "/"}}]});
        let baseline = describe(&evaluate(&bad, false));
        assert_eq!(
            baseline,
            "non-default capabilities (container \"a\" must not include \"NET_ADMIN\" in securityContext.capabilities.add), \
             hostPath volumes (volume \"host\"), hostPort (container \"a\" uses hostPorts 80, 8080), \
             seccompProfile (container \"b\" must not set securityContext.seccompProfile.type to \"Unconfined\")"
        );
        let restricted = describe(&evaluate(&bad, true));
        assert!(restricted.contains("restricted volume types (volumes \"host\", \"nfs\" use restricted volume types \"hostPath\", \"nfs\")"), "{restricted}");
        assert!(
            restricted.contains("runAsUser=0 (container \"b\" must not set runAsUser=0)"),
            "{restricted}"
        );
        assert!(
            restricted
                .contains("must not include \"CHOWN\", \"NET_ADMIN\" in securityContext.capabilities.add"),
            "{restricted}"
        );
        assert!(!restricted.contains("hostPath volumes"), "{restricted}");
    }
}
