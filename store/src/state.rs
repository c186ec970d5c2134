//! What the store keeps in memory, and where its own records live on disk
//! (the keys of the `meta` table): shared by the store and the write path.

use std::sync::Arc;

use crate::alarm::Alarms;
use crate::auth::AuthState;
use crate::error::StoreError;
use crate::key_index::KeyIndex;
use crate::lease::Leases;

/// Keys of the `meta` table.
pub(crate) mod meta {
    pub const REVISION: &[u8] = b"revision";
    pub const COMPACTED: &[u8] = b"compacted";
    pub const APPLIED: &[u8] = b"applied";
}

/// Everything in memory; guarded by one lock so a batch is seen whole.
#[derive(Debug)]
pub(crate) struct State {
    pub index: KeyIndex,
    pub leases: Leases,
    /// The current revision; a new store is at 1.
    pub rev: i64,
    /// The compacted revision; -1 before the first compaction.
    pub compacted: i64,
    pub applied: AppliedMark,
    pub alarms: Alarms,
    /// Shared with readers that check permissions; a change copies it.
    pub auth: Arc<AuthState>,
    /// Set when a batch failed half-way: memory is ahead of disk.
    pub poisoned: bool,
}

/// The caller's position in its log, stored atomically with the batch it
/// covers. `context` is opaque to the store (Raft keeps its log id and
/// membership there).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppliedMark {
    pub index: u64,
    pub context: Vec<u8>,
}

impl AppliedMark {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = self.index.to_be_bytes().to_vec();
        out.extend_from_slice(&self.context);
        out
    }

    pub(crate) fn decode(raw: &[u8]) -> Result<Self, StoreError> {
        let (index, context) = raw
            .split_first_chunk::<8>()
            .ok_or_else(|| StoreError::Corrupt("applied mark too short".into()))?;
        Ok(Self { index: u64::from_be_bytes(*index), context: context.to_vec() })
    }
}
