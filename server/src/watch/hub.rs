//! Fan-out of committed changes to every watch stream.
//!
//! The write path publishes each applied batch's events once, in revision
//! order, right after the store has made them visible. Streams subscribe to a
//! bounded ring of recent batches: memory stays bounded however slow a client
//! is, because a stream that falls behind the ring simply reads the revisions
//! it missed from the store's history (etcd's "unsynced" watchers).

use std::sync::Arc;

use rtcd_proto::mvccpb::Event;
use tokio::sync::broadcast;

/// Batches the ring keeps for streams that are a little behind.
const RING_BATCHES: usize = 1024;

/// The events of one applied batch: one or more consecutive revisions.
#[derive(Debug)]
pub struct LiveBatch {
    pub events: Vec<Event>,
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
        let _ = self.ring.send(Arc::new(LiveBatch { events }));
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<LiveBatch>> {
        self.ring.subscribe()
    }
}
