//! rtcd's replication, the only crate that names openraft types.
//!
//! * `types`: the openraft type configuration (entries carry encoded
//!   proposals; members carry etcd's name and URLs).
//! * `codec`: store write requests as `rtcdraftpb.Proposal` bytes.
//! * `log_store`: the Raft log on RocksDB with group commit: appends are
//!   readable at once and made durable by one WAL fsync per group.
//! * `network` / `peer_service`: the peer transport over tonic (client and
//!   server sides of `rtcdraftpb.Raft`), including chunked snapshots and
//!   proposals forwarded to the leader.
//! * `proposer`: proposals handed to the leader in groups (one openraft
//!   call, and on a follower one forwarded call, per group).
//! * `append_stream`: replication on one long-lived, pipelined stream per
//!   follower (both ends).
//! * `peer_stats`: bytes sent and received, failed sends and probed round
//!   trips per peer, for `/metrics`; `prober` measures the round trips.
//! * `wal_stats`: the Raft log's write and sync times and bytes written.
//! * `read_index`: linearizable reads, batched so that concurrent reads
//!   share one quorum round.
//! * `membership`: the Cluster API's member changes as openraft membership
//!   changes.
//! * `fault`: hooks that hold a member in a rare window for tests (off
//!   unless the environment turns them on).
//! * `snapshot_policy`: when to snapshot (etcd's count, but not more often
//!   than the store's size makes worth it).
//! * `state_machine`: committed entries applied to `rtcd_store::Store` in
//!   batches, with the applied log id and membership in the same write;
//!   snapshots are the store's checksummed dump.

mod append_stream;
pub mod codec;
mod error;
pub mod fault;
pub mod log_store;
pub mod membership;
pub mod network;
pub mod node;
pub mod peer_service;
pub mod peer_stats;
mod prober;
mod proposer;
mod read_index;
mod rpc_error;
mod snapshot_policy;
pub mod state_machine;
pub mod types;
pub mod wal_stats;
mod wire;

pub use error::ReplicationError;
pub use membership::MembershipChange;
pub use network::{Dialer, dial_target};
pub use node::{ApplySink, RaftConfig, RaftNode};
pub use state_machine::AppliedEntry;
pub use types::{Command, Member, TypeConfig};

/// A member's Raft instance.
pub type RtcdRaft = openraft::Raft<TypeConfig, state_machine::StoreStateMachine>;
