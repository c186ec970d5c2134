//! The storage layer against a real rtcd member and a real etcd (Debian's
//! 3.4): both must behave as kube-apiserver's etcd3 store expects.

use std::time::{Duration, Instant};

use bytes::Bytes;
use rtcd_apiserver::storage::Endpoints;
use rtcd_apiserver::storage::{COMPACT_REV_KEY, Compactor, Etcd3Store, Preconditions, Step, StorageError};
use rtcd_proto::etcdserverpb::CompactionRequest;
use rtcd_proto::etcdserverpb::kv_client::KvClient;

use crate::common::{Backend, Member};

fn object(uid: &str, n: u64) -> Bytes {
    Bytes::from(format!(r#"{{"metadata":{{"uid":"{uid}"}},"n":{n}}}"#))
}

fn counter(value: &[u8]) -> u64 {
    let json: serde_json::Value = serde_json::from_slice(value).unwrap();
    json["n"].as_u64().unwrap()
}

/// Create-if-absent, get, GuaranteedUpdate under contention, no-op updates,
/// preconditions and deletes.
async fn objects(channel: Endpoints) {
    let store = Etcd3Store::new(channel);
    let none = Preconditions::default();
    let key = "/registry/configmaps/default/counter";
    let rev = store.create(key, object("u1", 0)).await.unwrap();
    assert_eq!(
        store.create(key, object("u2", 0)).await,
        Err(StorageError::AlreadyExists { key: key.into() })
    );
    let stored = store.get(key).await.unwrap().unwrap();
    assert_eq!((stored.value, stored.resource_version), (object("u1", 0), rev));
    assert_eq!(store.get("/registry/configmaps/default/none").await.unwrap(), None);

    // 20 clients increment one counter; every increment lands exactly once.
    let updates: Vec<_> = (0..20)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let increment = |current: Option<&rtcd_apiserver::storage::Object>| {
                    let current = current.expect("the counter exists");
                    Ok(object("u1", counter(&current.value) + 1))
                };
                store.guaranteed_update(key, &Preconditions::default(), false, increment).await.unwrap()
            })
        })
        .collect();
    let mut versions = Vec::new();
    for update in updates {
        versions.push(update.await.unwrap().resource_version);
    }
    versions.sort_unstable();
    versions.dedup();
    assert_eq!(versions.len(), 20, "each update wrote its own revision");
    let after = store.get(key).await.unwrap().unwrap();
    assert_eq!(counter(&after.value), 20);

    // Nothing changed: nothing written.
    let same = store.guaranteed_update(key, &none, false, |c| Ok(c.unwrap().value.clone()));
    assert_eq!(same.await.unwrap().resource_version, after.resource_version);
    assert_eq!(store.get(key).await.unwrap().unwrap().resource_version, after.resource_version);

    // Preconditions that do not hold fail and change nothing.
    let wrong_uid = Preconditions { uid: Some("u9".into()), ..Default::default() };
    let stale = Preconditions { resource_version: Some(rev), ..Default::default() };
    for preconditions in [&wrong_uid, &stale] {
        let refused = store.guaranteed_update(key, preconditions, false, |_| Ok(object("u1", 99))).await;
        assert!(matches!(refused, Err(StorageError::PreconditionFailed { .. })), "{refused:?}");
        assert!(matches!(
            store.delete(key, preconditions).await,
            Err(StorageError::PreconditionFailed { .. })
        ));
    }
    assert_eq!(store.get(key).await.unwrap().unwrap(), after);
    // A missing object: NotFound, unless the caller creates it.
    let missing = "/registry/configmaps/default/missing";
    let update = store.guaranteed_update(missing, &none, false, |_| Ok(object("u3", 1)));
    assert_eq!(update.await, Err(StorageError::NotFound { key: missing.into() }));
    let created = store.guaranteed_update(missing, &none, true, |c| {
        assert!(c.is_none());
        Ok(object("u3", 1))
    });
    assert!(created.await.unwrap().resource_version > after.resource_version);

    let current = Preconditions { uid: Some("u1".into()), resource_version: Some(after.resource_version) };
    assert_eq!(store.delete(key, &current).await.unwrap(), after);
    assert_eq!(store.get(key).await.unwrap(), None);
    assert_eq!(store.delete(key, &none).await, Err(StorageError::NotFound { key: key.into() }));
}

/// Pages follow each other at one revision, and a token whose revision was
/// compacted away is Expired.
async fn paged_lists(channel: Endpoints) {
    let store = Etcd3Store::new(channel.clone());
    let prefix = "/registry/pods/";
    for i in 0..25 {
        store.create(&format!("{prefix}ns{}/p{i:02}", i % 2), object(&format!("p{i}"), 0)).await.unwrap();
    }
    // Outside the prefix: never listed.
    store.create("/registry/podsx/ns/p", object("x", 0)).await.unwrap();
    let first = store.list(prefix, 10, 0, None).await.unwrap();
    assert_eq!((first.items.len(), first.remaining_item_count), (10, Some(15)));
    // Written after the first page: later pages must not show it.
    store.create(&format!("{prefix}ns0/p00a"), object("late", 0)).await.unwrap();
    let mut keys: Vec<Bytes> = first.items.iter().map(|(k, _)| k.clone()).collect();
    let mut token = first.continue_token.clone();
    while let Some(next) = token {
        let page = store.list(prefix, 10, 0, Some(&next)).await.unwrap();
        assert_eq!(page.resource_version, first.resource_version, "every page at the first one's revision");
        keys.extend(page.items.iter().map(|(k, _)| k.clone()));
        token = page.continue_token;
    }
    let mut want: Vec<Bytes> = (0..25).map(|i| Bytes::from(format!("{prefix}ns{}/p{i:02}", i % 2))).collect();
    want.sort();
    assert_eq!(keys, want);
    let all = store.list(prefix, 0, 0, None).await.unwrap();
    assert_eq!((all.items.len(), all.continue_token), (26, None));

    // Compact past the first page's revision: its token has expired.
    let current = all.resource_version;
    let mut kv = KvClient::new(channel);
    kv.compact(CompactionRequest { revision: current, physical: true }).await.unwrap();
    let expired = store.list(prefix, 10, 0, first.continue_token.as_deref()).await;
    assert_eq!(expired, Err(StorageError::Expired));
    assert!(matches!(
        store.list(prefix, 10, 0, Some("garbage")).await,
        Err(StorageError::InvalidContinue(_))
    ));
}

/// Two apiservers share the compaction rounds: one claims a round, the other
/// learns it lost; each round compacts to the revision of the one before.
async fn compaction_rounds(channel: Endpoints) {
    let store = Etcd3Store::new(channel.clone());
    let (mut a, mut b) = (Compactor::new(channel.clone()), Compactor::new(channel));
    assert_eq!(a.step().await.unwrap(), Step::Started, "nothing to compact to on the first round");
    let started_at = store.get(COMPACT_REV_KEY).await.unwrap().unwrap().resource_version;
    assert_eq!(b.step().await.unwrap(), Step::Lost, "b's view of the key was stale");
    store.create("/registry/leases/ns/l1", object("l1", 0)).await.unwrap();
    assert_eq!(a.step().await.unwrap(), Step::Compacted(started_at));
    let key = store.get(COMPACT_REV_KEY).await.unwrap().unwrap();
    assert_eq!(key.value, Bytes::from(started_at.to_string()), "the key holds the revision compacted to");
    assert_eq!(store.list("/registry/leases/", 0, started_at - 1, None).await, Err(StorageError::Expired));
    assert_eq!(store.list("/registry/leases/", 0, started_at, None).await.unwrap().items.len(), 0);
    assert_eq!(b.step().await.unwrap(), Step::Lost, "a claimed the round b saw");
    assert!(matches!(b.step().await.unwrap(), Step::Compacted(rev) if rev > started_at), "b's turn now");
}

/// Objects created with a TTL (Events) disappear when it runs out.
async fn ttl_objects(channel: Endpoints) {
    let store = Etcd3Store::new(channel.clone());
    let key = "/registry/events/default/e1";
    store.create_with_ttl(key, object("e1", 0), 2).await.unwrap();
    assert!(store.get(key).await.unwrap().is_some());
    assert_eq!(
        store.create_with_ttl(key, object("e1", 0), 2).await,
        Err(StorageError::AlreadyExists { key: key.into() })
    );
    // Objects created together share a lease (kube's lease reuse).
    let mut kv = KvClient::new(channel.clone());
    let mut leases = Vec::new();
    for name in ["e2", "e3"] {
        let key = format!("/registry/events/default/{name}");
        store.create_with_ttl(&key, object(name, 0), 600).await.unwrap();
        let range =
            rtcd_proto::etcdserverpb::RangeRequest { key: key.into_bytes().into(), ..Default::default() };
        leases.push(kv.range(range).await.unwrap().into_inner().kvs[0].lease);
    }
    assert!(leases[0] != 0 && leases[0] == leases[1], "{leases:?}");
    let deadline = Instant::now() + Duration::from_secs(15);
    while store.get(key).await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "the object outlived its TTL");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_contract_on_rtcd() {
    let member = Member::start(Backend::Rtcd).await;
    let channel = member.channel();
    objects(channel.clone()).await;
    paged_lists(channel.clone()).await;
    compaction_rounds(channel.clone()).await;
    ttl_objects(channel).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_contract_on_etcd() {
    let member = Member::start(Backend::Etcd).await;
    let channel = member.channel();
    objects(channel.clone()).await;
    paged_lists(channel.clone()).await;
    compaction_rounds(channel.clone()).await;
    ttl_objects(channel).await;
}
