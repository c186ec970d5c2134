//! Auth tokens over their life, against rtcd and real etcd side by side:
//! JWT tokens (`--auth-token jwt,...` with openssl-made keys) made, used
//! through both metadata keys, forged, outdated by a permission change,
//! expired, refused by a verify-only member; simple tokens expiring after
//! `--auth-token-ttl` unless used; tokens across a leader change and a
//! restart in three-member clusters.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rtcd_proto::authpb::Permission;
use rtcd_proto::authpb::permission::Type as PermType;
use rtcd_proto::etcdserverpb::auth_client::AuthClient;
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use rtcd_proto::etcdserverpb::maintenance_client::MaintenanceClient;
use rtcd_proto::etcdserverpb::{
    AuthRoleGrantPermissionRequest, AuthenticateRequest, MoveLeaderRequest, PutRequest, RangeRequest,
    StatusRequest,
};
use tonic::transport::Channel;

use crate::harness::{Kind, Member, start_cluster_with, start_with};

/// Runs openssl in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").current_dir(dir).args(args).output().expect("openssl");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// An ECDSA P-256 key pair as `openssl ecparam` writes it (SEC1), and its
/// public half, in `dir`: `ec.key`, `ec.pub`.
fn ec_keys(dir: &Path) {
    openssl(dir, &["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ec.key"]);
    openssl(dir, &["ec", "-in", "ec.key", "-pubout", "-out", "ec.pub"]);
}

/// A 2048-bit RSA key pair in PKCS#1 (`openssl genrsa -traditional`):
/// `rsa.key`, `rsa.pub`.
fn rsa_keys(dir: &Path) {
    openssl(dir, &["genrsa", "-traditional", "-out", "rsa.key", "2048"]);
    openssl(dir, &["rsa", "-in", "rsa.key", "-pubout", "-out", "rsa.pub"]);
}

fn jwt_flag(dir: &Path, method: &str, private: Option<&str>, public: Option<&str>, ttl: &str) -> String {
    let mut flag = format!("jwt,sign-method={method},ttl={ttl}");
    for (name, file) in [("priv-key", private), ("pub-key", public)] {
        if let Some(file) = file {
            flag.push_str(&format!(",{name}={}", dir.join(file).display()));
        }
    }
    flag
}

async fn channel(url: &str) -> Channel {
    Channel::from_shared(url.to_owned()).unwrap().connect().await.unwrap()
}

/// A status as both servers' answers are compared: code and text.
fn status(s: tonic::Status) -> String {
    format!("{:?}: {}", s.code(), s.message())
}

/// A request carrying `token` under the metadata key `key`.
fn with_token<T>(message: T, key: &'static str, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(key, token.parse().unwrap());
    request
}

async fn authenticate(channel: &Channel, name: &str, password: &str) -> Result<String, String> {
    let request = AuthenticateRequest { name: name.into(), password: password.into() };
    AuthClient::new(channel.clone()).authenticate(request).await.map(|r| r.into_inner().token).map_err(status)
}

/// Reads `key` with `token` under metadata `key`: the value, or the error.
async fn get_with(channel: &Channel, token: &str, metadata: &'static str, key: &str) -> String {
    let request =
        with_token(RangeRequest { key: key.to_owned().into(), ..Default::default() }, metadata, token);
    match KvClient::new(channel.clone()).range(request).await {
        Ok(r) => {
            r.into_inner().kvs.first().map_or("none".into(), |kv| String::from_utf8_lossy(&kv.value).into())
        }
        Err(e) => status(e),
    }
}

async fn get(channel: &Channel, token: &str, key: &str) -> String {
    get_with(channel, token, "token", key).await
}

async fn put(channel: &Channel, token: &str, key: &str, value: &str) -> String {
    let request = with_token(
        PutRequest { key: key.to_owned().into(), value: value.to_owned().into(), ..Default::default() },
        "token",
        token,
    );
    match KvClient::new(channel.clone()).put(request).await {
        Ok(_) => "ok".into(),
        Err(e) => status(e),
    }
}

/// A token's claims without `exp` (which depends on the second it was
/// made), and how far `exp` lies ahead in whole seconds.
fn claims(token: &str) -> (serde_json::Value, i64) {
    let payload = token.split('.').nth(1).expect("a JWT has three parts");
    let mut claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let exp = claims.as_object_mut().unwrap().remove("exp").and_then(|e| e.as_i64()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    (claims, exp - now)
}

/// Sets up root and alice (who may read `/app/`), turns auth on and puts
/// `/app/x` as root.
async fn with_auth(url: &str, channel: &Channel) {
    crate::etcdctl_auth::with_auth(url).await;
    let root = authenticate(channel, "root", "rootpw").await.unwrap();
    assert_eq!(put(channel, &root, "/app/x", "1").await, "ok");
}

/// Lets alice write `/app/x` (a permission change: the auth revision moves).
async fn grant_alice_write(channel: &Channel, root: &str) -> String {
    let perm =
        Permission { perm_type: PermType::Write as i32, key: "/app/x".into(), range_end: Default::default() };
    let request = AuthRoleGrantPermissionRequest { name: "reader".into(), perm: Some(perm) };
    match AuthClient::new(channel.clone()).role_grant_permission(with_token(request, "token", root)).await {
        Ok(_) => "granted".into(),
        Err(e) => status(e),
    }
}

/// What one server answers through a JWT token's life; `ttl` is the
/// tokens' (whole seconds).
async fn jwt_session(member: &Member, ttl: i64, keys: &Path) -> Vec<String> {
    let ch = channel(&member.client_url).await;
    with_auth(&member.client_url, &ch).await;
    let mut seen = Vec::new();
    let alice = authenticate(&ch, "alice", "alicepw").await.unwrap();
    let (alice_claims, lives) = claims(&alice);
    seen.push(format!("claims {alice_claims}"));
    assert!((ttl - 2..=ttl).contains(&lives), "exp {lives} s ahead, ttl {ttl} s");
    seen.push(format!("wrong password: {:?}", authenticate(&ch, "alice", "nope").await));
    // Used through either metadata key etcd reads.
    seen.push(format!("get: {}", get(&ch, &alice, "/app/x").await));
    seen.push(format!("get via authorization: {}", get_with(&ch, &alice, "authorization", "/app/x").await));
    seen.push(format!("put: {}", put(&ch, &alice, "/app/x", "2").await));

    // Forgeries: a changed signature, claims changed after signing, an
    // unsigned token, an HMAC token keyed with the public key.
    let parts: Vec<&str> = alice.split('.').collect();
    let mut signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
    signature[0] ^= 1;
    let resigned = format!("{}.{}.{}", parts[0], parts[1], URL_SAFE_NO_PAD.encode(&signature));
    seen.push(format!("changed signature: {}", get(&ch, &resigned, "/app/x").await));
    let root_claims = alice_claims.to_string().replace("alice", "root");
    let as_root = format!("{}.{}.{}", parts[0], URL_SAFE_NO_PAD.encode(root_claims.as_bytes()), parts[2]);
    seen.push(format!("changed claims: {}", get(&ch, &as_root, "/app/x").await));
    let none = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let unsigned = format!("{none}.{}.", parts[1]);
    seen.push(format!("alg none: {}", get(&ch, &unsigned, "/app/x").await));
    let hs = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let message = format!("{hs}.{}", parts[1]);
    let public_pem = std::fs::read(keys.join("ec.pub")).unwrap();
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &public_pem);
    let mac = URL_SAFE_NO_PAD.encode(ring::hmac::sign(&key, message.as_bytes()));
    seen.push(format!(
        "HS256 keyed with the public key: {}",
        get(&ch, &format!("{message}.{mac}"), "/app/x").await
    ));
    seen.push(format!("garbage: {}", get(&ch, "not.a.token", "/app/x").await));

    // A permission change retires every token made before it.
    let root = authenticate(&ch, "root", "rootpw").await.unwrap();
    seen.push(grant_alice_write(&ch, &root).await);
    seen.push(format!("old token get: {}", get(&ch, &alice, "/app/x").await));
    seen.push(format!("old token put: {}", put(&ch, &alice, "/app/x", "3").await));
    let fresh = authenticate(&ch, "alice", "alicepw").await.unwrap();
    seen.push(format!("fresh claims {}", claims(&fresh).0));
    seen.push(format!("fresh put: {}", put(&ch, &fresh, "/app/x", "3").await));

    // Past `exp` (to the second), a token is refused however often used.
    tokio::time::sleep(Duration::from_secs(ttl as u64 + 2)).await;
    seen.push(format!("expired: {}", get(&ch, &fresh, "/app/x").await));
    seen
}

/// JWT tokens made, used, forged, outdated and expired: the same answers
/// from rtcd and etcd 3.4, with the same keys (a SEC1 ECDSA key, as
/// `openssl ecparam` writes it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_tokens_live_and_die_as_etcds() {
    let keys = tempfile::tempdir().unwrap();
    ec_keys(keys.path());
    let ttl = 3;
    let flag = jwt_flag(keys.path(), "ES256", Some("ec.key"), Some("ec.pub"), &format!("{ttl}s"));
    let flags = ["--bcrypt-cost", "4", "--auth-token", &flag];
    let rtcd = start_with(Kind::Rtcd, "jwt", &flags);
    let etcd = start_with(Kind::Etcd, "jwt", &flags);
    let (ours, theirs) =
        (jwt_session(&rtcd, ttl, keys.path()).await, jwt_session(&etcd, ttl, keys.path()).await);
    assert_eq!(ours, theirs, "rtcd vs etcd");
    // What the answers are, beyond agreeing.
    assert!(ours.contains(&"get: 1".to_string()), "{ours:?}");
    assert!(ours.contains(&"get via authorization: 1".to_string()), "{ours:?}");
    let invalid = "Unauthenticated: etcdserver: invalid auth token";
    for forged in
        ["changed signature", "changed claims", "alg none", "HS256 keyed with the public key", "expired"]
    {
        assert!(ours.contains(&format!("{forged}: {invalid}")), "{forged}: {ours:?}");
    }
    assert!(
        ours.contains(&"old token get: InvalidArgument: etcdserver: revision of auth store is old".into())
    );
    assert!(ours.contains(&"fresh put: ok".to_string()), "{ours:?}");
}

/// A member given only the public key verifies tokens but cannot make
/// them: Authenticate fails with etcd's text, and a token another member
/// made with the private key is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verify_only_member_refuses_to_sign() {
    let keys = tempfile::tempdir().unwrap();
    rsa_keys(keys.path());
    let verify_only = jwt_flag(keys.path(), "RS256", None, Some("rsa.pub"), "5m");
    let mut answers = Vec::new();
    for kind in [Kind::Rtcd, Kind::Etcd] {
        let member = start_with(kind, "jwtv", &["--bcrypt-cost", "4", "--auth-token", &verify_only]);
        let ch = channel(&member.client_url).await;
        crate::etcdctl_auth::with_auth(&member.client_url).await;
        answers.push(authenticate(&ch, "alice", "alicepw").await);
    }
    assert_eq!(answers[0], answers[1], "rtcd vs etcd");
    assert_eq!(answers[0], Err("Unknown: auth: token signing attempted with verify-only key".into()));
}

/// Simple tokens live `--auth-token-ttl` after their last use: used every
/// second they outlive it, left alone they expire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_tokens_expire_when_unused_as_etcds() {
    let flags = ["--bcrypt-cost", "4", "--auth-token-ttl", "2"];
    let (rtcd, etcd) = (start_with(Kind::Rtcd, "ttl", &flags), start_with(Kind::Etcd, "ttl", &flags));
    let mut answers = Vec::new();
    for member in [&rtcd, &etcd] {
        let ch = channel(&member.client_url).await;
        with_auth(&member.client_url, &ch).await;
        let (kept, left) = (
            authenticate(&ch, "alice", "alicepw").await.unwrap(),
            authenticate(&ch, "alice", "alicepw").await.unwrap(),
        );
        let mut seen = Vec::new();
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            seen.push(get(&ch, &kept, "/app/x").await);
        }
        seen.push(get(&ch, &left, "/app/x").await);
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1], "rtcd vs etcd");
    assert_eq!(answers[0][..4], ["1", "1", "1", "1"]);
    assert_eq!(answers[0][4], "Unauthenticated: etcdserver: invalid auth token");
}

/// What a restarted member answers alice's read once it serves (no
/// connection or leader yet is not an answer).
async fn first_answer(member: &Member, token: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(ch) = Channel::from_shared(member.client_url.clone()).unwrap().connect().await {
            let answer = get(&ch, token, "/app/x").await;
            if !answer.starts_with("Unavailable") && !answer.contains("leader") {
                return answer;
            }
        }
        assert!(std::time::Instant::now() < deadline, "{} did not serve again", member.name);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The member that leads, asked of `member`.
async fn leader_of(member: &Member) -> u64 {
    let status = MaintenanceClient::new(channel(&member.client_url).await).status(StatusRequest {}).await;
    status.unwrap().into_inner().leader
}

/// Tokens across a leader change and a member's restart, in three-member
/// clusters: a token made through one member serves on every member
/// before and after leadership moves; after a `kill -9` and restart a
/// simple token is forgotten by that member (it lives in memory) while a
/// JWT token still serves (it carries what it needs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_serve_across_a_leader_change_and_a_restart() {
    let keys = tempfile::tempdir().unwrap();
    rsa_keys(keys.path());
    let jwt = jwt_flag(keys.path(), "RS256", Some("rsa.key"), Some("rsa.pub"), "5m");
    let mut answers = Vec::new();
    for kind in [Kind::Rtcd, Kind::Etcd] {
        for tokens in ["simple", jwt.as_str()] {
            let mut cluster = start_cluster_with(kind, 3, &["--bcrypt-cost", "4", "--auth-token", tokens]);
            let channels = [
                channel(&cluster[0].client_url).await,
                channel(&cluster[1].client_url).await,
                channel(&cluster[2].client_url).await,
            ];
            with_auth(&cluster[0].client_url, &channels[0]).await;
            let alice = authenticate(&channels[1], "alice", "alicepw").await.unwrap();
            let root = authenticate(&channels[2], "root", "rootpw").await.unwrap();
            let mut seen = Vec::new();
            for ch in &channels {
                seen.push(get(ch, &alice, "/app/x").await);
            }
            // Leadership moves to a member that does not lead.
            let leader = leader_of(&cluster[0]).await;
            let mut target = 0;
            let mut leader_at = 0;
            for (i, ch) in channels.iter().enumerate() {
                let id = MaintenanceClient::new(ch.clone())
                    .status(StatusRequest {})
                    .await
                    .unwrap()
                    .into_inner()
                    .header
                    .unwrap()
                    .member_id;
                if id == leader { leader_at = i } else { target = id }
            }
            let moved = MaintenanceClient::new(channels[leader_at].clone())
                .move_leader(with_token(MoveLeaderRequest { target_id: target }, "token", &root))
                .await;
            seen.push(format!("move-leader: {}", moved.map(|_| "ok".to_string()).unwrap_or_else(status)));
            for ch in &channels {
                seen.push(get(ch, &alice, "/app/x").await);
                seen.push(put(ch, &root, "/app/y", "after").await);
            }
            // The third member dies and comes back. The pause lets etcd's
            // backend commit (every 100 ms): killed before, etcd replays the
            // log from its last commit and makes the same tokens again.
            tokio::time::sleep(Duration::from_secs(1)).await;
            cluster[2].kill();
            cluster[2].restart();
            seen.push(format!("after restart: {}", first_answer(&cluster[2], &alice).await));
            answers.push(seen);
        }
    }
    assert_eq!(answers[..2], answers[2..], "rtcd vs etcd");
    let (simple, jwt) = (&answers[0], &answers[1]);
    assert!(simple[..3].iter().chain(&jwt[..3]).all(|a| a == "1"), "{answers:?}");
    assert_eq!(simple[3], "move-leader: ok");
    assert!(simple[4..10].iter().all(|a| a == "1" || a == "ok"), "{simple:?}");
    assert_eq!(simple[10], "after restart: Unauthenticated: etcdserver: invalid auth token");
    assert_eq!(jwt[10], "after restart: 1");
}
