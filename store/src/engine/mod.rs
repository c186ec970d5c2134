//! The storage-engine boundary. The MVCC layer is written once against
//! [`Engine`]; the trait knows nothing of RocksDB, so the real engine
//! ([`RocksEngine`]) and the in-memory one used by fast tests ([`MemEngine`])
//! are interchangeable.

mod mem;
#[cfg(feature = "rocksdb")]
mod rocks;

pub use mem::MemEngine;
#[cfg(feature = "rocksdb")]
pub use rocks::RocksEngine;

use crate::error::StoreError;

/// RocksDB's block cache when nobody says otherwise (the server's
/// `--block-cache-bytes`).
pub const DEFAULT_BLOCK_CACHE_BYTES: usize = 64 << 20;

/// The tables (RocksDB column families) of rtcd's key schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// MVCC records keyed by revision (see `revision.rs`); values are encoded
    /// `mvccpb.KeyValue`s.
    Kv,
    /// Store bookkeeping: current and compacted revision, applied mark.
    Meta,
    /// Leases keyed by big-endian ID.
    Lease,
    /// Users, roles and the auth switch (logic arrives with the Auth service).
    Auth,
}

impl Table {
    pub const ALL: [Table; 4] = [Table::Kv, Table::Meta, Table::Lease, Table::Auth];

    /// The column-family name on disk; never change one once released.
    pub fn name(self) -> &'static str {
        match self {
            Table::Kv => "kv",
            Table::Meta => "meta",
            Table::Lease => "lease",
            Table::Auth => "auth",
        }
    }
}

/// One change inside a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchOp {
    Put { table: Table, key: Vec<u8>, value: Vec<u8> },
    Delete { table: Table, key: Vec<u8> },
}

/// Changes that reach disk together or not at all.
#[derive(Debug, Default, Clone)]
pub struct WriteBatch {
    ops: Vec<BatchOp>,
}

impl WriteBatch {
    pub fn put(&mut self, table: Table, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(BatchOp::Put { table, key: key.into(), value: value.into() });
    }

    pub fn delete(&mut self, table: Table, key: impl Into<Vec<u8>>) {
        self.ops.push(BatchOp::Delete { table, key: key.into() });
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn ops(&self) -> &[BatchOp] {
        &self.ops
    }
}

/// A key-value pair read from a table.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Iterator over a table in ascending key order.
pub type EntryIter<'a> = Box<dyn Iterator<Item = Result<Entry, StoreError>> + Send + 'a>;

/// A consistent, point-in-time read of every table: writes made after it
/// was taken do not show. A long scan (a snapshot dump) reads from one
/// without holding up the writes meanwhile.
pub trait EngineSnapshot: Send {
    /// As [`Engine::scan`], at the snapshot's point in time.
    fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a>;
}

/// An ordered key-value engine with named tables and atomic batches.
pub trait Engine: Send + Sync + 'static {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;

    /// Entries with `from <= key < to` (no upper bound when `to` is `None`),
    /// ascending.
    fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a>;

    /// Applies the whole batch atomically. With `sync` the call returns only
    /// once the batch is durable (survives power loss).
    fn write(&self, batch: WriteBatch, sync: bool) -> Result<(), StoreError>;

    /// The engine as it is now, for reading while writes go on.
    fn snapshot(&self) -> Box<dyn EngineSnapshot + '_>;

    /// Reclaims the space of deleted entries in `table` now rather than
    /// whenever the engine gets round to it.
    fn reclaim(&self, table: Table) -> Result<(), StoreError>;

    /// Bytes the engine occupies on disk (or in memory for [`MemEngine`]).
    fn size_bytes(&self) -> u64;

    /// Bytes of live data, without what deletes and overwrites left for
    /// compaction to reclaim (an estimate).
    fn live_bytes(&self) -> u64;

    /// About how many entries `table` holds (an estimate: cheap to ask).
    fn estimated_entries(&self, table: Table) -> u64;
}
