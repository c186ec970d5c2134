//! The watchers of one resource's cache: what each asked for, and the
//! fanout that hands every event to all of them without ever waiting on one.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::{CachedObject, Event, EventType};
use crate::selector::{FieldSelector, LabelSelector};

/// Which objects a list or watch wants.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub group: &'static str,
    pub plural: &'static str,
    pub namespace: Option<String>,
    pub labels: Option<LabelSelector>,
    pub fields: Option<FieldSelector>,
}

impl Filter {
    pub fn matches(&self, object: &CachedObject) -> bool {
        let meta = &object.value["metadata"];
        if let Some(ns) = &self.namespace
            && meta["namespace"].as_str() != Some(ns)
        {
            return false;
        }
        if let Some(labels) = &self.labels
            && !labels.matches(meta["labels"].as_object())
        {
            return false;
        }
        match &self.fields {
            Some(fields) => fields.matches(self.group, self.plural, &object.value),
            None => true,
        }
    }
}

/// What a watcher is sent, in order.
#[derive(Debug, Clone)]
pub enum Delivery {
    Event {
        kind: EventType,
        object: Arc<CachedObject>,
    },
    /// The cache has seen everything up to `resource_version`;
    /// `initial_events_end` marks the end of a WatchList's initial state.
    Bookmark {
        resource_version: i64,
        initial_events_end: bool,
    },
}

/// How many deliveries a watcher may have queued before it is closed: a
/// watcher that falls this far behind is cut off (its client re-watches
/// from its last resourceVersion) rather than slowing the others.
pub const WATCHER_BUFFER: usize = 1000;

pub(super) struct Watcher {
    filter: Filter,
    tx: mpsc::Sender<Delivery>,
    /// When the next periodic bookmark is due; None without bookmarks.
    next_bookmark: Option<Instant>,
    /// The watch's end; a bookmark goes out shortly before it.
    deadline: Instant,
}

/// All watchers of one cache.
#[derive(Default)]
pub(super) struct Watchers {
    by_id: HashMap<u64, Watcher>,
    next_id: u64,
}

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchers").field("count", &self.by_id.len()).finish()
    }
}

impl Watchers {
    pub(super) fn add(
        &mut self,
        filter: Filter,
        tx: mpsc::Sender<Delivery>,
        bookmark_every: Option<Duration>,
        deadline: Instant,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let next_bookmark = bookmark_every.map(|every| Instant::now() + every);
        self.by_id.insert(id, Watcher { filter, tx, next_bookmark, deadline });
        id
    }

    pub(super) fn remove(&mut self, id: u64) {
        self.by_id.remove(&id);
    }

    /// Ends every watch (their streams close); used when the cache relists.
    pub(super) fn clear(&mut self) {
        self.by_id.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Hands `event` to every watcher it concerns; drops those that are full.
    pub(super) fn dispatch(&mut self, event: &Event) {
        self.by_id.retain(|id, watcher| match delivery_for(&watcher.filter, event) {
            None => true,
            Some(delivery) => offer(*id, watcher, delivery),
        });
    }

    /// Sends the bookmarks that are due at `now`: the periodic ones, and one
    /// just before each watch's deadline. Never waits for a full watcher.
    pub(super) fn bookmarks(&mut self, now: Instant, resource_version: i64, every: Duration) {
        for watcher in self.by_id.values_mut() {
            let Some(due) = watcher.next_bookmark else { continue };
            let before_deadline = watcher.deadline.saturating_duration_since(now) <= Duration::from_secs(2);
            if now < due && !before_deadline {
                continue;
            }
            // A full watcher simply misses a bookmark.
            let _ = watcher.tx.try_send(Delivery::Bookmark { resource_version, initial_events_end: false });
            // The one before the deadline is the last.
            watcher.next_bookmark = (!before_deadline).then(|| now + every);
        }
    }
}

/// Queues `delivery` for a watcher; false (drop it) when it cannot keep up
/// or is gone.
fn offer(id: u64, watcher: &Watcher, delivery: Delivery) -> bool {
    match watcher.tx.try_send(delivery) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(_)) => {
            tracing::warn!(watcher = id, "closing a watcher that fell {WATCHER_BUFFER} events behind");
            false
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    }
}

/// What a watcher with `filter` sees of `event`, by its filter before and
/// after the change: an object that starts matching is ADDED, one that
/// stops is DELETED (as its previous state, at the new resourceVersion).
pub(super) fn delivery_for(filter: &Filter, event: &Event) -> Option<Delivery> {
    let now = event.kind != EventType::Deleted && filter.matches(&event.object);
    let before = event.prev.as_ref().is_some_and(|prev| filter.matches(prev));
    let (kind, object) = match (before, now) {
        (false, false) => return None,
        (true, true) => (EventType::Modified, event.object.clone()),
        (false, true) => (EventType::Added, event.object.clone()),
        (true, false) => {
            let prev = event.prev.as_ref()?;
            (EventType::Deleted, Arc::new(prev.at_revision(event.resource_version)))
        }
    };
    Some(Delivery::Event { kind, object })
}
