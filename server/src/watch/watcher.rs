//! One watcher: what it watches, how its events are shaped, and how far it
//! has been served.

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{WatchCreateRequest, watch_create_request::FilterType};
use rtcd_proto::mvccpb::{Event, event::EventType};

#[derive(Debug, Clone)]
pub struct Watcher {
    pub id: i64,
    key: Bytes,
    /// Empty: the single key; `[0]`: every key from `key` on; otherwise the
    /// half-open range `[key, range_end)`.
    range_end: Bytes,
    no_put: bool,
    no_delete: bool,
    prev_kv: bool,
    pub fragment: bool,
    pub progress_notify: bool,
    /// The next revision this watcher has not been served yet: every event
    /// below it has been sent (or filtered out).
    pub next_revision: i64,
    /// Whether events were sent since the last periodic progress report
    /// (etcd skips the report then).
    pub sent_since_progress: bool,
}

impl Watcher {
    /// A watcher for `req`, starting at `start` (already resolved from
    /// `start_revision`, 0 meaning "after the current revision").
    pub fn new(id: i64, req: &WatchCreateRequest, start: i64) -> Self {
        // etcd watches from the smallest key when none is given.
        let key = if req.key.is_empty() { Bytes::from_static(&[0]) } else { req.key.clone() };
        let filters = || req.filters.iter().filter_map(|f| FilterType::try_from(*f).ok());
        Self {
            id,
            key,
            range_end: req.range_end.clone(),
            no_put: filters().any(|f| f == FilterType::Noput),
            no_delete: filters().any(|f| f == FilterType::Nodelete),
            prev_kv: req.prev_kv,
            fragment: req.fragment,
            progress_notify: req.progress_notify,
            next_revision: start,
            sent_since_progress: false,
        }
    }

    fn watches_key(&self, key: &[u8]) -> bool {
        match self.range_end.as_ref() {
            [] => key == self.key,
            [0] => key >= self.key.as_ref(),
            end => key >= self.key.as_ref() && key < end,
        }
    }

    fn wants(&self, event: &Event) -> bool {
        let Some(kv) = &event.kv else { return false };
        let filtered = match EventType::try_from(event.r#type) {
            Ok(EventType::Put) => self.no_put,
            Ok(EventType::Delete) => self.no_delete,
            Err(_) => true,
        };
        !filtered && kv.mod_revision >= self.next_revision && self.watches_key(&kv.key)
    }

    /// The events of `events` this watcher should see, shaped for it
    /// (`prev_kv` only when asked for). Does not advance `next_revision`.
    pub fn select(&self, events: &[Event]) -> Vec<Event> {
        events
            .iter()
            .filter(|e| self.wants(e))
            .map(|e| {
                let mut e = e.clone();
                if !self.prev_kv {
                    e.prev_kv = None;
                }
                e
            })
            .collect()
    }

    /// Records that everything up to `revision` has been served.
    pub fn served_through(&mut self, revision: i64) {
        self.next_revision = self.next_revision.max(revision + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtcd_proto::mvccpb::KeyValue;

    fn event(kind: EventType, key: &str, rev: i64) -> Event {
        let kv = KeyValue { key: Bytes::from(key.to_string()), mod_revision: rev, ..Default::default() };
        Event { r#type: kind as i32, kv: Some(kv.clone()), prev_kv: Some(kv) }
    }

    fn watcher(key: &str, end: &[u8], filters: Vec<FilterType>) -> Watcher {
        let req = WatchCreateRequest {
            key: Bytes::from(key.to_string()),
            range_end: Bytes::copy_from_slice(end),
            filters: filters.into_iter().map(|f| f as i32).collect(),
            ..Default::default()
        };
        Watcher::new(0, &req, 1)
    }

    #[test]
    fn key_ranges_follow_etcd() {
        let events =
            [event(EventType::Put, "a", 2), event(EventType::Put, "b", 3), event(EventType::Put, "c", 4)];
        let keys = |w: &Watcher| {
            w.select(&events).iter().map(|e| e.kv.as_ref().unwrap().key.clone()).collect::<Vec<_>>()
        };
        assert_eq!(keys(&watcher("b", b"", vec![])), vec![Bytes::from("b")]);
        assert_eq!(keys(&watcher("b", b"\0", vec![])), vec![Bytes::from("b"), Bytes::from("c")]);
        assert_eq!(keys(&watcher("a", b"c", vec![])), vec![Bytes::from("a"), Bytes::from("b")]);
        assert_eq!(keys(&watcher("", b"\0", vec![])).len(), 3);
    }

    #[test]
    fn filters_and_prev_kv_shape_events() {
        let events = [event(EventType::Put, "a", 2), event(EventType::Delete, "a", 3)];
        let no_put = watcher("a", b"", vec![FilterType::Noput]).select(&events);
        assert_eq!(no_put.len(), 1);
        assert_eq!(no_put[0].r#type, EventType::Delete as i32);
        assert!(no_put[0].prev_kv.is_none(), "prev_kv only when asked for");
        assert_eq!(watcher("a", b"", vec![FilterType::Nodelete, FilterType::Noput]).select(&events), vec![]);
    }

    #[test]
    fn already_served_revisions_are_skipped() {
        let events = [event(EventType::Put, "a", 2), event(EventType::Put, "a", 3)];
        let mut w = watcher("a", b"", vec![]);
        w.served_through(2);
        assert_eq!(w.select(&events).len(), 1);
        w.served_through(1);
        assert_eq!(w.next_revision, 3, "never moves back");
    }
}
