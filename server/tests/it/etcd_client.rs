//! The same session through the `etcd-client` crate, an independent Rust
//! client with its own generated code, against real etcd and rtcd: the
//! answers (revisions, keys, values, versions, errors, watch events, lease
//! TTLs) must agree.

use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, DeleteOptions, Error, EventType, GetOptions, KeyValue,
    LeaseTimeToLiveOptions, PutOptions, SortOrder, SortTarget, Txn, TxnOp, TxnOpResponse, WatchOptions,
};

use crate::harness::{Kind, start};

fn kvs(kvs: &[KeyValue]) -> String {
    let one = |kv: &KeyValue| {
        format!(
            "{}={}@c{}m{}v{}l{}",
            kv.key_str().unwrap_or("?"),
            kv.value_str().unwrap_or("?"),
            kv.create_revision(),
            kv.mod_revision(),
            kv.version(),
            kv.lease()
        )
    };
    kvs.iter().map(one).collect::<Vec<_>>().join(",")
}

fn maybe(kv: Option<&KeyValue>) -> String {
    kv.map(|kv| kvs(std::slice::from_ref(kv))).unwrap_or_default()
}

/// An error as both servers' answers are compared: code and text.
pub(crate) fn error(e: Error) -> String {
    match e {
        Error::GRpcStatus(s) => format!("error {:?}: {}", s.code(), s.message()),
        other => format!("error {other}"),
    }
}

async fn session(url: &str) -> Vec<String> {
    let mut c = Client::connect([url], None).await.unwrap();
    let mut out = Vec::new();
    let rev = |h: Option<&etcd_client::ResponseHeader>| h.map_or(0, |h| h.revision());

    for (k, v) in [("app/a", "1"), ("app/b", "2"), ("app/c", "3"), ("app/a", "4")] {
        let r = c.put(k, v, Some(PutOptions::new().with_prev_key())).await.unwrap();
        out.push(format!("put {k} rev {} prev {}", rev(r.header()), maybe(r.prev_key())));
    }
    let sorted = GetOptions::new().with_prefix().with_sort(SortTarget::Mod, SortOrder::Descend).with_limit(2);
    let r = c.get("app/", Some(sorted)).await.unwrap();
    out.push(format!("get sorted {} count {} more {}", kvs(r.kvs()), r.count(), r.more()));
    let r = c.get("app/a", Some(GetOptions::new().with_revision(2))).await.unwrap();
    out.push(format!("get at 2: {} header {}", kvs(r.kvs()), rev(r.header())));
    out.push(
        c.get("app/a", Some(GetOptions::new().with_revision(99))).await.map_or_else(error, |_| "ok".into()),
    );

    let txn = Txn::new()
        .when([
            Compare::value("app/a", CompareOp::Equal, "4"),
            Compare::version("app/b", CompareOp::Greater, 0),
        ])
        .and_then([TxnOp::put("app/d", "5", None), TxnOp::get("app/", Some(GetOptions::new().with_prefix()))])
        .or_else([TxnOp::delete("app/a", None)]);
    let r = c.txn(txn).await.unwrap();
    let ops: Vec<String> = r
        .op_responses()
        .into_iter()
        .map(|op| match op {
            TxnOpResponse::Put(p) => format!("put rev {}", rev(p.header())),
            TxnOpResponse::Get(g) => format!("get {}", kvs(g.kvs())),
            TxnOpResponse::Delete(d) => format!("deleted {}", d.deleted()),
            TxnOpResponse::Txn(t) => format!("txn {}", t.succeeded()),
        })
        .collect();
    out.push(format!("txn succeeded {} {:?}", r.succeeded(), ops));

    // Watch from history with prev_kv, then a live delete.
    let mut watch = c
        .watch("app/", Some(WatchOptions::new().with_prefix().with_start_revision(4).with_prev_key()))
        .await
        .unwrap();
    let r = c.delete("app/", Some(DeleteOptions::new().with_prefix().with_prev_key())).await.unwrap();
    out.push(format!("delete {} prev {}", r.deleted(), kvs(r.prev_kvs())));
    let mut events = Vec::new();
    while events.len() < 6 {
        let resp =
            tokio::time::timeout(Duration::from_secs(10), watch.message()).await.unwrap().unwrap().unwrap();
        for e in resp.events() {
            let kind = if e.event_type() == EventType::Put { "PUT" } else { "DELETE" };
            events.push(format!("{kind} {} prev {}", maybe(e.kv()), maybe(e.prev_kv())));
        }
    }
    out.extend(events);

    let lease = c.lease_grant(60, None).await.unwrap();
    out.push(format!("lease ttl {}", lease.ttl()));
    c.put("leased", "x", Some(PutOptions::new().with_lease(lease.id()))).await.unwrap();
    let ttl =
        c.lease_time_to_live(lease.id(), Some(LeaseTimeToLiveOptions::new().with_keys())).await.unwrap();
    let keys: Vec<String> = ttl.keys().iter().map(|k| String::from_utf8_lossy(k).into_owned()).collect();
    out.push(format!("granted {} keys {keys:?}", ttl.granted_ttl()));
    let (mut keeper, mut responses) = c.lease_keep_alive(lease.id()).await.unwrap();
    keeper.keep_alive().await.unwrap();
    let kept = responses.message().await.unwrap().unwrap();
    out.push(format!("kept alive ttl {}", kept.ttl()));
    c.lease_revoke(lease.id()).await.unwrap();
    let r = c.get("leased", None).await.unwrap();
    out.push(format!("after revoke: {} count {}", kvs(r.kvs()), r.count()));
    out.push(c.lease_revoke(lease.id()).await.map_or_else(error, |_| "ok".into()));

    let r = c.compact(5, None).await.unwrap();
    out.push(format!("compacted, header {}", rev(r.header())));
    out.push(
        c.get("app/a", Some(GetOptions::new().with_revision(3))).await.map_or_else(error, |_| "ok".into()),
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_client_crate_sees_the_same_answers() {
    let etcd = start(Kind::Etcd, "client");
    let rtcd = start(Kind::Rtcd, "client");
    let theirs = session(&etcd.client_url).await;
    let ours = session(&rtcd.client_url).await;
    for (step, (want, got)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(got, want, "step {step}");
    }
    assert_eq!(ours.len(), theirs.len());
}
