//! Random request sequences applied to the store and to the reference model:
//! every write outcome (response, events, revision, error), Ranges with every
//! option at every revision, and the replayed history must agree.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rtcd_proto::etcdserverpb::RangeRequest;
use rtcd_store::engine::{MemEngine, RocksEngine};
use rtcd_store::{AppliedMark, Store, StoreOptions, WriteRequest};

use crate::model::Model;
use crate::strategies;

fn cases(var: &str, default: u32) -> u32 {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn mark(i: usize) -> AppliedMark {
    AppliedMark { index: i as u64 + 1, context: format!("batch {i}").into_bytes() }
}

/// Applies `batches` to both and compares as it goes.
fn run(store: &Store, model: &mut Model, batches: &[Vec<WriteRequest>], reads: &[RangeRequest]) {
    for (i, batch) in batches.iter().enumerate() {
        let outcomes = store.apply(batch, mark(i)).expect("batch reaches the engine");
        for (req, got) in batch.iter().zip(outcomes) {
            let want = model.apply(req);
            match (got, want) {
                (Ok(got), Ok((response, events))) => {
                    assert_eq!(got.response, response, "response to {req:?}");
                    assert_eq!(got.events, events, "events of {req:?}");
                    assert_eq!(got.revision, model.rev(), "revision after {req:?}");
                }
                (Err(got), Err(want)) => assert_eq!(got, want, "error for {req:?}"),
                (got, want) => panic!("{req:?}: store {got:?}, model {want:?}"),
            }
        }
        assert_eq!(store.revision().ok(), Some(model.rev()));
        assert_eq!(store.applied().ok(), Some(mark(i)));
        for r in reads {
            assert_eq!(store.range(r), model.range(r), "range {r:?}");
        }
    }
}

/// Reads every retained revision and the whole history back.
fn check_everything(store: &Store, model: &Model, reads: &[RangeRequest]) {
    for rev in -1..=model.rev() + 1 {
        for r in reads {
            let r = RangeRequest { revision: rev, ..r.clone() };
            assert_eq!(store.range(&r), model.range(&r), "range {r:?}");
        }
    }
    for from in 0..=model.rev() + 1 {
        let whole = store.history(from, usize::MAX).map(|h| h.events);
        assert_eq!(whole, model.history(from), "history from {from}");
        // Small slices never split a revision and add up to the whole.
        if let Ok(whole) = whole {
            let (mut pieced, mut next) = (Vec::new(), from);
            while next <= model.rev() {
                let h = store.history(next, 1).expect("history slice");
                let revs: std::collections::BTreeSet<i64> =
                    h.events.iter().filter_map(|e| e.kv.as_ref()).map(|kv| kv.mod_revision).collect();
                assert!(revs.len() <= 1, "a slice holds one revision: {revs:?}");
                pieced.extend(h.events);
                next = h.next_revision;
            }
            assert_eq!(pieced, whole, "history from {from} in slices");
        }
    }
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
        run(&store, &mut model, &batches, &reads);
        check_everything(&store, &model, &reads);
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
            run(&store, &mut model, &batches, &reads);
        }
        let store = open();
        assert_eq!(store.revision().ok(), Some(model.rev()));
        assert_eq!(store.compacted_revision().ok(), Some(model.compacted.max(0)));
        assert_eq!(store.applied().ok(), Some(mark(batches.len() - 1)));
        check_everything(&store, &model, &reads);
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
