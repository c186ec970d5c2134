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

/// A writer that signals once the dump has started and then waits to be
/// let go, so the test can write to the store in the middle of a dump.
struct Paused {
    file: std::fs::File,
    started: Option<std::sync::mpsc::Sender<()>>,
    resume: std::sync::mpsc::Receiver<()>,
}

impl std::io::Write for Paused {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(started) = self.started.take() {
            started.send(()).unwrap();
            self.resume.recv().unwrap();
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A snapshot dump (seconds for a big store) must not stall the write path,
/// and what it holds is the store as of when it began.
#[test]
fn writes_go_on_during_a_dump_which_holds_the_store_as_it_began() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(Store::open(dir.path().join("source"), StoreOptions::default()).unwrap());
    store.apply(&[put("a", "before", 0)], AppliedMark { index: 1, context: vec![] }).unwrap();
    let file = dir.path().join("snap.db");
    let (started, dump_started) = std::sync::mpsc::channel();
    let (resume_dump, resume) = std::sync::mpsc::channel();
    let writer = Paused { file: std::fs::File::create(&file).unwrap(), started: Some(started), resume };
    let dumping = {
        let store = store.clone();
        std::thread::spawn(move || {
            store.write_snapshot(std::io::BufWriter::with_capacity(1, writer)).unwrap()
        })
    };
    dump_started.recv().unwrap();
    // The dump is paused mid-way; a write that waited for it would hang here.
    let (applied_tx, applied_rx) = std::sync::mpsc::channel();
    let writing = {
        let store = store.clone();
        std::thread::spawn(move || {
            let mark = AppliedMark { index: 2, context: vec![] };
            store.apply(&[put("a", "during", 0), put("b", "during", 0)], mark).unwrap();
            applied_tx.send(()).unwrap();
        })
    };
    let applied = applied_rx.recv_timeout(std::time::Duration::from_secs(10));
    resume_dump.send(()).unwrap();
    assert!(applied.is_ok(), "the write waited for the dump");
    writing.join().unwrap();
    let written = dumping.join().unwrap();
    assert_eq!(written.applied.index, 1, "the mark of the state dumped");

    let restored_dir = dir.path().join("restored");
    restore_snapshot(&file, &restored_dir).unwrap();
    let restored = Store::open(&restored_dir, StoreOptions::default()).unwrap();
    let kvs = restored.range(&all(0)).unwrap().kvs;
    let values: Vec<_> = kvs.iter().map(|kv| (kv.key.clone(), kv.value.clone())).collect();
    assert_eq!(values, vec![(Bytes::from_static(b"a"), Bytes::from_static(b"before"))]);
    assert_eq!(store.range(&all(0)).unwrap().kvs.len(), 2, "the source has the later write");
}
