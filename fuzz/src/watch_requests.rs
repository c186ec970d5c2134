//! A watch stream's requests: `WatchRequest`s (create / cancel / progress)
//! decoded from the input, each create turned into the server's
//! `watch::watcher::Watcher`, which then picks its events out of a fixed
//! history; each pick is cut up by `watch::fragment::fragments`, as the
//! stream does for watchers created with `fragment: true`.
//!
//! Input: one byte choosing the fragment size limit, then frames of one
//! length byte and that many bytes of protobuf `WatchRequest`.
//!
//! Properties: nothing panics; a watcher sees exactly the events etcd's
//! rules give it (its key range, its filters, nothing below the revision it
//! has been served through, `prev_kv` only when asked for), in order;
//! fragments put back together are the whole response, every fragment but
//! the last is flagged, and no fragment of two or more events reaches the
//! limit.
//!
//! What is not reached: the stream itself (`watch::stream::WatchStream`:
//! admitting a create — negative revision, empty range, duplicate and
//! automatic watch IDs —, cancel, progress requests, catch-up from history)
//! needs a running `Node`. Its admission (`WatchStream::admit`) is the pure
//! part worth fuzzing; it is private.
//!
//! The two server files are compiled here from their sources rather than
//! through `rtcd-server`, which links RocksDB (through `rtcd-raft`) and
//! would make the instrumented build compile RocksDB's C++ a second time.

use std::collections::BTreeMap;

use bytes::Bytes;
use prost::Message;
use rtcd_proto::etcdserverpb::{
    WatchCreateRequest, WatchRequest, WatchResponse, watch_create_request::FilterType,
    watch_request::RequestUnion,
};
use rtcd_proto::mvccpb::{Event, KeyValue, event::EventType};

#[cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// Formatting that file is its own crate's business (`cargo fmt -p rtcd-fuzz` must not touch it).
#[rustfmt::skip]
#[path = "../../server/src/watch/watcher.rs"]
mod watcher;

#[cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// Formatting that file is its own crate's business (`cargo fmt -p rtcd-fuzz` must not touch it).
#[rustfmt::skip]
#[path = "../../server/src/watch/fragment.rs"]
mod fragment;

use watcher::Watcher;

/// Bounds that keep one input fast: every request serves every watcher.
const MAX_REQUESTS: usize = 64;
const MAX_WATCHERS: usize = 16;

/// The store's revision when the stream starts: the history holds events
/// before and after it.
const CURRENT: i64 = 6;

/// A history over keys that sit on every range boundary a watcher can ask
/// for (the empty key, `\0`, prefixes, `\xff`): puts, overwrites, deletes.
fn history() -> Vec<Event> {
    const KEYS: [&[u8]; 7] = [b"\0", b"\0\0", b"a", b"ab", b"b", b"c", b"\xff"];
    let mut events = Vec::new();
    let mut live: BTreeMap<&[u8], KeyValue> = BTreeMap::new();
    for rev in 1..=12i64 {
        // Two changes per revision, as a txn makes.
        for sub in 0..2 {
            let key = KEYS[((rev * 3 + sub) % KEYS.len() as i64) as usize];
            let prev = live.get(key).cloned();
            let delete = prev.is_some() && (rev + sub) % 4 == 0;
            let kv = if delete {
                live.remove(key);
                KeyValue { key: Bytes::from_static(key), mod_revision: rev, ..Default::default() }
            } else {
                let kv = KeyValue {
                    key: Bytes::from_static(key),
                    create_revision: prev.as_ref().map_or(rev, |p| p.create_revision),
                    mod_revision: rev,
                    version: prev.as_ref().map_or(1, |p| p.version + 1),
                    value: Bytes::from(vec![b'v'; (rev * 7 + sub) as usize % 40]),
                    lease: 0,
                };
                live.insert(key, kv.clone());
                kv
            };
            let r#type = if delete { EventType::Delete } else { EventType::Put };
            events.push(Event { r#type: r#type as i32, kv: Some(kv), prev_kv: prev });
        }
    }
    events
}

pub fn run(data: &[u8]) {
    let Some((&limit, mut frames)) = data.split_first() else { return };
    // Small limits, so that responses of the fixed history do get split.
    let limit = 40 + usize::from(limit) * 4;
    let events = history();
    let mut watchers: BTreeMap<i64, (WatchCreateRequest, Watcher)> = BTreeMap::new();
    let mut next_id = 0;
    let mut requests = 0;
    while let Some((&len, rest)) = frames.split_first() {
        requests += 1;
        if requests > MAX_REQUESTS {
            break;
        }
        let len = usize::from(len).min(rest.len());
        let (frame, tail) = rest.split_at(len);
        frames = tail;
        let Ok(req) = WatchRequest::decode(frame) else { continue };
        let again = WatchRequest::decode(req.encode_to_vec().as_slice());
        assert_eq!(again.as_ref().ok(), Some(&req), "re-encoded WatchRequest decodes differently");
        match req.request_union {
            Some(RequestUnion::CreateRequest(create)) => {
                // The stream refuses negative revisions before making a watcher.
                if create.start_revision < 0 || watchers.len() >= MAX_WATCHERS {
                    continue;
                }
                let start = if create.start_revision == 0 { CURRENT + 1 } else { create.start_revision };
                let id = if create.watch_id != 0 { create.watch_id } else { next_id };
                next_id += 1;
                let w = Watcher::new(id, &create, start);
                assert_eq!(w.id, id);
                assert_eq!(w.next_revision, start);
                assert_eq!((w.fragment, w.progress_notify), (create.fragment, create.progress_notify));
                assert!(!w.sent_since_progress, "a new watcher has sent nothing");
                watchers.insert(id, (create, w));
            }
            Some(RequestUnion::CancelRequest(cancel)) => {
                watchers.remove(&cancel.watch_id);
            }
            Some(RequestUnion::ProgressRequest(_)) | None => {}
        }
        for (create, w) in watchers.values_mut() {
            serve(create, w, &events, limit);
        }
    }
}

/// One round of serving `w`: what it selects, checked against etcd's rules,
/// then fragmented; afterwards it has been served through the first half of
/// what it got, so the next round must skip that.
fn serve(create: &WatchCreateRequest, w: &mut Watcher, events: &[Event], limit: usize) {
    let from = w.next_revision;
    let selected = w.select(events);
    let expected: Vec<Event> = events
        .iter()
        .filter(|e| wanted(create, from, e))
        .map(|e| Event { prev_kv: if create.prev_kv { e.prev_kv.clone() } else { None }, ..e.clone() })
        .collect();
    assert_eq!(selected, expected, "watcher {create:?} from {from} selects other events");

    let whole = WatchResponse { watch_id: w.id, events: selected.clone(), ..Default::default() };
    let parts = fragment::fragments(whole.clone(), limit);
    let rejoined: Vec<Event> = parts.iter().flat_map(|p| p.events.clone()).collect();
    assert_eq!(rejoined, selected, "fragments lose or reorder events");
    assert!(parts.iter().all(|p| p.watch_id == w.id), "a fragment lost its watch id");
    if let [single] = parts.as_slice() {
        assert_eq!(single, &whole, "an unsplit response changed");
    } else {
        let (last, rest) = parts.split_last().unwrap_or_else(|| panic!("fragments of {whole:?}: none"));
        assert!(!last.fragment, "the last fragment is flagged");
        assert!(rest.iter().all(|p| p.fragment), "a fragment before the last is unflagged");
        for p in &parts {
            assert!(!p.events.is_empty(), "an empty fragment");
            assert!(p.events.len() == 1 || p.encoded_len() < limit, "a fragment reaches the limit {limit}");
        }
    }

    let served = selected.get(selected.len() / 2).and_then(|e| e.kv.as_ref()).map(|kv| kv.mod_revision);
    if let Some(rev) = served {
        w.served_through(rev);
        assert_eq!(w.next_revision, from.max(rev + 1), "served_through moved wrongly");
    }
}

/// etcd's rules for whether a watcher created by `create` and served up to
/// `from` sees `e`, written out independently of `Watcher`.
fn wanted(create: &WatchCreateRequest, from: i64, e: &Event) -> bool {
    let Some(kv) = &e.kv else { return false };
    let filtered = |f: FilterType| create.filters.contains(&(f as i32));
    let dropped = match EventType::try_from(e.r#type) {
        Ok(EventType::Put) => filtered(FilterType::Noput),
        Ok(EventType::Delete) => filtered(FilterType::Nodelete),
        Err(_) => true,
    };
    // No key means the smallest key, `\0`.
    let key: &[u8] = if create.key.is_empty() { b"\0" } else { &create.key };
    let k = kv.key.as_ref();
    let in_range = match create.range_end.as_ref() {
        [] => k == key,
        [0] => k >= key,
        end => k >= key && k < end,
    };
    !dropped && in_range && kv.mod_revision >= from
}
