//! The committed seed corpus (`fuzz/corpus/<target>/<name>`), generated
//! here so it can be reproduced and reviewed: valid encodings of typical
//! requests, objects, patches, selectors and tokens, which give the fuzzer a
//! head start past the parsers. `tests/seeds.rs` checks the committed files
//! match and rewrites them with `RTCD_WRITE_SEEDS=1`.
//!
//! To add a seed: add it below, run
//! `RTCD_WRITE_SEEDS=1 cargo test -p rtcd-fuzz --test seeds`, commit the file.

use bytes::Bytes;
use prost::Message;
use rtcd_proto::etcdserverpb::{
    AlarmRequest, AuthRoleAddRequest, AuthenticateRequest, CompactionRequest, Compare, DeleteRangeRequest,
    LeaseGrantRequest, LeaseKeepAliveRequest, LeaseRevokeRequest, LeaseTimeToLiveRequest, MemberAddRequest,
    PutRequest, RangeRequest, RequestOp, TxnRequest, WatchCancelRequest, WatchCreateRequest,
    WatchProgressRequest, WatchRequest, compare, request_op::Request, watch_request::RequestUnion,
};
use rtcd_proto::rtcdraftpb::{Proposal, proposal};
use rtcd_store::{AuthRequest, Caller, WriteRequest};

use crate::raft_codec::codec;

/// One seed: target, file name, contents.
pub type Seed = (&'static str, String, Vec<u8>);

pub fn all() -> Vec<Seed> {
    let mut seeds = Vec::new();
    grpc_requests(&mut seeds);
    raft_codec(&mut seeds);
    store_model(&mut seeds);
    apiserver_decode(&mut seeds);
    patch(&mut seeds);
    apply(&mut seeds);
    selectors(&mut seeds);
    continue_token(&mut seeds);
    watch_requests(&mut seeds);
    authority(&mut seeds);
    crd_rules(&mut seeds);
    gateway_streams(&mut seeds);
    seeds
}

/// A client's first bytes: the preface, then a request whose header block
/// is `fields` as HPACK literals; the leading byte picks the fuzzer's split.
fn authority(seeds: &mut Vec<Seed>) {
    let opening = |fields: &[(&str, &str)]| {
        let mut block = Vec::new();
        for (name, value) in fields {
            block.push(0);
            for text in [name, value] {
                block.push(text.len() as u8);
                block.extend_from_slice(text.as_bytes());
            }
        }
        let mut bytes = vec![3];
        bytes.extend_from_slice(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        bytes.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&[0, 0, block.len() as u8, 1, 4, 0, 0, 0, 1]);
        bytes.extend_from_slice(&block);
        bytes
    };
    let schemed = opening(&[(":method", "POST"), (":authority", "http://127.0.0.1:2379"), (":path", "/x")]);
    seeds.push(("authority", "schemed".into(), schemed));
    let plain = opening(&[(":method", "POST"), (":authority", "127.0.0.1:2379")]);
    seeds.push(("authority", "plain".into(), plain));
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn with_byte(first: u8, rest: &[u8]) -> Vec<u8> {
    let mut out = vec![first];
    out.extend_from_slice(rest);
    out
}

fn put(key: &str, value: &str) -> PutRequest {
    PutRequest { key: b(key), value: b(value), ..Default::default() }
}

fn op(r: Request) -> RequestOp {
    RequestOp { request: Some(r) }
}

/// kube-apiserver's create-if-absent and guarded update: `MOD(key) == rev`
/// then put, else read.
fn guarded_txn(rev: i64, nested: bool) -> TxnRequest {
    let mut success = vec![op(Request::RequestPut(put("/registry/pods/default/web", "v")))];
    if nested {
        success.push(op(Request::RequestTxn(TxnRequest {
            compare: vec![],
            success: vec![op(Request::RequestPut(put("/n", "1")))],
            failure: vec![op(Request::RequestDeleteRange(DeleteRangeRequest {
                key: b("/n"),
                range_end: b("/o"),
                prev_kv: true,
            }))],
        })));
    }
    TxnRequest {
        compare: vec![Compare {
            result: compare::CompareResult::Equal as i32,
            target: compare::CompareTarget::Mod as i32,
            key: b("/registry/pods/default/web"),
            range_end: Bytes::new(),
            target_union: Some(compare::TargetUnion::ModRevision(rev)),
        }],
        success,
        failure: vec![op(Request::RequestRange(RangeRequest {
            key: b("/registry/pods/default/web"),
            ..Default::default()
        }))],
    }
}

fn prefix_range() -> RangeRequest {
    RangeRequest {
        key: b("/registry/pods/"),
        range_end: b("/registry/pods0"),
        limit: 500,
        sort_order: 1,
        sort_target: 0,
        revision: 3,
        ..Default::default()
    }
}

fn grpc_requests(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, which: u8, body: Vec<u8>| {
        seeds.push(("grpc_requests", name.to_string(), with_byte(which, &body)));
    };
    add("range-prefix", 0, prefix_range().encode_to_vec());
    add(
        "range-all-count",
        0,
        RangeRequest { key: b("\0"), range_end: b("\0"), count_only: true, ..Default::default() }
            .encode_to_vec(),
    );
    add("put", 1, PutRequest { lease: 1, prev_kv: true, ..put("a", "hello") }.encode_to_vec());
    add("put-ignore-value", 1, PutRequest { ignore_value: true, ..put("b", "") }.encode_to_vec());
    add(
        "delete-range",
        2,
        DeleteRangeRequest { key: b("a"), range_end: b("c"), prev_kv: true }.encode_to_vec(),
    );
    add("txn-guarded-update", 3, guarded_txn(5, false).encode_to_vec());
    add("txn-nested", 3, guarded_txn(0, true).encode_to_vec());
    add("compact", 4, CompactionRequest { revision: 3, physical: true }.encode_to_vec());
    add("watch-create", 5, watch_create("a", "\0", 2).encode_to_vec());
    add("lease-grant", 6, LeaseGrantRequest { ttl: 60, id: 2 }.encode_to_vec());
    add("lease-revoke", 7, LeaseRevokeRequest { id: 1 }.encode_to_vec());
    add("alarm-nospace", 8, AlarmRequest { action: 1, member_id: 7, alarm: 1 }.encode_to_vec());
    add("lease-keepalive", 9, LeaseKeepAliveRequest { id: 1 }.encode_to_vec());
    add("lease-ttl", 10, LeaseTimeToLiveRequest { id: 1, keys: true }.encode_to_vec());
    add(
        "authenticate",
        11,
        AuthenticateRequest { name: "root".into(), password: "pw".into() }.encode_to_vec(),
    );
    add(
        "member-add",
        12,
        MemberAddRequest { peer_ur_ls: vec!["http://127.0.0.1:2380".into()], is_learner: false }
            .encode_to_vec(),
    );
}

fn watch_create(key: &str, end: &str, start: i64) -> WatchRequest {
    WatchRequest {
        request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
            key: b(key),
            range_end: b(end),
            start_revision: start,
            progress_notify: true,
            filters: vec![],
            prev_kv: true,
            watch_id: 0,
            fragment: false,
        })),
    }
}

fn raft_codec(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, bytes: Vec<u8>| seeds.push(("raft_codec", name.to_string(), bytes));
    add("put", codec::encode(1, WriteRequest::Put(put("a", "1")), &Caller::Member));
    add("txn-flat", codec::encode(2, WriteRequest::Txn(guarded_txn(4, false)), &Caller::Member));
    add("txn-nested-flat", codec::encode(3, WriteRequest::Txn(guarded_txn(0, true)), &Caller::Member));
    add(
        "compact",
        codec::encode(
            4,
            WriteRequest::Compact(CompactionRequest { revision: 9, physical: false }),
            &Caller::Member,
        ),
    );
    add(
        "lease-grant",
        codec::encode(5, WriteRequest::LeaseGrant(LeaseGrantRequest { ttl: 10, id: 7 }), &Caller::Member),
    );
    // Entries written before txns were flattened: still in old logs.
    let legacy =
        Proposal { id: 6, request: Some(proposal::Request::Txn(guarded_txn(0, true))), caller: None };
    add("txn-nested-legacy", legacy.encode_to_vec());
    // A client's write, and an auth change, as a member proposes them.
    let alice = Caller::Client { user: "alice".into(), auth_revision: 3 };
    add("put-as-alice", codec::encode(7, WriteRequest::Put(put("a", "2")), &alice));
    let role = AuthRoleAddRequest { name: "reader".into() };
    add("auth-role-add", codec::encode(8, WriteRequest::Auth(AuthRequest::RoleAdd(role)), &alice));
}

/// Deterministic pseudo-random bytes (an LCG): `arbitrary` reads structure
/// out of any bytes, so a few lengths of noise make good starting points.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u8
        })
        .collect()
}

fn store_model(seeds: &mut Vec<Seed>) {
    for (i, len) in [64usize, 256, 1024, 4096].into_iter().enumerate() {
        seeds.push(("store_model", format!("noise-{len}"), noise(i as u64 + 1, len)));
    }
}

/// Protobuf field writers for hand-made Kubernetes protobuf bodies.
fn pb_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, out);
    prost::encoding::encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn pb_map_entry(out: &mut Vec<u8>, tag: u32, key: &str, value: &str) {
    let mut entry = Vec::new();
    pb_bytes(&mut entry, 1, key.as_bytes());
    pb_bytes(&mut entry, 2, value.as_bytes());
    pb_bytes(out, tag, &entry);
}

/// `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}.
fn k8s_protobuf(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    pb_bytes(&mut type_meta, 1, api_version.as_bytes());
    pb_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = b"k8s\0".to_vec();
    pb_bytes(&mut out, 1, &type_meta);
    pb_bytes(&mut out, 2, raw);
    out
}

fn object_meta(name: &str) -> Vec<u8> {
    let mut meta = Vec::new();
    pb_bytes(&mut meta, 1, name.as_bytes());
    pb_bytes(&mut meta, 3, b"default");
    pb_map_entry(&mut meta, 11, "app", "web");
    meta
}

/// The kind index `apiserver_decode` and `patch` pick with a selector byte:
/// position in `registry::kinds::builtin`.
fn kind_index(kind: &str) -> u8 {
    const ORDER: [&str; 17] = [
        "Namespace",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Service",
        "Endpoints",
        "Pod",
        "Event",
        "Node",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "Lease",
        "PodDisruptionBudget",
    ];
    ORDER.iter().position(|k| *k == kind).unwrap_or(0) as u8
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default","labels":{"app":"web"},"finalizers":["a"]},"spec":{"containers":[{"name":"app","image":"nginx:1","ports":[{"containerPort":80,"protocol":"TCP"}],"env":[{"name":"A","value":"1"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"}}}],"tolerations":[{"key":"k","operator":"Exists"}]},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#;
const DEPLOYMENT: &str = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1"}]}}}}"#;
const CONFIGMAP: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default","creationTimestamp":"2024-01-02T03:04:05Z"},"data":{"a":"1"},"binaryData":{"b":"aGVsbG8="},"unknownField":1}"#;
const SECRET: &str = r#"{"kind":"Secret","metadata":{"name":"s","namespace":"default"},"type":"Opaque","data":{"k":"dmFsdWU="},"stringData":{"x":"y"}}"#;
const SERVICE: &str = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"},"spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":"http","protocol":"TCP"}],"type":"ClusterIP"}}"#;

fn apiserver_decode(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, selector: u8, body: &[u8]| {
        seeds.push(("apiserver_decode", name.to_string(), with_byte(selector, body)));
    };
    // Selector: bits 0-4 kind; bits 5-7 a mode: format mode % 3 (JSON,
    // protobuf, YAML), field validation mode / 3 (Warn, Ignore, Strict).
    const STRICT_JSON: u8 = 6 << 5;
    const PROTOBUF: u8 = 1 << 5;
    const YAML: u8 = 2 << 5;
    add("json-pod", kind_index("Pod"), POD.as_bytes());
    add("json-pod-strict", kind_index("Pod") | STRICT_JSON, POD.as_bytes());
    add("json-deployment", kind_index("Deployment"), DEPLOYMENT.as_bytes());
    add("json-configmap-unknown", kind_index("ConfigMap") | STRICT_JSON, CONFIGMAP.as_bytes());
    add("json-secret", kind_index("Secret"), SECRET.as_bytes());
    add("json-service", kind_index("Service"), SERVICE.as_bytes());
    add("json-event", kind_index("Event"), br#"{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"Started","count":2,"firstTimestamp":"2024-01-02T03:04:05Z","eventTime":"2024-01-02T03:04:05.123456Z"}"#);
    let mut configmap = Vec::new();
    pb_bytes(&mut configmap, 1, &object_meta("cm"));
    pb_map_entry(&mut configmap, 2, "key", "value");
    pb_map_entry(&mut configmap, 3, "bin", "\u{1}\u{2}");
    add(
        "protobuf-configmap",
        PROTOBUF | kind_index("ConfigMap"),
        &k8s_protobuf("v1", "ConfigMap", &configmap),
    );
    let mut pod = Vec::new();
    pb_bytes(&mut pod, 1, &object_meta("p"));
    add("protobuf-pod-meta-only", PROTOBUF, &k8s_protobuf("v1", "Pod", &pod));
    add(
        "protobuf-job",
        PROTOBUF,
        include_bytes!("../../apiserver/src/protobuf/testdata/job-from-cronjob.pb"),
    );
    add(
        "yaml-deployment",
        YAML | kind_index("Deployment"),
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: &l {app: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: *l}\n  template:\n    metadata: {labels: *l}\n    spec:\n      containers:\n      - name: app\n        image: nginx\n        args: [\"--a=1\", '0x10', yes, ~]\n",
    );
    add(
        "yaml-aliases",
        YAML | kind_index("ConfigMap"),
        b"a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\ndata: {k: !!str 1}\n",
    );
}

/// `apply`: the kind's selector byte (`0x80`: forced), the live object, NUL,
/// the applied configuration (its apiVersion and kind are the target's).
fn apply(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, force: bool, kind: &str, live: &str, config: &str| {
        let mut body = vec![kind_index(kind) | if force { 0x80 } else { 0 }];
        body.extend_from_slice(live.as_bytes());
        body.push(0);
        body.extend_from_slice(config.as_bytes());
        seeds.push(("apply", name.to_string(), body));
    };
    add(
        "deployment-containers",
        false,
        "Deployment",
        DEPLOYMENT,
        r#"{"metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox","ports":[{"containerPort":80}]},{"name":"app","image":"nginx:2"}]}}}}"#,
    );
    add("configmap-create", false, "ConfigMap", "{}", r#"{"metadata":{"name":"c"},"data":{"a":"1"}}"#);
    add(
        "pod-forced",
        true,
        "Pod",
        POD,
        r#"{"metadata":{"name":"web","finalizers":["b"]},"spec":{"containers":[{"name":"app","image":"nginx:3"}],"tolerations":[{"key":"k"}]}}"#,
    );
}

fn patch(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, patch_type: u8, kind: &str, original: &str, patch: &str| {
        let mut body = vec![patch_type | (kind_index(kind) << 2)];
        body.extend_from_slice(original.as_bytes());
        body.push(0);
        body.extend_from_slice(patch.as_bytes());
        seeds.push(("patch", name.to_string(), body));
    };
    // Patch type: 0 JSON patch, 1 merge patch, 2 strategic merge patch.
    add(
        "json-ops",
        0,
        "Pod",
        POD,
        r#"[{"op":"add","path":"/metadata/labels/x","value":"1"},{"op":"replace","path":"/spec/containers/0/image","value":"nginx:2"},{"op":"remove","path":"/metadata/finalizers/0"},{"op":"test","path":"/kind","value":"Pod"},{"op":"copy","from":"/metadata/labels","path":"/metadata/annotations"},{"op":"move","from":"/status","path":"/oldStatus"}]"#,
    );
    add("merge", 1, "ConfigMap", CONFIGMAP, r#"{"data":{"a":null,"c":"3"},"metadata":{"labels":{"x":"y"}}}"#);
    add(
        "strategic-containers",
        2,
        "Pod",
        POD,
        r#"{"spec":{"containers":[{"name":"app","image":"nginx:2"},{"name":"sidecar","image":"busybox"}]},"metadata":{"finalizers":["b"]}}"#,
    );
    add(
        "strategic-directives",
        2,
        "Pod",
        POD,
        r#"{"spec":{"containers":[{"name":"app","$patch":"delete"}],"$setElementOrder/containers":[{"name":"app"}]},"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]},"status":{"conditions":[{"type":"Ready","status":"False"}]}}"#,
    );
    add(
        "strategic-retain-keys",
        2,
        "Deployment",
        DEPLOYMENT,
        r#"{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},"template":{"spec":{"containers":[{"name":"app","env":[{"name":"B","value":"2"}]}]}}}}"#,
    );
    add(
        "strategic-replace",
        2,
        "Service",
        SERVICE,
        r#"{"spec":{"ports":[{"port":443,"protocol":"TCP"}],"$patch":"replace"}}"#,
    );
}

fn selectors(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, kind: &str, text: &str, object: Option<&str>| {
        let mut body = with_byte(kind_index(kind), text.as_bytes());
        if let Some(object) = object {
            body.push(0);
            body.extend_from_slice(object.as_bytes());
        }
        seeds.push(("selectors", name.to_string(), body));
    };
    add("labels-equality", "Pod", "app=web,tier!=2", None);
    add("labels-sets", "Pod", "env in (prod, staging),tier notin (3),!canary,app", None);
    add("labels-numeric", "Node", "a.b/c==,k>3,k<10", None);
    add("fields-pod", "Pod", "metadata.name=web-1,status.phase!=Failed,spec.nodeName==n1", Some(POD));
    add("fields-escaped", "Secret", r"metadata.name=a\,b\=c\\,type=Opaque", None);
    add("fields-unsupported", "ConfigMap", "spec.foo=bar", None);
    add("fields-event", "Event", "involvedObject.kind=Pod,reason=Started,metadata.namespace=default", None);
}

fn continue_token(seeds: &mut Vec<Seed>) {
    use rtcd_apiserver::storage::ContinueToken;
    let mut add = |name: &str, selector: u8, body: &[u8]| {
        seeds.push(("continue_token", name.to_string(), with_byte(selector, body)));
    };
    add("token", 0, ContinueToken::new(42, "default/web-2").encode().as_bytes());
    add("token-nul", 0, ContinueToken::new(7, "ns/b\u{0}").encode().as_bytes());
    // kube's own padded form of {"v":"meta.k8s.io/v1","rv":1,"start":"a"}.
    add("token-padded", 0, b"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0=");
    add("token-traversal", 0, ContinueToken::new(3, "../secrets/x").encode().as_bytes());
    let mut issued = 9i64.to_le_bytes().to_vec();
    issued.extend_from_slice(b"kube-system/coredns");
    add("issued", 1, &issued);
}

fn watch_requests(seeds: &mut Vec<Seed>) {
    let frame = |out: &mut Vec<u8>, req: WatchRequest| {
        let bytes = req.encode_to_vec();
        out.push(bytes.len() as u8);
        out.extend_from_slice(&bytes);
    };
    let create =
        |key: &str, end: &str, start: i64, filters: Vec<i32>, fragment: bool, id: i64| WatchRequest {
            request_union: Some(RequestUnion::CreateRequest(WatchCreateRequest {
                key: b(key),
                range_end: b(end),
                start_revision: start,
                progress_notify: true,
                filters,
                prev_kv: id % 2 == 0,
                watch_id: id,
                fragment,
            })),
        };
    let cancel = |id: i64| WatchRequest {
        request_union: Some(RequestUnion::CancelRequest(WatchCancelRequest { watch_id: id })),
    };
    let progress =
        WatchRequest { request_union: Some(RequestUnion::ProgressRequest(WatchProgressRequest {})) };

    let mut stream = vec![4];
    frame(&mut stream, create("a", "", 1, vec![], false, 0));
    frame(&mut stream, create("", "\0", 0, vec![0], true, 0));
    frame(&mut stream, create("a", "c", 3, vec![1], true, 5));
    frame(&mut stream, progress.clone());
    frame(&mut stream, cancel(5));
    seeds.push(("watch_requests", "create-cancel-progress".to_string(), stream));

    let mut all = vec![0];
    frame(&mut all, create("\0", "\0", 1, vec![], true, 2));
    frame(&mut all, create("\u{ff}", "", 1, vec![0, 1], false, 0));
    frame(&mut all, progress);
    seeds.push(("watch_requests", "everything-fragmented".to_string(), all));
}

fn crd_rules(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, update: bool, schema: &str, object: &str| {
        let mut body = vec![u8::from(update)];
        body.extend_from_slice(schema.as_bytes());
        body.push(0);
        body.extend_from_slice(object.as_bytes());
        seeds.push(("crd_rules", name.to_string(), body));
    };
    add(
        "rules-and-enum",
        false,
        r#"{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.min <= self.max","message":"min above max"},{"rule":"self.items.all(x, x.matches('^[a-z]+$'))","messageExpression":"'bad: ' + self.items.join(',')"}],"properties":{"min":{"type":"integer"},"max":{"type":"integer","maximum":10},"color":{"type":"string","enum":["red","green"]},"items":{"type":"array","maxItems":8,"items":{"type":"string","maxLength":16}}}}}}"#,
        r#"{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"min":5,"max":2,"color":"blue","items":["a","B1"]}}"#,
    );
    add(
        "transition",
        true,
        r#"{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.name == oldSelf.name","message":"immutable"}],"properties":{"name":{"type":"string"},"tags":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"v":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= 0"}]}}}}}}}}"#,
        r#"{"spec":{"name":"a","tags":[{"k":"x","v":-1}]}}"#,
    );
    add(
        "costly",
        false,
        r#"{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.n.all(x, self.n.all(y, y >= x || true))"}],"properties":{"n":{"type":"array","items":{"type":"integer"}}}}}}"#,
        r#"{"spec":{"n":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}}"#,
    );
}

fn gateway_streams(seeds: &mut Vec<Seed>) {
    let mut add = |name: &str, piece: u8, body: &str| {
        let mut bytes = vec![piece];
        bytes.extend_from_slice(body.as_bytes());
        seeds.push(("gateway_streams", name.to_string(), bytes));
    };
    add(
        "watch-requests",
        1,
        r#"{"create_request":{"key":"Zm9v","range_end":"Zm9w","start_revision":"3"}} {"progress_request":{}}
{"cancel_request":{"watch_id":"1"}}"#,
    );
    add("keepalives", 7, r#"{"ID":"7587862025411420678"}{"ID":"7587862025411420678"}  {"ID":"1"}"#);
    add("scalars-and-strings", 3, r#"12 "a\"}{" [1,{"b":[2]}] true null -1.5e+3 "#);
}
