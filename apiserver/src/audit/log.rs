//! The log backend (`--audit-log-path`): one JSON event per line, written
//! by a thread of its own so that a slow disk never holds a request. The
//! queue between them is bounded (kube's buffered backend holds 10,000
//! events): when it is full, or a write fails, the event is dropped,
//! counted in `apiserver_audit_error_total` and logged. Files rotate as
//! kube's (lumberjack's) do: at `--audit-log-maxsize` MB the file is renamed
//! `<name>-<UTC time>.<ext>`, and backups beyond `--audit-log-maxbackup` or
//! older than `--audit-log-maxage` days are removed.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// kube's default audit buffer.
pub const QUEUE: usize = 10_000;

/// How the log rotates (0: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    pub max_bytes: u64,
    pub max_backups: usize,
    pub max_age: Duration,
}

/// What the backend counts (`/metrics`).
#[derive(Debug, Default)]
pub struct Counters {
    pub events: AtomicU64,
    pub errors: AtomicU64,
}

#[derive(Debug)]
pub struct LogBackend {
    queue: SyncSender<Vec<u8>>,
    counters: Arc<Counters>,
    /// When a dropped event was last logged (one warning a second at most).
    last_warning: Mutex<Option<Instant>>,
}

impl LogBackend {
    /// Opens `path` (`-`: standard output) and starts its writer.
    pub fn start(path: &Path, rotation: Rotation, counters: Arc<Counters>) -> io::Result<LogBackend> {
        Self::with_queue(path, rotation, counters, QUEUE)
    }

    pub fn with_queue(
        path: &Path,
        rotation: Rotation,
        counters: Arc<Counters>,
        queue: usize,
    ) -> io::Result<LogBackend> {
        let (tx, rx) = sync_channel::<Vec<u8>>(queue);
        let sink = if path == Path::new("-") {
            Sink::Stdout
        } else {
            Sink::File(RotatingFile::open(path, rotation)?)
        };
        let writer_counters = counters.clone();
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || write_all(rx, sink, &writer_counters))?;
        Ok(LogBackend { queue: tx, counters, last_warning: Mutex::new(None) })
    }

    /// Queues one line; never waits.
    pub fn write(&self, line: Vec<u8>) {
        self.counters.events.fetch_add(1, Ordering::Relaxed);
        let why = match self.queue.try_send(line) {
            Ok(()) => return,
            Err(TrySendError::Full(_)) => "the audit queue is full",
            Err(TrySendError::Disconnected(_)) => "the audit writer has stopped",
        };
        self.dropped(why);
    }

    fn dropped(&self, why: &str) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        let mut last = self.last_warning.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
            *last = Some(Instant::now());
            tracing::warn!(
                why,
                dropped = self.counters.errors.load(Ordering::Relaxed),
                "audit event dropped"
            );
        }
    }
}

enum Sink {
    Stdout,
    File(RotatingFile),
}

fn write_all(rx: Receiver<Vec<u8>>, mut sink: Sink, counters: &Counters) {
    while let Ok(mut line) = rx.recv() {
        line.push(b'\n');
        let written = match &mut sink {
            Sink::Stdout => io::stdout().lock().write_all(&line),
            Sink::File(file) => file.write(&line),
        };
        if let Err(e) = written {
            counters.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(error = %e, "writing an audit event failed; it is dropped");
        }
    }
}

struct RotatingFile {
    path: PathBuf,
    rotation: Rotation,
    file: File,
    size: u64,
}

impl RotatingFile {
    fn open(path: &Path, rotation: Rotation) -> io::Result<RotatingFile> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let size = file.metadata()?.len();
        Ok(RotatingFile { path: path.to_path_buf(), rotation, file, size })
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        let max = self.rotation.max_bytes;
        if max > 0 && self.size > 0 && self.size + line.len() as u64 > max {
            self.rotate()?;
        }
        self.file.write_all(line)?;
        self.size += line.len() as u64;
        Ok(())
    }

    fn rotate(&mut self) -> io::Result<()> {
        let stamp = jiff::Timestamp::now().strftime("%Y-%m-%dT%H-%M-%S%.3f").to_string();
        let backup = self.backup_name(&stamp);
        std::fs::rename(&self.path, &backup)?;
        self.file = OpenOptions::new().create(true).append(true).open(&self.path)?;
        self.size = 0;
        self.remove_old_backups();
        Ok(())
    }

    /// `audit.log` → `audit-<stamp>.log`.
    fn backup_name(&self, stamp: &str) -> PathBuf {
        let (stem, ext) = self.stem_and_ext();
        self.path.with_file_name(format!("{stem}-{stamp}{ext}"))
    }

    fn stem_and_ext(&self) -> (String, String) {
        let stem = self.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let ext = self.path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        (stem, ext)
    }

    /// Backups beyond the count or the age limit, oldest first, go.
    fn remove_old_backups(&self) {
        let (stem, ext) = self.stem_and_ext();
        let prefix = format!("{stem}-");
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut backups: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().map(|n| n.to_string_lossy()).is_some_and(|n| {
                    n.starts_with(&prefix) && n.ends_with(&ext) && n.len() > prefix.len() + ext.len()
                })
            })
            .collect();
        // The stamp sorts as time does.
        backups.sort();
        backups.reverse();
        let now = SystemTime::now();
        for (i, backup) in backups.iter().enumerate() {
            let too_many = self.rotation.max_backups > 0 && i >= self.rotation.max_backups;
            let too_old = !self.rotation.max_age.is_zero()
                && std::fs::metadata(backup)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age > self.rotation.max_age);
            if (too_many || too_old)
                && let Err(e) = std::fs::remove_file(backup)
            {
                tracing::warn!(file = %backup.display(), error = %e, "removing an old audit log failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(path: &Path) -> usize {
        std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
    }

    fn wait_for(mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(Instant::now() < deadline, "the writer never caught up");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn files_rotate_by_size_and_keep_max_backup_backups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let rotation = Rotation { max_bytes: 100, max_backups: 2, max_age: Duration::ZERO };
        let counters = Arc::new(Counters::default());
        let backend = LogBackend::start(&path, rotation, counters.clone()).unwrap();
        for i in 0..20 {
            backend.write(format!("{{\"n\":{i:040}}}").into_bytes());
            // Distinct backup names need distinct milliseconds.
            std::thread::sleep(Duration::from_millis(3));
        }
        let backups =
            || std::fs::read_dir(dir.path()).unwrap().filter(|e| e.as_ref().unwrap().path() != path).count();
        wait_for(|| counters.events.load(Ordering::Relaxed) == 20 && lines(&path) >= 1 && backups() == 2);
        // Each line is 48 bytes: two to a file; the newest two backups kept.
        assert_eq!(lines(&path), 2);
        assert!(std::fs::read_to_string(&path).unwrap().contains(&format!("{:040}", 19)));
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(name == "audit.log" || (name.starts_with("audit-") && name.ends_with(".log")), "{name}");
        }
        assert_eq!(counters.errors.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let dir = tempfile::tempdir().unwrap();
        // A FIFO nobody reads blocks the writer on its first event.
        let fifo = dir.path().join("fifo.log");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let counters = Arc::new(Counters::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let opener = std::thread::spawn({
            let fifo = fifo.clone();
            let counters = counters.clone();
            move || {
                let backend = LogBackend::with_queue(
                    &fifo,
                    Rotation { max_bytes: 0, max_backups: 0, max_age: Duration::ZERO },
                    counters,
                    2,
                );
                tx.send(backend).unwrap();
            }
        });
        // Opening a FIFO for writing waits for a reader: be that reader,
        // then never read.
        let _reader = OpenOptions::new().read(true).open(&fifo).unwrap();
        let backend = rx.recv().unwrap().unwrap();
        opener.join().unwrap();
        // Were writes to wait for the disk, this would never end.
        for _ in 0..100_000 {
            backend.write(vec![b'x'; 1024]);
        }
        assert!(counters.errors.load(Ordering::Relaxed) > 90_000);
        assert_eq!(counters.events.load(Ordering::Relaxed), 100_000);
    }
}
