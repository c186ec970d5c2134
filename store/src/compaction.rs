//! Physical compaction: deleting the records a compaction left unreachable,
//! on a thread of its own and in chunks. A compaction is applied with its
//! log entry (the key index forgets the revisions, the compacted revision
//! is persisted), and from then on nothing reads those records; deleting
//! them in that same batch made a compaction of a million revisions one
//! batch of a million deletes, holding up every write behind it.
//!
//! Deletions are not made durable: records a crash leaves behind are found
//! when the store opens (the rebuilt index is compacted again) and deleted
//! then. A physical compaction (`physical: true`) waits for its deletions,
//! as etcd's does.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::compaction_stats::CompactionStats;
use crate::engine::{Engine, Table, WriteBatch};

/// Records deleted per engine write: small enough that a write waiting
/// behind one chunk waits milliseconds.
pub(crate) const CHUNK: usize = 10_000;

/// The pause between two chunks, leaving the cores and the engine to the
/// writes and reads being served meanwhile (etcd pauses between its
/// compaction batches too).
const PAUSE: Duration = Duration::from_millis(10);

struct Job {
    /// Encoded record keys of the `kv` table.
    keys: Vec<Vec<u8>>,
    generation: u64,
}

/// What the thread and the store share.
#[derive(Default)]
struct Shared {
    /// Records scheduled and not yet deleted (or dropped).
    pending: Mutex<usize>,
    idle: Condvar,
    /// Bumped when the store's contents are replaced: jobs of an older
    /// generation are dropped, not run against the new contents.
    generation: AtomicU64,
    /// Held while a chunk is checked and written, so that once `cancel`
    /// returns no chunk of an older generation is written.
    writing: Mutex<()>,
    /// Callers in `wait_idle`: while any waits, chunks follow each other
    /// without the pause.
    waiting: AtomicUsize,
    stop: AtomicBool,
    /// The thread has ended (stopped, or panicked): nothing more will be
    /// deleted in the background.
    ended: AtomicBool,
    /// What the deletions cost, for `/metrics`.
    stats: CompactionStats,
}

impl Shared {
    fn done(&self, records: usize) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        *pending = pending.saturating_sub(records);
        if *pending == 0 {
            self.idle.notify_all();
        }
    }
}

/// Marks the thread ended however it ends, so that no one waits for it.
struct Ending<'a>(&'a Shared);

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        self.0.ended.store(true, Ordering::SeqCst);
        let mut pending = self.0.pending.lock().unwrap_or_else(|e| e.into_inner());
        *pending = 0;
        self.0.idle.notify_all();
    }
}

/// The deleting thread of one store; stopped (and joined) when dropped.
pub(crate) struct Deleter {
    engine: Arc<dyn Engine>,
    jobs: Option<mpsc::Sender<Job>>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Deleter {
    pub(crate) fn start(engine: Arc<dyn Engine>) -> Deleter {
        let (jobs, queued) = mpsc::channel::<Job>();
        let shared = Arc::new(Shared::default());
        let thread = {
            let (engine, shared) = (engine.clone(), shared.clone());
            std::thread::Builder::new()
                .name("compaction".into())
                .spawn(move || {
                    let _ending = Ending(&shared);
                    while let Ok(job) = queued.recv() {
                        delete(engine.as_ref(), job, &shared);
                    }
                })
                .ok()
        };
        // Without a thread (none could be spawned) deletions are made as
        // they are scheduled.
        Deleter { engine, jobs: thread.as_ref().map(|_| jobs), shared, thread }
    }

    /// Deletes `keys` from the `kv` table in the background.
    pub(crate) fn schedule(&self, keys: Vec<Vec<u8>>) {
        if keys.is_empty() {
            return;
        }
        let records = keys.len();
        *self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()) += records;
        let job = Job { keys, generation: self.shared.generation.load(Ordering::SeqCst) };
        let job = match &self.jobs {
            Some(jobs) if !self.shared.ended.load(Ordering::SeqCst) => match jobs.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            _ => job,
        };
        delete(self.engine.as_ref(), job, &self.shared);
    }

    /// Returns once every record scheduled so far is deleted (or dropped).
    pub(crate) fn wait_idle(&self) {
        self.shared.waiting.fetch_add(1, Ordering::SeqCst);
        let mut pending = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        while *pending > 0 && !self.shared.ended.load(Ordering::SeqCst) {
            pending = self.shared.idle.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
        drop(pending);
        self.shared.waiting.fetch_sub(1, Ordering::SeqCst);
    }

    /// What compactions cost so far.
    pub(crate) fn stats(&self) -> &CompactionStats {
        &self.shared.stats
    }

    /// Drops what is scheduled: the contents it was computed from are being
    /// replaced. A chunk being written finishes first.
    pub(crate) fn cancel(&self) {
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        drop(self.shared.writing.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

impl Drop for Deleter {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Deletes `job`'s records a chunk at a time, pausing between chunks unless
/// someone waits; stops at a cancel, at a stop or at a failed write (the
/// records left are deleted when the store next opens).
fn delete(engine: &dyn Engine, job: Job, shared: &Shared) {
    let started = Instant::now();
    let mut left = job.keys.len();
    for chunk in job.keys.chunks(CHUNK) {
        {
            let _writing = shared.writing.lock().unwrap_or_else(|e| e.into_inner());
            let current = job.generation == shared.generation.load(Ordering::SeqCst);
            if !current || shared.stop.load(Ordering::SeqCst) {
                break;
            }
            let mut batch = WriteBatch::default();
            for key in chunk {
                batch.delete(Table::Kv, key.as_slice());
            }
            let writing = Instant::now();
            if let Err(e) = engine.write(batch, false) {
                tracing::warn!(error = %e, records = left, "compaction: deleting records failed; the next start deletes them");
                break;
            }
            shared.stats.chunk_deleted(chunk.len(), writing.elapsed());
        }
        left -= chunk.len();
        shared.done(chunk.len());
        if left > 0 && shared.waiting.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(PAUSE);
        }
    }
    if left == 0 {
        shared.stats.compaction_done(started.elapsed());
    }
    shared.done(left);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineSnapshot, EntryIter, MemEngine};
    use crate::error::StoreError;

    /// A memory engine that counts its writes and their sizes.
    #[derive(Default)]
    struct Counting {
        inner: MemEngine,
        writes: AtomicUsize,
        largest: AtomicUsize,
        /// Held by a test to stop writes midway.
        gate: Mutex<()>,
        /// Writes panic while set.
        panic: AtomicBool,
    }

    impl Engine for Counting {
        fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
            self.inner.get(table, key)
        }
        fn scan<'a>(&'a self, table: Table, from: &[u8], to: Option<&[u8]>) -> EntryIter<'a> {
            self.inner.scan(table, from, to)
        }
        fn write(&self, batch: WriteBatch, sync: bool) -> Result<(), StoreError> {
            self.writes.fetch_add(1, Ordering::SeqCst);
            self.largest.fetch_max(batch.len(), Ordering::SeqCst);
            let _open = self.gate.lock().unwrap_or_else(|e| e.into_inner());
            assert!(!self.panic.load(Ordering::SeqCst), "the engine fails");
            self.inner.write(batch, sync)
        }
        fn snapshot(&self) -> Box<dyn EngineSnapshot + '_> {
            self.inner.snapshot()
        }
        fn reclaim(&self, table: Table) -> Result<(), StoreError> {
            self.inner.reclaim(table)
        }
        fn size_bytes(&self) -> u64 {
            self.inner.size_bytes()
        }
        fn live_bytes(&self) -> u64 {
            self.inner.live_bytes()
        }
        fn estimated_entries(&self, table: Table) -> u64 {
            self.inner.estimated_entries(table)
        }
    }

    fn filled(engine: &Counting, n: usize) -> Vec<Vec<u8>> {
        let keys: Vec<Vec<u8>> = (0..n as u64).map(|i| i.to_be_bytes().to_vec()).collect();
        let mut batch = WriteBatch::default();
        for key in &keys {
            batch.put(Table::Kv, key.clone(), b"v".to_vec());
        }
        engine.write(batch, false).unwrap();
        keys
    }

    #[test]
    fn each_chunk_and_each_whole_compaction_is_measured() {
        let engine = Arc::new(Counting::default());
        let keys = filled(&engine, CHUNK + 5);
        let deleter = Deleter::start(engine.clone());
        deleter.schedule(keys);
        deleter.wait_idle();
        let stats = deleter.stats();
        assert_eq!(stats.records_deleted(), (CHUNK + 5) as u64);
        assert_eq!(stats.db_pauses().snapshot().1, 2, "two chunks");
        assert_eq!(stats.totals().snapshot().1, 1, "one compaction");
        assert!(stats.last_finished() > 1_700_000_000, "a time since the epoch");
    }

    #[test]
    fn records_are_deleted_in_chunks_of_at_most_chunk() {
        let engine = Arc::new(Counting::default());
        let keys = filled(&engine, 2 * CHUNK + 1);
        let deleter = Deleter::start(engine.clone());
        deleter.schedule(keys[..CHUNK + 1].to_vec());
        deleter.schedule(keys[CHUNK + 1..].to_vec());
        deleter.wait_idle();
        assert_eq!(engine.scan(Table::Kv, &[], None).count(), 0, "every record deleted");
        assert_eq!(engine.writes.load(Ordering::SeqCst), 1 + 3, "the fill, then three chunks");
        assert_eq!(engine.largest.load(Ordering::SeqCst), 2 * CHUNK + 1, "the fill was the only large write");
    }

    #[test]
    fn work_queued_before_a_cancel_is_dropped() {
        let engine = Arc::new(Counting::default());
        let keys = filled(&engine, 10);
        let deleter = Arc::new(Deleter::start(engine.clone()));
        let gate = engine.gate.lock().unwrap();
        deleter.schedule(keys[..5].to_vec());
        // The thread is inside its first write (held at the gate)...
        while engine.writes.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        // ...when more is queued, then the contents are replaced: the
        // cancel waits for the write under way.
        deleter.schedule(keys[5..].to_vec());
        let cancelling = {
            let deleter = deleter.clone();
            std::thread::spawn(move || deleter.cancel())
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!cancelling.is_finished(), "cancel waits for the chunk being written");
        drop(gate);
        cancelling.join().unwrap();
        deleter.wait_idle();
        let left: Vec<Vec<u8>> = engine.scan(Table::Kv, &[], None).map(|e| e.unwrap().0).collect();
        assert_eq!(left, keys[5..].to_vec(), "the write under way finished, the queued job was dropped");
    }

    /// A thread that died (here: its engine panicked) is waited for by no
    /// one, and later deletions are made by whoever schedules them.
    #[test]
    fn a_dead_thread_is_not_waited_for() {
        let engine = Arc::new(Counting::default());
        let keys = filled(&engine, 3);
        let deleter = Deleter::start(engine.clone());
        engine.panic.store(true, Ordering::SeqCst);
        deleter.schedule(keys[..1].to_vec());
        deleter.wait_idle();
        assert!(deleter.shared.ended.load(Ordering::SeqCst));
        engine.panic.store(false, Ordering::SeqCst);
        deleter.schedule(keys[1..].to_vec());
        let left: Vec<Vec<u8>> = engine.scan(Table::Kv, &[], None).map(|e| e.unwrap().0).collect();
        assert_eq!(
            left,
            keys[..1].to_vec(),
            "the first job died with the thread, the second was done at once"
        );
    }
}
