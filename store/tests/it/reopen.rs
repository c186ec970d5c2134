//! Reopening a store: everything written comes back, and physical compaction
//! gives space back.

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{
    CompactionRequest, LeaseGrantRequest, LeaseRevokeRequest, PutRequest, RangeRequest,
};
use rtcd_proto::mvccpb::event::EventType;
use rtcd_store::engine::{Engine, RocksEngine, Table, WriteBatch};
use rtcd_store::{AppliedMark, Store, StoreError, StoreOptions, WriteRequest};

pub fn put(key: &str, value: &str, lease: i64) -> WriteRequest {
    WriteRequest::Put(PutRequest {
        key: Bytes::copy_from_slice(key.as_bytes()),
        value: Bytes::copy_from_slice(value.as_bytes()),
        lease,
        ..Default::default()
    })
}

fn get(key: &str, revision: i64) -> RangeRequest {
    RangeRequest { key: Bytes::copy_from_slice(key.as_bytes()), revision, ..Default::default() }
}

fn mark(index: u64) -> AppliedMark {
    AppliedMark { index, context: b"term 3".to_vec() }
}

#[test]
fn leases_history_and_marks_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        assert_eq!(store.revision().unwrap(), 1, "a new store is at revision 1");
        let grant = WriteRequest::LeaseGrant(LeaseGrantRequest { ttl: 30, id: 7 });
        store.apply(&[grant, put("a", "1", 7), put("b", "1", 7), put("c", "1", 0)], mark(1)).unwrap();
        store.apply(&[put("a", "2", 0)], mark(2)).unwrap();
    }
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(store.applied().unwrap(), mark(2));
    assert_eq!(store.revision().unwrap(), 5);
    let lease = store.lease(7).unwrap().expect("lease 7 kept");
    let keys: Vec<&[u8]> = lease.keys.iter().map(|k| k.as_ref()).collect();
    assert_eq!(keys, vec![&b"b"[..]], "a moved off the lease, b still on it");
    assert_eq!(store.range(&get("a", 2)).unwrap().kvs[0].value.as_ref(), b"1", "history kept");

    // Revoking after the reopen deletes exactly the attached key, in one revision.
    let out = store.apply(&[WriteRequest::LeaseRevoke(LeaseRevokeRequest { id: 7 })], mark(3)).unwrap();
    let applied = out.into_iter().next().unwrap().unwrap();
    assert_eq!(applied.revision, 6);
    assert_eq!(applied.events.len(), 1);
    assert_eq!(applied.events[0].r#type, EventType::Delete as i32);
    assert_eq!(applied.events[0].kv.as_ref().unwrap().key.as_ref(), b"b");
    assert!(store.range(&get("b", 0)).unwrap().kvs.is_empty());
    assert_eq!(store.lease(7).unwrap(), None);
}

#[test]
fn physical_compaction_gives_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { sync: false, ..Default::default() }).unwrap();
    let big = "v".repeat(4096);
    for i in 0..2000u64 {
        store.apply(&[put(&format!("k{}", i % 4), &big, 0)], mark(i + 1)).unwrap();
    }
    let rev = store.revision().unwrap();
    let compact = WriteRequest::Compact(CompactionRequest { revision: rev, physical: false });
    store.apply(&[compact], mark(3000)).unwrap();
    let before = store.size_bytes();
    // A second, physical compaction at the same revision is refused...
    let again = WriteRequest::Compact(CompactionRequest { revision: rev, physical: true });
    let out = store.apply(&[again], mark(3001)).unwrap();
    assert_eq!(out[0], Err(StoreError::Compacted));
    // ...so force reclamation with the next one.
    store.apply(&[put("k0", "small", 0)], mark(3002)).unwrap();
    let physical = WriteRequest::Compact(CompactionRequest { revision: rev + 1, physical: true });
    store.apply(&[physical], mark(3003)).unwrap();
    let after = store.size_bytes();
    assert!(before > 4 * 1024 * 1024, "2000 values of 4 KiB were stored: {before} bytes");
    assert!(after < before / 5, "reclaimed: {before} -> {after} bytes");
    assert_eq!(store.range(&get("k1", 0)).unwrap().kvs[0].value.len(), 4096, "live data kept");
    assert_eq!(store.range(&get("k1", rev - 10)), Err(StoreError::Compacted));
}

#[test]
fn a_damaged_record_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store.apply(&[put("a", "1", 0)], mark(1)).unwrap();
    }
    for (key, value) in
        [(&b"short"[..], &b"x"[..]), (&[0u8, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0], b"\xff\xff")]
    {
        let engine = RocksEngine::open(dir.path()).unwrap();
        let mut batch = WriteBatch::default();
        batch.put(Table::Kv, key, value);
        engine.write(batch, true).unwrap();
        drop(engine);
        let opened = Store::open(dir.path(), StoreOptions::default());
        assert!(matches!(opened, Err(StoreError::Corrupt(_))), "got {opened:?}");
    }
}

#[test]
fn kv_hash_depends_on_history_not_on_the_engine() {
    use rtcd_store::engine::MemEngine;
    let dir = tempfile::tempdir().unwrap();
    let rocks = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mem = Store::with_engine(Box::new(MemEngine::new()), StoreOptions::default()).unwrap();
    for store in [&rocks, &mem] {
        store.apply(&[put("a", "1", 0), put("b", "2", 0)], mark(1)).unwrap();
        store.apply(&[put("a", "3", 0)], mark(2)).unwrap();
    }
    let (r, m) = (rocks.hash_kv(0).unwrap(), mem.hash_kv(0).unwrap());
    assert_eq!(r, m);
    assert_eq!((r.revision, r.compact_revision), (4, -1));
    assert_ne!(rocks.hash_kv(3).unwrap().hash, r.hash, "an older revision hashes less history");
    assert_eq!(rocks.hash_kv(5), Err(StoreError::FutureRev));
    let compact = WriteRequest::Compact(CompactionRequest { revision: 3, physical: false });
    rocks.apply(&[compact], mark(3)).unwrap();
    assert_eq!(rocks.hash_kv(3), Err(StoreError::Compacted));
    assert_eq!(rocks.hash_kv(4).unwrap().compact_revision, 3);
    rocks.defragment().unwrap();
    assert_eq!(rocks.range(&get("a", 0)).unwrap().kvs[0].value.as_ref(), b"3", "defragment keeps data");
}

/// `writes` puts over 7 keys, applied 500 to a batch; returns the revision.
fn overwrite(store: &Store, writes: usize) -> i64 {
    let requests: Vec<WriteRequest> =
        (0..writes).map(|i| put(&format!("k{}", i % 7), &i.to_string(), 0)).collect();
    for (n, group) in requests.chunks(500).enumerate() {
        store.apply(group, mark(n as u64 + 1)).unwrap();
    }
    store.revision().unwrap()
}

fn kv_records(dir: &std::path::Path) -> usize {
    let engine = RocksEngine::open(dir).unwrap();
    engine.scan(Table::Kv, &[], None).count()
}

/// A compaction returns before its records are deleted (they go in the
/// background, in chunks); reads and the kv hash are the same before and
/// after the deletions, and afterwards only each key's value is left.
#[test]
fn a_large_compaction_deletes_its_records_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { sync: false, ..Default::default() }).unwrap();
    let rev = overwrite(&store, 30_000);
    let compact = WriteRequest::Compact(CompactionRequest { revision: rev, physical: false });
    store.apply(&[compact], mark(1000)).unwrap();
    let during = store.hash_kv(0).unwrap();
    let all = RangeRequest {
        key: Bytes::from_static(b"k"),
        range_end: Bytes::from_static(b"l"),
        ..Default::default()
    };
    let values = |store: &Store| -> Vec<Bytes> {
        store.range(&all).unwrap().kvs.into_iter().map(|kv| kv.value).collect()
    };
    let read_during = values(&store);
    store.wait_for_compaction();
    assert_eq!(store.hash_kv(0).unwrap(), during, "records awaiting deletion are not hashed");
    assert_eq!(values(&store), read_during);
    assert_eq!(read_during.len(), 7);
    assert_eq!(store.range(&get("k0", rev - 1)), Err(StoreError::Compacted));
    drop(store);
    assert_eq!(kv_records(dir.path()), 7, "one record per key left");
}

/// Deletions are not durable: a crash after the compaction's batch leaves
/// its records. The next open deletes them, and the store is then the one
/// a member without the crash has.
#[test]
fn records_a_crash_left_after_a_compaction_are_deleted_on_open() {
    let (crashed, clean) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut revs = Vec::new();
    for dir in [&crashed, &clean] {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        revs.push(overwrite(&store, 2_000));
    }
    let at = revs[0] - 3;
    {
        // What the compaction's own batch wrote, and nothing else.
        let engine = RocksEngine::open(crashed.path()).unwrap();
        let mut batch = WriteBatch::default();
        batch.put(Table::Meta, &b"compacted"[..], at.to_be_bytes());
        engine.write(batch, true).unwrap();
    }
    let clean_store = Store::open(clean.path(), StoreOptions::default()).unwrap();
    let compact = WriteRequest::Compact(CompactionRequest { revision: at, physical: true });
    clean_store.apply(&[compact], mark(100)).unwrap();

    let reopened = Store::open(crashed.path(), StoreOptions::default()).unwrap();
    assert_eq!(reopened.compacted_revision().unwrap(), at);
    reopened.wait_for_compaction();
    assert_eq!(reopened.hash_kv(0).unwrap(), clean_store.hash_kv(0).unwrap());
    assert_eq!(reopened.range(&get("k1", at)).unwrap(), clean_store.range(&get("k1", at)).unwrap());
    drop((reopened, clean_store));
    assert_eq!(kv_records(crashed.path()), kv_records(clean.path()));
    assert!(kv_records(clean.path()) < 20, "the clean store kept only recent records");
}
