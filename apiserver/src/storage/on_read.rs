//! Objects as one served resource reads them (kube's storage codec
//! decoding into the request's version): a wrapper over [`Storage`] whose
//! reads (get, list, watch) pass the objects through a [`VersionView`], so
//! the watch cache and the reads of that resource see them converted and
//! defaulted. Writes go through unchanged; the registry puts objects in the
//! stored version first ([`ReadView::to_storage`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::Value;

use super::{
    Change, ListPage, Object, Preconditions, Storage, StorageError, StorageWatch, Swap, WatchEnd, WatchUpdate,
};

/// How one served resource sees stored objects, and stores the ones
/// written through it (a custom resource version: converted, by a webhook
/// for some, and defaulted by its schema). Objects go in batches, so a
/// list is converted in one call.
#[async_trait]
pub trait VersionView: Send + Sync {
    /// `objects` (JSON objects, as stored) as this resource reads them;
    /// the reason when they cannot be.
    async fn read(&self, objects: Vec<Value>) -> Result<Vec<Value>, String>;

    /// `object` (as written through this resource) as it is stored.
    async fn store(&self, object: Value) -> Result<Value, String>;
}

pub type OnRead = Arc<dyn VersionView>;

/// Passes stored `objects` through `on_read` in one batch; bytes that are
/// not a JSON object are left as they are (their reader reports them).
async fn apply(on_read: &dyn VersionView, objects: Vec<Bytes>) -> Result<Vec<Bytes>, StorageError> {
    let decoded: Vec<Option<Value>> =
        objects.iter().map(|bytes| serde_json::from_slice(bytes).ok().filter(Value::is_object)).collect();
    let batch: Vec<Value> = decoded.iter().flatten().cloned().collect();
    let mut viewed = on_read.read(batch).await.map_err(StorageError::Conversion)?.into_iter();
    Ok(objects
        .into_iter()
        .zip(decoded)
        .map(|(bytes, value)| match value.and_then(|_| viewed.next()) {
            Some(value) => serde_json::to_vec(&value).map(Bytes::from).unwrap_or(bytes),
            None => bytes,
        })
        .collect())
}

/// A resource's [`VersionView`], if it has one (most have none).
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
    pub async fn present(&self, value: Value) -> Result<Value, StorageError> {
        match &self.0 {
            Some(on_read) if value.is_object() => {
                let mut viewed = on_read.read(vec![value]).await.map_err(StorageError::Conversion)?;
                viewed.pop().ok_or_else(|| StorageError::Conversion("no object came back".into()))
            }
            _ => Ok(value),
        }
    }

    /// An object written through this resource as it is stored.
    pub async fn to_storage(&self, value: Value) -> Result<Value, StorageError> {
        match &self.0 {
            Some(on_read) => on_read.store(value).await.map_err(StorageError::Conversion),
            None => Ok(value),
        }
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

    async fn object(&self, object: Object) -> Result<Object, StorageError> {
        let value = apply(self.on_read.as_ref(), vec![object.value]).await?.pop().unwrap_or_default();
        Ok(Object { value, resource_version: object.resource_version })
    }
}

#[async_trait]
impl Storage for OnReadStorage {
    async fn create(&self, key: &str, value: Bytes, ttl_seconds: Option<i64>) -> Result<i64, StorageError> {
        self.inner.create(key, value, ttl_seconds).await
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        match self.inner.get(key).await? {
            Some(object) => Ok(Some(self.object(object).await?)),
            None => Ok(None),
        }
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
        let stored = page.items.iter_mut().map(|(_, object)| std::mem::take(&mut object.value)).collect();
        let viewed = apply(self.on_read.as_ref(), stored).await?;
        for ((_, object), value) in page.items.iter_mut().zip(viewed) {
            object.value = value;
        }
        Ok(page)
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        let inner = self.inner.watch(prefix, start).await?;
        Ok(Box::new(OnReadWatch { inner, on_read: self.on_read.clone(), in_flight: None }))
    }
}

struct OnReadWatch {
    inner: Box<dyn StorageWatch>,
    on_read: OnRead,
    /// Changes taken from `inner` and their conversion under way: `next`
    /// may be dropped while a conversion webhook answers (its reader races
    /// it with progress requests); the next call goes on with the same
    /// conversion, so no change is lost and none is converted twice.
    in_flight: Option<InFlight>,
}

/// Changes being read: the changes with their values taken out, which of
/// them had a value before, and the conversion of the values.
type InFlight =
    (Vec<Change>, Vec<bool>, Pin<Box<dyn Future<Output = Result<Vec<Bytes>, StorageError>> + Send>>);

impl fmt::Debug for OnReadWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnReadWatch").field("inner", &self.inner).finish()
    }
}

#[async_trait]
impl StorageWatch for OnReadWatch {
    async fn next(&mut self) -> Result<WatchUpdate, WatchEnd> {
        if self.in_flight.is_none() {
            let mut changes = match self.inner.next().await? {
                WatchUpdate::Changes(changes) => changes,
                other => return Ok(other),
            };
            // Every value and previous value of the batch in one call; one
            // that cannot be read breaks the watch (its reader resumes, as
            // after any break).
            let mut stored = Vec::new();
            let mut had_prev = Vec::with_capacity(changes.len());
            for change in changes.iter_mut() {
                if !change.deleted {
                    stored.push(std::mem::take(&mut change.value));
                }
                had_prev.push(change.prev.is_some());
                stored.extend(change.prev.take());
            }
            let on_read = self.on_read.clone();
            let conversion = Box::pin(async move { apply(on_read.as_ref(), stored).await });
            self.in_flight = Some((changes, had_prev, conversion));
        }
        let Some((_, _, conversion)) = self.in_flight.as_mut() else {
            return Err(WatchEnd::Broken("no changes in flight".into()));
        };
        let viewed = conversion.as_mut().await;
        let Some((mut changes, had_prev, _)) = self.in_flight.take() else {
            return Err(WatchEnd::Broken("no changes in flight".into()));
        };
        let mut viewed = viewed.map_err(|e| WatchEnd::Broken(e.to_string()))?.into_iter();
        for (change, had_prev) in changes.iter_mut().zip(had_prev) {
            if !change.deleted {
                change.value = viewed.next().unwrap_or_default();
            }
            if had_prev {
                change.prev = viewed.next();
            }
        }
        Ok(WatchUpdate::Changes(changes))
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

    /// Reads as `example.com/v2`, stores as `example.com/v1`; an object
    /// marked broken cannot be read (a conversion webhook that fails).
    struct V2;

    #[async_trait]
    impl VersionView for V2 {
        async fn read(&self, objects: Vec<Value>) -> Result<Vec<Value>, String> {
            objects
                .into_iter()
                .map(|mut o| match o["broken"] == true {
                    true => Err("conversion webhook failed".to_string()),
                    false => {
                        o["apiVersion"] = json!("example.com/v2");
                        Ok(o)
                    }
                })
                .collect()
        }

        async fn store(&self, mut object: Value) -> Result<Value, String> {
            object["apiVersion"] = json!("example.com/v1");
            Ok(object)
        }
    }

    fn body(n: i64, broken: bool) -> Bytes {
        Bytes::from(json!({"apiVersion": "example.com/v1", "n": n, "broken": broken}).to_string())
    }

    fn decode(bytes: &Bytes) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[tokio::test]
    async fn reads_pass_through_the_view_and_writes_do_not() {
        let memory: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
        let view = ReadView::new(Arc::new(V2));
        let viewed = view.over(memory.clone());
        let mut watch = viewed.watch("/w/", 0).await.unwrap();
        let created = viewed.create("/w/a", body(1, false), None).await.unwrap();
        assert!(matches!(viewed.put_if("/w/a", body(2, false), created).await.unwrap(), Swap::Done(_)));
        assert_eq!(decode(&memory.get("/w/a").await.unwrap().unwrap().value)["apiVersion"], "example.com/v1");
        let read = decode(&viewed.get("/w/a").await.unwrap().unwrap().value);
        assert_eq!((read["apiVersion"].as_str(), read["n"].as_i64()), (Some("example.com/v2"), Some(2)));
        viewed.create("/w/b", Bytes::from_static(b"not json"), None).await.unwrap();
        let listed = viewed.list("/w/", 0, 0, None).await.unwrap();
        assert_eq!(decode(&listed.items[0].1.value)["apiVersion"], "example.com/v2");
        assert_eq!(listed.items[1].1.value, Bytes::from_static(b"not json"), "left for its reader to report");
        // A change and the value before it are both read through the view.
        let mut seen = Vec::new();
        while seen.len() < 2 {
            if let WatchUpdate::Changes(changes) = watch.next().await.unwrap() {
                seen.extend(changes);
            }
        }
        assert_eq!(decode(&seen[1].value)["n"], 2);
        assert_eq!(
            seen[1].prev.as_ref().map(|p| decode(p)["apiVersion"].clone()),
            Some(json!("example.com/v2"))
        );
        // Writes' own results and what they store.
        let stored = view.to_storage(json!({"apiVersion": "example.com/v2"})).await.unwrap();
        assert_eq!(stored["apiVersion"], "example.com/v1");
        assert_eq!(view.present(stored).await.unwrap()["apiVersion"], "example.com/v2");
    }

    #[tokio::test]
    async fn an_object_that_cannot_be_read_fails_the_read_and_breaks_the_watch() {
        let memory: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
        let view = ReadView::new(Arc::new(V2));
        let viewed = view.over(memory.clone());
        let mut watch = viewed.watch("/w/", 0).await.unwrap();
        memory.create("/w/a", body(1, true), None).await.unwrap();
        let failed = |e: StorageError| e.to_string();
        assert_eq!(viewed.get("/w/a").await.map_err(failed).unwrap_err(), "conversion webhook failed");
        assert_eq!(
            viewed.list("/w/", 0, 0, None).await.map_err(failed).unwrap_err(),
            "conversion webhook failed"
        );
        assert!(matches!(view.present(json!({"broken": true})).await, Err(StorageError::Conversion(_))));
        loop {
            match watch.next().await {
                Ok(WatchUpdate::Changes(_)) => panic!("an unreadable change was delivered"),
                Ok(_) => continue,
                Err(end) => {
                    assert_eq!(end, WatchEnd::Broken("conversion webhook failed".into()));
                    break;
                }
            }
        }
    }

    /// Reads as V2 does, slowly (a conversion webhook taking its time).
    struct Slow;

    #[async_trait]
    impl VersionView for Slow {
        async fn read(&self, objects: Vec<Value>) -> Result<Vec<Value>, String> {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            V2.read(objects).await
        }

        async fn store(&self, object: Value) -> Result<Value, String> {
            V2.store(object).await
        }
    }

    #[tokio::test]
    async fn a_watch_dropped_while_converting_delivers_the_change_on_the_next_call() {
        let memory: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
        let viewed = ReadView::new(Arc::new(Slow)).over(memory.clone());
        let mut watch = viewed.watch("/w/", 0).await.unwrap();
        memory.create("/w/a", body(1, false), None).await.unwrap();
        // Its reader gives up on `next` (a progress request won the race)
        // while the conversion is under way...
        let mut dropped = 0;
        loop {
            match tokio::time::timeout(std::time::Duration::from_millis(50), watch.next()).await {
                Err(_) => dropped += 1,
                Ok(Ok(WatchUpdate::Changes(changes))) => {
                    // ...and the change still comes.
                    assert!(dropped > 0, "the conversion was never interrupted");
                    assert_eq!(decode(&changes[0].value)["apiVersion"], "example.com/v2");
                    break;
                }
                Ok(other) => assert!(other.is_ok(), "{other:?}"),
            }
            assert!(dropped < 40, "the change never came");
        }
    }
}
