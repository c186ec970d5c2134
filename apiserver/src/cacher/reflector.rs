//! Keeps one cache current: list the prefix at a revision, then watch it
//! from the next revision with previous values and progress notifications;
//! relist when the watch falls behind a compaction, re-watch when it breaks.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::{CachedObject, Cacher, Event, EventType};
use crate::storage::{Change, Storage, StorageError, WatchEnd, WatchUpdate};

/// Objects per list page (kube's reflector pages its lists by 10,000).
const LIST_PAGE: i64 = 10_000;

/// Runs until `stop` turns true (the resource is no longer served).
pub(super) async fn run(
    cacher: Cacher,
    storage: Arc<dyn Storage>,
    mut progress: mpsc::Receiver<()>,
    mut stop: watch::Receiver<bool>,
) {
    let work = async {
        loop {
            let rv = match list(storage.as_ref(), &cacher).await {
                Ok(rv) => rv,
                Err(e) => {
                    tracing::warn!(prefix = cacher.prefix(), error = %e, "watch cache list failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            // A broken watch resumes from what the cache has; only a
            // compaction forces a new list.
            let mut from = rv;
            loop {
                let started = Instant::now();
                match watch_from(storage.as_ref(), &cacher, from + 1, &mut progress).await {
                    WatchEnd::Compacted => {
                        tracing::info!(prefix = cacher.prefix(), "watch cache relists after compaction");
                        break;
                    }
                    WatchEnd::Broken(why) => {
                        tracing::warn!(prefix = cacher.prefix(), error = %why, "watch cache watch broke");
                        cacher.not_ready();
                        // A watch that ran a while broke with its member:
                        // open it again at once (on another); one that broke
                        // as it started waits a little.
                        if started.elapsed() < Duration::from_secs(1) {
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                        from = cacher.resource_version();
                    }
                }
            }
        }
    };
    tokio::select! {
        () = work => {}
        _ = stop.wait_for(|stopped| *stopped) => {}
    }
}

/// Loads every object under the prefix at one revision; that revision.
async fn list(storage: &dyn Storage, cacher: &Cacher) -> Result<i64, StorageError> {
    let started = Instant::now();
    let mut page = storage.list(cacher.prefix(), LIST_PAGE, 0, None).await?;
    let revision = page.resource_version;
    let mut objects = Vec::new();
    loop {
        objects.extend(page.items.iter().filter_map(|(key, object)| {
            decode(&String::from_utf8_lossy(key), &object.value, object.resource_version)
        }));
        match page.continue_token.take() {
            Some(token) => page = storage.list(cacher.prefix(), LIST_PAGE, 0, Some(&token)).await?,
            None => break,
        }
    }
    cacher.reset(objects, revision);
    cacher.counters().initialized(started.elapsed());
    Ok(revision)
}

/// Follows the prefix from `start` until the watch ends.
async fn watch_from(
    storage: &dyn Storage,
    cacher: &Cacher,
    start: i64,
    progress: &mut mpsc::Receiver<()>,
) -> WatchEnd {
    let mut watch = match storage.watch(cacher.prefix(), start).await {
        Ok(watch) => watch,
        Err(StorageError::Expired) => return WatchEnd::Compacted,
        Err(e) => return WatchEnd::Broken(e.to_string()),
    };
    loop {
        tokio::select! {
            update = watch.next() => match update {
                Ok(WatchUpdate::Created) => cacher.ready_again(),
                Ok(WatchUpdate::Progress(revision)) => cacher.progress(revision),
                Ok(WatchUpdate::Changes(changes)) => {
                    // The objects this batch made, each the next change's
                    // previous state.
                    let mut made = HashMap::new();
                    let events =
                        changes.into_iter().filter_map(|change| to_event(cacher, change, &mut made)).collect();
                    cacher.apply_all(events);
                }
                Err(end) => return end,
            },
            Some(()) = progress.recv() => watch.request_progress().await,
        }
    }
}

/// The objects one batch of changes made (None: deleted), by key.
type Batch = HashMap<String, Option<Arc<CachedObject>>>;

/// A change as the cache's event; None for a value that is not JSON.
/// The previous state is the object the cache (or this batch, in `made`)
/// already holds for the key: the cache has seen every change before this
/// one, so that is the value etcd sends as the previous one, and sharing
/// it keeps one copy of each version instead of two. etcd's previous value
/// is decoded only where the cache has none (a value that was not JSON).
fn to_event(cacher: &Cacher, change: Change, made: &mut Batch) -> Option<Event> {
    let created = !change.deleted && change.create_revision == change.mod_revision;
    let held = match made.get(&change.key) {
        Some(entry) => entry.clone(),
        None => cacher.get(&change.key).0,
    };
    let prev = match held {
        // A creation follows nothing, whatever a deletion left behind.
        _ if created => None,
        Some(held) => Some(held),
        None => change.prev.as_ref().and_then(|prev| decode(&change.key, prev, 0)).map(Arc::new),
    };
    if change.deleted {
        made.insert(change.key.clone(), None);
        let prev = prev?;
        let object = Arc::new(prev.at_revision(change.mod_revision));
        return Some(Event {
            kind: EventType::Deleted,
            object,
            prev: Some(prev),
            resource_version: change.mod_revision,
        });
    }
    let object = Arc::new(decode(&change.key, &change.value, change.mod_revision)?);
    made.insert(change.key.clone(), Some(object.clone()));
    let kind = if created { EventType::Added } else { EventType::Modified };
    Some(Event { kind, object, prev, resource_version: change.mod_revision })
}

fn decode(key: &str, value: &[u8], resource_version: i64) -> Option<CachedObject> {
    match serde_json::from_slice(value) {
        Ok(parsed) => Some(CachedObject::new(key.to_string(), parsed, resource_version)),
        Err(err) => {
            tracing::warn!(key, error = %err, "skipping a value that is not JSON");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::cacher::CacheConfig;
    use crate::storage::MemoryStorage;

    fn change(value: &str, deleted: bool, created_at: i64, at: i64) -> Change {
        Change {
            key: "/registry/configmaps/default/a".into(),
            value: Bytes::from(value.to_string()),
            prev: Some(Bytes::from_static(br#"{"metadata":{"name":"a","labels":{"from":"etcd"}}}"#)),
            deleted,
            create_revision: created_at,
            mod_revision: at,
        }
    }

    #[tokio::test]
    async fn a_batch_shares_previous_states_and_a_recreation_follows_nothing() {
        let storage = Arc::new(MemoryStorage::new());
        let cacher = Cacher::start(storage, "/registry/configmaps/".into(), CacheConfig::default());
        let mut made = Batch::new();
        let created =
            to_event(&cacher, change(r#"{"metadata":{"name":"a"}}"#, false, 5, 5), &mut made).unwrap();
        assert_eq!((created.kind, created.prev.is_none()), (EventType::Added, true));
        assert!(created.object.size > r#"{"metadata":{"name":"a"}}"#.len());
        let labelled = r#"{"metadata":{"name":"a","labels":{"x":"y"}}}"#;
        let modified = to_event(&cacher, change(labelled, false, 5, 6), &mut made).unwrap();
        // The previous state is the object already held, not a second copy.
        assert!(Arc::ptr_eq(modified.prev.as_ref().unwrap(), &created.object));
        let deleted = to_event(&cacher, change("", true, 5, 7), &mut made).unwrap();
        assert!(Arc::ptr_eq(deleted.prev.as_ref().unwrap(), &modified.object));
        assert_eq!(deleted.object.value()["metadata"]["labels"]["x"], "y");
        let recreated =
            to_event(&cacher, change(r#"{"metadata":{"name":"a"}}"#, false, 8, 8), &mut made).unwrap();
        assert_eq!((recreated.kind, recreated.prev.is_none()), (EventType::Added, true));
        // With nothing held, etcd's previous value.
        let mut fresh = Batch::new();
        let modified = to_event(&cacher, change(labelled, false, 5, 9), &mut fresh).unwrap();
        assert_eq!(modified.prev.unwrap().value()["metadata"]["labels"]["from"], "etcd");
    }
}
