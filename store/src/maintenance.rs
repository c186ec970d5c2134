//! Consistency hashes and space reclamation, for etcd's Maintenance service.

use crate::engine::Table;
use crate::error::StoreError;
use crate::revision::Revision;
use crate::store::Store;

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
            // Records at or before the compacted revision count only while
            // the index holds them: others may still await deletion
            // (`compaction`), for longer on one member than another.
            let held = state.index.held_at_or_before(state.compacted);
            let mut hash = crc32c::crc32c(Table::Kv.name().as_bytes());
            for entry in view.engine.scan(Table::Kv, &[], Some(&end)) {
                let (key, value) = entry?;
                let (revision, _) = Revision::decode(&key)?;
                if revision.main <= state.compacted && !held.contains(&revision) {
                    continue;
                }
                hash = crc32c::crc32c_append(hash, &key);
                hash = crc32c::crc32c_append(hash, &value);
            }
            Ok(KvHash { hash, compact_revision: state.compacted, revision: state.rev })
        })
    }

    /// Hash of all replicated tables (records, leases, auth).
    pub fn hash_all(&self) -> Result<u32, StoreError> {
        // Every record, so none that only awaits deletion.
        self.wait_for_compaction();
        self.with_view(|view, _| {
            let mut hash = 0;
            for table in [Table::Kv, Table::Lease, Table::Auth] {
                hash = crc32c::crc32c_append(hash, table.name().as_bytes());
                for entry in view.engine.scan(table, &[], None) {
                    let (key, value) = entry?;
                    hash = crc32c::crc32c_append(hash, &key);
                    hash = crc32c::crc32c_append(hash, &value);
                }
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
