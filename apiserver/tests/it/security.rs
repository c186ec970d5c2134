//! The security front end to end, with real kubectl and the Python client,
//! on rtcd and on etcd: an administrator by client certificate, a token
//! user bound to `view` in one namespace, a ServiceAccount token from
//! `kubectl create token` bound to `edit`, impersonation, anonymous
//! requests, the order of the filter chain, and RBAC's escalation check —
//! each allowed exactly what RBAC grants and refused with kube's texts.

use std::time::{Duration, Instant};

use crate::common::{ApiServer, Backend, make_ca, make_client, openssl};

const JANE_TOKEN: &str = "jane-token-0123456789";
const NSADMIN_TOKEN: &str = "nsadmin-token-0123456789";

/// Core ConfigMaps with their bodies, everything else by metadata.
const AUDIT_POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: Metadata
"#;

/// An HTTPS server with RBAC, a client CA (and an admin certificate signed
/// by it), a token file and a ServiceAccount signing key.
async fn secured(backend: Backend) -> ApiServer {
    let api = ApiServer::start_prepared(backend, true, |dir| {
        make_ca(dir, "client-ca", "rtcd-client-ca");
        make_client(dir, "client-ca", "admin", "/CN=kubernetes-admin/O=system:masters");
        make_client(dir, "client-ca", "carol", "/CN=carol/O=dev/O=qa");
        let mut tokens = std::fs::read_to_string(dir.join("tokens.csv")).unwrap();
        tokens
            .push_str(&format!("{JANE_TOKEN},jane,jane-uid,\"dev\"\n{NSADMIN_TOKEN},nsadmin,nsadmin-uid\n"));
        std::fs::write(dir.join("tokens.csv"), tokens).unwrap();
        let key = dir.join("sa.key").display().to_string();
        openssl(&["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", &key]);
        let policy = dir.join("audit-policy.yaml");
        std::fs::write(&policy, AUDIT_POLICY).unwrap();
        let flags = [
            format!("--audit-policy-file={}", policy.display()),
            format!("--audit-log-path={}", dir.join("audit.log").display()),
            "--authorization-mode=RBAC".to_string(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_string(),
            format!("--service-account-signing-key-file={key}"),
        ];
        std::fs::write(dir.join("flags"), flags.join("\n")).unwrap();
    })
    .await;
    let dir = api.dir.path();
    let file = |name: &str| dir.join(name).display().to_string();
    api.add_identity(
        "admin",
        &format!("{{client-certificate: {}, client-key: {}}}", file("admin.crt"), file("admin.key")),
    );
    api.add_identity(
        "carol",
        &format!("{{client-certificate: {}, client-key: {}}}", file("carol.crt"), file("carol.key")),
    );
    api.add_identity("jane", &format!("{{token: {JANE_TOKEN}}}"));
    api.add_identity("nsadmin", &format!("{{token: {NSADMIN_TOKEN}}}"));
    // The aggregated roles fill in once the controller has run.
    wait_until(|| {
        ok(&api, "admin", &["get", "clusterrole", "edit", "-o", "jsonpath={.rules[*].verbs}"])
            .contains("create")
    });
    api
}

fn wait_until(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn ok(api: &ApiServer, who: &str, args: &[&str]) -> String {
    let out = api.kubectl_as(who, args);
    assert!(out.status.success(), "{who}: kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// kubectl that must fail; its stderr.
fn refused(api: &ApiServer, who: &str, args: &[&str]) -> String {
    let out = api.kubectl_as(who, args);
    assert!(
        !out.status.success(),
        "{who}: kubectl {args:?} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

fn apply(api: &ApiServer, who: &str, manifest: &str) -> std::process::Output {
    let path = api.dir.path().join(format!("manifest-{}.json", Instant::now().elapsed().as_nanos()));
    std::fs::write(&path, manifest).unwrap();
    api.kubectl_as(who, &["create", "-f", &path.display().to_string()])
}

/// A raw HTTPS GET from Python's standard library: status and body.
fn raw_get(api: &ApiServer, path: &str, token: Option<&str>) -> (u16, String) {
    let (code, _, body) = raw_get_audited(api, path, token);
    (code, body)
}

/// As `raw_get`, with the response's `Audit-Id`.
fn raw_get_audited(api: &ApiServer, path: &str, token: Option<&str>) -> (u16, String, String) {
    let script = r#"
import ssl, sys, urllib.request, urllib.error
url, ca, token = sys.argv[1], sys.argv[2], sys.argv[3]
request = urllib.request.Request(url)
if token:
    request.add_header("Authorization", "Bearer " + token)
context = ssl.create_default_context(cafile=ca)
try:
    response = urllib.request.urlopen(request, context=context)
    print(response.status, response.headers.get("Audit-Id")); print(response.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("Audit-Id")); print(e.read().decode())
"#;
    let url = format!("{}{path}", api.url);
    let ca = api.ca().unwrap().display().to_string();
    let out = api.python(script, &[&url, &ca, token.unwrap_or("")]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (first, body) = text.split_once('\n').unwrap_or((&text, ""));
    let (code, audit_id) = first.split_once(' ').unwrap_or((first, ""));
    let code =
        code.trim().parse().unwrap_or_else(|_| panic!("{text} {}", String::from_utf8_lossy(&out.stderr)));
    (code, audit_id.trim().to_string(), body.trim().to_string())
}

async fn scenario(backend: Backend) {
    let api = secured(backend).await;
    // The administrator's certificate: CN the user, O the group.
    let whoami = ok(
        &api,
        "admin",
        &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"],
    );
    assert_eq!(whoami, "kubernetes-admin [\"system:masters\",\"system:authenticated\"]");
    let carol = ok(&api, "carol", &["auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}"]);
    assert_eq!(carol, "[\"dev\",\"qa\",\"system:authenticated\"]", "every O is a group");
    ok(&api, "admin", &["create", "namespace", "dev"]);
    ok(&api, "admin", &["create", "configmap", "settings", "-n", "dev", "--from-literal=a=b"]);
    ok(&api, "admin", &["create", "secret", "generic", "password", "-n", "dev", "--from-literal=p=q"]);
    ok(
        &api,
        "admin",
        &["create", "rolebinding", "jane-view", "-n", "dev", "--clusterrole=view", "--user=jane"],
    );
    // kubectl prints bindings with kube's columns (the server's table).
    let wide = ok(&api, "admin", &["get", "rolebinding", "jane-view", "-n", "dev", "-o", "wide"]);
    let lines: Vec<Vec<&str>> = wide.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"], "{wide}");
    assert_eq!([lines[1][0], lines[1][1], lines[1][3]], ["jane-view", "ClusterRole/view", "jane"], "{wide}");

    // jane: view in dev, nothing elsewhere.
    assert_eq!(
        ok(&api, "jane", &["get", "configmap", "settings", "-n", "dev", "-o", "name"]).trim(),
        "configmap/settings"
    );
    assert_eq!(
        refused(&api, "jane", &["get", "secrets", "-n", "dev"]),
        "Error from server (Forbidden): secrets is forbidden: User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"dev\""
    );
    assert_eq!(
        refused(&api, "jane", &["create", "configmap", "x", "-n", "dev"]),
        "error: failed to create configmap: configmaps is forbidden: User \"jane\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"dev\""
    );
    assert_eq!(
        refused(&api, "jane", &["get", "configmaps", "-n", "default"]),
        "Error from server (Forbidden): configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(
        refused(&api, "jane", &["get", "nodes"]),
        "Error from server (Forbidden): nodes is forbidden: User \"jane\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
    );
    assert_eq!(ok(&api, "jane", &["auth", "can-i", "list", "pods", "-n", "dev"]).trim(), "yes");
    let no = api.kubectl_as("jane", &["auth", "can-i", "delete", "pods", "-n", "dev"]);
    assert_eq!((no.status.code(), String::from_utf8_lossy(&no.stdout).trim()), (Some(1), "no"));
    let list = ok(&api, "jane", &["auth", "can-i", "--list", "-n", "dev"]);
    let configmaps = list.lines().find(|l| l.starts_with("configmaps ")).unwrap_or_else(|| panic!("{list}"));
    assert!(configmaps.ends_with("[get list watch]"), "{configmaps}");
    assert!(
        list.lines()
            .any(|l| l.starts_with("selfsubjectaccessreviews.authorization.k8s.io ")
                && l.ends_with("[create]")),
        "{list}"
    );
    assert!(!list.lines().any(|l| l.starts_with("secrets ")), "view does not read secrets: {list}");
    // The filters run before routing: an unknown path is 403 to jane, 404 to the admin.
    assert_eq!(
        refused(&api, "jane", &["get", "--raw", "/no/such/path"]),
        "Error from server (Forbidden): forbidden: User \"jane\" cannot get path \"/no/such/path\""
    );
    assert!(refused(&api, "admin", &["get", "--raw", "/no/such/path"]).contains("(NotFound)"));

    // Impersonation: the admin may, jane may not.
    let as_jane = ok(
        &api,
        "admin",
        &[
            "--as=jane",
            "--as-group=dev",
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username} {.status.userInfo.groups}",
        ],
    );
    assert_eq!(as_jane, "jane [\"dev\",\"system:authenticated\"]");
    assert!(
        refused(&api, "admin", &["--as=jane", "get", "secrets", "-n", "dev"])
            .contains("User \"jane\" cannot list resource \"secrets\"")
    );
    assert_eq!(
        refused(&api, "jane", &["--as=kubernetes-admin", "get", "pods", "-n", "dev"]),
        "Error from server (Forbidden): users \"kubernetes-admin\" is forbidden: User \"jane\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );

    // A ServiceAccount token from `kubectl create token`, bound to edit.
    ok(&api, "admin", &["create", "serviceaccount", "robot", "-n", "dev"]);
    ok(
        &api,
        "admin",
        &[
            "create",
            "rolebinding",
            "robot-edit",
            "-n",
            "dev",
            "--clusterrole=edit",
            "--serviceaccount=dev:robot",
        ],
    );
    let token = ok(&api, "admin", &["create", "token", "robot", "-n", "dev", "--duration=1h"]);
    let short = refused(&api, "admin", &["create", "token", "robot", "-n", "dev", "--duration=5m"]);
    assert!(short.contains("may not specify a duration less than 10 minutes"), "{short}");
    api.add_identity("robot", &format!("{{token: {}}}", token.trim()));
    let robot = ok(
        &api,
        "robot",
        &["auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"],
    );
    assert_eq!(
        robot,
        "system:serviceaccount:dev:robot [\"system:serviceaccounts\",\"system:serviceaccounts:dev\",\"system:authenticated\"]"
    );
    ok(&api, "robot", &["create", "configmap", "made-by-robot", "-n", "dev"]);
    assert_eq!(
        refused(&api, "robot", &["get", "roles", "-n", "dev"]),
        "Error from server (Forbidden): roles.rbac.authorization.k8s.io is forbidden: User \"system:serviceaccount:dev:robot\" cannot list resource \"roles\" in API group \"rbac.authorization.k8s.io\" in the namespace \"dev\""
    );
    // Its account deleted, the token no longer authenticates.
    ok(&api, "admin", &["delete", "serviceaccount", "robot", "-n", "dev"]);
    wait_until(|| {
        let out = api.kubectl_as("robot", &["get", "configmaps", "-n", "dev"]);
        String::from_utf8_lossy(&out.stderr).contains("You must be logged in to the server (Unauthorized)")
    });

    // RBAC's escalation check: a namespace admin cannot grant what it lacks.
    ok(
        &api,
        "admin",
        &["create", "rolebinding", "nsadmin", "-n", "dev", "--clusterrole=admin", "--user=nsadmin"],
    );
    let role = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"nodes-reader","namespace":"dev"},"rules":[{"apiGroups":[""],"resources":["nodes"],"verbs":["get"]}]}"#;
    let out = apply(&api, "nsadmin", role);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("roles.rbac.authorization.k8s.io \"nodes-reader\" is forbidden: user \"nsadmin\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"get\"]}"),
        "{err}"
    );
    // What it holds it may grant.
    ok(
        &api,
        "nsadmin",
        &["create", "rolebinding", "jane-view-2", "-n", "dev", "--clusterrole=view", "--user=jane"],
    );
    let own = refused(
        &api,
        "jane",
        &["create", "rolebinding", "x", "-n", "dev", "--clusterrole=admin", "--user=jane"],
    );
    assert!(
        own.ends_with("rolebindings.rbac.authorization.k8s.io is forbidden: User \"jane\" cannot create resource \"rolebindings\" in API group \"rbac.authorization.k8s.io\" in the namespace \"dev\""),
        "{own}"
    );

    // The Python client sees kube's Status in its ApiException.
    let jane_config = api.dir.path().join("jane.kubeconfig").display().to_string();
    let script = r#"
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
print(len(v1.list_namespaced_config_map("dev").items))
try:
    v1.list_namespaced_secret("dev")
except ApiException as e:
    body = json.loads(e.body)
    print(e.status, body["reason"], body["details"]["kind"])
"#;
    let out = api.python(script, &[&jane_config]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "2\n403 Forbidden secrets\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Anonymous: public info only; a bad token is 401, not anonymous.
    assert_eq!(raw_get(&api, "/version", None).0, 200);
    assert_eq!(raw_get(&api, "/healthz", None), (200, "ok".to_string()));
    let (code, body) = raw_get(&api, "/api", None);
    assert_eq!(code, 403);
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["message"], "forbidden: User \"system:anonymous\" cannot get path \"/api\"");
    let (code, body) = raw_get(&api, "/api", Some("no-such-token"));
    assert_eq!(code, 401);
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (status["reason"].as_str(), status["message"].as_str()),
        (Some("Unauthorized"), Some("Unauthorized"))
    );
    assert_eq!(raw_get(&api, "/version", Some(JANE_TOKEN)).0, 200);
    components_act_as_themselves(&api);
    check_audit_log(&api);
}

/// kube's own components, logged in as themselves, may do their work and
/// nothing more (kube's bootstrap roles for them).
fn components_act_as_themselves(api: &ApiServer) {
    let can = |user: &str, what: &[&str]| {
        let as_user = format!("--as={user}");
        let mut args = vec!["auth", "can-i", as_user.as_str()];
        args.extend_from_slice(what);
        let out = api.kubectl_as("admin", &args);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let scheduler = "system:kube-scheduler";
    for what in [
        &["list", "resourceslices.resource.k8s.io"][..],
        &["update", "resourceclaims.resource.k8s.io", "--subresource=status", "-n", "dev"],
        &["create", "pods", "--subresource=binding", "-n", "dev"],
        &["watch", "csinodes.storage.k8s.io"],
        &["update", "leases.coordination.k8s.io/kube-scheduler", "-n", "kube-system"],
    ] {
        assert_eq!(can(scheduler, what), "yes", "{scheduler} {what:?}");
    }
    assert_eq!(can(scheduler, &["delete", "nodes"]), "no");
    assert_eq!(can(scheduler, &["update", "leases.coordination.k8s.io/other", "-n", "kube-system"]), "no");
    assert_eq!(can("system:kube-proxy", &["watch", "servicecidrs.networking.k8s.io"]), "yes");
    assert_eq!(can("system:kube-proxy", &["create", "pods", "-n", "dev"]), "no");
    assert_eq!(
        can("system:kube-controller-manager", &["create", "serviceaccounts/token", "-n", "dev"]),
        "yes"
    );
    // With --use-service-account-credentials each controller is its own ServiceAccount.
    let controller = |name: &str| format!("system:serviceaccount:kube-system:{name}");
    let deployments = controller("deployment-controller");
    assert_eq!(can(&deployments, &["create", "replicasets.apps", "-n", "dev"]), "yes");
    assert_eq!(
        can(&deployments, &["update", "deployments.apps", "--subresource=status", "-n", "dev"]),
        "yes"
    );
    assert_eq!(can(&deployments, &["create", "secrets", "-n", "dev"]), "no");
    assert_eq!(can(&controller("namespace-controller"), &["deletecollection", "pods", "-n", "dev"]), "yes");
    let certificates = controller("certificate-controller");
    let csr = "certificatesigningrequests.certificates.k8s.io";
    assert_eq!(can(&certificates, &["update", csr, "--subresource=approval"]), "yes");
    assert_eq!(can(&certificates, &["create", csr]), "no");
    let collector = controller("generic-garbage-collector");
    assert_eq!(can(&collector, &["delete", "deployments.apps", "-n", "dev"]), "yes");
    assert_eq!(can(&controller("ttl-controller"), &["delete", "nodes"]), "no");
}

/// The audit log has an event for each of these requests, with the right
/// user, verb, objectRef, stage, level and decision.
fn check_audit_log(api: &ApiServer) {
    let (code, failed_id, _) = raw_get_audited(api, "/api/v1/namespaces", Some("not-a-token"));
    assert_eq!(code, 401);
    assert!(!failed_id.is_empty(), "every response carries Audit-Id");
    let path = api.dir.path().join("audit.log");
    let events = || -> Vec<serde_json::Value> {
        std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    };
    wait_until(|| events().iter().any(|e| e["auditID"] == failed_id.as_str()));
    let events = events();
    assert!(events.iter().all(|e| e["kind"] == "Event" && e["apiVersion"] == "audit.k8s.io/v1"));
    assert!(events.iter().all(|e| e["stage"] != "RequestReceived"), "the policy omits RequestReceived");
    let find = |what: &str, pred: &dyn Fn(&serde_json::Value) -> bool| {
        events.iter().find(|e| pred(e)).cloned().unwrap_or_else(|| panic!("no audit event for {what}"))
    };
    let refused = find("jane listing secrets", &|e| {
        e["user"]["username"] == "jane" && e["verb"] == "list" && e["objectRef"]["resource"] == "secrets"
    });
    assert_eq!(refused["stage"], "ResponseComplete");
    assert_eq!(refused["level"], "Metadata");
    assert_eq!(refused["objectRef"]["namespace"], "dev");
    assert_eq!(refused["responseStatus"]["code"], 403);
    assert_eq!(refused["responseStatus"]["reason"], "Forbidden");
    assert_eq!(refused["annotations"]["authorization.k8s.io/decision"], "forbid");
    assert!(refused.get("requestObject").is_none() && refused.get("responseObject").is_none());
    let impersonated = find("the admin as jane", &|e| {
        e["user"]["username"] == "kubernetes-admin" && e["impersonatedUser"]["username"] == "jane"
    });
    assert_eq!(
        impersonated["impersonatedUser"]["groups"],
        serde_json::json!(["dev", "system:authenticated"])
    );
    let created = find("robot's ConfigMap", &|e| {
        e["verb"] == "create"
            && e["objectRef"]["resource"] == "configmaps"
            && e["user"]["username"] == "system:serviceaccount:dev:robot"
    });
    assert_eq!(created["level"], "RequestResponse");
    assert_eq!(created["requestObject"]["metadata"]["name"], "made-by-robot");
    assert_eq!(created["responseObject"]["metadata"]["name"], "made-by-robot");
    assert_eq!(created["responseStatus"]["code"], 201);
    assert_eq!(created["annotations"]["authorization.k8s.io/decision"], "allow");
    assert!(
        created["annotations"]["authorization.k8s.io/reason"]
            .as_str()
            .unwrap()
            .starts_with("RBAC: allowed by RoleBinding \"robot-edit/dev\" of ClusterRole \"edit\" to ServiceAccount \"robot/dev\""),
        "{created}"
    );
    let failed = events.iter().find(|e| e["auditID"] == failed_id.as_str()).unwrap();
    assert_eq!(failed["responseStatus"]["code"], 401);
    assert_eq!(failed["responseStatus"]["message"], "Authentication failed, attempted: bearer");
    assert_eq!(failed["user"], serde_json::json!({}));
    assert!(failed["sourceIPs"][0] == "127.0.0.1", "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_authentication_and_impersonation_on_rtcd() {
    scenario(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_authentication_and_impersonation_on_etcd() {
    scenario(Backend::Etcd).await;
}

/// With `--anonymous-auth=false` a request without credentials is 401,
/// even for `/version`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_anonymous_auth_no_credentials_is_unauthorized() {
    let api = ApiServer::start_prepared(Backend::Etcd, true, |dir| {
        std::fs::write(dir.join("flags"), "--anonymous-auth=false\n--authorization-mode=RBAC\n").unwrap();
    })
    .await;
    assert_eq!(raw_get(&api, "/version", None).0, 401);
    assert_eq!(raw_get(&api, "/version", Some(crate::common::ADMIN_TOKEN)).0, 200);
}
