//! The watchers of one resource's cache: what each asked for, and the
//! fanout that hands every event to all of them without ever waiting on one.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{CachedObject, Event, EventType};
use crate::selector::{FieldLabels, FieldSelector, LabelSelector};

/// Which objects a list or watch wants.
#[derive(Debug, Clone)]
pub struct Filter {
    pub namespace: Option<String>,
    pub labels: Option<LabelSelector>,
    pub fields: Option<FieldSelector>,
    /// What the kind's field labels mean.
    pub field_labels: FieldLabels,
}

impl Default for Filter {
    fn default() -> Self {
        Filter { namespace: None, labels: None, fields: None, field_labels: FieldLabels::METADATA_ONLY }
    }
}

impl Filter {
    /// Whether a cached object is wanted (read from what the cache keeps
    /// beside its bytes).
    pub fn matches(&self, object: &CachedObject) -> bool {
        if let Some(ns) = &self.namespace
            && object.namespace() != Some(ns)
        {
            return false;
        }
        if let Some(labels) = &self.labels
            && !labels.matches(object.labels())
        {
            return false;
        }
        match &self.fields {
            Some(fields) => object.fields_match(fields, &self.field_labels),
            None => true,
        }
    }

    /// Whether a decoded object is wanted.
    pub fn matches_value(&self, object: &Value) -> bool {
        let meta = &object["metadata"];
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
            Some(fields) => fields.matches(&self.field_labels, object),
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
        /// The event as sent on the wire, filled by the first watch stream
        /// that sends it: every watcher handed this same delivery (same
        /// event, same outcome of its selector) shares it, so an event that
        /// reaches a thousand watchers is encoded once, not a thousand times.
        encoded: Arc<Encodings>,
    },
    /// The cache has seen everything up to `resource_version`;
    /// `initial_events_end` marks the end of a WatchList's initial state.
    Bookmark { resource_version: i64, initial_events_end: bool },
}

/// An event's bytes on the wire, one per encoding, each written by the
/// first stream that needs it.
#[derive(Debug, Default)]
pub struct Encodings {
    pub json: OnceLock<Bytes>,
    pub protobuf: OnceLock<Bytes>,
}

impl Delivery {
    /// An event not yet encoded for anyone.
    pub fn event(kind: EventType, object: Arc<CachedObject>) -> Delivery {
        Delivery::Event { kind, object, encoded: Arc::default() }
    }
}

/// How many deliveries a watcher may have queued before it is closed: a
/// watcher that falls this far behind is cut off (its client re-watches
/// from its last resourceVersion) rather than slowing the others.
pub const WATCHER_BUFFER: usize = 1000;

pub(super) struct Watcher {
    filter: Filter,
    /// Events at or below this revision are already the client's (its
    /// start): never sent again, nor bookmarks below it.
    after: i64,
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
        after: i64,
        tx: mpsc::Sender<Delivery>,
        bookmark_every: Option<Duration>,
        deadline: Instant,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let next_bookmark = bookmark_every.map(|every| Instant::now() + every);
        self.by_id.insert(id, Watcher { filter, after, tx, next_bookmark, deadline });
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

    /// Hands `event` to every watcher it concerns; drops those that are full
    /// (how many: kube's terminated watchers) or gone.
    /// Watchers that see the event the same way (ADDED, MODIFIED or DELETED
    /// by their selectors) are handed one shared delivery.
    pub(super) fn dispatch(&mut self, event: &Event) -> usize {
        let mut shared: [Option<Delivery>; 3] = Default::default();
        let mut full = 0;
        self.by_id.retain(|id, watcher| {
            if event.resource_version <= watcher.after {
                return true;
            }
            let Some(kind) = outcome(&watcher.filter, event) else { return true };
            let slot = match kind {
                EventType::Added => 0,
                EventType::Modified => 1,
                EventType::Deleted => 2,
            };
            let delivery = shared[slot].get_or_insert_with(|| delivery(event, kind));
            match offer(*id, watcher, delivery.clone()) {
                Offered::Queued => true,
                Offered::Full => {
                    full += 1;
                    false
                }
                Offered::Gone => false,
            }
        });
        full
    }

    /// Sends the bookmarks that are due at `now`: the periodic ones, and one
    /// just before each watch's deadline. Never waits for a full watcher.
    pub(super) fn bookmarks(&mut self, now: Instant, resource_version: i64, every: Duration) {
        for watcher in self.by_id.values_mut() {
            let Some(due) = watcher.next_bookmark else { continue };
            if resource_version < watcher.after {
                continue;
            }
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

/// What became of a delivery offered to a watcher.
enum Offered {
    Queued,
    /// The watcher cannot keep up: drop it.
    Full,
    /// Its client is gone: drop it.
    Gone,
}

/// Queues `delivery` for a watcher.
fn offer(id: u64, watcher: &Watcher, delivery: Delivery) -> Offered {
    match watcher.tx.try_send(delivery) {
        Ok(()) => Offered::Queued,
        Err(mpsc::error::TrySendError::Full(_)) => {
            tracing::warn!(watcher = id, "closing a watcher that fell {WATCHER_BUFFER} events behind");
            Offered::Full
        }
        Err(mpsc::error::TrySendError::Closed(_)) => Offered::Gone,
    }
}

/// What a watcher with `filter` sees of `event`, by its filter before and
/// after the change: an object that starts matching is ADDED, one that
/// stops is DELETED (as its previous state, at the new resourceVersion).
pub(super) fn delivery_for(filter: &Filter, event: &Event) -> Option<Delivery> {
    outcome(filter, event).map(|kind| delivery(event, kind))
}

/// How a watcher with `filter` sees `event`, if at all.
fn outcome(filter: &Filter, event: &Event) -> Option<EventType> {
    let now = event.kind != EventType::Deleted && filter.matches(&event.object);
    let before = event.prev.as_ref().is_some_and(|prev| filter.matches(prev));
    match (before, now) {
        (false, false) => None,
        (true, true) => Some(EventType::Modified),
        (false, true) => Some(EventType::Added),
        (true, false) => Some(EventType::Deleted),
    }
}

/// `event` as seen as `kind`: a DELETED one carries the object's last
/// state, stamped with the deletion's revision.
fn delivery(event: &Event, kind: EventType) -> Delivery {
    let object = match (kind, &event.prev) {
        (EventType::Deleted, Some(prev)) => Arc::new(prev.at_revision(event.resource_version)),
        _ => event.object.clone(),
    };
    Delivery::event(kind, object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(n: i64, labels: serde_json::Value, prev_labels: Option<serde_json::Value>) -> Event {
        let object = |labels: serde_json::Value| {
            Arc::new(CachedObject::new(
                "/registry/configmaps/default/a".into(),
                json!({"metadata": {"name": "a", "namespace": "default", "labels": labels}}),
                n,
            ))
        };
        let kind = if prev_labels.is_some() { EventType::Modified } else { EventType::Added };
        Event { kind, object: object(labels), prev: prev_labels.map(object), resource_version: n }
    }

    fn filter(selector: &str) -> Filter {
        Filter { labels: Some(crate::selector::LabelSelector::parse(selector).unwrap()), ..Filter::default() }
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    #[test]
    fn a_watcher_that_cannot_keep_up_is_closed_and_the_others_get_everything() {
        let mut watchers = Watchers::default();
        let (slow_tx, slow_rx) = mpsc::channel(WATCHER_BUFFER);
        let (fast_tx, mut fast_rx) = mpsc::channel(WATCHER_BUFFER);
        watchers.add(Filter::default(), 0, slow_tx, None, far());
        watchers.add(Filter::default(), 0, fast_tx, None, far());
        let total = WATCHER_BUFFER as i64 + 10;
        let mut received = Vec::new();
        let mut closed = 0;
        for n in 1..=total {
            closed += watchers.dispatch(&event(n, json!({}), None));
            while let Ok(Delivery::Event { object, .. }) = fast_rx.try_recv() {
                received.push(object.resource_version);
            }
        }
        assert_eq!(watchers.len(), 1, "the slow watcher is dropped, the fast one kept");
        assert_eq!(closed, 1, "counted as terminated once");
        assert_eq!(received, (1..=total).collect::<Vec<_>>());
        // The slow watcher's stream ends after what it had queued.
        drop(watchers);
        let mut slow_rx = slow_rx;
        let mut queued = 0;
        while slow_rx.try_recv().is_ok() {
            queued += 1;
        }
        assert_eq!(queued, WATCHER_BUFFER);
    }

    #[test]
    fn objects_entering_and_leaving_a_selector_are_added_and_deleted() {
        let mut watchers = Watchers::default();
        let (tx, mut rx) = mpsc::channel(16);
        watchers.add(filter("app=web"), 0, tx, None, far());
        watchers.dispatch(&event(1, json!({"app": "db"}), None));
        watchers.dispatch(&event(2, json!({"app": "web"}), Some(json!({"app": "db"}))));
        watchers.dispatch(&event(3, json!({"app": "web", "x": "y"}), Some(json!({"app": "web"}))));
        watchers.dispatch(&event(4, json!({"app": "db"}), Some(json!({"app": "web", "x": "y"}))));
        let mut seen = Vec::new();
        while let Ok(Delivery::Event { kind, object, .. }) = rx.try_recv() {
            seen.push((kind, object.resource_version, object.value()["metadata"]["labels"]["app"].clone()));
        }
        assert_eq!(
            seen,
            vec![
                (EventType::Added, 2, json!("web")),
                (EventType::Modified, 3, json!("web")),
                // Leaving: the last state it matched in, at the new revision.
                (EventType::Deleted, 4, json!("web")),
            ]
        );
    }

    /// Every watcher that sees an event the same way is handed the same
    /// encoding cell (so the event is encoded once for all of them); one
    /// whose selector makes it an ADDED or a DELETED gets its own.
    #[test]
    fn watchers_that_see_an_event_alike_share_one_encoding() {
        let mut watchers = Watchers::default();
        let mut receivers = Vec::new();
        for selector in ["app=web", "app", "app=web", "app=db", "app!=x"] {
            let (tx, rx) = mpsc::channel(16);
            watchers.add(filter(selector), 0, tx, None, far());
            receivers.push(rx);
        }
        watchers.dispatch(&event(2, json!({"app": "web"}), Some(json!({"app": "db"}))));
        let got: Vec<(EventType, Arc<Encodings>, i64)> = receivers
            .iter_mut()
            .map(|rx| match rx.try_recv() {
                Ok(Delivery::Event { kind, object, encoded }) => (kind, encoded, object.resource_version),
                other => panic!("an event, not {other:?}"),
            })
            .collect();
        let kinds: Vec<EventType> = got.iter().map(|(kind, ..)| *kind).collect();
        use EventType::*;
        assert_eq!(kinds, [Added, Modified, Added, Deleted, Modified]);
        assert!(got.iter().all(|(.., rv)| *rv == 2), "all at the event's revision");
        let same = |a: usize, b: usize| Arc::ptr_eq(&got[a].1, &got[b].1);
        assert!(same(0, 2) && same(1, 4), "alike outcomes share");
        assert!(!same(0, 1) && !same(0, 3) && !same(1, 3), "different outcomes do not");
    }

    #[test]
    fn a_watch_from_a_future_revision_gets_nothing_at_or_below_it() {
        let mut watchers = Watchers::default();
        let (tx, mut rx) = mpsc::channel(16);
        watchers.add(Filter::default(), 5, tx, None, far());
        for n in 3..=7 {
            watchers.dispatch(&event(n, json!({}), None));
        }
        let mut seen = Vec::new();
        while let Ok(Delivery::Event { object, .. }) = rx.try_recv() {
            seen.push(object.resource_version);
        }
        assert_eq!(seen, vec![6, 7]);
    }

    #[test]
    fn bookmarks_come_when_due_and_just_before_the_deadline() {
        let mut watchers = Watchers::default();
        let (tx, mut rx) = mpsc::channel(16);
        let now = Instant::now();
        let every = Duration::from_secs(60);
        watchers.add(Filter::default(), 0, tx, Some(every), now + Duration::from_secs(150));
        watchers.bookmarks(now + Duration::from_secs(30), 5, every);
        assert!(rx.try_recv().is_err(), "not due yet");
        watchers.bookmarks(now + Duration::from_secs(61), 7, every);
        assert!(matches!(
            rx.try_recv(),
            Ok(Delivery::Bookmark { resource_version: 7, initial_events_end: false })
        ));
        watchers.bookmarks(now + Duration::from_secs(149), 9, every);
        assert!(matches!(rx.try_recv(), Ok(Delivery::Bookmark { resource_version: 9, .. })));
        watchers.bookmarks(now + Duration::from_secs(300), 11, every);
        assert!(rx.try_recv().is_err(), "none after the last one");
    }
}
