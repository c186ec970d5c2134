//! The Raft log on RocksDB, with group commit.
//!
//! `append` writes entries to RocksDB without syncing, so they are readable
//! at once. Who then syncs the WAL depends on who proposed the entries:
//!
//! * This member's own entries (it leads) go to a syncer thread, so the
//!   leader replicates them while its fsync runs. The syncer takes every
//!   callback queued so far, syncs the WAL once, and completes them all:
//!   concurrent proposals share one fsync.
//! * Another leader's entries are synced right here when the syncer has
//!   nothing queued: a follower answers the leader only once they are
//!   durable, so the fsync is on the write's path either way, and waking the
//!   syncer thread and then this member's Raft task again cost 0.1-0.4 ms
//!   on an idle machine. Behind queued syncs they queue too, so callbacks
//!   complete in order.
//!
//! Under the `fault::leader_lag` hook (tests only), a leader's own appends
//! skip the WAL (memtable only: readable, lost at a SIGKILL); once the delay
//! has passed the syncer flushes the memtable (what it holds then, so a
//! truncation meanwhile stays), then syncs.
//!
//! Votes, truncations and purges are synced before they return (RocksDB
//! keeps writes in order, so a synced write also covers every append before
//! it).
//!
//! Column families: `log` (big-endian index -> entry) and `meta` (vote,
//! last purged log id). Values are postcard-encoded.
//!
//! The committed log id is not saved (openraft's default): the state
//! machine stores its applied log id in the same write as the applied
//! batch, so a restart resumes from there without it, and saving it would
//! cost one more write on every commit.

use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::wal_stats::WalStats;

use openraft::storage::{IOFlushed, LogState, RaftLogReader, RaftLogStorage};
use rocksdb::{ColumnFamilyDescriptor, DB, Direction, IteratorMode, Options, WriteBatch, WriteOptions};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::types::{Entry, LogId, TypeConfig, Vote};

const LOG: &str = "log";
const META: &str = "meta";
const VOTE: &[u8] = b"vote";
/// Memtables of the log's column families together.
const LOG_WRITE_BUFFERS_BYTES: usize = 16 << 20;
const PURGED: &[u8] = b"last_purged";

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn encode<T: Serialize>(value: &T) -> io::Result<Vec<u8>> {
    postcard::to_stdvec(value).map_err(io_err)
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> io::Result<T> {
    postcard::from_bytes(bytes).map_err(io_err)
}

fn index_key(index: u64) -> [u8; 8] {
    index.to_be_bytes()
}

/// The RocksDB handle shared by the store, its readers and the syncer.
#[derive(Debug)]
struct Log {
    db: DB,
    /// WAL syncs done for appends (each may cover many appends).
    append_syncs: AtomicU64,
    /// How long writes and syncs took, and the bytes written.
    stats: Arc<WalStats>,
}

impl Log {
    fn cf(&self, name: &str) -> io::Result<&rocksdb::ColumnFamily> {
        self.db.cf_handle(name).ok_or_else(|| io_err(format!("column family {name} missing")))
    }

    fn get_meta<T: DeserializeOwned>(&self, key: &[u8]) -> io::Result<Option<T>> {
        self.db.get_cf(self.cf(META)?, key).map_err(io_err)?.map(|raw| decode(&raw)).transpose()
    }

    /// Makes every write so far durable.
    fn sync_appends(&self) -> io::Result<()> {
        self.append_syncs.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let synced = self.db.flush_wal(true).map_err(io_err);
        self.stats.synced(started.elapsed());
        synced
    }

    fn write(&self, batch: WriteBatch, sync: bool) -> io::Result<()> {
        let mut opts = WriteOptions::default();
        opts.set_sync(sync);
        self.db.write_opt(batch, &opts).map_err(io_err)
    }

    /// Only under the fault hook: a write that a SIGKILL loses...
    fn write_outside_wal(&self, batch: WriteBatch) -> io::Result<()> {
        let mut opts = WriteOptions::default();
        opts.disable_wal(true);
        self.db.write_opt(batch, &opts).map_err(io_err)
    }

    /// ...until the log's memtable is flushed.
    fn flush_memtable(&self) -> io::Result<()> {
        self.db.flush_cf(self.cf(LOG)?).map_err(io_err)
    }

    fn last_entry(&self) -> io::Result<Option<Entry>> {
        let mut it = self.db.iterator_cf(self.cf(LOG)?, IteratorMode::End);
        it.next().transpose().map_err(io_err)?.map(|(_, v)| decode(&v)).transpose()
    }

    fn entries(&self, from: u64, to_exclusive: u64) -> io::Result<Vec<Entry>> {
        let mut out = Vec::new();
        if from >= to_exclusive {
            return Ok(out);
        }
        let start = index_key(from);
        for item in self.db.iterator_cf(self.cf(LOG)?, IteratorMode::From(&start, Direction::Forward)) {
            let (key, value) = item.map_err(io_err)?;
            let index = u64::from_be_bytes(key.as_ref().try_into().map_err(io_err)?);
            if index >= to_exclusive {
                break;
            }
            out.push(decode(&value)?);
        }
        Ok(out)
    }
}

/// An append handed to the syncer: made durable, then its callback runs.
struct Pending {
    callback: IOFlushed<TypeConfig>,
    /// Under the fault hook only: the append was kept out of the WAL, and
    /// may be made durable from then on.
    withheld_until: Option<Instant>,
}

/// Appended-but-not-yet-durable appends go here.
type SyncQueue = mpsc::Sender<Pending>;

#[derive(Debug, Clone)]
pub struct RocksLogStore {
    log: Arc<Log>,
    syncer: SyncQueue,
    /// Callbacks handed to the syncer and not yet completed; shared with it.
    queued: Arc<AtomicUsize>,
    /// This member's Raft ID: entries whose leader it is were proposed here.
    id: u64,
    /// `fault::leader_lag`: how long this member's own appends stay off its
    /// disk (tests only).
    own_entries_late: Option<Duration>,
}

impl RocksLogStore {
    /// Opens (or creates) the log of member `id` in `dir` and starts its
    /// syncer thread.
    pub fn open(dir: impl AsRef<Path>, id: u64) -> io::Result<Self> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        // Entries live here only until the next snapshot purges them: small
        // memtables (RocksDB's default is 64 MiB per column family) keep the
        // log's memory bounded, and compressing them would cost CPU on every
        // append for data that is soon deleted.
        opts.set_db_write_buffer_size(LOG_WRITE_BUFFERS_BYTES);
        // `meta` changes rarely; without a bound its memtable would keep
        // every WAL file since its last flush.
        opts.set_max_total_wal_size(LOG_WRITE_BUFFERS_BYTES as u64);
        let cfs = [LOG, META].map(|name| {
            let mut cf = Options::default();
            cf.set_write_buffer_size(LOG_WRITE_BUFFERS_BYTES / 2);
            cf.set_max_write_buffer_number(2);
            ColumnFamilyDescriptor::new(name, cf)
        });
        let db = DB::open_cf_descriptors(&opts, dir, cfs).map_err(io_err)?;
        let log = Arc::new(Log { db, append_syncs: AtomicU64::new(0), stats: Arc::default() });
        let (syncer, queue) = mpsc::channel();
        let queued = Arc::new(AtomicUsize::new(0));
        // The syncer holds the log only while syncing, so dropping the store
        // closes RocksDB (and the closed channel ends the thread).
        let (weak_log, counter) = (Arc::downgrade(&log), queued.clone());
        std::thread::Builder::new()
            .name("rtcd-raft-log-sync".into())
            .spawn(move || sync_loop(&weak_log, &queue, &counter))?;
        Ok(Self { log, syncer, queued, id, own_entries_late: None })
    }

    /// Under the `fault::leader_lag` hook: this member's own appends reach
    /// its disk `delay` late.
    pub fn with_own_entries_late(mut self, delay: Option<Duration>) -> Self {
        self.own_entries_late = delay;
        self
    }

    /// What the log's writes and syncs cost.
    pub fn wal_stats(&self) -> Arc<WalStats> {
        self.log.stats.clone()
    }

    /// How many WAL syncs made appends durable so far (fewer than appends
    /// when group commit works).
    pub fn append_syncs(&self) -> u64 {
        self.log.append_syncs.load(Ordering::Relaxed)
    }
}

/// Makes appends durable in groups: one WAL sync for every callback that
/// queued up while the previous sync ran. `queued` counts down only after
/// the callbacks completed, so an append synced in place never completes
/// ahead of one queued before it.
fn sync_loop(log: &std::sync::Weak<Log>, queue: &mpsc::Receiver<Pending>, queued: &AtomicUsize) {
    while let Ok(first) = queue.recv() {
        let mut group = vec![first];
        group.extend(queue.try_iter());
        let outcome = match log.upgrade() {
            Some(log) => sync_group(&log, &group).map_err(|e| e.to_string()),
            None => Err("the log was closed".to_string()),
        };
        let count = group.len();
        for pending in group {
            pending.callback.io_completed(outcome.clone().map_err(io::Error::other));
        }
        queued.fetch_sub(count, Ordering::Release);
    }
}

/// One WAL sync for the group; first, when the fault hook kept appends of
/// it out of the WAL, a memtable flush once their time has come.
fn sync_group(log: &Log, group: &[Pending]) -> io::Result<()> {
    if let Some(until) = group.iter().filter_map(|p| p.withheld_until).max() {
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
        log.flush_memtable()?;
    }
    log.sync_appends()
}

/// Reads the log for replication; cheap to clone.
#[derive(Debug, Clone)]
pub struct RocksLogReader {
    log: Arc<Log>,
}

impl RaftLogReader<TypeConfig> for RocksLogReader {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        let from = match range.start_bound() {
            Bound::Included(i) => *i,
            Bound::Excluded(i) => i.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let to = match range.end_bound() {
            Bound::Included(i) => i.saturating_add(1),
            Bound::Excluded(i) => *i,
            Bound::Unbounded => u64::MAX,
        };
        self.log.entries(from, to)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        self.log.get_meta(VOTE)
    }
}

impl RaftLogReader<TypeConfig> for RocksLogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, io::Error> {
        RocksLogReader { log: self.log.clone() }.try_get_log_entries(range).await
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        self.log.get_meta(VOTE)
    }
}

impl RaftLogStorage<TypeConfig> for RocksLogStore {
    type LogReader = RocksLogReader;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        let last_purged_log_id: Option<LogId> = self.log.get_meta(PURGED)?;
        let last_log_id = match self.log.last_entry()? {
            Some(entry) => Some(entry.log_id),
            None => last_purged_log_id,
        };
        Ok(LogState { last_purged_log_id, last_log_id })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        RocksLogReader { log: self.log.clone() }
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.log.cf(META)?, VOTE, encode(vote)?);
        self.log.write(batch, true)
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<TypeConfig>) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let cf = self.log.cf(LOG)?;
        let mut batch = WriteBatch::default();
        // Who syncs is a matter of speed only (both paths sync before the
        // callback completes), so the first entry decides for the batch.
        let mut entries = entries.into_iter().peekable();
        let proposed_here =
            entries.peek().is_none_or(|entry| entry.log_id.committed_leader_id().node_id == self.id);
        for entry in entries {
            batch.put_cf(cf, index_key(entry.log_id.index), encode(&entry)?);
        }
        let withheld_until =
            self.own_entries_late.filter(|_| proposed_here).map(|delay| Instant::now() + delay);
        // Readable now; durable once the WAL is synced (see the module doc).
        let (bytes, started) = (batch.size_in_bytes(), Instant::now());
        if withheld_until.is_some() {
            self.log.write_outside_wal(batch)?;
        } else {
            self.log.write(batch, false)?;
        }
        self.log.stats.written(bytes, started.elapsed());
        // `append` calls come one at a time (`&mut self`), so nothing is
        // queued behind this check.
        if !proposed_here && self.queued.load(Ordering::Acquire) == 0 {
            callback.io_completed(self.log.sync_appends());
            return Ok(());
        }
        self.queued.fetch_add(1, Ordering::Release);
        self.syncer.send(Pending { callback, withheld_until }).map_err(|_| io_err("log syncer stopped"))
    }

    async fn truncate_after(&mut self, last_log_id: Option<LogId>) -> Result<(), io::Error> {
        let from = last_log_id.map_or(0, |id| id.index + 1);
        let mut batch = WriteBatch::default();
        batch.delete_range_cf(self.log.cf(LOG)?, index_key(from), index_key(u64::MAX));
        batch.delete_cf(self.log.cf(LOG)?, index_key(u64::MAX));
        self.log.write(batch, true)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), io::Error> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.log.cf(META)?, PURGED, encode(&log_id)?);
        batch.delete_range_cf(self.log.cf(LOG)?, index_key(0), index_key(log_id.index + 1));
        self.log.write(batch, true)
    }
}
