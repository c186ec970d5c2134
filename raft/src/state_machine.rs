//! The replicated state machine: committed entries applied to the MVCC
//! store.
//!
//! Each `apply` call becomes one store batch (one engine write) that also
//! records the last applied log id and membership, encoded in the store's
//! applied mark — so a restart resumes exactly after the last applied entry
//! and the store needs no fsync of its own (the log is the source of truth).
//! Outcomes go to an [`ApplyListener`]: the member that proposed an entry
//! answers its client from its own apply, like etcd's wait registry.
//!
//! Snapshots are the store's checksummed dump (`rtcd_store` snapshot
//! format) kept as a file in the snapshot directory.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use openraft::storage::{EntryResponder, RaftSnapshotBuilder, RaftStateMachine};
use openraft::{EntryPayload, StoredMembership as Stored};
use rtcd_store::{Applied, AppliedMark, Store, StoreError, WriteRequest};
use serde::{Deserialize, Serialize};

use crate::codec::{self, Decoded};
use crate::types::{LogId, SnapshotFile, SnapshotMeta, StoredMembership, TypeConfig};

/// One applied proposal: who proposed it, what it asked and what happened.
#[derive(Debug)]
pub struct AppliedEntry {
    /// The proposing member's id for it (see `codec`).
    pub proposal: u64,
    pub request: WriteRequest,
    pub outcome: Result<Applied, StoreError>,
}

/// Where applied proposals go, in log order.
pub trait ApplyListener: Send + Sync + 'static {
    fn applied(&self, entries: Vec<AppliedEntry>);
}

/// Nobody is waiting (tests, tools).
impl ApplyListener for () {
    fn applied(&self, _: Vec<AppliedEntry>) {}
}

/// What the store's applied mark carries for Raft.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RaftApplied {
    last_applied: Option<LogId>,
    membership: StoredMembership,
}

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn read_mark(mark: &AppliedMark) -> io::Result<RaftApplied> {
    if mark.context.is_empty() {
        return Ok(RaftApplied::default());
    }
    postcard::from_bytes(&mark.context).map_err(io_err)
}

/// A committed entry this member cannot decode stops the state machine:
/// skipping it would let this member's data differ from every member that
/// applies it, and no later entry may be applied without it. The error makes
/// openraft stop this member's Raft (a fatal storage error), and the server
/// exits with the line below.
fn decode_committed(proposal: &[u8], log_id: &LogId) -> io::Result<Decoded> {
    codec::decode(proposal).map_err(|error| {
        tracing::error!(
            %log_id,
            %error,
            "a committed log entry cannot be decoded by this version; stopping rather than skipping it \
             (run the version that wrote it)"
        );
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("committed entry {log_id} cannot be decoded: {error}"),
        )
    })
}

const CURRENT_SNAPSHOT: &str = "current.snap";
const CURRENT_META: &str = "current.meta";

pub struct StoreStateMachine {
    store: Arc<Store>,
    snapshot_dir: PathBuf,
    listener: Arc<dyn ApplyListener>,
    /// Under the `fault::leader_lag` hook (tests only): this member's id and
    /// how late entries it proposed reach the store.
    own_entries_late: Option<(u64, Duration)>,
}

impl StoreStateMachine {
    pub fn new(
        store: Arc<Store>,
        snapshot_dir: PathBuf,
        listener: Arc<dyn ApplyListener>,
    ) -> io::Result<Self> {
        std::fs::create_dir_all(&snapshot_dir)?;
        Ok(Self { store, snapshot_dir, listener, own_entries_late: None })
    }

    /// Under the `fault::leader_lag` hook: entries member `id` proposed are
    /// applied `delay` late.
    pub fn with_own_entries_late(mut self, id: u64, delay: Option<Duration>) -> Self {
        self.own_entries_late = delay.map(|d| (id, d));
        self
    }
}

/// Builds snapshots off the state machine (openraft runs it in its own task).
pub struct SnapshotBuilder {
    store: Arc<Store>,
    snapshot_dir: PathBuf,
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    type SnapshotData = std::fs::File;

    async fn build_snapshot(&mut self) -> Result<SnapshotFile, io::Error> {
        let store = self.store.clone();
        let dir = self.snapshot_dir.clone();
        tokio::task::spawn_blocking(move || build(&store, &dir)).await.map_err(io_err)?
    }
}

/// Dumps the store next to the current snapshot, then switches to it.
fn build(store: &Store, dir: &Path) -> io::Result<SnapshotFile> {
    let partial = dir.join("building.snap");
    let file = std::fs::File::create(&partial)?;
    let written = store.write_snapshot(io::BufWriter::new(&file)).map_err(io_err)?;
    file.sync_all()?;
    let applied = read_mark(&written.applied)?;
    let meta = SnapshotMeta { last_log_id: applied.last_applied, last_membership: applied.membership };
    std::fs::write(dir.join(CURRENT_META), postcard::to_stdvec(&meta).map_err(io_err)?)?;
    std::fs::rename(&partial, dir.join(CURRENT_SNAPSHOT))?;
    let snapshot = std::fs::File::open(dir.join(CURRENT_SNAPSHOT))?;
    Ok(SnapshotFile { meta, snapshot })
}

impl RaftStateMachine<TypeConfig> for StoreStateMachine {
    type SnapshotData = std::fs::File;
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), io::Error> {
        let applied = read_mark(&self.store.applied().map_err(io_err)?)?;
        Ok((applied.last_applied, applied.membership))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + Send,
    {
        let mut applied = read_mark(&self.store.applied().map_err(io_err)?)?;
        let mut decoded: Vec<Decoded> = Vec::new();
        let mut responders = Vec::new();
        while let Some(item) = entries.next().await {
            let (entry, responder) = item?;
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(command) => {
                    decoded.push(decode_committed(&command.proposal, &entry.log_id)?);
                }
                EntryPayload::Membership(m) => applied.membership = Stored::new(Some(entry.log_id), m),
            }
            applied.last_applied = Some(entry.log_id);
            responders.extend(responder);
        }
        let Some(last) = applied.last_applied else { return Ok(()) };
        if let Some((id, delay)) = self.own_entries_late
            && last.committed_leader_id().node_id == id
        {
            tokio::time::sleep(delay).await;
        }
        let mark = AppliedMark { index: last.index, context: postcard::to_stdvec(&applied).map_err(io_err)? };
        // Applied in place rather than on the blocking pool: one unsynced
        // engine write is short, and the hand-off to another thread and back
        // cost more than the write itself on every commit.
        let outcomes =
            self.store.apply_for(decoded.iter().map(|d| (&d.request, &d.caller)), mark).map_err(io_err)?;
        let entries = decoded.into_iter().zip(outcomes);
        self.listener.applied(
            entries
                .map(|(d, outcome)| AppliedEntry { proposal: d.id, request: d.request, outcome })
                .collect(),
        );
        for responder in responders {
            responder.send(());
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder { store: self.store.clone(), snapshot_dir: self.snapshot_dir.clone() }
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: std::fs::File,
    ) -> Result<(), io::Error> {
        let dir = self.snapshot_dir.clone();
        let store = self.store.clone();
        let meta = meta.clone();
        tokio::task::spawn_blocking(move || install(&store, &dir, &meta, snapshot))
            .await
            .map_err(io_err)??;
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<SnapshotFile>, io::Error> {
        let meta_path = self.snapshot_dir.join(CURRENT_META);
        if !meta_path.exists() {
            return Ok(None);
        }
        let meta: SnapshotMeta = postcard::from_bytes(&std::fs::read(meta_path)?).map_err(io_err)?;
        let snapshot = std::fs::File::open(self.snapshot_dir.join(CURRENT_SNAPSHOT))?;
        Ok(Some(SnapshotFile { meta, snapshot }))
    }
}

/// Keeps the received snapshot as the current one, then loads it into the
/// store (which verifies its checksum first).
fn install(store: &Store, dir: &Path, meta: &SnapshotMeta, mut data: std::fs::File) -> io::Result<()> {
    let partial = dir.join("receiving.snap");
    {
        let mut out = std::fs::File::create(&partial)?;
        io::Seek::rewind(&mut data)?;
        io::copy(&mut data, &mut out)?;
        out.sync_all()?;
    }
    store.install_snapshot(&partial).map_err(io_err)?;
    std::fs::write(dir.join(CURRENT_META), postcard::to_stdvec(meta).map_err(io_err)?)?;
    std::fs::rename(&partial, dir.join(CURRENT_SNAPSHOT))?;
    Ok(())
}
