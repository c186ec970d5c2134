//! Checkers: each takes a recorded history and says whether it is valid,
//! naming the operations involved when it is not.

pub mod append;
pub mod lease;
pub mod linearizable;
pub mod watch;

use serde::Serialize;

use crate::history::{Operation, Outcome, Record};
use linearizable::Verdict;

/// Every checker's report on one history; a workload that recorded
/// nothing has no report.
#[derive(Debug, Clone, Serialize)]
pub struct Verdicts {
    pub register: RegisterReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append: Option<append::AppendReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<lease::LeaseReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<watch::WatchReport>,
}

impl Verdicts {
    /// `Some(true)`: every checker found the history valid; `None`: none
    /// found an anomaly but some could not decide.
    pub fn valid(&self) -> Option<bool> {
        let others = [
            self.append.as_ref().map(|r| r.valid),
            self.lease.as_ref().map(|r| r.valid),
            self.watch.as_ref().map(|r| r.valid),
        ];
        if others.contains(&Some(false)) { Some(false) } else { self.register.valid }
    }
}

/// Runs every checker on `history`.
pub fn check_all(history: &[Record]) -> Verdicts {
    let has = |f: fn(&Record) -> bool| history.iter().any(f);
    Verdicts {
        register: check_registers(history),
        append: has(|r| matches!(r, Record::Txn(_))).then(|| append::check(history)),
        lease: has(|r| matches!(r, Record::Lease(_))).then(|| lease::check(history)),
        watch: has(|r| matches!(r, Record::Watch(_))).then(|| watch::check(history)),
    }
}

/// Keeps the first `max` problems and a line counting the rest (a broken
/// history must not make a gigabyte summary); returns how many there were.
pub fn cap_problems(problems: &mut Vec<String>, max: usize) -> usize {
    let total = problems.len();
    if total > max {
        problems.truncate(max);
        problems.push(format!("... and {} more", total - max));
    }
    total
}

/// Search steps per key before the register checker gives up (unknown).
pub const STEP_LIMIT: u64 = 20_000_000;

/// What the register checker found.
#[derive(Debug, Clone, Serialize)]
pub struct RegisterReport {
    /// `Some(true)` valid, `Some(false)` an anomaly, `None` unknown (the
    /// search gave up on some key).
    pub valid: Option<bool>,
    pub ok: usize,
    pub fail: usize,
    pub info: usize,
    pub keys: Vec<KeyReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KeyReport {
    pub key: String,
    pub verdict: String,
    /// For an anomaly: the operations to look at, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<Operation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// Checks every key's register history for linearizability.
pub fn check_registers(history: &[Record]) -> RegisterReport {
    let ops: Vec<Operation> = history
        .iter()
        .filter_map(|r| match r {
            Record::Op(op) => Some(op.clone()),
            _ => None,
        })
        .collect();
    let count = |o: Outcome| ops.iter().filter(|op| op.outcome == o).count();
    let mut valid = Some(true);
    let mut keys = Vec::new();
    for (key, verdict) in linearizable::check(&ops, STEP_LIMIT) {
        let key_ops: Vec<&Operation> = ops.iter().filter(|op| op.key == key).collect();
        let report = match verdict {
            Verdict::Linearizable => {
                KeyReport { key, verdict: "linearizable".into(), operations: vec![], explanation: None }
            }
            Verdict::NotLinearizable { ops: involved, explanation } => {
                valid = Some(false);
                let operations =
                    involved.iter().filter_map(|&i| key_ops.get(i).map(|op| (*op).clone())).collect();
                KeyReport {
                    key,
                    verdict: "NOT linearizable".into(),
                    operations,
                    explanation: Some(explanation),
                }
            }
            Verdict::Unknown { steps } => {
                if valid == Some(true) {
                    valid = None;
                }
                let explanation = Some(format!("search gave up after {steps} steps"));
                KeyReport { key, verdict: "unknown".into(), operations: vec![], explanation }
            }
        };
        keys.push(report);
    }
    RegisterReport {
        valid,
        ok: count(Outcome::Ok),
        fail: count(Outcome::Fail),
        info: count(Outcome::Info),
        keys,
    }
}
