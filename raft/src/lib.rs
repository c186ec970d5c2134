//! rtcd's replication, the only crate that names openraft types.
//!
//! * `types`: the openraft type configuration (entries carry encoded
//!   proposals; members carry etcd's name and URLs).
//! * `codec`: store write requests as `rtcdraftpb.Proposal` bytes.
//! * `log_store`: the Raft log on RocksDB with group commit: appends are
//!   readable at once and made durable by one WAL fsync per group.
//! * `state_machine`: committed entries applied to `rtcd_store::Store` in
//!   batches, with the applied log id and membership in the same write;
//!   snapshots are the store's checksummed dump.

pub mod codec;
pub mod log_store;
pub mod state_machine;
pub mod types;

pub use types::{Command, Member, TypeConfig};
