//! [`Store`]: the MVCC key-value store as the rest of rtcd sees it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use rtcd_metrics::Histogram;

use bytes::Bytes;
use prost::Message;
use rtcd_proto::etcdserverpb::{RangeRequest, RangeResponse};
use rtcd_proto::mvccpb::KeyValue;

use crate::alarm::Alarms;
use crate::apply::{Applied, Batch, WriteRequest};
use crate::apply_times::{ApplyTimes, DEFAULT_WARNING_APPLY_DURATION};
use crate::auth::{AuthState, Caller};
use crate::compaction::Deleter;
use crate::compaction_stats::CompactionStats;
#[cfg(feature = "rocksdb")]
use crate::engine::RocksEngine;
use crate::engine::{DEFAULT_BLOCK_CACHE_BYTES, Engine, EngineSnapshot, Table, WriteBatch};
use crate::error::StoreError;
use crate::key_index::{KeyIndex, KeyRev};
use crate::lease::{LeaseInfo, Leases};
use crate::revision::Revision;
use crate::state::{AppliedMark, State, meta};
use crate::validate;
use crate::view::View;

#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Make every batch durable before `apply` returns. Off when a replicated
    /// log already holds the batch and replays it after a crash.
    pub sync: bool,
    /// etcd's `--max-txn-ops`.
    pub max_txn_ops: usize,
    /// RocksDB's block cache, shared by every table.
    pub block_cache_bytes: usize,
    /// A request that takes longer to apply is logged and counted (etcd's
    /// `--experimental-warning-apply-duration`).
    pub warning_apply_duration: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            sync: true,
            max_txn_ops: 128,
            block_cache_bytes: DEFAULT_BLOCK_CACHE_BYTES,
            warning_apply_duration: DEFAULT_WARNING_APPLY_DURATION,
        }
    }
}

pub struct Store {
    engine: Arc<dyn Engine>,
    state: RwLock<State>,
    options: StoreOptions,
    /// Deletes what compactions left unreachable.
    deleter: Deleter,
    /// Whether auth is on, mirrored from the state after every change so
    /// the read path can skip permission checks without taking the lock.
    auth_enabled: AtomicBool,
    /// How long each applied batch's engine write took (etcd's backend
    /// commit).
    commits: Histogram,
    /// How long each request took to apply; the slow ones.
    apply_times: ApplyTimes,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("options", &self.options).finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (or creates) a store in `dir` on RocksDB.
    #[cfg(feature = "rocksdb")]
    pub fn open(dir: impl AsRef<std::path::Path>, options: StoreOptions) -> Result<Self, StoreError> {
        Self::with_engine(Box::new(RocksEngine::open_with_cache(dir, options.block_cache_bytes)?), options)
    }

    /// Opens a store over any engine, rebuilding the in-memory index from it.
    pub fn with_engine(engine: Box<dyn Engine>, options: StoreOptions) -> Result<Self, StoreError> {
        let engine: Arc<dyn Engine> = Arc::from(engine);
        let mut state = load_state(engine.as_ref())?;
        let deleter = Deleter::start(engine.clone());
        deleter.schedule(left_by_a_crash(&mut state));
        let auth_enabled = AtomicBool::new(state.auth.enabled());
        // etcd's buckets: 1 ms to 8.192 s.
        let commits = Histogram::exponential(0.001, 2.0, 14);
        let apply_times = ApplyTimes::new(options.warning_apply_duration);
        Ok(Self { engine, state: RwLock::new(state), options, deleter, auth_enabled, commits, apply_times })
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, State>, StoreError> {
        let state = self.state.read().map_err(|_| StoreError::Poisoned)?;
        if state.poisoned {
            return Err(StoreError::Poisoned);
        }
        Ok(state)
    }

    fn write(&self) -> Result<RwLockWriteGuard<'_, State>, StoreError> {
        let state = self.state.write().map_err(|_| StoreError::Poisoned)?;
        if state.poisoned {
            return Err(StoreError::Poisoned);
        }
        Ok(state)
    }

    /// Applies `requests` in order as one atomic engine write that also
    /// records `mark`. Each request gets its own outcome; a failed one changes
    /// nothing. The outer error means the batch did not reach disk: the store
    /// then refuses further use until reopened (the caller replays its log).
    pub fn apply(
        &self,
        requests: &[WriteRequest],
        mark: AppliedMark,
    ) -> Result<Vec<Result<Applied, StoreError>>, StoreError> {
        self.apply_for(requests.iter().map(|r| (r, &Caller::Member)), mark)
    }

    /// [`Store::apply`] with the caller of each request, whose permissions
    /// are checked as it applies.
    pub fn apply_for<'r>(
        &self,
        requests: impl ExactSizeIterator<Item = (&'r WriteRequest, &'r Caller)>,
        mark: AppliedMark,
    ) -> Result<Vec<Result<Applied, StoreError>>, StoreError> {
        let mut state = self.write()?;
        let mut batch = Batch {
            engine: self.engine.as_ref(),
            state: &mut state,
            max_txn_ops: self.options.max_txn_ops,
            writes: WriteBatch::default(),
            pending: HashMap::new(),
            unreachable: Vec::new(),
            reclaim: false,
        };
        let mut outcomes = Vec::with_capacity(requests.len());
        for (req, caller) in requests {
            let started = Instant::now();
            let outcome = batch.apply(req, caller);
            let took = started.elapsed();
            self.apply_times.applied(req, outcome.is_ok(), took);
            if matches!(req, WriteRequest::Compact(_)) && outcome.is_ok() {
                // Applying a compaction is compacting the index.
                self.deleter.stats().index_compacted(took);
            }
            match outcome {
                // Engine trouble can strike after a request changed memory.
                Err(e @ (StoreError::Engine(_) | StoreError::Corrupt(_))) => {
                    batch.state.poisoned = true;
                    return Err(e);
                }
                outcome => outcomes.push(outcome),
            }
        }
        batch.writes.put(Table::Meta, meta::APPLIED, mark.encode());
        let (writes, unreachable, reclaim) = (batch.writes, batch.unreachable, batch.reclaim);
        let started = Instant::now();
        let written = self.engine.write(writes, self.options.sync);
        self.commits.observe_duration(started.elapsed());
        if let Err(e) = written {
            state.poisoned = true;
            return Err(e);
        }
        state.applied = mark;
        self.auth_enabled.store(state.auth.enabled(), Ordering::Release);
        self.deleter.schedule(unreachable);
        drop(state);
        if reclaim {
            // A physical compaction is done when its records are gone and
            // their space is given back.
            self.deleter.wait_idle();
            self.engine.reclaim(Table::Kv)?;
        }
        Ok(outcomes)
    }

    /// A Range at the current state (or at `revision`), etcd's semantics.
    pub fn range(&self, r: &RangeRequest) -> Result<RangeResponse, StoreError> {
        validate::check_range(r)?;
        let state = self.read()?;
        self.view(&state).range(r)
    }

    pub(crate) fn view<'a>(&'a self, state: &'a State) -> View<'a> {
        View {
            engine: self.engine.as_ref(),
            index: &state.index,
            pending: None,
            current: state.rev,
            compacted: state.compacted,
        }
    }

    /// Runs `f` with a consistent view and the state behind it.
    pub(crate) fn with_view<T>(
        &self,
        f: impl FnOnce(&View<'_>, &State) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let state = self.read()?;
        f(&self.view(&state), &state)
    }

    /// The engine as of now and the applied mark it holds, taken under the
    /// state lock (writes hold it for their whole batch, so the two agree).
    /// Long reads of the result do not hold up writes.
    pub(crate) fn engine_snapshot(&self) -> Result<(Box<dyn EngineSnapshot + '_>, AppliedMark), StoreError> {
        let state = self.read()?;
        Ok((self.engine.snapshot(), state.applied.clone()))
    }

    /// Replaces every table with `records` in one synced write and reloads
    /// the in-memory state from them; reads and writes wait meanwhile.
    pub(crate) fn replace_contents<E: From<StoreError>>(
        &self,
        records: impl Iterator<Item = Result<(Table, Vec<u8>, Vec<u8>), E>>,
    ) -> Result<AppliedMark, E> {
        let mut state = self.write()?;
        self.deleter.cancel();
        let mut batch = WriteBatch::default();
        for table in Table::ALL {
            for entry in self.engine.scan(table, &[], None) {
                batch.delete(table, entry?.0);
            }
        }
        for record in records {
            let (table, key, value) = record?;
            batch.put(table, key, value);
        }
        if let Err(e) = self.engine.write(batch, true) {
            state.poisoned = true;
            return Err(e.into());
        }
        *state = load_state(self.engine.as_ref())?;
        self.auth_enabled.store(state.auth.enabled(), Ordering::Release);
        self.deleter.schedule(left_by_a_crash(&mut state));
        Ok(state.applied.clone())
    }

    /// Returns once the records of every compaction applied so far are
    /// deleted from disk (they are deleted in the background).
    pub fn wait_for_compaction(&self) {
        self.deleter.wait_idle();
    }

    /// The current revision.
    pub fn revision(&self) -> Result<i64, StoreError> {
        Ok(self.read()?.rev)
    }

    /// The compacted revision; 0 before the first compaction.
    pub fn compacted_revision(&self) -> Result<i64, StoreError> {
        Ok(self.read()?.compacted.max(0))
    }

    /// The mark of the last applied batch (index 0 for a new store).
    pub fn applied(&self) -> Result<AppliedMark, StoreError> {
        Ok(self.read()?.applied.clone())
    }

    /// Every lease with its attached keys, by ID.
    pub fn leases(&self) -> Result<Vec<LeaseInfo>, StoreError> {
        Ok(self.read()?.leases.all().cloned().collect())
    }

    /// The active alarms, by member and type.
    /// The auth store as of the last applied batch.
    pub fn auth(&self) -> Result<Arc<AuthState>, StoreError> {
        Ok(self.read()?.auth.clone())
    }

    /// Whether auth is on, without the state lock (the hot read path asks
    /// this first; when it is off, no caller needs checking).
    pub fn auth_enabled(&self) -> bool {
        self.auth_enabled.load(Ordering::Acquire)
    }

    pub fn alarms(&self) -> Result<Vec<rtcd_proto::etcdserverpb::AlarmMember>, StoreError> {
        Ok(self.read()?.alarms.list())
    }

    pub fn lease(&self, id: i64) -> Result<Option<LeaseInfo>, StoreError> {
        Ok(self.read()?.leases.get(id).cloned())
    }

    pub(crate) fn reclaim_table(&self, table: Table) -> Result<(), StoreError> {
        self.engine.reclaim(table)
    }

    /// Bytes the store occupies in its engine.
    /// Bytes of live data (what `size_bytes` would be after compaction).
    pub fn size_in_use_bytes(&self) -> u64 {
        self.engine.live_bytes()
    }

    /// How long applied batches took to reach the engine.
    pub fn commit_durations(&self) -> &Histogram {
        &self.commits
    }

    /// Keys the index holds: live ones and deleted ones whose history is
    /// not compacted yet, as etcd's index counts them.
    pub fn key_count(&self) -> usize {
        self.read().map(|state| state.index.key_count()).unwrap_or(0)
    }

    /// What compactions cost so far.
    pub fn compaction_stats(&self) -> &CompactionStats {
        self.deleter.stats()
    }

    /// How long requests took to apply, by operation and outcome.
    pub fn apply_times(&self) -> &ApplyTimes {
        &self.apply_times
    }

    pub fn size_bytes(&self) -> u64 {
        self.engine.size_bytes()
    }

    /// About how many key revisions the store holds: most of what a
    /// snapshot's dump is made of.
    pub fn estimated_revisions(&self) -> u64 {
        self.engine.estimated_entries(Table::Kv)
    }
}

fn read_i64(engine: &dyn Engine, key: &[u8]) -> Result<Option<i64>, StoreError> {
    engine
        .get(Table::Meta, key)?
        .map(|raw| {
            raw.as_slice()
                .try_into()
                .map(i64::from_be_bytes)
                .map_err(|_| StoreError::Corrupt(format!("meta {:?}", String::from_utf8_lossy(key))))
        })
        .transpose()
}

/// Records below the compacted revision that a compaction made unreachable
/// but a crash kept on disk (deletions are not durable: `compaction`):
/// forgotten by the index, returned for deleting.
fn left_by_a_crash(state: &mut State) -> Vec<Vec<u8>> {
    state.index.compact(state.compacted)
}

/// Rebuilds the in-memory state from disk: bookkeeping from `meta`, the key
/// index by replaying `kv` in revision order, leases and their keys.
fn load_state(engine: &dyn Engine) -> Result<State, StoreError> {
    let rev = read_i64(engine, meta::REVISION)?.unwrap_or(1);
    let compacted = read_i64(engine, meta::COMPACTED)?.unwrap_or(-1);
    let applied = engine
        .get(Table::Meta, meta::APPLIED)?
        .map(|raw| AppliedMark::decode(&raw))
        .transpose()?
        .unwrap_or_default();

    let mut index = KeyIndex::default();
    // The lease each live key holds now, to re-attach keys to leases.
    let mut key_leases: HashMap<Bytes, i64> = HashMap::new();
    for entry in engine.scan(Table::Kv, &[], None) {
        let (raw_key, raw_value) = entry?;
        let (revision, tombstone) = Revision::decode(&raw_key)?;
        if revision.main > rev {
            return Err(StoreError::Corrupt(format!("record {revision:?} after revision {rev}")));
        }
        let kv = KeyValue::decode(raw_value.as_slice())
            .map_err(|e| StoreError::Corrupt(format!("record {revision:?}: {e}")))?;
        let change = if tombstone {
            key_leases.remove(&kv.key);
            KeyRev { rev: revision, create: 0, version: 0 }
        } else {
            key_leases.insert(kv.key.clone(), kv.lease);
            KeyRev { rev: revision, create: kv.create_revision, version: kv.version }
        };
        index.restore(kv.key, change);
    }

    let mut leases = Leases::default();
    for entry in engine.scan(Table::Lease, &[], None) {
        let (key, value) = entry?;
        leases.insert(LeaseInfo::decode(&key, &value)?);
    }
    for (key, lease) in key_leases {
        leases.reattach(&key, 0, lease);
    }
    let alarms = Alarms::load(engine)?;
    let auth = Arc::new(AuthState::load(engine)?);
    Ok(State { index, leases, rev, compacted, applied, alarms, auth, poisoned: false })
}
