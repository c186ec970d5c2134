//! etcd's auth through etcdctl, against rtcd and real etcd side by side:
//! users, roles, permissions, `auth enable/disable`, and what each RPC
//! family answers a user without the permission. The same session must
//! print the same output and errors on both.

use etcd_client::{Client, ConnectOptions, WatchOptions};

use crate::etcd_client::error;
use crate::harness::{Kind, Member, etcdctl, start_with};

/// One etcdctl call: the user (`name:password`) it runs as, its arguments
/// and its stdin.
struct Step {
    user: Option<&'static str>,
    args: Vec<&'static str>,
    stdin: Option<&'static str>,
}

fn step(user: Option<&'static str>, args: &[&'static str]) -> Step {
    Step { user, args: args.to_vec(), stdin: None }
}

const ROOT: Option<&str> = Some("root:rootpw");
const ALICE: Option<&str> = Some("alice:alicepw");
const BOB: Option<&str> = Some("bob:bobpw");

fn steps() -> Vec<Step> {
    vec![
        // Before auth is on: setting up, and what enabling needs.
        step(None, &["auth", "enable"]),
        step(None, &["user", "add", "root:rootpw"]),
        step(None, &["user", "add", "root:again"]),
        step(None, &["auth", "enable"]),
        step(None, &["user", "add", "alice:alicepw"]),
        step(None, &["user", "add", "bob:bobpw"]),
        step(None, &["user", "add", "nopass", "--new-user-password=", "--interactive=false"]),
        step(None, &["role", "add", "reader"]),
        step(None, &["role", "add", "reader"]),
        step(None, &["role", "add", "writer"]),
        step(None, &["role", "grant-permission", "reader", "read", "/app/", "--prefix=true"]),
        step(None, &["role", "grant-permission", "reader", "readwrite", "/app/alice"]),
        step(None, &["role", "grant-permission", "reader", "write", "/app/alice"]),
        step(None, &["role", "grant-permission", "writer", "write", "/w/", "/w0"]),
        step(None, &["role", "grant-permission", "writer", "read", "/z", "--from-key"]),
        step(None, &["role", "grant-permission", "missing", "read", "/x"]),
        step(None, &["user", "grant-role", "alice", "reader"]),
        step(None, &["user", "grant-role", "alice", "reader"]),
        step(None, &["user", "grant-role", "bob", "writer"]),
        step(None, &["user", "grant-role", "bob", "missing"]),
        step(None, &["user", "grant-role", "ghost", "reader"]),
        step(None, &["user", "get", "alice"]),
        step(None, &["user", "get", "alice", "--detail"]),
        step(None, &["user", "get", "ghost"]),
        step(None, &["role", "get", "reader"]),
        step(None, &["role", "get", "writer"]),
        step(None, &["role", "get", "ghost"]),
        step(None, &["user", "list"]),
        step(None, &["role", "list"]),
        step(None, &["put", "/app/x", "1"]),
        step(None, &["put", "/w/1", "1"]),
        step(None, &["put", "/other", "1"]),
        // root has no root role yet: etcdctl adds it and retries.
        step(None, &["auth", "enable"]),
        step(None, &["auth", "enable"]),
        step(None, &["role", "get", "root"]),
        // Auth is on: no user, wrong passwords, a no-password user.
        step(None, &["get", "/app/x"]),
        step(None, &["put", "/app/x", "2"]),
        step(None, &["user", "list"]),
        step(Some("alice:wrong"), &["get", "/app/x"]),
        step(Some("ghost:pw"), &["get", "/app/x"]),
        step(Some("nopass:"), &["get", "/app/x"]),
        // KV: reads, writes, prefixes, ranges, txns, prev-kv.
        step(ALICE, &["get", "/app/x"]),
        step(ALICE, &["get", "/app/", "--prefix"]),
        step(ALICE, &["get", "/app/", "/app/z"]),
        step(ALICE, &["get", "/app/", "/b"]),
        step(ALICE, &["get", "", "--prefix"]),
        step(ALICE, &["get", "/other"]),
        step(ALICE, &["put", "/app/x", "3"]),
        step(ALICE, &["put", "/app/alice", "3"]),
        step(ALICE, &["put", "/app/alice", "4", "--prev-kv"]),
        step(ALICE, &["del", "/app/alice"]),
        step(ALICE, &["del", "/app/", "--prefix"]),
        step(BOB, &["put", "/w/2", "2"]),
        step(BOB, &["put", "/w/3", "3", "--prev-kv"]),
        step(BOB, &["get", "/w/2"]),
        step(BOB, &["del", "/w/", "--prefix"]),
        step(BOB, &["del", "/w/2", "--prev-kv"]),
        step(BOB, &["get", "/zzz"]),
        step(BOB, &["get", "/z", "--from-key"]),
        step(BOB, &["get", "/y", "--from-key"]),
        Step { stdin: Some("\nput /app/alice 5\n\n\n"), ..step(ALICE, &["txn"]) },
        Step { stdin: Some("\nput /app/x 5\n\n\n"), ..step(ALICE, &["txn"]) },
        Step { stdin: Some("value(\"/other\") = \"1\"\n\nget /app/x\n\n\n"), ..step(ALICE, &["txn"]) },
        Step {
            stdin: Some("value(\"/app/x\") = \"1\"\n\nget /app/x\n\nget /other\n\n"),
            ..step(ALICE, &["txn"])
        },
        // Leases: anyone may grant; revoking needs write on its keys.
        step(ROOT, &["lease", "grant", "600"]),
        step(ALICE, &["lease", "list"]),
        // Lock and election run with their caller's permissions.
        step(ALICE, &["lock", "/app/lk", "echo", "held"]),
        step(ROOT, &["lock", "/app/lk", "echo", "held"]),
        // Compaction is anyone's in etcd 3.4; maintenance and membership
        // are root's.
        step(ALICE, &["compaction", "2"]),
        step(ALICE, &["endpoint", "status"]),
        step(ALICE, &["endpoint", "hashkv"]),
        step(ALICE, &["defrag"]),
        step(ALICE, &["alarm", "list"]),
        step(ALICE, &["move-leader", "1"]),
        step(ALICE, &["member", "list"]),
        step(ALICE, &["member", "add", "x", "--peer-urls=http://127.0.0.1:1"]),
        step(ALICE, &["member", "remove", "1"]),
        step(ROOT, &["defrag"]),
        // Auth management: who may read and change what.
        step(ALICE, &["user", "list"]),
        step(ALICE, &["role", "list"]),
        step(ALICE, &["user", "get", "alice"]),
        step(ALICE, &["user", "get", "bob"]),
        step(ALICE, &["role", "get", "reader"]),
        step(ALICE, &["role", "get", "writer"]),
        step(ALICE, &["role", "add", "mine"]),
        step(ALICE, &["user", "grant-role", "alice", "root"]),
        step(ALICE, &["auth", "disable"]),
        step(ROOT, &["user", "list"]),
        step(ROOT, &["user", "get", "root", "--detail"]),
        step(ROOT, &["user", "delete", "root"]),
        step(ROOT, &["user", "revoke-role", "root", "root"]),
        step(ROOT, &["role", "delete", "root"]),
        step(ROOT, &["user", "revoke-role", "alice", "writer"]),
        step(ROOT, &["role", "revoke-permission", "reader", "/nothere"]),
        step(ROOT, &["role", "revoke-permission", "reader", "/app/", "--prefix=true"]),
        step(ROOT, &["role", "get", "reader"]),
        step(ALICE, &["get", "/app/x"]),
        step(ALICE, &["get", "/app/alice"]),
        // A new password: the old one stops working.
        Step { stdin: Some("newpw\n"), ..step(ROOT, &["user", "passwd", "alice", "--interactive=false"]) },
        step(ALICE, &["get", "/app/alice"]),
        step(Some("alice:newpw"), &["get", "/app/alice"]),
        // Deleting a role takes it from its users.
        step(ROOT, &["role", "delete", "writer"]),
        step(ROOT, &["user", "get", "bob"]),
        step(BOB, &["put", "/w/4", "4"]),
        step(ROOT, &["user", "delete", "bob"]),
        step(BOB, &["get", "/w/4"]),
        step(ROOT, &["user", "delete", "bob"]),
        step(ROOT, &["auth", "disable"]),
        step(None, &["auth", "disable"]),
        step(None, &["get", "", "--prefix", "--keys-only"]),
        step(None, &["user", "list"]),
    ]
}

/// What a step printed: success, stdout, and etcdctl's `Error:` lines (its
/// client also logs retries with timestamps to stderr).
fn run(member: &Member, s: &Step) -> (bool, String, String) {
    let endpoint = member.client_url.as_str();
    let mut args: Vec<&str> = Vec::new();
    if let Some(user) = s.user {
        args.extend(["--user", user]);
    }
    args.extend(&s.args);
    let out = etcdctl(endpoint, &args, s.stdin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Member IDs, sizes, revisions and hashes legitimately differ.
    let stdout = if s.args[0] == "endpoint" || s.args[0] == "lease" {
        format!("{} lines", stdout.lines().count())
    } else {
        stdout
            .replace(&member.client_url, "URL")
            .replace(member.client_url.trim_start_matches("http://"), "URL")
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> =
        stderr.lines().filter(|l| l.starts_with("Error:") || l.starts_with("Failed")).collect();
    let errors = errors.join("\n").replace(member.client_url.trim_start_matches("http://"), "URL");
    (out.status.success(), stdout, errors)
}

#[test]
fn auth_commands_print_what_etcd_prints() {
    // A cheap bcrypt cost: the session hashes and checks many passwords.
    let rtcd = start_with(Kind::Rtcd, "auth", &["--bcrypt-cost", "4"]);
    let etcd = start_with(Kind::Etcd, "auth", &["--bcrypt-cost", "4"]);
    for s in steps() {
        let ours = run(&rtcd, &s);
        let theirs = run(&etcd, &s);
        assert_eq!(ours, theirs, "etcdctl {:?} as {:?}: rtcd vs etcd", s.args, s.user);
    }
}

/// Sets up root and alice (who may read `/app/`) and turns auth on.
pub(crate) async fn with_auth(url: &str) {
    let c = Client::connect([url], None).await.unwrap();
    let mut auth = c.auth_client();
    auth.user_add("root", "rootpw", None).await.unwrap();
    auth.role_add("root").await.unwrap();
    auth.user_grant_role("root", "root").await.unwrap();
    auth.user_add("alice", "alicepw", None).await.unwrap();
    auth.role_add("reader").await.unwrap();
    let perm = etcd_client::Permission::read("/app/").with_prefix();
    auth.role_grant_permission("reader", perm).await.unwrap();
    auth.user_grant_role("alice", "reader").await.unwrap();
    auth.auth_enable().await.unwrap();
}

async fn as_user(url: &str, user: &str, password: &str) -> Result<Client, etcd_client::Error> {
    Client::connect([url], Some(ConnectOptions::new().with_user(user, password))).await
}

/// The first answer to a watch on `key` (`prefix`: the keys under it).
async fn first_watch_answer(c: &mut Client, key: &str, prefix: bool) -> String {
    let options = if prefix { WatchOptions::new().with_prefix() } else { WatchOptions::new() };
    match c.watch(key, Some(options)).await {
        Err(e) => error(e),
        Ok(mut stream) => match stream.message().await {
            Ok(Some(r)) => {
                format!("created {} canceled {} reason {:?}", r.created(), r.canceled(), r.cancel_reason())
            }
            Ok(None) => "ended".into(),
            Err(e) => error(e),
        },
    }
}

/// Watches are checked when created: a watch on a key or range the user
/// may not read is created and canceled at once, with etcd's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_are_checked_as_etcd_checks_them() {
    let rtcd = start_with(Kind::Rtcd, "authw", &["--bcrypt-cost", "4"]);
    let etcd = start_with(Kind::Etcd, "authw", &["--bcrypt-cost", "4"]);
    let mut answers = Vec::new();
    for url in [&rtcd.client_url, &etcd.client_url] {
        with_auth(url).await;
        let mut alice = as_user(url, "alice", "alicepw").await.unwrap();
        let mut anonymous = Client::connect([url.as_str()], None).await.unwrap();
        answers.push(vec![
            first_watch_answer(&mut alice, "/app/x", false).await,
            first_watch_answer(&mut alice, "/app/", true).await,
            first_watch_answer(&mut alice, "/other", false).await,
            first_watch_answer(&mut alice, "/", true).await,
            first_watch_answer(&mut anonymous, "/app/x", false).await,
        ]);
    }
    assert_eq!(answers[0], answers[1], "rtcd vs etcd");
    assert!(answers[0][0].starts_with("created true canceled false"), "{:?}", answers[0]);
    assert!(answers[0][2].contains("permission denied"), "{:?}", answers[0]);
}

/// Auth survives a restart (users, roles, the switch), tokens do not (they
/// live in memory, as etcd's simple tokens), and a client with a user and
/// password simply authenticates again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_survives_a_restart_and_tokens_are_made_again() {
    let mut rtcd = start_with(Kind::Rtcd, "authr", &["--bcrypt-cost", "4"]);
    with_auth(&rtcd.client_url).await;
    let mut root = as_user(&rtcd.client_url, "root", "rootpw").await.unwrap();
    root.put("/app/x", "1", None).await.unwrap();
    let token =
        root.auth_client().authenticate("alice".into(), "alicepw".into()).await.unwrap().token().to_owned();

    rtcd.kill();
    rtcd.restart();
    // Serving again once an anonymous read is refused for want of a user.
    let mut anonymous = Client::connect([rtcd.client_url.as_str()], None).await.unwrap();
    let mut refused = Ok(());
    for _ in 0..300 {
        refused = anonymous.get("/app/x", None).await.map(|_| ()).map_err(error);
        if refused.as_ref().is_err_and(|e| e.contains("user name")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(refused, Err("error InvalidArgument: etcdserver: user name is empty".into()));
    // Users and roles are still there: only root may list them.
    let listed = anonymous.auth_client().user_list().await.map(|_| ()).map_err(error);
    assert_eq!(listed, Err("error InvalidArgument: etcdserver: user name is empty".into()));

    // The old token is gone: a raw call carrying it is refused.
    let mut raw = rtcd_proto_client(&rtcd.client_url).await;
    let mut request = tonic::Request::new(rtcd_proto::etcdserverpb::RangeRequest {
        key: "/app/x".into(),
        ..Default::default()
    });
    request.metadata_mut().insert("token", token.parse().unwrap());
    let status = raw.range(request).await.unwrap_err();
    assert_eq!(
        (status.code(), status.message()),
        (tonic::Code::Unauthenticated, "etcdserver: invalid auth token")
    );

    let mut alice = as_user(&rtcd.client_url, "alice", "alicepw").await.unwrap();
    let got = alice.get("/app/x", None).await.unwrap();
    assert_eq!(got.kvs()[0].value(), b"1");
    let denied = alice.put("/app/x", "2", None).await.map(|_| ()).map_err(error);
    assert_eq!(denied, Err("error PermissionDenied: etcdserver: permission denied".into()));
}

async fn rtcd_proto_client(
    url: &str,
) -> rtcd_proto::etcdserverpb::kv_client::KvClient<tonic::transport::Channel> {
    rtcd_proto::etcdserverpb::kv_client::KvClient::connect(url.to_owned()).await.unwrap()
}

/// In a three-member cluster a token made through one member works on the
/// others (every member learns it from the log), and a permission change
/// made through one member binds requests on every other at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_permission_changes_reach_every_member() {
    let cluster = crate::harness::start_cluster_with(Kind::Rtcd, 3, &["--bcrypt-cost", "4"]);
    with_auth(&cluster[0].client_url).await;
    let mut root = as_user(&cluster[1].client_url, "root", "rootpw").await.unwrap();
    root.put("/app/x", "1", None).await.unwrap();
    let token =
        root.auth_client().authenticate("alice".into(), "alicepw".into()).await.unwrap().token().to_owned();
    for member in &cluster {
        let mut raw = rtcd_proto_client(&member.client_url).await;
        let mut request = tonic::Request::new(rtcd_proto::etcdserverpb::RangeRequest {
            key: "/app/x".into(),
            ..Default::default()
        });
        request.metadata_mut().insert("token", token.parse().unwrap());
        let got = raw.range(request).await.unwrap().into_inner();
        assert_eq!(got.kvs[0].value.as_ref(), b"1", "through {}", member.name);
    }
    root.auth_client()
        .role_revoke_permission(
            "reader",
            "/app/",
            Some(etcd_client::RoleRevokePermissionOptions::new().with_prefix()),
        )
        .await
        .unwrap();
    let mut alice = as_user(&cluster[2].client_url, "alice", "alicepw").await.unwrap();
    let denied = alice.get("/app/x", None).await.map(|_| ()).map_err(error);
    assert_eq!(denied, Err("error PermissionDenied: etcdserver: permission denied".into()));
}
