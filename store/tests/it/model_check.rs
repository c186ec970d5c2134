//! Random request sequences applied to the store and to the reference model:
//! every write outcome (response, events, revision, error), Ranges with every
//! option at every revision, and the replayed history must agree.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rtcd_proto::etcdserverpb::RangeRequest;
use rtcd_store::engine::{
    BatchOp, Engine, EngineSnapshot, EntryIter, MemEngine, RocksEngine, Table, WriteBatch,
};
use rtcd_store::{Store, StoreError, StoreOptions, WriteRequest};

use crate::agreement::{compare_everything, compare_writes, mark};
use crate::model::Model;
use crate::strategies;

fn cases(var: &str, default: u32) -> u32 {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn strategy() -> impl Strategy<Value = (Vec<Vec<WriteRequest>>, Vec<RangeRequest>)> {
    (strategies::batches(), prop::collection::vec(strategies::range(), 1..6))
}

#[test]
fn store_agrees_with_model() {
    let config = Config { cases: cases("RTCD_MODEL_CASES", 10_000), ..Config::default() };
    agrees_with_model(config, || Box::new(MemEngine::new()));
}

/// The same while the compaction thread's deletions never land (as when
/// they lag behind): records a compaction made unreachable stay in the
/// engine, and every read must still skip them. Proptest found history
/// replaying such a record (a put that its own revision then deleted, at
/// the compacted revision) only when the thread happened to be slow.
#[test]
fn store_agrees_with_model_while_deletions_lag() {
    let config = Config { cases: cases("RTCD_MODEL_CASES", 10_000), ..Config::default() };
    agrees_with_model(config, || Box::new(KeepsUnreachable(MemEngine::new())));
}

/// An engine that drops the compaction thread's writes (the only ones that
/// delete `kv` records and write nothing else).
struct KeepsUnreachable(MemEngine);

impl Engine for KeepsUnreachable {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(table, key)
    }

    fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a> {
        self.0.scan(table, from, to)
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<(), StoreError> {
        let only_record_deletes =
            batch.ops().iter().all(|op| matches!(op, BatchOp::Delete { table: Table::Kv, .. }));
        if only_record_deletes && !batch.is_empty() {
            return Ok(());
        }
        self.0.write(batch, sync)
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot + '_> {
        self.0.snapshot()
    }

    fn reclaim(&self, table: Table) -> Result<(), StoreError> {
        self.0.reclaim(table)
    }

    fn size_bytes(&self) -> u64 {
        self.0.size_bytes()
    }
    fn live_bytes(&self) -> u64 {
        self.0.live_bytes()
    }
    fn estimated_entries(&self, table: Table) -> u64 {
        self.0.estimated_entries(table)
    }
}

fn agrees_with_model(config: Config, engine: impl Fn() -> Box<dyn Engine>) {
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy(), |(batches, reads)| {
        let store = Store::with_engine(engine(), StoreOptions::default()).expect("open in memory");
        let mut model = Model::new();
        compare_writes(&store, &mut model, &batches, &reads);
        compare_everything(&store, &model, &reads);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The same on RocksDB, reopening the store at the end: everything read back
/// after the reopen must still agree.
#[test]
fn rocksdb_store_agrees_with_model_across_reopen() {
    let mut runner =
        TestRunner::new(Config { cases: cases("RTCD_ROCKS_MODEL_CASES", 100), ..Config::default() });
    let result = runner.run(&strategy(), |(batches, reads)| {
        let dir = tempfile::tempdir().expect("tempdir");
        let open =
            || Store::open(dir.path(), StoreOptions { sync: false, ..Default::default() }).expect("open");
        let mut model = Model::new();
        {
            let store = open();
            compare_writes(&store, &mut model, &batches, &reads);
        }
        let store = open();
        assert_eq!(store.revision().ok(), Some(model.rev()));
        assert_eq!(store.compacted_revision().ok(), Some(model.compacted.max(0)));
        assert_eq!(store.applied().ok(), Some(mark(batches.len() - 1)));
        compare_everything(&store, &model, &reads);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn engines_hold_the_same_data() {
    // The in-memory engine stands in for RocksDB in the big property run:
    // make sure the two answer scans alike, including bounds.
    let dir = tempfile::tempdir().expect("tempdir");
    let rocks = RocksEngine::open(dir.path()).expect("open");
    let mem = MemEngine::new();
    use rtcd_store::engine::{Engine, Table, WriteBatch};
    let mut batch = WriteBatch::default();
    for k in [&b"a"[..], b"ab", b"b", b"\xff\xff", b""] {
        batch.put(Table::Kv, k, k);
        batch.put(Table::Meta, k, b"m");
    }
    batch.delete(Table::Kv, &b"b"[..]);
    for e in [&rocks as &dyn Engine, &mem] {
        e.write(batch.clone(), true).expect("write");
    }
    for (from, to) in [(&b""[..], None), (b"a", Some(&b"b"[..])), (b"ab", None), (b"c", Some(b"a"))] {
        let scan = |e: &dyn Engine| e.scan(Table::Kv, from, to).collect::<Result<Vec<_>, _>>().expect("scan");
        assert_eq!(scan(&rocks), scan(&mem), "scan {from:?}..{to:?}");
    }
    assert_eq!(rocks.get(Table::Meta, b"ab").expect("get"), Some(b"m".to_vec()));
    assert_eq!(mem.get(Table::Kv, b"b").expect("get"), None);
}
