//! Consistency hashes and space reclamation, for etcd's Maintenance service.

use crate::engine::Table;
use crate::error::StoreError;
use crate::revision::Revision;
use crate::state::State;
use crate::store::Store;
use crate::view::View;

/// The answer to HashKV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvHash {
    /// CRC-32C (Castagnoli) of every retained record up to the revision.
    pub hash: u32,
    /// The compacted revision when hashing (-1 before any compaction, as etcd).
    pub compact_revision: i64,
    /// The current revision.
    pub revision: i64,
}

impl Store {
    /// Hash of the MVCC history up to `revision` (0: now). Members that applied
    /// the same writes and compactions agree on it, whatever their disk layout.
    pub fn hash_kv(&self, revision: i64) -> Result<KvHash, StoreError> {
        self.with_view(|view, state| {
            if revision > 0 && revision <= state.compacted {
                return Err(StoreError::Compacted);
            }
            if revision > state.rev {
                return Err(StoreError::FutureRev);
            }
            let upto = if revision > 0 { revision } else { state.rev };
            let end = Revision::start_key(upto + 1);
            let hash = crc32c::crc32c(Table::Kv.name().as_bytes());
            let hash = hash_table(view, state, Table::Kv, Some(&end), hash)?;
            Ok(KvHash { hash, compact_revision: state.compacted, revision: state.rev })
        })
    }

    /// Hash of all replicated tables (records, leases, auth).
    pub fn hash_all(&self) -> Result<u32, StoreError> {
        self.with_view(|view, state| {
            let mut hash = 0;
            for table in [Table::Kv, Table::Lease, Table::Auth] {
                hash = crc32c::crc32c_append(hash, table.name().as_bytes());
                hash = hash_table(view, state, table, None, hash)?;
            }
            Ok(hash)
        })
    }

    /// Rewrites every table to drop the space of deleted entries (etcd's
    /// Defragment).
    pub fn defragment(&self) -> Result<(), StoreError> {
        self.wait_for_compaction();
        Table::ALL.iter().try_for_each(|t| self.reclaim_table(*t))
    }
}

/// `hash` extended with `table`'s entries below `end`. Records at or before
/// the compacted revision count only while the index holds them: others
/// may still await deletion (`compaction`), longer on one member than on
/// another.
fn hash_table(
    view: &View<'_>,
    state: &State,
    table: Table,
    end: Option<&[u8]>,
    mut hash: u32,
) -> Result<u32, StoreError> {
    let held = (table == Table::Kv).then(|| state.index.held_at_or_before(state.compacted));
    for entry in view.engine.scan(table, &[], end) {
        let (key, value) = entry?;
        if let Some(held) = &held {
            let (revision, _) = Revision::decode(&key)?;
            if revision.main <= state.compacted && !held.contains(&revision) {
                continue;
            }
        }
        hash = crc32c::crc32c_append(hash, &key);
        hash = crc32c::crc32c_append(hash, &value);
    }
    Ok(hash)
}
