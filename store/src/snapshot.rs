//! Whole-store snapshots: what `etcdctl snapshot save` downloads and
//! `rtcd snapshot restore` turns back into a data directory.
//!
//! The file is a logical dump, independent of the engine's files:
//!
//! ```text
//! "RTCDSNAP" | format version (u32 BE)
//! records:   table tag (u8) | key length (u32 BE) | key | value length (u32 BE) | value
//! end:       tag 0xFF
//! zero padding to a multiple of 512 bytes
//! SHA-256 of everything above (32 bytes)
//! ```
//!
//! etcdctl accepts a downloaded snapshot only if its size is 32 more than a
//! multiple of 512 and treats the last 32 bytes as a SHA-256 of the rest;
//! the padding and trailer satisfy exactly that rule.

use std::io::{BufReader, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::engine::Table;
// Restoring builds a new RocksDB store; without the engine there is nothing to restore into.
#[cfg(feature = "rocksdb")]
use crate::engine::{Engine, RocksEngine, WriteBatch};
use crate::error::StoreError;
use crate::state::AppliedMark;
#[cfg(feature = "rocksdb")]
use crate::state::meta;
use crate::store::Store;

const MAGIC: &[u8; 8] = b"RTCDSNAP";
const FORMAT_VERSION: u32 = 1;
const END: u8 = 0xff;
const BLOCK: u64 = 512;
const DIGEST_LEN: u64 = 32;
/// Records per engine write while restoring.
#[cfg(feature = "rocksdb")]
const RESTORE_BATCH: usize = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("snapshot checksum mismatch: the file is damaged or incomplete")]
    Checksum,
    #[error("not an rtcd snapshot: {0}")]
    Format(String),
    #[error("data dir {0} already exists")]
    Exists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A snapshot just written: its size and the applied mark it contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub size: u64,
    pub applied: AppliedMark,
}

/// What a restore found in the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    pub records: u64,
    pub revision: i64,
}

fn tag(table: Table) -> u8 {
    match table {
        Table::Kv => 0,
        Table::Meta => 1,
        Table::Lease => 2,
        Table::Auth => 3,
    }
}

fn table_of(tag: u8) -> Option<Table> {
    Table::ALL.into_iter().find(|t| self::tag(*t) == tag)
}

/// A writer that hashes and counts what passes through it.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
    len: u64,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.len += bytes.len() as u64;
        self.inner.write_all(bytes)
    }
}

impl Store {
    /// Writes a consistent snapshot of every table, as they are when the
    /// call starts, to `out` and returns its size and the applied mark it
    /// holds. Writes go on meanwhile: the dump reads the engine's
    /// point-in-time snapshot, not the live tables under the store's lock.
    pub fn write_snapshot(&self, out: impl Write) -> Result<Written, SnapshotError> {
        let (tables, applied) = self.engine_snapshot()?;
        let mut w = Hashing { inner: out, hash: Sha256::new(), len: 0 };
        w.put(MAGIC)?;
        w.put(&FORMAT_VERSION.to_be_bytes())?;
        for table in Table::ALL {
            for entry in tables.scan(table, &[], None) {
                let (key, value) = entry?;
                write_record(&mut w, table, &key, &value)?;
            }
        }
        w.put(&[END])?;
        let padding = (BLOCK - w.len % BLOCK) % BLOCK;
        w.put(&vec![0; padding as usize])?;
        let digest = w.hash.clone().finalize();
        w.inner.write_all(&digest)?;
        w.inner.flush()?;
        Ok(Written { size: w.len + DIGEST_LEN, applied })
    }

    /// Replaces this store's whole contents with the snapshot in `file`
    /// (a member installing its leader's snapshot), keeping the snapshot's
    /// applied mark. The checksum is verified before anything changes.
    pub fn install_snapshot(&self, file: &Path) -> Result<AppliedMark, SnapshotError> {
        let mut input = open_verified(file)?;
        let records = std::iter::from_fn(move || read_record(&mut input).transpose());
        self.replace_contents(records)
    }
}

fn write_record<W: Write>(
    w: &mut Hashing<W>,
    table: Table,
    key: &[u8],
    value: &[u8],
) -> Result<(), SnapshotError> {
    w.put(&[tag(table)])?;
    for field in [key, value] {
        let len = u32::try_from(field.len()).map_err(|_| SnapshotError::Format("record too large".into()))?;
        w.put(&len.to_be_bytes())?;
        w.put(field)?;
    }
    Ok(())
}

/// Checks `file`'s trailing SHA-256, then builds a new store in `dir` from
/// it. The restored store keeps the revision and compaction point but starts
/// with no applied log position: it is the first state of a new cluster.
#[cfg(feature = "rocksdb")]
pub fn restore_snapshot(file: &Path, dir: &Path) -> Result<Restored, SnapshotError> {
    if dir.exists() {
        return Err(SnapshotError::Exists(dir.display().to_string()));
    }
    let mut input = open_verified(file)?;
    let engine = RocksEngine::open(dir)?;
    let mut batch = WriteBatch::default();
    let mut records = 0;
    while let Some((table, key, value)) = read_record(&mut input)? {
        records += 1;
        // The applied position belongs to the old cluster's log.
        if table == Table::Meta && key == meta::APPLIED {
            continue;
        }
        batch.put(table, key, value);
        if batch.len() >= RESTORE_BATCH {
            engine.write(std::mem::take(&mut batch), false)?;
        }
    }
    engine.write(batch, true)?;
    drop(engine);
    let store = Store::open(dir, Default::default())?;
    Ok(Restored { records, revision: store.revision()? })
}

/// The snapshot's records, positioned after the header, once the checksum
/// and header check out.
fn open_verified(file: &Path) -> Result<std::io::Take<BufReader<std::fs::File>>, SnapshotError> {
    let body_len = verify_checksum(file)?;
    let mut input = BufReader::new(std::fs::File::open(file)?).take(body_len);
    let mut header = [0u8; 12];
    input.read_exact(&mut header).map_err(|_| SnapshotError::Format("too short".into()))?;
    if &header[..8] != MAGIC {
        return Err(SnapshotError::Format("bad magic (an etcd bolt snapshot?)".into()));
    }
    if header[8..] != FORMAT_VERSION.to_be_bytes() {
        return Err(SnapshotError::Format("unknown format version".into()));
    }
    Ok(input)
}

/// The length of the snapshot without its digest, once the digest matches.
fn verify_checksum(file: &Path) -> Result<u64, SnapshotError> {
    let len = std::fs::metadata(file)?.len();
    if len < DIGEST_LEN || len % BLOCK != DIGEST_LEN {
        return Err(SnapshotError::Format(format!("size {len} is not a checksummed snapshot")));
    }
    let body_len = len - DIGEST_LEN;
    let mut input = BufReader::new(std::fs::File::open(file)?);
    let mut hash = Sha256::new();
    std::io::copy(&mut (&mut input).take(body_len), &mut HashWriter(&mut hash))?;
    let mut digest = [0u8; DIGEST_LEN as usize];
    input.read_exact(&mut digest)?;
    if hash.finalize().as_slice() != digest {
        return Err(SnapshotError::Checksum);
    }
    Ok(body_len)
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

type Record = (Table, Vec<u8>, Vec<u8>);

fn read_record(input: &mut impl Read) -> Result<Option<Record>, SnapshotError> {
    let truncated = |_| SnapshotError::Format("truncated record".into());
    let mut t = [0u8; 1];
    input.read_exact(&mut t).map_err(truncated)?;
    if t[0] == END {
        return Ok(None);
    }
    let table = table_of(t[0]).ok_or_else(|| SnapshotError::Format(format!("unknown table {}", t[0])))?;
    let mut fields = [Vec::new(), Vec::new()];
    for field in &mut fields {
        let mut len = [0u8; 4];
        input.read_exact(&mut len).map_err(truncated)?;
        let len = u32::from_be_bytes(len) as usize;
        // Read through `take` so a corrupt length cannot allocate gigabytes.
        input.take(len as u64).read_to_end(field)?;
        if field.len() != len {
            return Err(SnapshotError::Format("truncated record".into()));
        }
    }
    let [key, value] = fields;
    Ok(Some((table, key, value)))
}
