//! kube-apiserver's storage layer: the [`Storage`] seam, and its etcd3
//! implementation over etcd's KV and Watch APIs. Objects are opaque bytes
//! here (JSON above this layer); the resourceVersion of an object is the
//! `mod_revision` of its key.
//!
//! * `interface`: the `Storage` and `StorageWatch` traits.
//! * `etcd3`, `etcd3_watch`: kube's etcd3 store (the Txns of each call).
//! * `endpoints`: the etcd members as one service, with failover.
//! * `memory`: an in-memory `Storage` with etcd's semantics, for unit tests.
//! * `leases`: lease reuse for objects with a TTL.
//! * `continue_token`: kube's list continue tokens.
//! * `compactor`: kube-apiserver's compaction rounds.
//! * `instrumented`: one resource's calls and watches counted (`/metrics`).

mod compactor;
mod continue_token;
pub mod endpoints;
mod etcd3;
mod etcd3_watch;
mod instrumented;
mod interface;
mod leases;
mod memory;
mod on_read;

pub use compactor::{COMPACT_REV_KEY, Compactor, Step};
pub use continue_token::ContinueToken;
pub use endpoints::Endpoints;
pub use etcd3::Etcd3Store;
pub use instrumented::Instrumented;
pub use interface::{Change, Storage, StorageWatch, Swap, WatchEnd, WatchUpdate};
pub use memory::MemoryStorage;
pub use on_read::{OnRead, OnReadStorage, ReadView, VersionView};

use bytes::Bytes;

/// An object as stored, and the revision that last wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub value: Bytes,
    pub resource_version: i64,
}

/// What a write expects of the object it changes (`metav1.Preconditions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<i64>,
}

impl Preconditions {
    /// Checks `object` (JSON with `metadata.uid`) against these conditions.
    pub fn check(&self, key: &str, object: &Object) -> Result<(), StorageError> {
        if let Some(want) = &self.uid {
            let meta: serde_json::Value = serde_json::from_slice(&object.value).unwrap_or_default();
            let uid = meta["metadata"]["uid"].as_str().unwrap_or_default();
            if uid != want {
                return Err(StorageError::PreconditionFailed {
                    key: key.to_string(),
                    why: format!(
                        "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
                    ),
                });
            }
        }
        if let Some(want) = self.resource_version
            && want != object.resource_version
        {
            return Err(StorageError::PreconditionFailed {
                key: key.to_string(),
                why: format!(
                    "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {}",
                    object.resource_version
                ),
            });
        }
        Ok(())
    }
}

/// A page of a list, and where to go on from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPage {
    /// `(key, object)` in key order.
    pub items: Vec<(Bytes, Object)>,
    /// The revision the whole list is read at.
    pub resource_version: i64,
    /// Set when more items follow: pass it back to get the next page.
    pub continue_token: Option<String>,
    /// How many items follow this page (when more follow).
    pub remaining_item_count: Option<i64>,
}

/// Why a storage call failed, in the terms kube-apiserver's storage errors
/// use; the REST layer maps them to `metav1.Status`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    #[error("key not found: {key}")]
    NotFound { key: String },
    #[error("key exists: {key}")]
    AlreadyExists { key: String },
    /// A uid or resourceVersion precondition did not hold (409 Conflict).
    #[error("{why}")]
    PreconditionFailed { key: String, why: String },
    /// The revision asked for has been compacted (410 Expired).
    #[error("The provided continue parameter is too old to display a consistent list result.")]
    Expired,
    /// The revision asked for is ahead of etcd's.
    #[error("etcdserver: mvcc: required revision is a future revision")]
    FutureRevision,
    /// A continue token that this server did not issue (400 BadRequest);
    /// the text after kube's prefix.
    #[error("invalid continue token: {0}")]
    InvalidContinue(String),
    /// The update function refused the object; its error goes out as is.
    #[error("{0}")]
    Update(String),
    /// etcd did not answer as it should (its message).
    #[error("etcd: {0}")]
    Etcd(String),
    /// etcd refused a write over its `--max-request-bytes` (its message).
    #[error("{0}")]
    TooLarge(String),
    /// An object could not be put in the version it is read or stored in
    /// (a conversion webhook failed): the reason.
    #[error("{0}")]
    Conversion(String),
}
