//! The watch checker: etcd's six watch guarantees, checked per watcher
//! against the reference history (read before each compaction and after
//! the run), following each watcher's events and marks in arrival order.
//!
//! * ordered and unique: each event comes after the previous one in the
//!   history (revision, then position within the revision's transaction);
//!   an event never comes twice;
//! * reliable and resumable: across its reconnects a watcher skips no
//!   event of the history, except those below a compaction revision it was
//!   told about (a `compacted` mark); no invented or altered event — so all
//!   watchers agree with the history and with each other;
//! * atomic: all events of one revision arrive in one response;
//! * bookmarkable: when a progress notification for revision R arrives,
//!   every event up to R has been delivered, and none comes later;
//! * durable: every acknowledged register write is in the history.
//!
//! Events after the end of the reference history (it could not be read to
//! the end) are counted as unchecked rather than reported.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use crate::history::{MarkKind, Operation, Outcome, REFERENCE, Record, RegisterOp, WatchEvent, WatchMark};

#[derive(Debug, Clone, Serialize)]
pub struct WatchReport {
    pub valid: bool,
    pub watchers: usize,
    /// Events received by all watchers together.
    pub events: usize,
    pub progress_notifications: usize,
    pub compacted: usize,
    pub reference_events: usize,
    /// Events past the end of the reference history.
    pub unchecked: usize,
    /// Each anomaly in a sentence (at most `MAX_PROBLEMS`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

const MAX_PROBLEMS: usize = 100;

/// What one watcher received, in arrival order.
enum Item<'a> {
    Event(&'a WatchEvent),
    Mark(&'a WatchMark),
}

/// Checks the watch events in `history` (none recorded: trivially valid).
pub fn check(history: &[Record]) -> WatchReport {
    let mut by_watcher: BTreeMap<u32, Vec<Item>> = BTreeMap::new();
    let mut reference = Vec::new();
    let mut acked = Vec::new();
    for record in history {
        match record {
            Record::Watch(e) if e.watcher == REFERENCE => reference.push(e),
            Record::Watch(e) => by_watcher.entry(e.watcher).or_default().push(Item::Event(e)),
            Record::Mark(m) => by_watcher.entry(m.watcher).or_default().push(Item::Mark(m)),
            Record::Op(op) if op.outcome == Outcome::Ok => acked.extend(written(op)),
            _ => {}
        }
    }
    // Pieces are read in revision order; keep arrival order within one.
    reference.sort_by_key(|e| e.revision);
    let history = History::new(&reference);
    let mut problems = Vec::new();
    let mut unchecked = 0;
    for (watcher, items) in &by_watcher {
        unchecked += check_watcher(*watcher, items, &history, &mut problems);
    }
    if !by_watcher.is_empty() {
        let present: HashSet<&str> = reference.iter().filter_map(|e| e.value.as_deref()).collect();
        for (key, value) in &acked {
            if !present.contains(value.to_string().as_str()) {
                problems.push(format!("acknowledged write of {value} to {key} is missing from the history"));
            }
        }
    }
    let count =
        |kind| by_watcher.values().flatten().filter(|i| matches!(i, Item::Mark(m) if m.kind == kind)).count();
    let total = super::cap_problems(&mut problems, MAX_PROBLEMS);
    WatchReport {
        valid: total == 0,
        watchers: by_watcher.len(),
        events: by_watcher.values().flatten().filter(|i| matches!(i, Item::Event(_))).count(),
        progress_notifications: count(MarkKind::Progress),
        compacted: count(MarkKind::Compacted),
        reference_events: reference.len(),
        unchecked,
        problems,
    }
}

/// The (key, value) an acknowledged operation wrote.
fn written(op: &Operation) -> Option<(String, u64)> {
    match op.op {
        RegisterOp::Write { value } | RegisterOp::Cas { to: value, .. } => Some((op.key.clone(), value)),
        RegisterOp::Read { .. } => None,
    }
}

/// The reference history, indexed by (revision, key).
struct History<'a> {
    events: &'a [&'a WatchEvent],
    position: HashMap<(i64, &'a str), usize>,
    last_revision: i64,
}

impl<'a> History<'a> {
    fn new(events: &'a [&'a WatchEvent]) -> Self {
        let position = events.iter().enumerate().map(|(i, e)| ((e.revision, e.key.as_str()), i)).collect();
        Self { events, position, last_revision: events.last().map_or(0, |e| e.revision) }
    }
}

/// Follows one watcher through the history; returns how many of its events
/// were past the history's end.
fn check_watcher(watcher: u32, items: &[Item], history: &History, problems: &mut Vec<String>) -> usize {
    // The next history event the watcher should receive.
    let mut cursor = 0;
    // History events below this revision may be skipped (compacted).
    let mut floor = 0;
    let mut response_of: HashMap<i64, u64> = HashMap::new();
    let mut unchecked = 0;
    // Moves the cursor to `end`, reporting the events passed over.
    let skip_to = |cursor: &mut usize, end: usize, floor: i64, why: &str, problems: &mut Vec<String>| {
        for missed in history.events.get(*cursor..end).unwrap_or_default() {
            if missed.revision >= floor {
                problems
                    .push(format!("watcher {watcher}: {why} revision {} ({})", missed.revision, missed.key));
            }
        }
        *cursor = end.max(*cursor);
    };
    for item in items {
        match item {
            Item::Event(e) if e.revision > history.last_revision => unchecked += 1,
            Item::Event(e) => {
                let Some(&at) = history.position.get(&(e.revision, e.key.as_str())) else {
                    problems.push(format!(
                        "watcher {watcher}: revision {} ({}) is not in the history",
                        e.revision, e.key
                    ));
                    continue;
                };
                if at < cursor {
                    problems.push(format!(
                        "watcher {watcher}: revision {} ({}) came again or out of order (out of order or duplicated)",
                        e.revision, e.key
                    ));
                    continue;
                }
                skip_to(&mut cursor, at, floor, "missed", problems);
                cursor = at + 1;
                let want = history.events[at];
                if want.value != e.value {
                    problems.push(format!(
                        "watcher {watcher}: revision {} is {}={:?}, the history has {}={:?}",
                        e.revision, e.key, e.value, want.key, want.value
                    ));
                }
                let response = *response_of.entry(e.revision).or_insert(e.response);
                if response != e.response {
                    problems.push(format!(
                        "watcher {watcher}: revision {} split over two responses (not atomic)",
                        e.revision
                    ));
                }
            }
            Item::Mark(m) => match m.kind {
                MarkKind::Progress => {
                    let end = history.events.partition_point(|e| e.revision <= m.revision);
                    let why = format!("progress notification at {} came before", m.revision);
                    skip_to(&mut cursor, end, floor, &why, problems);
                }
                MarkKind::Compacted => floor = floor.max(m.revision),
            },
        }
    }
    unchecked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(watcher: u32, revision: i64, value: u64) -> Record {
        Record::Watch(WatchEvent {
            watcher,
            revision,
            key: "k".into(),
            value: Some(value.to_string()),
            at: 0,
            response: revision as u64,
        })
    }

    fn write(value: u64) -> Record {
        Record::Op(Operation {
            process: 0,
            key: "k".into(),
            op: RegisterOp::Write { value },
            invoke: 0,
            complete: 1,
            outcome: Outcome::Ok,
            error: None,
        })
    }

    fn reference(n: i64) -> Vec<Record> {
        (2..2 + n).map(|r| event(REFERENCE, r, r as u64 * 10)).collect()
    }

    fn with(mut history: Vec<Record>, watcher: &[(i64, u64)]) -> Vec<Record> {
        history.extend(watcher.iter().map(|&(r, v)| event(1, r, v)));
        history
    }

    #[test]
    fn a_watcher_that_saw_a_prefix_of_the_history_is_valid() {
        let mut history = with(reference(4), &[(2, 20), (3, 30), (4, 40)]);
        history.extend([write(20), write(50)]);
        let report = check(&history);
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!((report.watchers, report.events, report.reference_events), (1, 3, 4));
    }

    #[test]
    fn duplicated_reordered_missing_and_altered_events_are_reported() {
        let cases: [(&[(i64, u64)], &str); 5] = [
            (&[(2, 20), (3, 30), (3, 30)], "out of order or duplicated"),
            (&[(3, 30), (2, 20)], "out of order or duplicated"),
            (&[(2, 20), (4, 40)], "missed revision 3"),
            (&[(2, 20), (3, 31)], "the history has"),
            (&[(2, 20), (3, 30), (5, 50)], "missed revision 4"),
        ];
        for (events, expected) in cases {
            let report = check(&with(reference(4), events));
            assert!(!report.valid, "{events:?} passed");
            assert!(
                report.problems.iter().any(|p| p.contains(expected)),
                "{events:?}: {:?}",
                report.problems
            );
        }
    }

    fn mark(kind: MarkKind, revision: i64) -> Record {
        Record::Mark(WatchMark { watcher: 1, kind, revision, at: 0 })
    }

    /// Revision 3 of the reference updates two keys in one transaction.
    fn two_key_revision() -> Vec<Record> {
        let mut history = reference(4);
        if let Record::Watch(e) = &mut history[1] {
            let mut other = e.clone();
            other.key = "k2".into();
            history.insert(2, Record::Watch(other));
        }
        history
    }

    fn received(watcher: u32, revision: i64, key: &str, value: u64, response: u64) -> Record {
        Record::Watch(WatchEvent {
            watcher,
            revision,
            key: key.into(),
            value: Some(value.to_string()),
            at: 0,
            response,
        })
    }

    #[test]
    fn a_revision_split_over_two_responses_is_not_atomic() {
        let mut history = two_key_revision();
        history.extend([received(1, 2, "k", 20, 0), received(1, 3, "k", 30, 1), received(1, 3, "k2", 30, 1)]);
        let report = check(&history);
        assert!(report.valid, "{:?}", report.problems);
        history.truncate(history.len() - 2);
        history.extend([received(1, 3, "k", 30, 1), received(1, 3, "k2", 30, 2)]);
        let report = check(&history);
        assert!(report.problems.iter().any(|p| p.contains("not atomic")), "{:?}", report.problems);
        // The two events of revision 3 in the wrong order.
        let mut history = two_key_revision();
        history.extend([received(1, 3, "k2", 30, 1), received(1, 3, "k", 30, 1)]);
        let report = check(&history);
        assert!(report.problems.iter().any(|p| p.contains("out of order")), "{:?}", report.problems);
    }

    #[test]
    fn a_progress_notification_ahead_of_undelivered_events_is_reported() {
        let mut history = with(reference(4), &[(2, 20)]);
        history.push(mark(MarkKind::Progress, 2));
        history.push(event(1, 3, 30));
        assert!(check(&history).valid, "{:?}", check(&history).problems);
        let mut history = with(reference(4), &[(2, 20)]);
        history.push(mark(MarkKind::Progress, 4));
        history.push(event(1, 3, 30));
        let problems = check(&history).problems;
        assert!(
            problems.iter().any(|p| p.contains("progress notification at 4 came before revision 3")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("revision 3 (k) came again or out of order")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_watcher_may_skip_only_what_it_was_told_was_compacted() {
        let mut history = with(reference(5), &[(2, 20)]);
        history.push(mark(MarkKind::Compacted, 5));
        history.push(event(1, 5, 50));
        history.push(event(1, 6, 60));
        let report = check(&history);
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!(report.compacted, 1);
        let mut history = with(reference(5), &[(2, 20)]);
        history.push(mark(MarkKind::Compacted, 4));
        history.push(event(1, 5, 50));
        let problems = check(&history).problems;
        assert_eq!(problems, ["watcher 1: missed revision 4 (k)"]);
    }

    #[test]
    fn events_past_the_reference_are_unchecked_not_invented() {
        let report = check(&with(reference(2), &[(2, 20), (3, 30), (4, 40)]));
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!(report.unchecked, 1);
        let mut history = reference(3);
        history.push(received(1, 3, "other", 30, 0));
        let problems = check(&history).problems;
        assert!(problems.iter().any(|p| p.contains("(other) is not in the history")), "{problems:?}");
    }

    #[test]
    fn an_acknowledged_write_missing_from_the_history_is_reported() {
        let mut history = with(reference(2), &[(2, 20)]);
        history.push(write(77));
        let report = check(&history);
        assert!(!report.valid);
        assert!(report.problems[0].contains("acknowledged write of 77"), "{:?}", report.problems);
    }
}
