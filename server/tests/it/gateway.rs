//! etcd's JSON gateway through curl and through the Python `etcd3gw`
//! client, against rtcd and real etcd side by side: the same requests must
//! get the same HTTP status and the same JSON (member and cluster IDs and
//! the raft term aside).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Kind, Member, start_with};

/// IDs and terms legitimately differ between servers.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for id in ["cluster_id", "member_id", "raft_term", "ID", "leader", "raftTerm"] {
                map.remove(id);
            }
            map.values_mut().for_each(normalize);
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// `curl -X POST <url><path> -d <body>`: the HTTP status and the body, as
/// JSON when it is (normalized), else as text.
fn post(member: &Member, path: &str, body: &str, token: Option<&str>) -> (String, Value) {
    let mut curl = Command::new("curl");
    curl.args(["-s", "-w", "\n%{http_code}", "-X", "POST", "--max-time", "10"]);
    if let Some(token) = token {
        curl.args(["-H", &format!("Authorization: {token}")]);
    }
    // The body through stdin: some are larger than a command line may be.
    let mut child = curl
        .arg(format!("{}{path}", member.client_url))
        .args(["--data-binary", "@-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("curl");
    child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    let mut json = serde_json::from_str(body).unwrap_or(Value::String(body.to_owned()));
    normalize(&mut json);
    (status.to_owned(), json)
}

fn b64(text: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The session: every family of call, good and bad requests.
fn steps() -> Vec<(&'static str, String)> {
    let (k_foo, k_bar, k_baz, k_fop) = (b64("foo"), b64("bar"), b64("baz"), b64("fop"));
    vec![
        ("/v3/kv/put", format!(r#"{{"key":"{k_foo}","value":"{k_bar}"}}"#)),
        ("/v3/kv/put", format!(r#"{{"key":"{k_foo}","value":"{k_baz}","prev_kv":true}}"#)),
        ("/v3/kv/range", format!(r#"{{"key":"{k_foo}"}}"#)),
        ("/v3/kv/range", format!(r#"{{"key":"{k_foo}","range_end":"{k_fop}","count_only":true}}"#)),
        ("/v3/kv/range", format!(r#"{{"key":"{k_foo}","revision":"2"}}"#)),
        ("/v3/kv/range", format!(r#"{{"key":"{k_bar}"}}"#)),
        ("/v3/kv/range", format!(r#"{{"key":"{k_foo}","revision":"100"}}"#)),
        ("/v3beta/kv/range", format!(r#"{{"key":"{k_foo}","keys_only":true}}"#)),
        (
            "/v3/kv/txn",
            format!(
                r#"{{"compare":[{{"key":"{k_foo}","result":"EQUAL","target":"VALUE","value":"{k_baz}"}}],
                   "success":[{{"request_put":{{"key":"{k_bar}","value":"{k_foo}"}}}},{{"request_range":{{"key":"{k_foo}"}}}}],
                   "failure":[{{"request_delete_range":{{"key":"{k_foo}"}}}}]}}"#
            ),
        ),
        ("/v3/kv/deleterange", format!(r#"{{"key":"{k_bar}","prev_kv":true}}"#)),
        ("/v3/kv/put", r#"{"key":"","value":"eA=="}"#.to_owned()),
        ("/v3/kv/put", format!(r#"{{"key":"{k_foo}","ignore_value":true,"value":"{k_bar}"}}"#)),
        ("/v3/kv/compaction", r#"{"revision":"3"}"#.to_owned()),
        ("/v3/kv/range", format!(r#"{{"key":"{k_foo}","revision":"2"}}"#)),
        ("/v3/lease/grant", r#"{"TTL":"60","ID":"1000"}"#.to_owned()),
        ("/v3/kv/put", format!(r#"{{"key":"{k_bar}","value":"{k_bar}","lease":"1000"}}"#)),
        ("/v3/lease/timetolive", r#"{"ID":"1000","keys":true}"#.to_owned()),
        ("/v3/kv/lease/timetolive", r#"{"ID":"7"}"#.to_owned()),
        ("/v3/lease/leases", String::new()),
        ("/v3/lease/revoke", r#"{"ID":"1000"}"#.to_owned()),
        ("/v3/kv/lease/revoke", r#"{"ID":"1000"}"#.to_owned()),
        ("/v3/kv/range", format!(r#"{{"key":"{k_bar}"}}"#)),
        ("/v3/lease/grant", r#"{"TTL":"60","ID":"2000"}"#.to_owned()),
        ("/v3/lock/lock", format!(r#"{{"name":"{k_foo}","lease":"2000"}}"#)),
        ("/v3/election/leader", format!(r#"{{"name":"{k_foo}"}}"#)),
        // Auth: set up, a token in the Authorization header, refusals.
        ("/v3/auth/user/add", r#"{"name":"root","password":"pw"}"#.to_owned()),
        ("/v3/auth/role/add", r#"{"name":"root"}"#.to_owned()),
        ("/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#.to_owned()),
        ("/v3/auth/user/add", r#"{"name":"alice","password":"pw"}"#.to_owned()),
        ("/v3/auth/role/add", r#"{"name":"reader"}"#.to_owned()),
        (
            "/v3/auth/role/grant",
            format!(r#"{{"name":"reader","perm":{{"permType":"READ","key":"{k_foo}"}}}}"#),
        ),
        ("/v3/auth/user/grant", r#"{"user":"alice","role":"reader"}"#.to_owned()),
        ("/v3/auth/user/get", r#"{"name":"alice"}"#.to_owned()),
        ("/v3/auth/role/get", r#"{"role":"reader"}"#.to_owned()),
        ("/v3/auth/user/list", String::new()),
        ("/v3/auth/role/list", String::new()),
        ("/v3/auth/enable", String::new()),
        ("/v3/kv/range", format!(r#"{{"key":"{k_foo}"}}"#)),
        ("/v3/auth/authenticate", r#"{"name":"alice","password":"wrong"}"#.to_owned()),
    ]
}

/// Runs the session; with auth on at the end, as alice and root with
/// tokens, a forged token, and disables auth.
fn session(member: &Member) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> =
        steps().iter().map(|(path, body)| post(member, path, body, None)).collect();
    let token = |name: &str| {
        let (_, answer) =
            post(member, "/v3/auth/authenticate", &format!(r#"{{"name":"{name}","password":"pw"}}"#), None);
        answer["token"].as_str().unwrap_or_default().to_owned()
    };
    let (alice, root) = (token("alice"), token("root"));
    let k_foo = b64("foo");
    out.push(post(member, "/v3/kv/range", &format!(r#"{{"key":"{k_foo}"}}"#), Some(&alice)));
    out.push(post(member, "/v3/kv/put", &format!(r#"{{"key":"{k_foo}","value":"{k_foo}"}}"#), Some(&alice)));
    out.push(post(member, "/v3/kv/range", &format!(r#"{{"key":"{k_foo}"}}"#), Some("forged.1")));
    out.push(post(member, "/v3/auth/disable", "", Some(&root)));
    out
}

/// Malformed bodies: etcd's and rtcd's JSON parsers word their complaints
/// differently, so only the status and the gRPC code are compared.
fn malformed(member: &Member) -> Vec<(String, Value)> {
    ["{", "[1,2]", r#"{"key": 5}"#, r#"{"key":"not base64!"}"#, "\u{1}\u{2}garbage"]
        .iter()
        .map(|body| {
            let (status, answer) = post(member, "/v3/kv/range", body, None);
            (status, answer["code"].clone())
        })
        .collect()
}

#[test]
fn the_json_gateway_answers_what_etcds_answers() {
    let rtcd = start_with(Kind::Rtcd, "gw", &["--bcrypt-cost", "4"]);
    let etcd = start_with(Kind::Etcd, "gw", &["--bcrypt-cost", "4"]);
    let (ours, theirs) = (session(&rtcd), session(&etcd));
    let labels: Vec<String> = steps()
        .iter()
        .map(|(p, b)| format!("{p} {b}"))
        .chain(["alice range", "alice put", "forged", "disable"].map(String::from))
        .collect();
    for ((label, a), b) in labels.iter().zip(&ours).zip(&theirs) {
        assert_eq!(a, b, "{label}: rtcd vs etcd");
    }
    assert_eq!(ours.len(), theirs.len());
    assert_eq!(malformed(&rtcd), malformed(&etcd));
    // Paths nothing serves: etcd's 404s, word for word.
    for path in ["/v3/kv/nothing", "/v3beta/nothing", "/v3alpha/kv/range", "/nothing"] {
        let k = format!(r#"{{"key":"{}"}}"#, b64("foo"));
        let (ours, theirs) = (post(&rtcd, path, &k, None), post(&etcd, path, &k, None));
        assert_eq!(ours, theirs, "{path}: rtcd vs etcd");
        assert_eq!(ours.0, "404", "{path}");
    }
    // A body over the request limit is refused, and the member serves on.
    let huge = format!(r#"{{"key":"{}","value":"{}"}}"#, b64("k"), "A".repeat(4 << 20));
    let (status, _) = post(&rtcd, "/v3/kv/put", &huge, None);
    assert!(status.starts_with('4'), "{status}");
    let k_foo = format!(r#"{{"key":"{}"}}"#, b64("foo"));
    assert_eq!(post(&rtcd, "/v3/kv/range", &k_foo, None).0, "200");
}

/// A watch through `/v3/watch`: its created line, then the events of a
/// put made meanwhile, on both servers.
#[test]
fn the_gateway_streams_watch_events() {
    let rtcd = start_with(Kind::Rtcd, "gww", &[]);
    let etcd = start_with(Kind::Etcd, "gww", &[]);
    let mut lines = Vec::new();
    for member in [&rtcd, &etcd] {
        let body = format!(r#"{{"create_request":{{"key":"{}","prev_kv":true}}}}"#, b64("w"));
        let watcher = Command::new("curl")
            .args([
                "-s",
                "-N",
                "--max-time",
                "3",
                "-X",
                "POST",
                &format!("{}/v3/watch", member.client_url),
                "-d",
                &body,
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1000));
        post(member, "/v3/kv/put", &format!(r#"{{"key":"{}","value":"{}"}}"#, b64("w"), b64("1")), None);
        post(member, "/v3/kv/put", &format!(r#"{{"key":"{}","value":"{}"}}"#, b64("w"), b64("2")), None);
        let out = watcher.wait_with_output().unwrap();
        let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap_or(Value::String(l.to_owned()));
                normalize(&mut v);
                v
            })
            .collect();
        lines.push(answers);
    }
    assert_eq!(lines[0], lines[1], "rtcd vs etcd");
    assert_eq!(lines[0].len(), 3, "created, then two events: {:?}", lines[0]);
    assert_eq!(lines[0][2]["result"]["events"][0]["prev_kv"]["value"], b64("1"));
}

/// OpenStack's `etcd3gw` client, from PyPI, against both: the same results.
#[test]
fn etcd3gw_works_as_against_etcd() {
    let python = format!("{}/.cache/rtcd/venv/bin/python", std::env::var("HOME").unwrap());
    let script = r#"
import sys, etcd3gw
host, port = sys.argv[1].rsplit(':', 1)
c = etcd3gw.client(host=host.split('//')[1], port=int(port))
out = []
out.append(c.put('/gw/a', '1'))
out.append(c.put('/gw/b', '2'))
out.append(c.get('/gw/a'))
out.append(sorted(c.get_prefix('/gw/')[i][0] for i in range(2)))
out.append(c.create('/gw/a', 'x'))
out.append(c.create('/gw/c', '3'))
out.append(c.replace('/gw/c', '3', '4'))
out.append(c.replace('/gw/c', '3', '5'))
lease = c.lease(ttl=60)
out.append(c.put('/gw/l', 'v', lease=lease))
out.append(sorted(k.decode() for k in lease.keys()))
out.append(lease.ttl() > 50)
out.append(lease.revoke())
out.append(c.get('/gw/l'))
out.append(c.delete('/gw/a'))
out.append(c.delete_prefix('/gw/'))
lock = c.lock('gwlock', ttl=30)
out.append(lock.acquire())
out.append(lock.is_acquired())
out.append(lock.release())
events, cancel = c.watch('/gw/w')
c.put('/gw/w', 'seen')
event = next(events)
cancel()
out.append((event['kv']['key'], event['kv']['value']))
print(repr(out))
"#;
    let rtcd = start_with(Kind::Rtcd, "gw3", &[]);
    let etcd = start_with(Kind::Etcd, "gw3", &[]);
    let run = |member: &Member| {
        let out =
            Command::new(&python).args(["-c", script, &member.client_url]).output().expect("venv python");
        assert!(out.status.success(), "etcd3gw: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (ours, theirs) = (run(&rtcd), run(&etcd));
    assert_eq!(ours, theirs, "rtcd vs etcd");
    assert!(ours.contains("(b'/gw/w', b'seen')") || ours.contains("('/gw/w', 'seen')"), "{ours}");
}
