//! The event history watchers replay: every change from a retained revision
//! on, in revision order, read straight from the revision-keyed `kv` table.

use prost::Message;
use rtcd_proto::mvccpb::{Event, KeyValue, event::EventType};

use crate::engine::Table;
use crate::error::StoreError;
use crate::revision::Revision;
use crate::store::Store;
use crate::view::View;

/// A slice of history.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct History {
    /// Events in revision order, each with `prev_kv` when the key existed
    /// just before (and that state is not compacted away).
    pub events: Vec<Event>,
    /// Where to continue: the first revision not included (never before
    /// the requested start).
    pub next_revision: i64,
    /// The store revision when this slice was read.
    pub current_revision: i64,
}

impl Store {
    /// Events from revision `from` (inclusive) on. Stops after about
    /// `max_events` events, but never inside a revision, so every revision is
    /// delivered whole. `Compacted` if `from` is below the compacted revision.
    pub fn history(&self, from: i64, max_events: usize) -> Result<History, StoreError> {
        self.with_view(|view, state| {
            let from = from.max(1);
            if from < state.compacted {
                return Err(StoreError::Compacted);
            }
            let mut events: Vec<Event> = Vec::new();
            let mut last_main = 0;
            let end = Revision::start_key(state.rev + 1);
            for entry in view.engine.scan(Table::Kv, &Revision::start_key(from), Some(&end)) {
                let (raw_key, raw_value) = entry?;
                let (rev, tombstone) = Revision::decode(&raw_key)?;
                // A deletion at the compacted revision is compacted away
                // (only that revision's puts are replayed), though its
                // record may still await deletion (`compaction`).
                if tombstone && rev.main <= state.compacted {
                    continue;
                }
                if events.len() >= max_events && rev.main != last_main {
                    return Ok(History { events, next_revision: rev.main, current_revision: state.rev });
                }
                last_main = rev.main;
                let kv = KeyValue::decode(raw_value.as_slice())
                    .map_err(|e| StoreError::Corrupt(format!("record {rev:?}: {e}")))?;
                // Of the compacted revision's puts, only the version each key
                // kept is replayed: one the same revision replaced or deleted
                // (a txn changing a key twice) may still await deletion too.
                if rev.main == state.compacted && !kept_by_compaction(view, &kv, state.compacted)? {
                    continue;
                }
                let kind = if tombstone { EventType::Delete } else { EventType::Put };
                // The state just before this revision, unless compacted away;
                // never for a creation (etcd does not look it up then).
                let creates = !tombstone && kv.create_revision == kv.mod_revision;
                let prev_kv = match rev.main - 1 {
                    before if before >= state.compacted && !creates => view.get(&kv.key, before)?,
                    _ => None,
                };
                events.push(Event { r#type: kind as i32, kv: Some(kv), prev_kv });
            }
            let next_revision = from.max(state.rev + 1);
            Ok(History { events, next_revision, current_revision: state.rev })
        })
    }
}

/// Whether `kv`, a put at the compacted revision `compacted`, is the version
/// its key had at that revision (the one compaction keeps).
fn kept_by_compaction(view: &View<'_>, kv: &KeyValue, compacted: i64) -> Result<bool, StoreError> {
    Ok(view.get(&kv.key, compacted)?.is_some_and(|kept| kept.version == kv.version))
}
