//! Fan-out of committed changes to every watch stream.
//!
//! The write path publishes each applied batch's events once, in revision
//! order, right after the store has made them visible. Streams subscribe to a
//! bounded ring of recent batches: memory stays bounded however slow a client
//! is, because a stream that falls behind the ring simply reads the revisions
//! it missed from the store's history (etcd's "unsynced" watchers).
//!
//! The node owns the hub and the apply path publishes to it; the streams in
//! `watch` subscribe. It depends on neither, so both can depend on it.

use std::sync::Arc;

use rtcd_proto::mvccpb::Event;
use tokio::sync::broadcast;

/// Batches the ring keeps for streams that are a little behind.
const RING_BATCHES: usize = 1024;

/// How much queued live traffic a stream serves in one go (one response per
/// watcher): the first batch always, more while under both bounds, so
/// merging never builds a response much larger than a history catch-up step.
const MERGE_EVENTS: usize = 1000;
const MERGE_BYTES: usize = 1 << 20;

/// The events of one applied batch: one or more consecutive revisions.
#[derive(Debug)]
pub struct LiveBatch {
    pub events: Vec<Event>,
    /// Keys and values (previous ones included) in bytes: what merging
    /// batches into one response would add to it, roughly.
    pub bytes: usize,
}

impl LiveBatch {
    /// The first revision in the batch (batches are never empty).
    pub fn first_revision(&self) -> i64 {
        self.events.first().map_or(0, event_revision)
    }

    /// The last revision in the batch.
    pub fn last_revision(&self) -> i64 {
        self.events.last().map_or(0, event_revision)
    }
}

/// The revision an event belongs to (deletes carry it in the tombstone).
pub fn event_revision(event: &Event) -> i64 {
    event.kv.as_ref().map_or(0, |kv| kv.mod_revision)
}

fn event_bytes(event: &Event) -> usize {
    let kv_bytes = |kv: &rtcd_proto::mvccpb::KeyValue| kv.key.len() + kv.value.len();
    event.kv.as_ref().map_or(0, kv_bytes) + event.prev_kv.as_ref().map_or(0, kv_bytes)
}

#[derive(Debug, Clone)]
pub struct Hub {
    ring: broadcast::Sender<Arc<LiveBatch>>,
}

impl Default for Hub {
    fn default() -> Self {
        Self { ring: broadcast::channel(RING_BATCHES).0 }
    }
}

impl Hub {
    /// Announces a batch's events. Must be called in revision order, after
    /// the store shows them, so a stream that subscribes and then reads the
    /// store revision misses nothing and sees nothing twice.
    pub fn publish(&self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        // No subscriber is fine: nobody is watching.
        let bytes = events.iter().map(event_bytes).sum();
        let _ = self.ring.send(Arc::new(LiveBatch { events, bytes }));
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<LiveBatch>> {
        self.ring.subscribe()
    }
}

/// `first` and the batches published after it that are already waiting in
/// `live`, up to the merge bounds. They are consecutive: a lag (batches lost
/// to the ring) ends the run, and the next receive starts after the gap.
pub fn with_queued(
    live: &mut broadcast::Receiver<Arc<LiveBatch>>,
    first: Arc<LiveBatch>,
) -> Vec<Arc<LiveBatch>> {
    let (mut events, mut bytes) = (first.events.len(), first.bytes);
    let mut batches = vec![first];
    while events < MERGE_EVENTS && bytes < MERGE_BYTES {
        let Ok(batch) = live.try_recv() else { break };
        events += batch.events.len();
        bytes += batch.bytes;
        batches.push(batch);
    }
    batches
}

/// Every event published after a read at some revision, one at a time and
/// in order, for a task that waits on a few keys (Lock, Election) rather
/// than serving a watch stream.
#[derive(Debug)]
pub struct EventCursor {
    live: broadcast::Receiver<Arc<LiveBatch>>,
    batch: Option<Arc<LiveBatch>>,
    /// Index of the next event of `batch` to hand out.
    next: usize,
    /// The last revision handed out (or read from the store).
    seen: i64,
}

/// Why a cursor has no next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorEnd {
    /// Revisions went by unseen (lost to the ring, or a snapshot installed
    /// without events): read the store again.
    Gap,
    /// The hub is gone.
    Closed,
}

impl EventCursor {
    /// A cursor over what `live` (subscribed before the read) receives
    /// after revision `read_at`, the revision the store was read at.
    pub fn after(live: broadcast::Receiver<Arc<LiveBatch>>, read_at: i64) -> Self {
        Self { live, batch: None, next: 0, seen: read_at }
    }

    /// The next event after the read, in revision order.
    pub async fn next(&mut self) -> Result<Event, CursorEnd> {
        loop {
            if let Some(batch) = &self.batch {
                while let Some(event) = batch.events.get(self.next) {
                    self.next += 1;
                    let revision = event_revision(event);
                    if revision > self.seen {
                        self.seen = revision;
                        return Ok(event.clone());
                    }
                }
            }
            let batch = match self.live.recv().await {
                Ok(batch) => batch,
                Err(broadcast::error::RecvError::Lagged(_)) => return Err(CursorEnd::Gap),
                Err(broadcast::error::RecvError::Closed) => return Err(CursorEnd::Closed),
            };
            // Every revision has events, published in order: a batch that
            // starts past the next revision means some were never seen.
            if batch.first_revision() > self.seen + 1 {
                return Err(CursorEnd::Gap);
            }
            self.batch = Some(batch);
            self.next = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use rtcd_proto::mvccpb::KeyValue;

    fn put(rev: i64, value_len: usize) -> Vec<Event> {
        let kv = KeyValue {
            key: Bytes::from_static(b"k"),
            value: vec![0; value_len].into(),
            mod_revision: rev,
            ..Default::default()
        };
        vec![Event { kv: Some(kv), ..Default::default() }]
    }

    fn revisions(batches: &[Arc<LiveBatch>]) -> Vec<i64> {
        batches.iter().map(|b| b.first_revision()).collect()
    }

    /// Every event after the read, each once, also from one batch with
    /// several; a revision that never came is reported as a gap.
    #[tokio::test]
    async fn a_cursor_hands_out_each_event_after_the_read_once() {
        let hub = Hub::default();
        let mut cursor = EventCursor::after(hub.subscribe(), 2);
        hub.publish(put(2, 1));
        hub.publish([put(3, 1), put(4, 1)].concat());
        hub.publish(put(5, 1));
        hub.publish(put(7, 1));
        for want in 3..=5 {
            assert_eq!(cursor.next().await.map(|e| event_revision(&e)), Ok(want));
        }
        assert_eq!(cursor.next().await.map(|e| event_revision(&e)), Err(CursorEnd::Gap));
    }

    #[tokio::test]
    async fn queued_batches_are_taken_together_in_order() {
        let hub = Hub::default();
        let mut live = hub.subscribe();
        (1..=3).for_each(|rev| hub.publish(put(rev, 1)));
        let first = live.recv().await.unwrap();
        assert_eq!(revisions(&with_queued(&mut live, first)), vec![1, 2, 3]);
        hub.publish(put(4, 1));
        let first = live.recv().await.unwrap();
        assert_eq!(revisions(&with_queued(&mut live, first)), vec![4], "nothing else was waiting");
    }

    #[tokio::test]
    async fn merging_stops_at_its_bounds() {
        let hub = Hub::default();
        let mut live = hub.subscribe();
        (1..=3).for_each(|rev| hub.publish(put(rev, MERGE_BYTES / 2)));
        let first = live.recv().await.unwrap();
        assert_eq!(revisions(&with_queued(&mut live, first)), vec![1, 2], "stops once over the byte bound");
        let first = live.recv().await.unwrap();
        assert_eq!(revisions(&with_queued(&mut live, first)), vec![3]);
        (4..4 + MERGE_EVENTS as i64 + 5).for_each(|rev| hub.publish(put(rev, 0)));
        let first = live.recv().await.unwrap();
        assert_eq!(with_queued(&mut live, first).len(), MERGE_EVENTS, "stops at the event bound");
    }

    #[tokio::test]
    async fn a_lag_ends_the_run_so_no_gap_is_merged_over() {
        let hub = Hub::default();
        let mut live = hub.subscribe();
        hub.publish(put(1, 0));
        let first = live.recv().await.unwrap();
        // More than the ring holds: the receiver lags past the oldest.
        (2..2 + RING_BATCHES as i64 + 10).for_each(|rev| hub.publish(put(rev, 0)));
        assert_eq!(revisions(&with_queued(&mut live, first)), vec![1]);
        let after_gap = live.recv().await.unwrap();
        assert!(after_gap.first_revision() > 2, "the next receive starts after the lost batches");
    }
}
