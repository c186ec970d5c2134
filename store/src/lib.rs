//! rtcd's MVCC key-value store: etcd's revisioned data model on RocksDB.
//!
//! * Every write transaction takes one revision; all history is kept until
//!   compacted, so reads and watches can look at any retained revision.
//! * Requests and responses are etcd's own protobuf types, with etcd's
//!   semantics (Range options, Txn compares, duplicate-key rules, errors).
//! * A batch of requests reaches disk as one atomic engine write together
//!   with the caller's applied mark, so a crash leaves a prefix of batches.
//!
//! The store knows nothing of networks or consensus; the `raft` crate feeds it
//! committed entries and the `server` crate serves reads from it.

mod alarm;
mod apply;
mod apply_times;
mod auth;
mod compaction;
mod compaction_stats;
pub mod engine;
mod error;
mod history;
mod key_index;
mod lease;
mod maintenance;
mod revision;
mod snapshot;
mod state;
mod store;
mod validate;
mod view;

pub use apply::{Applied, WriteRequest, WriteResponse};
pub use apply_times::{ApplyTimes, DEFAULT_WARNING_APPLY_DURATION};
pub use auth::{Access, AuthError, AuthRequest, AuthResponse, AuthState, Caller};
pub use compaction_stats::CompactionStats;
pub use engine::DEFAULT_BLOCK_CACHE_BYTES;
pub use error::StoreError;
pub use history::History;
pub use lease::{LeaseInfo, MAX_LEASE_TTL};
pub use maintenance::KvHash;
pub use revision::Revision;
#[cfg(feature = "rocksdb")]
pub use snapshot::restore_snapshot;
pub use snapshot::{Restored, SnapshotError, Written};
pub use state::AppliedMark;
pub use store::{Store, StoreOptions};
pub use validate::{check_delete, check_put, check_range, check_txn};
