//! Random request sequences applied to the store and to the reference model:
//! every write outcome (response, events, revision, error), Ranges with every
//! option at every revision, and the replayed history must agree.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rtcd_proto::etcdserverpb::RangeRequest;
use rtcd_store::engine::{MemEngine, RocksEngine};
use rtcd_store::{Store, StoreOptions, WriteRequest};

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
    let mut runner =
        TestRunner::new(Config { cases: cases("RTCD_MODEL_CASES", 10_000), ..Config::default() });
    let result = runner.run(&strategy(), |(batches, reads)| {
        let store =
            Store::with_engine(Box::new(MemEngine::new()), StoreOptions::default()).expect("open in memory");
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
