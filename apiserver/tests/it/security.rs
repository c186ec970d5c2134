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
        let flags = [
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
    let script = r#"
import ssl, sys, urllib.request, urllib.error
url, ca, token = sys.argv[1], sys.argv[2], sys.argv[3]
request = urllib.request.Request(url)
if token:
    request.add_header("Authorization", "Bearer " + token)
context = ssl.create_default_context(cafile=ca)
try:
    response = urllib.request.urlopen(request, context=context)
    print(response.status); print(response.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.read().decode())
"#;
    let url = format!("{}{path}", api.url);
    let ca = api.ca().unwrap().display().to_string();
    let out = api.python(script, &[&url, &ca, token.unwrap_or("")]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (code, body) = text.split_once('\n').unwrap_or((&text, ""));
    (
        code.trim().parse().unwrap_or_else(|_| panic!("{text} {}", String::from_utf8_lossy(&out.stderr))),
        body.trim().to_string(),
    )
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
