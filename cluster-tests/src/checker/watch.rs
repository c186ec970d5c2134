//! The watch checker: etcd's watch guarantees, checked per watcher against
//! the reference history read after the run.
//!
//! * ordered and unique: a watcher's revisions strictly increase (the
//!   workload writes one key per revision);
//! * reliable and resumable: from revision 1 to the last event it received,
//!   a watcher saw exactly the reference's events (no gap across its
//!   reconnects, no invented or altered event) — which also makes all
//!   watchers agree;
//! * durable: every acknowledged write is in the reference history.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::history::{Operation, Outcome, REFERENCE, Record, RegisterOp, WatchEvent};

#[derive(Debug, Clone, Serialize)]
pub struct WatchReport {
    pub valid: bool,
    pub watchers: usize,
    /// Events received by all watchers together.
    pub events: usize,
    pub reference_events: usize,
    /// Each anomaly in a sentence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Checks the watch events in `history` (none recorded: trivially valid).
pub fn check(history: &[Record]) -> WatchReport {
    let mut by_watcher: BTreeMap<u32, Vec<&WatchEvent>> = BTreeMap::new();
    let mut acked = Vec::new();
    for record in history {
        match record {
            Record::Watch(e) => by_watcher.entry(e.watcher).or_default().push(e),
            Record::Op(op) if op.outcome == Outcome::Ok => acked.extend(written(op)),
            _ => {}
        }
    }
    let reference = by_watcher.remove(&REFERENCE).unwrap_or_default();
    let mut problems = Vec::new();
    for (watcher, events) in &by_watcher {
        problems.extend(check_watcher(*watcher, events, &reference));
    }
    if !by_watcher.is_empty() {
        let present: HashSet<u64> = reference.iter().filter_map(|e| e.value).collect();
        for (key, value) in &acked {
            if !present.contains(value) {
                problems.push(format!("acknowledged write of {value} to {key} is missing from the history"));
            }
        }
    }
    WatchReport {
        valid: problems.is_empty(),
        watchers: by_watcher.len(),
        events: by_watcher.values().map(Vec::len).sum(),
        reference_events: reference.len(),
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

fn check_watcher(watcher: u32, events: &[&WatchEvent], reference: &[&WatchEvent]) -> Vec<String> {
    let mut problems = Vec::new();
    for pair in events.windows(2) {
        if pair[1].revision <= pair[0].revision {
            problems.push(format!(
                "watcher {watcher}: revision {} came after {} (out of order or duplicated)",
                pair[1].revision, pair[0].revision
            ));
        }
    }
    let Some(last) = events.last().map(|e| e.revision) else { return problems };
    let expected: Vec<&WatchEvent> = reference.iter().copied().filter(|e| e.revision <= last).collect();
    let same =
        |a: &WatchEvent, b: &WatchEvent| a.revision == b.revision && a.key == b.key && a.value == b.value;
    let mut got = events.iter().peekable();
    for want in &expected {
        match got.peek() {
            Some(e) if same(e, want) => {
                got.next();
            }
            Some(e) if e.revision == want.revision => {
                problems.push(format!(
                    "watcher {watcher}: revision {} is {}={:?}, the history has {}={:?}",
                    want.revision, e.key, e.value, want.key, want.value
                ));
                got.next();
            }
            _ => {
                problems.push(format!("watcher {watcher}: missed revision {} ({})", want.revision, want.key))
            }
        }
    }
    for extra in got {
        problems.push(format!("watcher {watcher}: revision {} is not in the history", extra.revision));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(watcher: u32, revision: i64, value: u64) -> Record {
        Record::Watch(WatchEvent { watcher, revision, key: "k".into(), value: Some(value), at: 0 })
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
            (&[(2, 20), (3, 30), (9, 90)], "missed revision 4"),
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

    #[test]
    fn an_acknowledged_write_missing_from_the_history_is_reported() {
        let mut history = with(reference(2), &[(2, 20)]);
        history.push(write(77));
        let report = check(&history);
        assert!(!report.valid);
        assert!(report.problems[0].contains("acknowledged write of 77"), "{:?}", report.problems);
    }
}
