//! openraft's type configuration for rtcd: what a log entry carries and what
//! a member is.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The payload of a normal log entry: one encoded `rtcdraftpb.Proposal`
/// (see `codec`). Kept as bytes so the log never depends on how openraft
/// serialises Rust types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    #[serde(with = "serde_bytes")]
    pub proposal: Vec<u8>,
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proposal({} bytes)", self.proposal.len())
    }
}

/// A member as the cluster knows it (etcd's `Member` without the ID, which
/// is the Raft node ID).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
}

openraft::declare_raft_types!(
    /// rtcd's Raft: entries carry proposals; a write's outcome reaches its
    /// waiter through the state machine, not through openraft's response.
    pub TypeConfig:
        D = Command,
        R = (),
        Node = Member,
);

pub type Entry = openraft::type_config::alias::EntryOf<TypeConfig>;
pub type LogId = openraft::type_config::alias::LogIdOf<TypeConfig>;
pub type Vote = openraft::type_config::alias::VoteOf<TypeConfig>;
pub type StoredMembership = openraft::type_config::alias::StoredMembershipOf<TypeConfig>;
pub type SnapshotMeta = openraft::type_config::alias::SnapshotMetaOf<TypeConfig>;
/// A snapshot handed to openraft: its metadata and the dump file.
pub type SnapshotFile = openraft::type_config::alias::SnapshotOf<TypeConfig, std::fs::File>;
