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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

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
    /// Bumped when the store's contents are replaced: queued jobs of an
    /// older generation are dropped, not run against the new contents.
    generation: AtomicU64,
    stop: AtomicBool,
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

/// The deleting thread of one store; stopped (and joined) when dropped.
pub(crate) struct Deleter {
    jobs: Option<mpsc::Sender<Job>>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Deleter {
    pub(crate) fn start(engine: Arc<dyn Engine>) -> Deleter {
        let (jobs, queued) = mpsc::channel::<Job>();
        let shared = Arc::new(Shared::default());
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("compaction".into())
                .spawn(move || run(engine.as_ref(), &queued, &shared))
                .ok()
        };
        // Without a thread (none could be spawned), records stay until the
        // next open finds them.
        Deleter { jobs: thread.as_ref().map(|_| jobs), shared, thread }
    }

    /// Deletes `keys` from the `kv` table in the background.
    pub(crate) fn schedule(&self, keys: Vec<Vec<u8>>) {
        let Some(jobs) = &self.jobs else { return };
        if keys.is_empty() {
            return;
        }
        let records = keys.len();
        *self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()) += records;
        let generation = self.shared.generation.load(Ordering::SeqCst);
        if jobs.send(Job { keys, generation }).is_err() {
            self.shared.done(records);
        }
    }

    /// Returns once every record scheduled so far is deleted (or dropped).
    pub(crate) fn wait_idle(&self) {
        let mut pending = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        while *pending > 0 && self.jobs.is_some() {
            pending = self.shared.idle.wait(pending).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Drops what is scheduled: the contents it was computed from are gone.
    pub(crate) fn cancel(&self) {
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
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

fn run(engine: &dyn Engine, queued: &mpsc::Receiver<Job>, shared: &Shared) {
    while let Ok(job) = queued.recv() {
        let mut left = job.keys.len();
        for chunk in job.keys.chunks(CHUNK) {
            let current = job.generation == shared.generation.load(Ordering::SeqCst);
            if !current || shared.stop.load(Ordering::SeqCst) {
                break;
            }
            let mut batch = WriteBatch::default();
            for key in chunk {
                batch.delete(Table::Kv, key.as_slice());
            }
            // A failed write leaves records the next open deletes.
            if engine.write(batch, false).is_err() {
                break;
            }
            left -= chunk.len();
            shared.done(chunk.len());
            if left > 0 {
                std::thread::sleep(PAUSE);
            }
        }
        shared.done(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineSnapshot, EntryIter, MemEngine};
    use crate::error::StoreError;
    use std::sync::atomic::AtomicUsize;

    /// A memory engine that counts its writes and their sizes.
    #[derive(Default)]
    struct Counting {
        inner: MemEngine,
        writes: AtomicUsize,
        largest: AtomicUsize,
        /// Held by a test to stop writes midway.
        gate: Mutex<()>,
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
        let deleter = Deleter::start(engine.clone());
        let gate = engine.gate.lock().unwrap();
        deleter.schedule(keys[..5].to_vec());
        // The thread is inside its first write (held at the gate)...
        while engine.writes.load(Ordering::SeqCst) < 2 {
            std::thread::yield_now();
        }
        // ...when more is queued, then the contents are replaced.
        deleter.schedule(keys[5..].to_vec());
        deleter.cancel();
        drop(gate);
        deleter.wait_idle();
        let left: Vec<Vec<u8>> = engine.scan(Table::Kv, &[], None).map(|e| e.unwrap().0).collect();
        assert_eq!(left, keys[5..].to_vec(), "the write under way finished, the queued job was dropped");
    }
}
