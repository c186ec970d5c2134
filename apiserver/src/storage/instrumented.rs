//! One resource's storage calls timed and counted for `/metrics`, as
//! kube's etcd3 store records them (`RecordEtcdRequest` with the store's
//! group and resource): each call under kube's operation name, failed when
//! etcd answered with an error (not with "not found" or a lost compare);
//! and the events and progress notifications its watches receive.
//!
//! A delete is one `delete` here, its read and its retries included (kube
//! records the read as a `get`); a GuaranteedUpdate is a `get` and an
//! `update`, as in kube.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use bytes::Bytes;

use super::interface::{Storage, StorageWatch, Swap, WatchEnd, WatchUpdate};
use super::{ListPage, Object, Preconditions, StorageError};
use crate::metrics::Series;
use crate::metrics::storage::{Operation, ResourceStorage};

/// A resource's counters.
type Counters = Arc<Series<ResourceStorage, 2>>;

/// `inner`, counted into one resource's counters.
#[derive(Debug)]
pub struct Instrumented {
    inner: Arc<dyn Storage>,
    counters: Counters,
}

impl Instrumented {
    pub fn new(inner: Arc<dyn Storage>, counters: Counters) -> Instrumented {
        Instrumented { inner, counters }
    }

    fn record<T>(&self, operation: Operation, started: Instant, result: &Result<T, StorageError>) {
        let failed = result.as_ref().err().is_some_and(from_etcd);
        self.counters.value.call(operation, started.elapsed(), failed);
    }
}

/// Whether etcd itself answered with this error (what kube's client
/// returns as `err`), rather than with a result the store turned into one.
fn from_etcd(error: &StorageError) -> bool {
    matches!(
        error,
        StorageError::Etcd(_)
            | StorageError::Expired
            | StorageError::FutureRevision
            | StorageError::TooLarge(_)
    )
}

#[async_trait]
impl Storage for Instrumented {
    async fn create(&self, key: &str, value: Bytes, ttl_seconds: Option<i64>) -> Result<i64, StorageError> {
        let started = Instant::now();
        let result = self.inner.create(key, value, ttl_seconds).await;
        self.record(Operation::Create, started, &result);
        result
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        let started = Instant::now();
        let result = self.inner.get(key).await;
        self.record(Operation::Get, started, &result);
        result
    }

    async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError> {
        let started = Instant::now();
        let result = self.inner.current_revision(prefix).await;
        self.record(Operation::GetCurrentResourceVersion, started, &result);
        result
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        let started = Instant::now();
        let result = self.inner.put_if(key, value, expected).await;
        self.record(Operation::Update, started, &result);
        result
    }

    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        let started = Instant::now();
        let result = self.inner.delete(key, preconditions).await;
        self.record(Operation::Delete, started, &result);
        result
    }

    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        let started = Instant::now();
        let result = self.inner.list(prefix, limit, resource_version, token).await;
        self.record(Operation::List, started, &result);
        result
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        let inner = self.inner.watch(prefix, start).await?;
        Ok(Box::new(CountedWatch { inner, counters: self.counters.clone() }))
    }
}

/// A watch counting what it receives.
#[derive(Debug)]
struct CountedWatch {
    inner: Box<dyn StorageWatch>,
    counters: Counters,
}

#[async_trait]
impl StorageWatch for CountedWatch {
    async fn next(&mut self) -> Result<WatchUpdate, WatchEnd> {
        let update = self.inner.next().await;
        match &update {
            Ok(WatchUpdate::Changes(changes)) => self.counters.value.events_received(changes.len()),
            Ok(WatchUpdate::Progress(_)) => self.counters.value.bookmark(),
            _ => {}
        }
        update
    }

    async fn request_progress(&mut self) {
        self.inner.request_progress().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::StorageMetrics;
    use crate::storage::MemoryStorage;

    #[tokio::test]
    async fn calls_and_watch_events_are_counted_for_the_resource() {
        let metrics = StorageMetrics::default();
        let storage = Instrumented::new(Arc::new(MemoryStorage::new()), metrics.storage("", "configmaps"));
        let mut watch = storage.watch("/registry/configmaps/", 1).await.unwrap();
        storage.create("/registry/configmaps/a", Bytes::from_static(b"{}"), None).await.unwrap();
        let again = storage.create("/registry/configmaps/a", Bytes::from_static(b"{}"), None).await;
        assert!(matches!(again, Err(StorageError::AlreadyExists { .. })));
        assert!(storage.get("/registry/configmaps/b").await.unwrap().is_none());
        while !matches!(watch.next().await, Ok(WatchUpdate::Changes(_))) {}
        let mut out = String::new();
        metrics.write(&mut out, &[], false);
        let create = "operation=\"create\",group=\"\",resource=\"configmaps\"";
        assert!(out.contains(&format!("etcd_requests_total{{{create}}} 2\n")), "{out}");
        assert!(!out.contains("etcd_request_errors_total"), "an existing key is no etcd error: {out}");
        assert!(
            out.contains("etcd_requests_total{operation=\"get\",group=\"\",resource=\"configmaps\"} 1\n")
        );
        assert!(
            out.contains("apiserver_storage_events_received_total{group=\"\",resource=\"configmaps\"} 1\n")
        );
    }
}
