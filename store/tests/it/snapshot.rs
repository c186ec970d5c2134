//! Snapshots: a restored store answers like the original (data, history
//! window, leases, hashes), and a damaged file is refused before anything is
//! written.

use crate::reopen::put;
use bytes::Bytes;
use rtcd_proto::etcdserverpb::{CompactionRequest, LeaseGrantRequest, RangeRequest};
use rtcd_store::{
    AppliedMark, SnapshotError, Store, StoreError, StoreOptions, WriteRequest, restore_snapshot,
};

fn all(revision: i64) -> RangeRequest {
    RangeRequest {
        key: Bytes::from_static(b"\0"),
        range_end: Bytes::from_static(b"\0"),
        revision,
        ..Default::default()
    }
}

/// A store with leases, overwritten keys and a compaction, and its snapshot.
fn saved(dir: &std::path::Path) -> (Store, std::path::PathBuf) {
    let store = Store::open(dir.join("source"), StoreOptions::default()).unwrap();
    let grant = WriteRequest::LeaseGrant(LeaseGrantRequest { ttl: 100, id: 42 });
    store
        .apply(&[grant, put("a", "1", 42), put("b", "1", 0)], AppliedMark { index: 1, context: vec![] })
        .unwrap();
    for i in 0..50 {
        store.apply(&[put("a", &i.to_string(), 0)], AppliedMark { index: 2 + i, context: vec![] }).unwrap();
    }
    let compact = WriteRequest::Compact(CompactionRequest { revision: 20, physical: true });
    store.apply(&[compact, put("c", "x", 42)], AppliedMark { index: 60, context: vec![] }).unwrap();
    let file = dir.join("snap.db");
    let size = store.write_snapshot(std::fs::File::create(&file).unwrap()).unwrap().size;
    assert_eq!(size, std::fs::metadata(&file).unwrap().len());
    assert_eq!(size % 512, 32, "etcdctl's rule for a checksummed snapshot");
    (store, file)
}

#[test]
fn restore_reproduces_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (source, file) = saved(dir.path());
    let restored_dir = dir.path().join("restored");
    let summary = restore_snapshot(&file, &restored_dir).unwrap();
    assert_eq!(summary.revision, source.revision().unwrap());
    let restored = Store::open(&restored_dir, StoreOptions::default()).unwrap();
    assert_eq!(restored.revision().unwrap(), source.revision().unwrap());
    assert_eq!(restored.compacted_revision().unwrap(), 20);
    for rev in [0, 20, 30] {
        assert_eq!(restored.range(&all(rev)).unwrap(), source.range(&all(rev)).unwrap(), "revision {rev}");
    }
    assert_eq!(restored.range(&all(19)), Err(StoreError::Compacted));
    assert_eq!(restored.hash_kv(0).unwrap(), source.hash_kv(0).unwrap());
    assert_eq!(restored.leases().unwrap(), source.leases().unwrap());
    assert_eq!(restored.applied().unwrap().index, 0, "a restored store starts a new log");
    assert!(matches!(restore_snapshot(&file, &restored_dir), Err(SnapshotError::Exists(_))));
}

#[test]
fn damaged_or_foreign_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = saved(dir.path());
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[100] ^= 1;
    let damaged = dir.path().join("damaged.db");
    std::fs::write(&damaged, &bytes).unwrap();
    assert!(matches!(restore_snapshot(&damaged, &dir.path().join("r1")), Err(SnapshotError::Checksum)));
    assert!(!dir.path().join("r1").exists(), "nothing written for a damaged file");

    let short = dir.path().join("short.db");
    std::fs::write(&short, &bytes[..bytes.len() - 1]).unwrap();
    assert!(matches!(restore_snapshot(&short, &dir.path().join("r2")), Err(SnapshotError::Format(_))));
}
