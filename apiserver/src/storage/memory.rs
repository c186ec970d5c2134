//! An in-memory [`Storage`] with etcd's semantics as [`super::Etcd3Store`]
//! relies on them, for unit tests of the layers above storage:
//!
//! * one revision counter, bumped by every successful write;
//! * every key keeps its history (versions and deletions) until it is
//!   compacted, so lists read at an old revision and watches replay from one;
//! * a list below the compacted revision is [`StorageError::Expired`], above
//!   the current one [`StorageError::FutureRevision`], continue tokens are
//!   kube's, as [`super::Etcd3Store`] makes them;
//! * a watch says `Created`, replays the changes from its start revision
//!   (with previous values), then follows new writes; a progress request is
//!   answered with the current revision, after everything before it. A watch
//!   from a compacted revision (at or below the compacted one) is created,
//!   then ends with [`WatchEnd::Compacted`]; [`MemoryStorage::break_watches`]
//!   ends them as a lost connection would.
//!
//! Objects created with a TTL are stored like the others: expiry is not
//! simulated.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use tokio::sync::mpsc;

use super::interface::{Change, Storage, StorageWatch, Swap, WatchEnd, WatchUpdate};
use super::{ContinueToken, ListPage, Object, Preconditions, StorageError};

/// Storage in memory; clones share the same data.
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// The revision of the last write.
    revision: i64,
    /// History below this revision is gone (0: nothing compacted).
    compacted: i64,
    /// Every key's versions, oldest first.
    keys: BTreeMap<String, Vec<Version>>,
    /// Every change after the compacted revision, in revision order.
    log: Vec<Change>,
    /// The watches following new writes.
    watchers: Vec<Follower>,
}

/// One version of a key: written at `mod_revision`, or deleted there.
#[derive(Debug, Clone)]
struct Version {
    mod_revision: i64,
    create_revision: i64,
    /// None: the key was deleted at `mod_revision`.
    value: Option<Bytes>,
}

type Delivery = Result<WatchUpdate, WatchEnd>;

#[derive(Debug)]
struct Follower {
    prefix: String,
    tx: mpsc::UnboundedSender<Delivery>,
}

impl State {
    /// The version of `key` visible at `revision`, if the key existed then.
    fn at(&self, key: &str, revision: i64) -> Option<&Version> {
        let history = self.keys.get(key)?;
        let version = history.iter().rev().find(|v| v.mod_revision <= revision)?;
        version.value.as_ref().map(|_| version)
    }

    /// The object under `key` now.
    fn latest(&self, key: &str) -> Option<Object> {
        let version = self.at(key, self.revision)?;
        let value = version.value.clone()?;
        Some(Object { value, resource_version: version.mod_revision })
    }

    /// Records one write at the next revision and hands it to the watches
    /// of its key; the revision written.
    fn write(&mut self, key: &str, value: Option<Bytes>) -> i64 {
        self.revision += 1;
        let revision = self.revision;
        let before = self.at(key, revision - 1).cloned();
        let create_revision = match (&value, &before) {
            (None, _) => 0,
            (Some(_), Some(before)) => before.create_revision,
            (Some(_), None) => revision,
        };
        let change = Change {
            key: key.to_string(),
            value: value.clone().unwrap_or_default(),
            prev: before.and_then(|b| b.value),
            deleted: value.is_none(),
            create_revision,
            mod_revision: revision,
        };
        self.keys.entry(key.to_string()).or_default().push(Version {
            mod_revision: revision,
            create_revision,
            value,
        });
        self.watchers.retain(|w| !w.tx.is_closed());
        for watcher in self.watchers.iter().filter(|w| key.starts_with(&w.prefix)) {
            let _ = watcher.tx.send(Ok(WatchUpdate::Changes(vec![change.clone()])));
        }
        self.log.push(change);
        revision
    }
}

impl MemoryStorage {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The revision of the last write.
    pub fn revision(&self) -> i64 {
        self.lock().revision
    }

    /// Ends every open watch with [`WatchEnd::Broken`], as a lost
    /// connection to etcd would.
    pub fn break_watches(&self) {
        for watcher in self.lock().watchers.drain(..) {
            let _ = watcher.tx.send(Err(WatchEnd::Broken("connection lost".into())));
        }
    }

    /// Forgets the history before `revision`, as etcd's compaction: reads
    /// below it are Expired and watches from it or earlier end Compacted.
    pub fn compact(&self, revision: i64) -> Result<(), StorageError> {
        let mut state = self.lock();
        if revision <= state.compacted {
            return Err(StorageError::Expired);
        }
        if revision > state.revision {
            return Err(StorageError::FutureRevision);
        }
        state.compacted = revision;
        state.keys.retain(|_, history| {
            // Keep the version visible at `revision` (unless a deletion)
            // and everything after it.
            let visible = history.iter().rposition(|v| v.mod_revision <= revision);
            if let Some(i) = visible {
                let keep_from = if history[i].value.is_some() { i } else { i + 1 };
                history.drain(..keep_from);
            }
            !history.is_empty()
        });
        state.log.retain(|change| change.mod_revision > revision);
        Ok(())
    }
}

#[async_trait]
impl Storage for MemoryStorage {
    async fn create(&self, key: &str, value: Bytes, _ttl_seconds: Option<i64>) -> Result<i64, StorageError> {
        let mut state = self.lock();
        if state.latest(key).is_some() {
            return Err(StorageError::AlreadyExists { key: key.to_string() });
        }
        Ok(state.write(key, Some(value)))
    }

    async fn get(&self, key: &str) -> Result<Option<Object>, StorageError> {
        Ok(self.lock().latest(key))
    }

    async fn current_revision(&self, _prefix: &str) -> Result<i64, StorageError> {
        Ok(self.lock().revision)
    }

    async fn put_if(&self, key: &str, value: Bytes, expected: i64) -> Result<Swap, StorageError> {
        let mut state = self.lock();
        let current = state.latest(key);
        if current.as_ref().map_or(0, |o| o.resource_version) != expected {
            return Ok(Swap::Changed(current));
        }
        Ok(Swap::Done(state.write(key, Some(value))))
    }

    async fn delete(&self, key: &str, preconditions: &Preconditions) -> Result<Object, StorageError> {
        let mut state = self.lock();
        let Some(current) = state.latest(key) else {
            return Err(StorageError::NotFound { key: key.to_string() });
        };
        preconditions.check(key, &current)?;
        state.write(key, None);
        Ok(current)
    }

    async fn list(
        &self,
        prefix: &str,
        limit: i64,
        resource_version: i64,
        token: Option<&str>,
    ) -> Result<ListPage, StorageError> {
        let (start, revision) = ContinueToken::resume(prefix, token, resource_version)?;
        let state = self.lock();
        if revision > state.revision {
            return Err(StorageError::FutureRevision);
        }
        if revision > 0 && revision < state.compacted {
            return Err(StorageError::Expired);
        }
        let read_at = if revision > 0 { revision } else { state.revision };
        let all: Vec<(Bytes, Object)> = state
            .keys
            .range::<str, _>((Bound::Included(start.as_str()), Bound::Unbounded))
            .take_while(|(key, _)| key.starts_with(prefix))
            .filter_map(|(key, _)| {
                let version = state.at(key, read_at)?;
                let object = Object { value: version.value.clone()?, resource_version: version.mod_revision };
                Some((Bytes::copy_from_slice(key.as_bytes()), object))
            })
            .collect();
        let count = all.len() as i64;
        let items: Vec<(Bytes, Object)> = match usize::try_from(limit) {
            Ok(limit) if limit > 0 => all.into_iter().take(limit).collect(),
            _ => all,
        };
        let more = limit > 0 && count > limit;
        let (continue_token, remaining_item_count) = match items.last() {
            Some((last, _)) if more => {
                // The next page starts just after the last key returned.
                let mut next = last[prefix.len()..].to_vec();
                next.push(0);
                let next = String::from_utf8_lossy(&next).into_owned();
                (Some(ContinueToken::new(read_at, next).encode()), Some(count - items.len() as i64))
            }
            _ => (None, None),
        };
        Ok(ListPage { items, resource_version: read_at, continue_token, remaining_item_count })
    }

    async fn watch(&self, prefix: &str, start: i64) -> Result<Box<dyn StorageWatch>, StorageError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.lock();
        let _ = tx.send(Ok(WatchUpdate::Created));
        if start > 0 && start <= state.compacted {
            let _ = tx.send(Err(WatchEnd::Compacted));
            return Ok(Box::new(MemoryWatch { state: self.state.clone(), tx, rx }));
        }
        // The history from `start` (0: from the next write), one revision
        // per update, then the writes to come, all in order under the lock.
        let start = if start > 0 { start } else { state.revision + 1 };
        let mut pending: Vec<Change> = Vec::new();
        for change in state.log.iter().filter(|c| c.mod_revision >= start && c.key.starts_with(prefix)) {
            if pending.last().is_some_and(|last| last.mod_revision != change.mod_revision) {
                let _ = tx.send(Ok(WatchUpdate::Changes(std::mem::take(&mut pending))));
            }
            pending.push(change.clone());
        }
        if !pending.is_empty() {
            let _ = tx.send(Ok(WatchUpdate::Changes(pending)));
        }
        state.watchers.push(Follower { prefix: prefix.to_string(), tx: tx.clone() });
        drop(state);
        Ok(Box::new(MemoryWatch { state: self.state.clone(), tx, rx }))
    }
}

/// A watch on a [`MemoryStorage`] prefix.
#[derive(Debug)]
struct MemoryWatch {
    state: Arc<Mutex<State>>,
    /// This watch's own queue, for progress answers behind the changes.
    tx: mpsc::UnboundedSender<Delivery>,
    rx: mpsc::UnboundedReceiver<Delivery>,
}

#[async_trait]
impl StorageWatch for MemoryWatch {
    async fn next(&mut self) -> Result<WatchUpdate, WatchEnd> {
        match self.rx.recv().await {
            Some(Ok(update)) => Ok(update),
            Some(Err(end)) => {
                // Ended for good: nothing follows.
                self.rx.close();
                Err(end)
            }
            None => Err(WatchEnd::Broken("watch stream ended".into())),
        }
    }

    async fn request_progress(&mut self) {
        // Under the lock: every change up to the revision is queued before.
        let state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let _ = self.tx.send(Ok(WatchUpdate::Progress(state.revision)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    async fn next_changes(watch: &mut Box<dyn StorageWatch>) -> Vec<Change> {
        match tokio::time::timeout(std::time::Duration::from_secs(5), watch.next()).await {
            Ok(Ok(WatchUpdate::Changes(changes))) => changes,
            other => panic!("expected changes, got {other:?}"),
        }
    }

    fn keys(page: &ListPage) -> Vec<String> {
        page.items.iter().map(|(k, _)| String::from_utf8_lossy(k).into_owned()).collect()
    }

    #[tokio::test]
    async fn writes_bump_one_revision_and_follow_etcds_rules() {
        let s = MemoryStorage::new();
        assert_eq!(s.create("/r/a", b("1"), None).await, Ok(1));
        assert_eq!(
            s.create("/r/a", b("x"), None).await,
            Err(StorageError::AlreadyExists { key: "/r/a".into() })
        );
        assert_eq!(s.create("/r/b", b("1"), Some(60)).await, Ok(2));
        assert_eq!(s.current_revision("/r/").await, Ok(2));
        // put_if only on the expected revision; else the current object.
        let a = Object { value: b("1"), resource_version: 1 };
        assert_eq!(s.put_if("/r/a", b("2"), 0).await, Ok(Swap::Changed(Some(a))));
        assert_eq!(s.put_if("/r/a", b("2"), 1).await, Ok(Swap::Done(3)));
        assert_eq!(s.put_if("/r/c", b("1"), 5).await, Ok(Swap::Changed(None)));
        assert_eq!(s.put_if("/r/c", b("1"), 0).await, Ok(Swap::Done(4)));
        assert_eq!(s.get("/r/a").await, Ok(Some(Object { value: b("2"), resource_version: 3 })));
        // Delete: preconditions, then NotFound once gone.
        let stale = Preconditions { resource_version: Some(1), uid: None };
        assert!(matches!(s.delete("/r/a", &stale).await, Err(StorageError::PreconditionFailed { .. })));
        let deleted = s.delete("/r/a", &Preconditions::default()).await.unwrap();
        assert_eq!(deleted, Object { value: b("2"), resource_version: 3 });
        assert_eq!(s.revision(), 5);
        assert_eq!(s.get("/r/a").await, Ok(None));
        assert_eq!(
            s.delete("/r/a", &Preconditions::default()).await,
            Err(StorageError::NotFound { key: "/r/a".into() })
        );
        // A key made anew after its deletion: create again, from 0.
        assert_eq!(s.create("/r/a", b("3"), None).await, Ok(6));
    }

    #[tokio::test]
    async fn uid_preconditions_read_the_stored_object() {
        let s = MemoryStorage::new();
        s.create("/r/a", b(r#"{"metadata":{"uid":"u1"}}"#), None).await.unwrap();
        let other = Preconditions { uid: Some("u2".into()), resource_version: None };
        let err = s.delete("/r/a", &other).await.unwrap_err();
        assert_eq!(err.to_string(), "Precondition failed: UID in precondition: u2, UID in object meta: u1");
        let right = Preconditions { uid: Some("u1".into()), resource_version: Some(1) };
        assert!(s.delete("/r/a", &right).await.is_ok());
    }

    #[tokio::test]
    async fn lists_page_at_the_first_pages_revision_and_read_history() {
        let s = MemoryStorage::new();
        for name in ["a", "b", "c", "d"] {
            s.create(&format!("/r/ns/{name}"), b(name), None).await.unwrap();
        }
        s.create("/r/nsx", b("outside the prefix"), None).await.unwrap();
        s.create("/other/a", b("elsewhere"), None).await.unwrap();
        let first = s.list("/r/ns/", 3, 0, None).await.unwrap();
        assert_eq!(keys(&first), ["/r/ns/a", "/r/ns/b", "/r/ns/c"]);
        assert_eq!((first.resource_version, first.remaining_item_count), (6, Some(1)));
        // The token is kube's: the revision and the key after the last one.
        let token = first.continue_token.clone().unwrap();
        assert_eq!(ContinueToken::decode(&token).unwrap(), ContinueToken::new(6, "c\u{0}"));
        // Later writes do not show in the next page.
        s.create("/r/ns/e", b("e"), None).await.unwrap();
        s.delete("/r/ns/d", &Preconditions::default()).await.unwrap();
        let second = s.list("/r/ns/", 3, 0, Some(&token)).await.unwrap();
        assert_eq!(keys(&second), ["/r/ns/d"]);
        assert_eq!(
            (second.resource_version, second.continue_token, second.remaining_item_count),
            (6, None, None)
        );
        // Everything, now; and at an old revision.
        let now = s.list("/r/ns/", 0, 0, None).await.unwrap();
        assert_eq!(keys(&now), ["/r/ns/a", "/r/ns/b", "/r/ns/c", "/r/ns/e"]);
        assert_eq!(now.resource_version, 8);
        let old = s.list("/r/ns/", 0, 2, None).await.unwrap();
        assert_eq!(keys(&old), ["/r/ns/a", "/r/ns/b"]);
        assert_eq!(old.items[1].1, Object { value: b("b"), resource_version: 2 });
        // An exact limit leaves no token.
        let exact = s.list("/r/ns/", 4, 0, None).await.unwrap();
        assert_eq!((exact.items.len(), exact.continue_token), (4, None));
        assert_eq!(s.list("/r/ns/", 0, 9, None).await, Err(StorageError::FutureRevision));
        assert!(matches!(s.list("/r/ns/", 0, 0, Some("bogus")).await, Err(StorageError::InvalidContinue(_))));
    }

    #[tokio::test]
    async fn compaction_expires_old_reads_but_keeps_what_is_visible() {
        let s = MemoryStorage::new();
        s.create("/r/a", b("1"), None).await.unwrap(); // 1
        s.create("/r/b", b("1"), None).await.unwrap(); // 2
        let page = s.list("/r/", 1, 0, None).await.unwrap();
        s.put_if("/r/a", b("2"), 1).await.unwrap(); // 3
        s.delete("/r/b", &Preconditions::default()).await.unwrap(); // 4
        s.create("/r/c", b("1"), None).await.unwrap(); // 5
        assert_eq!(s.compact(4), Ok(()));
        assert_eq!(s.compact(4), Err(StorageError::Expired));
        assert_eq!(s.compact(9), Err(StorageError::FutureRevision));
        assert_eq!(s.list("/r/", 0, 3, None).await, Err(StorageError::Expired));
        let token = page.continue_token.unwrap();
        let err = s.list("/r/", 1, 0, Some(&token)).await.unwrap_err();
        assert_eq!(err, StorageError::Expired);
        assert_eq!(
            err.to_string(),
            "The provided continue parameter is too old to display a consistent list result."
        );
        // At the compacted revision itself, and after it, reads still work.
        assert_eq!(keys(&s.list("/r/", 0, 4, None).await.unwrap()), ["/r/a"]);
        assert_eq!(keys(&s.list("/r/", 0, 0, None).await.unwrap()), ["/r/a", "/r/c"]);
        assert_eq!(s.get("/r/a").await.unwrap().unwrap().resource_version, 3);
    }

    #[tokio::test]
    async fn watches_replay_history_then_follow_with_etcds_events() {
        let s = MemoryStorage::new();
        s.create("/r/a", b("1"), None).await.unwrap(); // 1
        s.create("/other/x", b("1"), None).await.unwrap(); // 2
        s.put_if("/r/a", b("2"), 1).await.unwrap(); // 3
        let mut watch = s.watch("/r/", 1).await.unwrap();
        assert_eq!(watch.next().await, Ok(WatchUpdate::Created));
        let created = Change {
            key: "/r/a".into(),
            value: b("1"),
            prev: None,
            deleted: false,
            create_revision: 1,
            mod_revision: 1,
        };
        assert_eq!(next_changes(&mut watch).await, vec![created]);
        let modified = next_changes(&mut watch).await;
        assert_eq!(modified[0].prev, Some(b("1")));
        assert_eq!((modified[0].create_revision, modified[0].mod_revision), (1, 3));
        // Then the live writes, in order, only under the prefix.
        s.create("/other/y", b("1"), None).await.unwrap(); // 4
        s.delete("/r/a", &Preconditions::default()).await.unwrap(); // 5
        let deleted = next_changes(&mut watch).await;
        let want = Change {
            key: "/r/a".into(),
            value: Bytes::new(),
            prev: Some(b("2")),
            deleted: true,
            create_revision: 0,
            mod_revision: 5,
        };
        assert_eq!(deleted, vec![want]);
        watch.request_progress().await;
        assert_eq!(watch.next().await, Ok(WatchUpdate::Progress(5)));
        // A watch from now (0) sees only what comes next.
        let mut later = s.watch("/r/", 0).await.unwrap();
        assert_eq!(later.next().await, Ok(WatchUpdate::Created));
        s.create("/r/a", b("again"), None).await.unwrap(); // 6
        let again = next_changes(&mut later).await;
        assert_eq!((again[0].create_revision, again[0].mod_revision, again[0].prev.clone()), (6, 6, None));
    }

    #[tokio::test]
    async fn a_watch_from_a_compacted_revision_ends_compacted() {
        let s = MemoryStorage::new();
        for name in ["a", "b", "c"] {
            s.create(&format!("/r/{name}"), b(name), None).await.unwrap();
        }
        s.compact(2).unwrap();
        let mut watch = s.watch("/r/", 2).await.unwrap();
        assert_eq!(watch.next().await, Ok(WatchUpdate::Created));
        assert_eq!(watch.next().await, Err(WatchEnd::Compacted));
        let mut watch = s.watch("/r/", 3).await.unwrap();
        assert_eq!(watch.next().await, Ok(WatchUpdate::Created));
        assert_eq!(next_changes(&mut watch).await[0].key, "/r/c");
    }

    #[tokio::test]
    async fn broken_watches_end_and_stay_ended() {
        let s = MemoryStorage::new();
        let mut watch = s.watch("/r/", 0).await.unwrap();
        assert_eq!(watch.next().await, Ok(WatchUpdate::Created));
        s.break_watches();
        s.create("/r/a", b("1"), None).await.unwrap();
        assert!(matches!(watch.next().await, Err(WatchEnd::Broken(_))));
        watch.request_progress().await;
        assert!(matches!(watch.next().await, Err(WatchEnd::Broken(_))));
    }
}
