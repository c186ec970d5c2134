//! Keeps one cache current: list the prefix at a revision, then watch it
//! from the next revision with previous values and progress notifications;
//! relist when the watch falls behind a compaction, re-watch when it breaks.

use std::sync::Arc;
use std::time::Duration;

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
                match watch_from(storage.as_ref(), &cacher, from + 1, &mut progress).await {
                    WatchEnd::Compacted => {
                        tracing::info!(prefix = cacher.prefix(), "watch cache relists after compaction");
                        break;
                    }
                    WatchEnd::Broken(why) => {
                        tracing::warn!(prefix = cacher.prefix(), error = %why, "watch cache watch broke");
                        cacher.not_ready();
                        tokio::time::sleep(Duration::from_secs(1)).await;
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
                    let events = changes.into_iter().filter_map(|change| to_event(cacher, change)).collect();
                    cacher.apply_all(events);
                }
                Err(end) => return end,
            },
            Some(()) = progress.recv() => watch.request_progress().await,
        }
    }
}

/// A change as the cache's event; None for a value that is not JSON.
fn to_event(cacher: &Cacher, change: Change) -> Option<Event> {
    let prev = match change.prev.as_ref().and_then(|prev| decode(&change.key, prev, 0)) {
        Some(prev) => Some(Arc::new(prev)),
        // Without the previous value (compacted away), the cached one.
        None => cacher.get(&change.key).0,
    };
    if change.deleted {
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
    let kind =
        if change.create_revision == change.mod_revision { EventType::Added } else { EventType::Modified };
    Some(Event { kind, object, prev, resource_version: change.mod_revision })
}

fn decode(key: &str, value: &[u8], resource_version: i64) -> Option<CachedObject> {
    match serde_json::from_slice(value) {
        Ok(value) => Some(CachedObject::new(key.to_string(), value, resource_version)),
        Err(err) => {
            tracing::warn!(key, error = %err, "skipping a value that is not JSON");
            None
        }
    }
}
