//! What happened during a run: every client operation with its invocation
//! and completion times and outcome, and every fault window. Written as JSON
//! lines so a run can be checked again, or by other tools.

use serde::{Deserialize, Serialize};

/// Nanoseconds since the run started.
pub type Nanos = u64;

/// How an operation ended, from the client's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It took effect, and the result is what the server answered.
    Ok,
    /// It certainly did not take effect (refused before proposing, or a
    /// compare that failed).
    Fail,
    /// Unknown (timeout, connection lost): it may or may not have taken
    /// effect, at any time after its invocation.
    Info,
}

/// A register operation on one key. Values are unique per write, so a read
/// names the write it observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "f", rename_all = "lowercase")]
pub enum RegisterOp {
    /// `value` is what was read (`None`: the key did not exist).
    Read {
        value: Option<u64>,
    },
    Write {
        value: u64,
    },
    /// Compare-and-set: succeeds (Ok) only if the current value is `from`;
    /// a failed compare is `Fail`.
    Cas {
        from: u64,
        to: u64,
    },
}

/// One completed (or abandoned) client operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    /// The client that issued it; a client issues one operation at a time.
    pub process: u32,
    pub key: String,
    pub op: RegisterOp,
    pub invoke: Nanos,
    /// For `Info` operations: when the client gave up (the operation may
    /// still take effect later).
    pub complete: Nanos,
    pub outcome: Outcome,
    /// Why it failed or is indeterminate (the server's error text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A fault injected during the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// e.g. "partition-majority", "kill-leader".
    pub kind: String,
    /// Which members it touched, by name.
    pub targets: Vec<String>,
    pub start: Nanos,
    pub end: Nanos,
}

/// One event as a watcher received it (or, for `watcher` = `REFERENCE`,
/// as the final full-history watch after the run saw it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchEvent {
    pub watcher: u32,
    pub revision: i64,
    pub key: String,
    /// The value put, `None` for a delete.
    pub value: Option<u64>,
    /// When the watcher received it.
    pub at: Nanos,
}

/// The `watcher` number of the reference history.
pub const REFERENCE: u32 = u32::MAX;

/// One line of `history.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Op(Operation),
    Fault(FaultWindow),
    Watch(WatchEvent),
}
