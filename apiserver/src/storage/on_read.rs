//! Objects as one served resource reads them (kube's storage codec
//! decoding into the request's version): a wrapper over [`Storage`] whose
//! reads (get, list, watch) pass each object through an [`OnRead`], so the
//! watch cache and the reads of that resource see it converted and
//! defaulted. Writes go through unchanged.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;

use super::{
    ListPage, Object, Preconditions, Storage, StorageError, StorageWatch, Swap, WatchEnd, WatchUpdate,
};

/// What reading does to an object (a custom resource version's apiVersion
/// and schema defaults).
pub type OnRead = Arc<dyn Fn(&mut Value) + Send + Sync>;

/// Passes `bytes` through `on_read`; bytes that are not a JSON object are
/// left as they are (their reader reports them).
pub fn apply(on_read: &OnRead, bytes: &Bytes) -> Bytes {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(mut value) if value.is_object() => {
            on_read(&mut value);
            serde_json::to_vec(&value).map(Bytes::from).unwrap_or_else(|_| bytes.clone())
        }
        _ => bytes.clone(),
    }
}

/// A resource's [`OnRead`], if it has one (most have none).
#[derive(Clone, Default)]
pub struct ReadView(Option<OnRead>);

impl fmt::Debug for ReadView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "ReadView(on read)" } else { "ReadView(as stored)" })
    }
}

impl ReadView {
    pub fn new(on_read: OnRead) -> ReadView {
        ReadView(Some(on_read))
    }

    /// An object as this resource reads it.
    pub fn present(&self, mut value: Value) -> Value {
        if let Some(on_read) = &self.0
            && value.is_object()
        {
            on_read(&mut value);
        }
        value
    }

    /// `storage` as this resource reads it.
    pub fn over(&self, storage: Arc<dyn Storage>) -> Arc<dyn Storage> {
        match &self.0 {
            Some(on_read) => Arc::new(OnReadStorage::new(storage, on_read.clone())),
            None => storage,
        }
    }
}

pub struct OnReadStorage {
    inner: Arc<dyn Storage>,
    on_read: OnRead,
}

impl fmt::Debug for OnReadStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnReadStorage").field("inner", &self.inner).finish()
    }
}

impl OnReadStorage {
    pub fn new(inner: Arc<dyn Storage>, on_read: OnRead) -> OnReadStorage {
        OnReadStorage { inner, on_read }
    }

    fn object(&self, object: Object) -> Object {
        Object { value: apply(&self.on_read, &object.value), resource_version: object.resource_version }
    }
}

#[async_trait]
impl Storage for OnReadStorage {
    async fn create(&self, key: &str, value: Bytes, ttl_seconds: Option<i64>) -> Result<i64, StorageError> {
        self.inner.create(key, value, ttl_seconds).await
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        Ok(self.inner.get(key).await?.map(|o| self.object(o)))
    }

    async fn current_revision(&self, prefix: &str) -> Result<i64, StorageError> {
        self.inner.current_revision(prefix).await
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        self.inner.put_if(key, value, expected).await
    }

    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        self.inner.delete(key, preconditions).await
    }

    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        let mut page = self.inner.list(prefix, limit, resource_version, token).await?;
        for (_, object) in page.items.iter_mut() {
            object.value = apply(&self.on_read, &object.value);
        }
        Ok(page)
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        let inner = self.inner.watch(prefix, start).await?;
        Ok(Box::new(OnReadWatch { inner, on_read: self.on_read.clone() }))
    }
}

struct OnReadWatch {
    inner: Box<dyn StorageWatch>,
    on_read: OnRead,
}

impl fmt::Debug for OnReadWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnReadWatch").field("inner", &self.inner).finish()
    }
}

#[async_trait]
impl StorageWatch for OnReadWatch {
    async fn next(&mut self) -> Result<WatchUpdate, WatchEnd> {
        match self.inner.next().await? {
            WatchUpdate::Changes(mut changes) => {
                for change in changes.iter_mut() {
                    if !change.deleted {
                        change.value = apply(&self.on_read, &change.value);
                    }
                    change.prev = change.prev.as_ref().map(|prev| apply(&self.on_read, prev));
                }
                Ok(WatchUpdate::Changes(changes))
            }
            other => Ok(other),
        }
    }

    async fn request_progress(&mut self) {
        self.inner.request_progress().await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::storage::MemoryStorage;

    #[tokio::test]
    async fn reads_pass_through_and_writes_do_not() {
        let memory: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
        let on_read: OnRead = Arc::new(|v: &mut Value| v["apiVersion"] = json!("example.com/v2"));
        let viewed = OnReadStorage::new(memory.clone(), on_read);
        let mut watch = viewed.watch("/w/", 0).await.unwrap();
        let body = Bytes::from(json!({"apiVersion": "example.com/v1", "n": 1}).to_string());
        viewed.create("/w/a", body, None).await.unwrap();
        let stored: Value =
            serde_json::from_slice(&memory.get("/w/a").await.unwrap().unwrap().value).unwrap();
        assert_eq!(stored["apiVersion"], "example.com/v1", "stored as written");
        let read: Value = serde_json::from_slice(&viewed.get("/w/a").await.unwrap().unwrap().value).unwrap();
        assert_eq!((read["apiVersion"].as_str(), read["n"].as_i64()), (Some("example.com/v2"), Some(1)));
        let listed = viewed.list("/w/", 0, 0, None).await.unwrap();
        let item: Value = serde_json::from_slice(&listed.items[0].1.value).unwrap();
        assert_eq!(item["apiVersion"], "example.com/v2");
        loop {
            if let WatchUpdate::Changes(changes) = watch.next().await.unwrap() {
                let seen: Value = serde_json::from_slice(&changes[0].value).unwrap();
                assert_eq!(seen["apiVersion"], "example.com/v2");
                break;
            }
        }
    }
}
