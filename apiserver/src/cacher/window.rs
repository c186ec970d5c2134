//! A cache's window of recent events (what watches resuming from a
//! revision are served from), bounded by count as kube bounds it and by
//! bytes across every cache: a count alone let 500 patches of a 1 MB
//! ConfigMap hold 860 MB, and a thousand applies by as many managers over
//! a gigabyte. The bytes counted are what the objects take in memory
//! (`CachedObject::size`). Past the shared budget, the cache adding an
//! event drops its own oldest ones: the resource being written loses
//! history (its watchers resuming from before get 410 Gone and relist),
//! the others keep theirs.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Event;

/// The bytes every cache's window may hold together.
#[derive(Debug)]
pub struct WindowBytes {
    limit: usize,
    held: AtomicUsize,
}

impl WindowBytes {
    /// A budget of `limit` bytes; 0 for none.
    pub fn new(limit: usize) -> Arc<WindowBytes> {
        Arc::new(WindowBytes {
            limit: if limit == 0 { usize::MAX } else { limit },
            held: AtomicUsize::new(0),
        })
    }

    /// What the windows hold now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    fn over(&self) -> bool {
        self.held() > self.limit
    }

    fn take(&self, bytes: usize) {
        self.held.fetch_add(bytes, Ordering::Relaxed);
    }

    fn give_back(&self, bytes: usize) {
        let _ = self
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| Some(held.saturating_sub(bytes)));
    }
}

/// One cache's recent events, oldest first.
#[derive(Debug)]
pub(super) struct Window {
    events: VecDeque<Event>,
    /// Watches from this revision on are served from the window.
    start: i64,
    bytes: usize,
    max_events: usize,
    budget: Arc<WindowBytes>,
}

impl Window {
    pub(super) fn new(max_events: usize, budget: Arc<WindowBytes>) -> Window {
        Window { events: VecDeque::new(), start: 0, bytes: 0, max_events, budget }
    }

    pub(super) fn start(&self) -> i64 {
        self.start
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Event> {
        self.events.iter()
    }

    /// Adds `event`, dropping the oldest past either bound.
    pub(super) fn push(&mut self, event: Event) {
        let size = cost(&event);
        self.bytes += size;
        self.budget.take(size);
        self.events.push_back(event);
        while self.events.len() > self.max_events || (self.budget.over() && !self.events.is_empty()) {
            let Some(evicted) = self.events.pop_front() else { break };
            self.start = evicted.resource_version;
            let size = cost(&evicted);
            self.bytes -= size;
            self.budget.give_back(size);
        }
    }

    /// Empties the window: watches are served from `start` on.
    pub(super) fn restart(&mut self, start: i64) {
        self.events.clear();
        self.budget.give_back(self.bytes);
        self.bytes = 0;
        self.start = start;
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}

/// What an event adds to the window: the object it brings (its previous
/// state is the cache's object before it, already counted, except for a
/// deletion's copy of it).
fn cost(event: &Event) -> usize {
    event.object.size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cacher::{CachedObject, EventType};

    fn event(rv: i64, size: usize) -> Event {
        let object = CachedObject::new("/k".into(), serde_json::json!({"metadata": {}}), rv).with_size(size);
        Event { kind: EventType::Modified, object: Arc::new(object), prev: None, resource_version: rv }
    }

    #[test]
    fn the_oldest_events_go_past_the_shared_budget() {
        let budget = WindowBytes::new(1000);
        let mut busy = Window::new(10_000, budget.clone());
        let mut quiet = Window::new(10_000, budget.clone());
        quiet.push(event(1, 300));
        for rv in 2..=20 {
            busy.push(event(rv, 100));
        }
        // 300 held by the quiet cache; the busy one keeps what fits beside it.
        assert_eq!(
            busy.iter().map(|e| e.resource_version).collect::<Vec<_>>(),
            (14..=20).collect::<Vec<_>>()
        );
        assert_eq!(busy.start(), 13);
        assert_eq!(budget.held(), 1000);
        drop(quiet);
        assert_eq!(budget.held(), 700);
        busy.restart(30);
        assert_eq!((budget.held(), busy.iter().count(), busy.start()), (0, 0, 30));
    }

    #[test]
    fn the_count_bounds_as_kubes_does() {
        let mut window = Window::new(3, WindowBytes::new(0));
        for rv in 1..=5 {
            window.push(event(rv, 10));
        }
        assert_eq!(window.iter().map(|e| e.resource_version).collect::<Vec<_>>(), [3, 4, 5]);
        assert_eq!(window.start(), 2);
    }
}
