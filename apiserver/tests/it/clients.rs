//! The official Python `kubernetes` client against rtcd-apiserver, on rtcd
//! and on etcd: paginated lists, watches that resume from a
//! resourceVersion, 410 Expired handling, and 50 concurrent clients doing
//! GuaranteedUpdate-style read-modify-write on one ConfigMap.

use rtcd_proto::etcdserverpb::CompactionRequest;
use rtcd_proto::etcdserverpb::kv_client::KvClient;
use serde_json::Value;

use crate::common::{ApiServer, Backend};

/// The client-side half of each scenario; prints one JSON line of
/// results for the Rust side to check.
const SCRIPT: &str = r#"
import json, sys, threading
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

config.load_kube_config()
v1 = client.CoreV1Api()
mode = sys.argv[1]
ns = "default"

def cm(name, data):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={"set": "page"}), data=data)

if mode == "paginate":
    for i in range(25):
        v1.create_namespaced_config_map(ns, cm("page-%02d" % i, {"i": str(i)}))
    names, pages, remaining, token, rvs = [], 0, [], None, set()
    while True:
        # No selector: kube counts the remaining items only then.
        page = v1.list_namespaced_config_map(ns, limit=10, _continue=token)
        pages += 1
        names += [item.metadata.name for item in page.items]
        remaining.append(page.metadata.remaining_item_count)
        rvs.add(page.metadata.resource_version)
        token = page.metadata._continue
        if not token:
            break
    print(json.dumps({"names": names, "pages": pages, "remaining": remaining, "rvs": len(rvs)}))

elif mode == "first-page":
    page = v1.list_namespaced_config_map(ns, label_selector="set=page", limit=5)
    print(json.dumps({"continue": page.metadata._continue}))

elif mode == "expired-continue":
    try:
        v1.list_namespaced_config_map(ns, label_selector="set=page", limit=5, _continue=sys.argv[2])
        print(json.dumps({"status": 200}))
    except ApiException as e:
        print(json.dumps({"status": e.status, "body": json.loads(e.body)}))

elif mode == "watch-resume":
    rv = v1.list_namespaced_config_map(ns).metadata.resource_version
    v1.create_namespaced_config_map(ns, cm("watched", {"v": "1"}))
    seen = []
    w = watch.Watch()
    for event in w.stream(v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10):
        obj = event["object"]
        if obj.metadata.name == "watched":
            seen.append([event["type"], obj.data["v"]])
            last = obj.metadata.resource_version
            w.stop()
    v1.patch_namespaced_config_map("watched", ns, {"data": {"v": "2"}})
    v1.patch_namespaced_config_map("watched", ns, {"data": {"v": "3"}})
    w = watch.Watch()
    for event in w.stream(v1.list_namespaced_config_map, ns, resource_version=last, timeout_seconds=10):
        obj = event["object"]
        if obj.metadata.name == "watched":
            seen.append([event["type"], obj.data["v"]])
            if obj.data["v"] == "3":
                w.stop()
    print(json.dumps({"seen": seen}))

elif mode == "watch-too-old":
    try:
        for event in watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version="1", timeout_seconds=5):
            pass
        print(json.dumps({"status": 200}))
    except ApiException as e:
        print(json.dumps({"status": e.status, "reason": e.reason}))

elif mode == "counter":
    v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="counter"), data={"n": "0"}))
    clients, per_client = 50, 4
    lock = threading.Lock()
    totals = {"ok": 0, "conflicts": 0}
    def work():
        api = client.CoreV1Api(client.ApiClient())
        done = 0
        while done < per_client:
            current = api.read_namespaced_config_map("counter", ns)
            current.data["n"] = str(int(current.data["n"]) + 1)
            try:
                api.replace_namespaced_config_map("counter", ns, current)
                done += 1
                with lock:
                    totals["ok"] += 1
            except ApiException as e:
                if e.status != 409:
                    raise
                with lock:
                    totals["conflicts"] += 1
    threads = [threading.Thread(target=work) for _ in range(clients)]
    for t in threads: t.start()
    for t in threads: t.join()
    final = v1.read_namespaced_config_map("counter", ns)
    # A stale update (an old resourceVersion) must be refused with 409.
    stale = final
    v1.patch_namespaced_config_map("counter", ns, {"metadata": {"labels": {"touched": "yes"}}})
    try:
        v1.replace_namespaced_config_map("counter", ns, stale)
        stale_status = 200
    except ApiException as e:
        stale_status = e.status
        stale_reason = json.loads(e.body)["reason"]
    print(json.dumps({"final": int(final.data["n"]), "ok": totals["ok"], "conflicts": totals["conflicts"],
                      "stale_status": stale_status, "stale_reason": stale_reason}))
"#;

fn run(api: &ApiServer, args: &[&str]) -> Value {
    let out = api.python(SCRIPT, args);
    assert!(
        out.status.success(),
        "python {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        api.log()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

async fn paginate_and_expire(api: &ApiServer) {
    let result = run(api, &["paginate"]);
    let names: Vec<String> = serde_json::from_value(result["names"].clone()).unwrap();
    let expected: Vec<String> = (0..25).map(|i| format!("page-{i:02}")).collect();
    assert_eq!(names, expected, "every object once, in key order");
    assert_eq!(result["pages"], 3);
    assert_eq!(result["remaining"], serde_json::json!([15, 5, null]));
    assert_eq!(result["rvs"], 1, "every page at the first page's resourceVersion");

    // A continue token whose revision has been compacted: 410 Expired.
    let token = run(api, &["first-page"])["continue"].as_str().unwrap().to_string();
    let mut kv = KvClient::new(api.member.channel());
    for i in 0..3 {
        let cm = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"bump-{i}"}}}}"#);
        api.ok_stdin(&["apply", "-f", "-"], &cm);
    }
    let rev = kv
        .range(rtcd_proto::etcdserverpb::RangeRequest { key: "/".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .header
        .unwrap()
        .revision;
    kv.compact(CompactionRequest { revision: rev, physical: true }).await.unwrap();
    let expired = run(api, &["expired-continue", &token]);
    assert_eq!(expired["status"], 410, "{expired}");
    assert_eq!(expired["body"]["reason"], "Expired");
}

async fn watches(api: &mut ApiServer) {
    let result = run(api, &["watch-resume"]);
    let seen: Vec<(String, String)> = serde_json::from_value(result["seen"].clone()).unwrap();
    let want = [("ADDED", "1"), ("MODIFIED", "2"), ("MODIFIED", "3")];
    assert_eq!(seen, want.map(|(t, v)| (t.to_string(), v.to_string())), "resumed without loss or repeat");

    // A new apiserver's caches start at etcd's current revision: a watch
    // from before it cannot be served.
    api.restart().await;
    let too_old = run(api, &["watch-too-old"]);
    assert_eq!(too_old["status"], 410, "{too_old}");
}

async fn counter(api: &ApiServer) {
    let result = run(api, &["counter"]);
    assert_eq!(result["ok"], 200);
    assert_eq!(result["final"], result["ok"], "every successful update counted once: {result}");
    assert_eq!(
        (result["stale_status"].as_i64(), result["stale_reason"].as_str()),
        (Some(409), Some("Conflict"))
    );
}

async fn client_suite(backend: Backend) {
    let mut api = ApiServer::start(backend).await;
    paginate_and_expire(&api).await;
    watches(&mut api).await;
    counter(&api).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_on_rtcd() {
    client_suite(Backend::Rtcd).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_on_etcd() {
    client_suite(Backend::Etcd).await;
}
