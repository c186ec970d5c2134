//! The in-memory key index: for every key, the revisions at which it changed.
//!
//! Values live on disk in the `kv` table, keyed by revision; the index maps a
//! key and a point in time to the revision holding its value then. It keeps
//! `create_revision` and `version` beside each revision so counts, version and
//! revision compares and new versions need no disk read. It is rebuilt from the
//! `kv` table when the store opens.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use bytes::Bytes;

use crate::revision::Revision;

/// One change of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRev {
    pub rev: Revision,
    /// `create_revision` of the generation this change belongs to.
    pub create: i64,
    /// Writes since creation, counting this one; 0 marks a deletion.
    pub version: i64,
}

impl KeyRev {
    pub fn is_tombstone(&self) -> bool {
        self.version == 0
    }
}

/// Which keys a request covers, decoded from etcd's `(key, range_end)` pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    pub start: Bytes,
    pub end: RangeEnd,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeEnd {
    /// Empty `range_end`: just `start`.
    Single,
    /// `range_end == "\0"`: every key from `start` on.
    Unbounded,
    /// Keys up to, not including, this one.
    Before(Bytes),
}

impl KeyRange {
    pub fn new(key: &Bytes, range_end: &Bytes) -> Self {
        let end = match range_end.as_ref() {
            [] => RangeEnd::Single,
            [0] => RangeEnd::Unbounded,
            _ => RangeEnd::Before(range_end.clone()),
        };
        Self { start: key.clone(), end }
    }

    pub fn contains(&self, key: &[u8]) -> bool {
        match &self.end {
            RangeEnd::Single => key == self.start.as_ref(),
            RangeEnd::Unbounded => key >= self.start.as_ref(),
            RangeEnd::Before(end) => key >= self.start.as_ref() && key < end.as_ref(),
        }
    }
}

type KeyBounds<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

#[derive(Debug, Default)]
pub struct KeyIndex {
    keys: BTreeMap<Bytes, Vec<KeyRev>>,
}

impl KeyIndex {
    /// Keys with a change not yet compacted away (etcd's key count).
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// The live change of `key` as of revision `at`, if the key existed then.
    pub fn get(&self, key: &[u8], at: i64) -> Option<KeyRev> {
        self.keys.get(key).and_then(|revs| visible(revs, at))
    }

    /// Keys in `range` that existed at revision `at`, ascending.
    pub fn range<'a>(
        &'a self,
        range: &'a KeyRange,
        at: i64,
    ) -> impl Iterator<Item = (&'a Bytes, KeyRev)> + 'a {
        let start = range.start.as_ref();
        let bounds: Option<KeyBounds<'_>> = match &range.end {
            RangeEnd::Single => Some((Bound::Included(start), Bound::Included(start))),
            RangeEnd::Unbounded => Some((Bound::Included(start), Bound::Unbounded)),
            // BTreeMap::range panics on an inverted range; such a range is empty.
            RangeEnd::Before(end) if end.as_ref() <= start => None,
            RangeEnd::Before(end) => Some((Bound::Included(start), Bound::Excluded(end.as_ref()))),
        };
        bounds
            .into_iter()
            .flat_map(|b| self.keys.range::<[u8], _>(b))
            .filter_map(move |(k, revs)| visible(revs, at).map(|r| (k, r)))
    }

    /// Records a put of `key` at `rev` and returns the change with its
    /// creation revision and version.
    pub fn put(&mut self, key: Bytes, rev: Revision) -> KeyRev {
        let revs = self.keys.entry(key).or_default();
        let change = match revs.last() {
            Some(last) if !last.is_tombstone() => {
                KeyRev { rev, create: last.create, version: last.version + 1 }
            }
            _ => KeyRev { rev, create: rev.main, version: 1 },
        };
        revs.push(change);
        change
    }

    /// Records the deletion of a live key at `rev`.
    pub fn delete(&mut self, key: &[u8], rev: Revision) {
        if let Some(revs) = self.keys.get_mut(key) {
            revs.push(KeyRev { rev, create: 0, version: 0 });
        }
    }

    /// Adds a change read back from disk; changes arrive in revision order.
    pub fn restore(&mut self, key: Bytes, change: KeyRev) {
        self.keys.entry(key).or_default().push(change);
    }

    /// Forgets history no read at or after revision `at` can see, and returns
    /// the `kv` table keys of the records that can go.
    ///
    /// Kept per key, as etcd keeps them: every change after `at`, plus the
    /// latest change at or before `at` when it is a put (it is still the
    /// value at `at`). A delete at `at` itself goes, so a watch from `at`
    /// replays only the puts of that revision, exactly like etcd's.
    pub fn compact(&mut self, at: i64) -> Vec<Vec<u8>> {
        let mut removed = Vec::new();
        self.keys.retain(|_, revs| {
            let before = revs.partition_point(|r| r.rev.main <= at);
            let keep_from = match before.checked_sub(1) {
                None => 0,
                // The latest change up to `at` is still the value at `at`...
                Some(last) if !revs[last].is_tombstone() => last,
                // ...unless it deleted the key.
                Some(_) => before,
            };
            removed.extend(revs.drain(..keep_from).map(|r| r.rev.encode(r.is_tombstone())));
            !revs.is_empty()
        });
        removed
    }

    /// The revisions at or before `at` that the index still holds: after a
    /// compaction at `at`, each key's value at `at` (when it had one).
    pub fn held_at_or_before(&self, at: i64) -> HashSet<Revision> {
        self.keys
            .values()
            .filter_map(|revs| revs.first())
            .filter(|r| r.rev.main <= at)
            .map(|r| r.rev)
            .collect()
    }

    /// Number of keys with any history (live or deleted but not compacted).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.keys.len()
    }
}

/// The change visible at revision `at`: the latest one not after `at`,
/// unless that one deleted the key.
fn visible(revs: &[KeyRev], at: i64) -> Option<KeyRev> {
    let n = revs.partition_point(|r| r.rev.main <= at);
    let latest = *revs.get(n.checked_sub(1)?)?;
    (!latest.is_tombstone()).then_some(latest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn versions_restart_after_delete() {
        let mut idx = KeyIndex::default();
        assert_eq!(idx.put(b("a"), Revision::new(2, 0)).version, 1);
        let second = idx.put(b("a"), Revision::new(3, 0));
        assert_eq!((second.create, second.version), (2, 2));
        idx.delete(b"a", Revision::new(4, 0));
        assert_eq!(idx.get(b"a", 4), None);
        assert_eq!(idx.get(b"a", 3).map(|r| r.version), Some(2));
        let again = idx.put(b("a"), Revision::new(5, 0));
        assert_eq!((again.create, again.version), (5, 1));
    }

    #[test]
    fn compaction_keeps_what_reads_at_or_after_it_see() {
        let mut idx = KeyIndex::default();
        idx.put(b("a"), Revision::new(2, 0));
        idx.put(b("a"), Revision::new(3, 0));
        idx.put(b("d"), Revision::new(3, 1));
        idx.delete(b"d", Revision::new(4, 0));
        idx.put(b("a"), Revision::new(6, 0));
        let removed = idx.compact(5);
        let expected =
            [(Revision::new(2, 0), false), (Revision::new(3, 1), false), (Revision::new(4, 0), true)];
        assert_eq!(removed, expected.map(|(rev, tombstone)| rev.encode(tombstone)));
        assert_eq!(idx.get(b"a", 5).map(|r| r.rev), Some(Revision::new(3, 0)));
        assert_eq!(idx.get(b"d", 5), None);
        assert_eq!(idx.len(), 1);
    }

    #[test]
    fn compaction_drops_a_delete_at_the_compaction_point() {
        let mut idx = KeyIndex::default();
        idx.put(b("a"), Revision::new(2, 0));
        idx.delete(b"a", Revision::new(3, 0));
        idx.put(b("b"), Revision::new(2, 1));
        idx.delete(b"b", Revision::new(3, 1));
        idx.put(b("b"), Revision::new(3, 2));
        let removed = idx.compact(3);
        let kept: Vec<_> = removed.iter().map(|raw| Revision::decode(raw).unwrap().0).collect();
        assert_eq!(
            kept,
            vec![Revision::new(2, 0), Revision::new(3, 0), Revision::new(2, 1), Revision::new(3, 1)]
        );
        assert_eq!(idx.get(b"b", 3).map(|r| r.rev), Some(Revision::new(3, 2)), "the put at 3 stays");
        assert_eq!(idx.len(), 1);
    }

    #[test]
    fn inverted_range_is_empty_not_a_panic() {
        let mut idx = KeyIndex::default();
        idx.put(b("m"), Revision::new(2, 0));
        let range = KeyRange::new(&b("z"), &b("a"));
        assert_eq!(idx.range(&range, 2).count(), 0);
        let same = KeyRange::new(&b("m"), &b("m"));
        assert_eq!(idx.range(&same, 2).count(), 0);
    }
}
