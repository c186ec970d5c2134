//! The store and the reference model (`model.rs`) side by side: every write
//! outcome as batches are applied, then every read at every revision and the
//! whole history. Used by the proptest model check and by the `store_model`
//! fuzz target (rtcd-fuzz includes this file next to `model.rs`).

use rtcd_proto::etcdserverpb::RangeRequest;
use rtcd_store::{AppliedMark, Store, WriteRequest};

use super::model::Model;

/// The applied mark given to batch `i`.
pub fn mark(i: usize) -> AppliedMark {
    AppliedMark { index: i as u64 + 1, context: format!("batch {i}").into_bytes() }
}

/// Applies `batches` to both and compares as it goes: each outcome, the
/// revision and applied mark after each batch, and `reads` then.
pub fn compare_writes(
    store: &Store,
    model: &mut Model,
    batches: &[Vec<WriteRequest>],
    reads: &[RangeRequest],
) {
    for (i, batch) in batches.iter().enumerate() {
        let outcomes = match store.apply(batch, mark(i)) {
            Ok(outcomes) => outcomes,
            Err(e) => panic!("batch {i} did not reach the engine: {e}"),
        };
        assert_eq!(outcomes.len(), batch.len(), "one outcome per request");
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
        assert_eq!(store.revision().ok(), Some(model.rev()), "revision after batch {i}");
        assert_eq!(store.applied().ok(), Some(mark(i)), "applied mark after batch {i}");
        for r in reads {
            assert_eq!(store.range(r), model.range(r), "range {r:?}");
        }
    }
}

/// Reads at every retained revision and the whole history, whole and in
/// one-revision slices that must add up to it.
pub fn compare_everything(store: &Store, model: &Model, reads: &[RangeRequest]) {
    for rev in -1..=model.rev() + 1 {
        for r in reads {
            let r = RangeRequest { revision: rev, ..r.clone() };
            assert_eq!(store.range(&r), model.range(&r), "range {r:?}");
        }
    }
    for from in 0..=model.rev() + 1 {
        let whole = store.history(from, usize::MAX).map(|h| h.events);
        assert_eq!(whole, model.history(from), "history from {from}");
        let Ok(whole) = whole else { continue };
        let (mut pieced, mut next) = (Vec::new(), from);
        while next <= model.rev() {
            let h = match store.history(next, 1) {
                Ok(h) => h,
                Err(e) => panic!("history slice from {next}: {e}"),
            };
            let revs: std::collections::BTreeSet<i64> =
                h.events.iter().filter_map(|e| e.kv.as_ref()).map(|kv| kv.mod_revision).collect();
            assert!(revs.len() <= 1, "a slice holds one revision: {revs:?}");
            assert!(h.next_revision > next, "history slices advance: {next} → {}", h.next_revision);
            pieced.extend(h.events);
            next = h.next_revision;
        }
        assert_eq!(pieced, whole, "history from {from} in slices");
    }
}
