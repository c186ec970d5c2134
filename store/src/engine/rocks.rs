//! The real [`Engine`]: one RocksDB database, one column family per [`Table`].

use std::path::Path;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DB, DBCompressionType, Direction,
    IteratorMode, Options, ReadOptions, WriteOptions,
};

use super::{BatchOp, DEFAULT_BLOCK_CACHE_BYTES, Engine, EngineSnapshot, EntryIter, Table, WriteBatch};
use crate::error::StoreError;

pub struct RocksEngine {
    db: DB,
}

impl std::fmt::Debug for RocksEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksEngine").field("path", &self.db.path()).finish()
    }
}

impl RocksEngine {
    /// The sum of integer properties over every table's column family.
    fn summed<const N: usize>(&self, properties: [&str; N]) -> u64 {
        Table::ALL
            .iter()
            .filter_map(|t| self.cf(*t).ok())
            .flat_map(|cf| properties.map(|p| self.db.property_int_value_cf(cf, p)))
            .map(|v| v.ok().flatten().unwrap_or(0))
            .sum()
    }
}

fn engine_err(e: rocksdb::Error) -> StoreError {
    StoreError::Engine(e.into_string())
}

/// Memtables of all tables together, before the largest is flushed.
const WRITE_BUFFERS_BYTES: usize = 32 << 20;
/// One table's memtable before it is flushed.
const WRITE_BUFFER_BYTES: usize = 16 << 20;

impl RocksEngine {
    /// Opens (creating if needed) the database in `dir` with every table and
    /// the default block cache.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with_cache(dir, DEFAULT_BLOCK_CACHE_BYTES)
    }

    /// Opens the database with a block cache of `cache_bytes`, shared by
    /// every table.
    ///
    /// RocksDB's defaults give each column family its own 32 MiB cache and
    /// 64 MiB memtables, uncompressed: memory grew with the number of tables
    /// and the data dir was larger than etcd's. Here the tables share one
    /// cache and one memtable budget, blocks are LZ4-compressed, and point
    /// lookups (the key index's misses, lease and meta reads) skip files by
    /// bloom filter.
    pub fn open_with_cache(dir: impl AsRef<Path>, cache_bytes: usize) -> Result<Self, StoreError> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        // RocksDB's info logs would otherwise accumulate without bound.
        opts.set_keep_log_file_num(4);
        opts.set_db_write_buffer_size(WRITE_BUFFERS_BYTES);
        // A WAL file goes only once every table's memtable holding its
        // writes is flushed; small tables (meta, written with every batch)
        // would otherwise keep old WAL files for a long time.
        opts.set_max_total_wal_size(WRITE_BUFFERS_BYTES as u64);
        let cache = Cache::new_lru_cache(cache_bytes);
        let cfs = Table::ALL.map(|t| ColumnFamilyDescriptor::new(t.name(), table_options(&cache)));
        let db = DB::open_cf_descriptors(&opts, dir, cfs).map_err(engine_err)?;
        Ok(Self { db })
    }

    fn cf(&self, table: Table) -> Result<&ColumnFamily, StoreError> {
        self.db
            .cf_handle(table.name())
            .ok_or_else(|| StoreError::Engine(format!("column family {} missing", table.name())))
    }
}

/// One table's options: the shared cache (index and filter blocks in it,
/// so they count against its size), bloom filters, LZ4, bounded memtables.
fn table_options(cache: &Cache) -> Options {
    let mut blocks = BlockBasedOptions::default();
    blocks.set_block_cache(cache);
    blocks.set_bloom_filter(10.0, false);
    blocks.set_cache_index_and_filter_blocks(true);
    blocks.set_pin_l0_filter_and_index_blocks_in_cache(true);
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&blocks);
    opts.set_compression_type(DBCompressionType::Lz4);
    opts.set_write_buffer_size(WRITE_BUFFER_BYTES);
    opts.set_max_write_buffer_number(2);
    opts
}

/// Iterates `cf` from `from` up to `to` with `ro` (which may pin a snapshot).
fn iterate<'a>(
    db: &'a DB,
    snapshot: Option<&'a rocksdb::Snapshot<'a>>,
    cf: &ColumnFamily,
    from: &[u8],
    to: Option<&[u8]>,
) -> EntryIter<'a> {
    let mut ro = ReadOptions::default();
    if let Some(to) = to {
        ro.set_iterate_upper_bound(to.to_vec());
    }
    let mode = IteratorMode::From(from, Direction::Forward);
    let iter = match snapshot {
        Some(snapshot) => snapshot.iterator_cf_opt(cf, ro, mode),
        None => db.iterator_cf_opt(cf, ro, mode),
    };
    Box::new(iter.map(|item| item.map(|(k, v)| (k.into_vec(), v.into_vec())).map_err(engine_err)))
}

/// A RocksDB snapshot: the sequence number it pins keeps what it sees from
/// being compacted away until it is dropped.
struct RocksSnapshot<'a> {
    engine: &'a RocksEngine,
    snapshot: rocksdb::Snapshot<'a>,
}

impl EngineSnapshot for RocksSnapshot<'_> {
    fn scan<'b>(&'b self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'b> {
        match self.engine.cf(table) {
            Ok(cf) => iterate(&self.engine.db, Some(&self.snapshot), cf, from, to),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    }
}

impl Engine for RocksEngine {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.get_cf(self.cf(table)?, key).map_err(engine_err)
    }

    fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a> {
        match self.cf(table) {
            Ok(cf) => iterate(&self.db, None, cf, from, to),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot + '_> {
        Box::new(RocksSnapshot { engine: self, snapshot: self.db.snapshot() })
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> Result<(), StoreError> {
        let mut wb = rocksdb::WriteBatch::default();
        for op in batch.ops() {
            match op {
                BatchOp::Put { table, key, value } => wb.put_cf(self.cf(*table)?, key, value),
                BatchOp::Delete { table, key } => wb.delete_cf(self.cf(*table)?, key),
            }
        }
        let mut wo = WriteOptions::default();
        wo.set_sync(sync);
        self.db.write_opt(wb, &wo).map_err(engine_err)
    }

    fn reclaim(&self, table: Table) -> Result<(), StoreError> {
        let cf = self.cf(table)?;
        self.db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }

    fn size_bytes(&self) -> u64 {
        self.summed(["rocksdb.total-sst-files-size", "rocksdb.size-all-mem-tables"])
    }

    fn live_bytes(&self) -> u64 {
        self.summed(["rocksdb.estimate-live-data-size", "rocksdb.size-all-mem-tables"])
    }

    fn estimated_entries(&self, table: Table) -> u64 {
        let Ok(cf) = self.cf(table) else { return 0 };
        self.db.property_int_value_cf(cf, "rocksdb.estimate-num-keys").ok().flatten().unwrap_or(0)
    }
}
