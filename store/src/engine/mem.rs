//! A tiny in-memory [`Engine`] for fast property tests. Not durable.

use std::collections::BTreeMap;
use std::sync::RwLock;

use super::{BatchOp, Engine, EngineSnapshot, EntryIter, Table, WriteBatch};
use crate::error::StoreError;

type Tables = BTreeMap<(Table, Vec<u8>), Vec<u8>>;

#[derive(Debug, Default)]
pub struct MemEngine {
    tables: RwLock<Tables>,
}

impl MemEngine {
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Tables> {
        // A panic while holding the lock cannot leave a half-applied batch
        // (batches are applied in one loop without fallible steps), so a
        // poisoned lock still guards consistent data.
        self.tables.read().unwrap_or_else(|e| e.into_inner())
    }
}

/// A copy of every table (fine for the small stores of tests).
struct MemSnapshot(Tables);

impl EngineSnapshot for MemSnapshot {
    fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a> {
        copy_range(&self.0, table, from, to)
    }
}

/// A copy of the entries of `table` with `from <= key < to`, ascending (the
/// iterator must not hold the engine's lock).
fn copy_range(tables: &Tables, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'static> {
    let entries: Vec<_> = tables
        .range((table, from.to_vec())..)
        .take_while(|((t, k), _)| *t == table && to.is_none_or(|to| k.as_slice() < to))
        .map(|((_, k), v)| Ok((k.clone(), v.clone())))
        .collect();
    Box::new(entries.into_iter())
}

impl Engine for MemEngine {
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.read().get(&(table, key.to_vec())).cloned())
    }

    fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a> {
        copy_range(&self.read(), table, from, to)
    }

    fn snapshot(&self) -> Box<dyn EngineSnapshot + '_> {
        Box::new(MemSnapshot(self.read().clone()))
    }

    fn write(&self, batch: WriteBatch, _sync: bool) -> Result<(), StoreError> {
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        for op in batch.ops {
            match op {
                BatchOp::Put { table, key, value } => {
                    tables.insert((table, key), value);
                }
                BatchOp::Delete { table, key } => {
                    tables.remove(&(table, key));
                }
            }
        }
        Ok(())
    }

    fn reclaim(&self, _table: Table) -> Result<(), StoreError> {
        Ok(())
    }

    fn size_bytes(&self) -> u64 {
        self.read().iter().map(|((_, k), v)| (k.len() + v.len()) as u64).sum()
    }

    fn live_bytes(&self) -> u64 {
        self.size_bytes()
    }

    fn estimated_entries(&self, table: Table) -> u64 {
        self.read().keys().filter(|(t, _)| *t == table).count() as u64
    }
}
