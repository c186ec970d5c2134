//! kube's defaults under a PodSpec (`SetDefaults_PodSpec`, `_Container`,
//! `_Probe`, `_HTTPGetAction`, `_Volume` and the volume sources, `_Pod`, and
//! the `+default` markers of the core types), for Pods and every kind that
//! carries a pod template.

use serde_json::{Value, json};

use super::{integer, items, object_at, pointer, present, string};

/// The container lists of a PodSpec, all defaulted alike.
const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// A Pod: what only Pods get (`SetDefaults_Pod`), then its spec's defaults.
pub fn pod(pod: &mut Value) {
    let Some(spec) = present(pod, "spec") else { return };
    requests_from_limits(spec);
    pointer(spec, "enableServiceLinks", json!(true));
    if spec["hostNetwork"] == json!(true) {
        host_network_ports(spec);
    }
    pod_spec(spec);
}

/// A `PodTemplateSpec` (a workload's `spec.template`): its spec is a Go
/// value struct, defaulted whether or not it was sent.
pub fn template(template: &mut Value) {
    if let Some(spec) = object_at(template, "spec") {
        pod_spec(spec);
    }
}

/// A workload's `spec.template` (a Go value struct: defaulted whether or
/// not it was sent).
pub fn template_of(spec: &mut Value) {
    if let Some(template) = object_at(spec, "template") {
        self::template(template);
    }
}

/// A PodSpec and everything in it.
pub fn pod_spec(spec: &mut Value) {
    string(spec, "dnsPolicy", "ClusterFirst");
    string(spec, "restartPolicy", "Always");
    pointer(spec, "securityContext", json!({}));
    pointer(spec, "terminationGracePeriodSeconds", json!(30));
    string(spec, "schedulerName", "default-scheduler");
    for list in CONTAINER_LISTS {
        items(spec, list).for_each(container);
    }
    items(spec, "volumes").for_each(volume);
}

/// A container's requests default to its limits (Pods only, not templates:
/// kube keeps this out of PodSpec so templates stay as written).
fn requests_from_limits(spec: &mut Value) {
    for list in ["initContainers", "containers"] {
        for container in items(spec, list) {
            let Some(limits) = container["resources"]["limits"].as_object().cloned() else { continue };
            let mut requests = container["resources"]["requests"].as_object().cloned().unwrap_or_default();
            for (resource, value) in limits {
                requests.entry(resource).or_insert(value);
            }
            container["resources"]["requests"] = Value::Object(requests);
        }
    }
}

/// With the host's network, a container port is also the host port.
fn host_network_ports(spec: &mut Value) {
    for list in ["initContainers", "containers"] {
        for container in items(spec, list) {
            for port in items(container, "ports") {
                if port["hostPort"].as_i64().is_none_or(|p| p == 0) {
                    port["hostPort"] = port["containerPort"].clone();
                }
            }
        }
    }
}

fn container(container: &mut Value) {
    let pull = pull_policy(container["image"].as_str().unwrap_or_default());
    string(container, "imagePullPolicy", pull);
    string(container, "terminationMessagePath", "/dev/termination-log");
    string(container, "terminationMessagePolicy", "File");
    for port in items(container, "ports") {
        string(port, "protocol", "TCP");
    }
    for env in items(container, "env") {
        if let Some(from) = present(env, "valueFrom") {
            field_ref(from);
        }
    }
    for field in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = present(container, field) {
            probe(p);
        }
    }
    if let Some(lifecycle) = present(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = present(lifecycle, hook) {
                handler_defaults(handler);
            }
        }
    }
}

fn probe(probe: &mut Value) {
    integer(probe, "timeoutSeconds", 1);
    integer(probe, "periodSeconds", 10);
    integer(probe, "successThreshold", 1);
    integer(probe, "failureThreshold", 3);
    handler_defaults(probe);
}

/// What a probe or lifecycle hook does: an HTTP get's path and scheme, a
/// gRPC check's service (`+default=""`).
fn handler_defaults(handler: &mut Value) {
    if let Some(get) = present(handler, "httpGet") {
        string(get, "path", "/");
        string(get, "scheme", "HTTP");
    }
    if let Some(grpc) = present(handler, "grpc") {
        pointer(grpc, "service", json!(""));
    }
}

/// A downward API field reference names `v1` when it names no version.
fn field_ref(holder: &mut Value) {
    if let Some(selector) = present(holder, "fieldRef") {
        string(selector, "apiVersion", "v1");
    }
}

fn volume(volume: &mut Value) {
    let has_source = volume.as_object().is_some_and(|v| v.iter().any(|(k, v)| k != "name" && !v.is_null()));
    if !has_source {
        volume["emptyDir"] = json!({});
    }
    if let Some(image) = present(volume, "image") {
        let pull = pull_policy(image["reference"].as_str().unwrap_or_default());
        string(image, "pullPolicy", pull);
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(files) = present(volume, source) {
            // 0644, as kube's file-backed sources default their mode.
            pointer(files, "defaultMode", json!(420));
        }
    }
    if let Some(downward) = present(volume, "downwardAPI") {
        items(downward, "items").for_each(field_ref);
    }
    if let Some(projected) = present(volume, "projected") {
        projected_sources(projected);
    }
    if let Some(host_path) = present(volume, "hostPath") {
        // HostPathUnset is the empty string, which kube writes.
        pointer(host_path, "type", json!(""));
    }
    let claim = present(volume, "ephemeral").and_then(|e| present(e, "volumeClaimTemplate"));
    if let Some(spec) = claim.and_then(|claim| object_at(claim, "spec")) {
        super::claim::spec(spec);
    }
    in_tree_sources(volume);
}

fn projected_sources(projected: &mut Value) {
    for source in items(projected, "sources") {
        if let Some(downward) = present(source, "downwardAPI") {
            items(downward, "items").for_each(field_ref);
        }
        if let Some(token) = present(source, "serviceAccountToken") {
            pointer(token, "expirationSeconds", json!(3600));
        }
    }
}

/// The `+default` markers of the in-tree volume sources kube still types.
fn in_tree_sources(volume: &mut Value) {
    if let Some(iscsi) = present(volume, "iscsi") {
        string(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = present(volume, "rbd") {
        string(rbd, "pool", "rbd");
        string(rbd, "user", "admin");
        string(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(disk) = present(volume, "azureDisk") {
        pointer(disk, "cachingMode", json!("ReadWrite"));
        pointer(disk, "fsType", json!("ext4"));
        pointer(disk, "readOnly", json!(false));
        pointer(disk, "kind", json!("Shared"));
    }
    if let Some(scale_io) = present(volume, "scaleIO") {
        string(scale_io, "storageMode", "ThinProvisioned");
        string(scale_io, "fsType", "xfs");
    }
}

/// kube's image pull policy default: `Always` for the `latest` tag (also
/// when no tag or digest is given), `IfNotPresent` otherwise, and for an
/// image reference it cannot parse.
pub fn pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some(Tag::Latest | Tag::None) => "Always",
        _ => "IfNotPresent",
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Tag<'a> {
    /// Neither tag nor digest: the registry's `latest`.
    None,
    Latest,
    Other(&'a str),
    /// Only a digest.
    Digest,
}

/// The tag of a Docker image reference (`[domain/]path[:tag][@digest]`),
/// None when it is not one (path components are lower case).
fn image_tag(image: &str) -> Option<Tag<'_>> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (path, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if digest.is_some_and(|d| !d.contains(':')) || !valid_path(path) {
        return None;
    }
    match tag {
        Some(tag) if !valid_tag(tag) => None,
        Some("latest") => Some(Tag::Latest),
        Some(tag) => Some(Tag::Other(tag)),
        None if digest.is_some() => Some(Tag::Digest),
        None => Some(Tag::None),
    }
}

/// A repository path: an optional domain (a first component with a dot, a
/// colon or capitals, or `localhost`), then lower-case components.
fn valid_path(path: &str) -> bool {
    let mut components: Vec<&str> = path.split('/').collect();
    if components.len() > 1 {
        let first = components[0];
        if first.contains(['.', ':']) || first == "localhost" || first.chars().any(|c| c.is_ascii_uppercase())
        {
            components.remove(0);
        }
    }
    components.iter().all(|c| {
        !c.is_empty()
            && c.starts_with(|ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit())
            && c.ends_with(|ch: char| ch.is_ascii_lowercase() || ch.is_ascii_digit())
            && c.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
    })
}

/// `[\w][\w.-]{0,127}`.
fn valid_tag(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128 && tag.starts_with(word) && tag.chars().all(|c| word(c) || c == '.' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("registry.k8s.io/pause:3.10", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v2", "IfNotPresent"),
            ("nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "IfNotPresent"),
            (
                "nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "Always",
            ),
            ("Nginx", "IfNotPresent"),
            ("", "IfNotPresent"),
            ("nginx:", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy(image), policy, "{image}");
        }
    }

    #[test]
    fn a_minimal_pod_gets_kubes_defaults() {
        let mut p = json!({"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
            "livenessProbe": {"httpGet": {"port": 80}}}],
            "volumes": [{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "c"}},
                {"name": "h", "hostPath": {"path": "/x"}}]}});
        pod(&mut p);
        assert_eq!(
            p["spec"],
            json!({
                "containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "Always",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "livenessProbe": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                "volumes": [{"name": "scratch", "emptyDir": {}},
                    {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}},
                    {"name": "h", "hostPath": {"path": "/x", "type": ""}}],
                "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {},
                "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler",
                "enableServiceLinks": true,
            })
        );
    }

    #[test]
    fn what_was_given_stays_and_templates_get_no_pod_only_defaults() {
        let mut t = json!({"spec": {"containers": [{"name": "c", "image": "a:1", "imagePullPolicy": "Never",
            "resources": {"limits": {"cpu": "1"}}}],
            "terminationGracePeriodSeconds": 0, "restartPolicy": "Never", "hostNetwork": true}});
        template(&mut t);
        let spec = &t["spec"];
        assert_eq!(spec["terminationGracePeriodSeconds"], 0);
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(spec["containers"][0]["imagePullPolicy"], "Never");
        assert!(spec["containers"][0]["resources"].get("requests").is_none());
        assert!(spec.get("enableServiceLinks").is_none());
    }

    #[test]
    fn host_network_pods_expose_container_ports_on_the_host() {
        let mut p = json!({"spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "a",
            "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9091}]}]}});
        pod(&mut p);
        let ports = &p["spec"]["containers"][0]["ports"];
        assert_eq!(ports[0]["hostPort"], 8080);
        assert_eq!(ports[1]["hostPort"], 9091);
    }

    #[test]
    fn nested_sources_and_references_are_defaulted() {
        let mut spec = json!({"containers": [{"name": "c", "image": "a:1",
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 5},
        "lifecycle": {"preStop": {"httpGet": {"port": 1, "scheme": "HTTPS"}}}}],
        "volumes": [
            {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}},
                {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}}]}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
        ]});
        pod_spec(&mut spec);
        let c = &spec["containers"][0];
        assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(c["readinessProbe"]["grpc"]["service"], "");
        assert_eq!(c["readinessProbe"]["periodSeconds"], 5);
        assert_eq!(c["lifecycle"]["preStop"]["httpGet"], json!({"port": 1, "scheme": "HTTPS", "path": "/"}));
        let projected = &spec["volumes"][0]["projected"];
        assert_eq!(projected["defaultMode"], 420);
        assert_eq!(projected["sources"][0]["serviceAccountToken"]["expirationSeconds"], 3600);
        assert_eq!(projected["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(
            spec["volumes"][1]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
            "Filesystem"
        );
    }
}
