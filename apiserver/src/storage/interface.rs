//! The storage seam (kube's `storage.Interface`): what the generic registry
//! store and the watch caches need from a backend, so that they run against
//! etcd in production and against [`super::MemoryStorage`] in unit tests.
//!
//! Objects are opaque bytes here; their resourceVersion is the revision that
//! last wrote them.

use std::fmt::Debug;

use async_trait::async_trait;
use bytes::Bytes;

use super::{ListPage, Object, Preconditions, StorageError};

#[async_trait]
pub trait Storage: Send + Sync + Debug {
    /// Writes `value` under `key` if nothing is there; its revision. With a
    /// TTL the object goes by itself after that many seconds.
    async fn create(&self, key: &str, value: Bytes, ttl_seconds: Option<i64>) -> Result<i64, StorageError>;

    /// The object under `key`, if any, as of now (a linearizable read).
    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError>;

    /// The store's current revision (what a consistent read must reach).
    async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError>;

    /// Writes `value` under `key` if the key was last written at `expected`
    /// (0: absent): the revision written, or the key's current object when it
    /// was not (kube's GuaranteedUpdate step; the caller retries from it).
    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError>;

    /// Deletes the object under `key` if `preconditions` hold; what was
    /// deleted.
    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError>;

    /// One page of the objects under `prefix` (ending in `/`): the first at
    /// `resource_version` (0: the latest), the next ones from `token`, all at
    /// the first page's revision. `limit` 0 reads everything.
    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError>;

    /// Follows every change under `prefix` from revision `start`, with
    /// previous values and progress notifications.
    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError>;
}

/// How a conditional write ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swap {
    /// Written at this revision.
    Done(i64),
    /// Not written: the key has changed since; here is what it holds now.
    Changed(Option<Object>),
}

/// A change as the backend reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub key: String,
    /// The new value; empty for a deletion.
    pub value: Bytes,
    /// The value before, when the backend still had it.
    pub prev: Option<Bytes>,
    pub deleted: bool,
    pub create_revision: i64,
    pub mod_revision: i64,
}

/// What a watch delivers next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchUpdate {
    /// The watch is established (says nothing of what has been delivered).
    Created,
    /// The changes of one or more revisions, in order.
    Changes(Vec<Change>),
    /// Everything up to this revision has been delivered.
    Progress(i64),
}

/// Why a watch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEnd {
    /// The start revision was compacted away: list again.
    Compacted,
    /// The connection broke or the backend cancelled: try again.
    Broken(String),
}

#[async_trait]
pub trait StorageWatch: Send + Debug {
    async fn next(&mut self) -> Result<WatchUpdate, WatchEnd>;

    /// Asks for a progress notification (kube's `RequestWatchProgress`), so
    /// an idle watch tells how far it is.
    async fn request_progress(&mut self);
}
