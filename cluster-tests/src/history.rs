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
/// as the reference history read by the nemesis before each compaction and
/// after the run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchEvent {
    pub watcher: u32,
    pub revision: i64,
    pub key: String,
    /// The value put, `None` for a delete.
    pub value: Option<String>,
    /// When the watcher received it.
    pub at: Nanos,
    /// Which response of this watcher carried it (counted from 0 over the
    /// whole run): events of one revision must arrive in one response.
    #[serde(default)]
    pub response: u64,
}

/// Something a watcher learned that is not an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchMark {
    pub watcher: u32,
    pub kind: MarkKind,
    pub revision: i64,
    pub at: Nanos,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkKind {
    /// A progress notification (answer to a progress request): every event
    /// up to `revision` has been delivered on this stream.
    Progress,
    /// The watch was canceled because its start revision was compacted;
    /// `revision` is the compaction revision it may resume from.
    Compacted,
}

/// One micro-operation of a list-append transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "f", rename_all = "lowercase")]
pub enum Micro {
    /// Read `key`'s list (`None`: not known, the transaction did not
    /// complete; `Some(vec![])`: the key did not exist).
    R { key: String, value: Option<Vec<u64>> },
    /// Append `element` (unique over the run) to `key`'s list.
    Append { key: String, element: u64 },
}

/// A list-append transaction: its micro-operations in order. Reads see the
/// transaction's own earlier appends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transaction {
    /// The client; `REFERENCE` for the final reads after the run.
    pub process: u32,
    pub ops: Vec<Micro>,
    pub invoke: Nanos,
    pub complete: Nanos,
    /// `Fail`: certainly aborted (a compare on an observed revision failed,
    /// or refused before proposing); `Info`: may have committed.
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a lease client did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "f", rename_all = "kebab-case")]
pub enum LeaseAction {
    /// Grant lease `lease` (an ID the client chose) for `ttl` seconds (the
    /// TTL the server granted, when Ok).
    Grant {
        lease: i64,
        ttl: i64,
    },
    /// Put `key` attached to `lease`; each lease gets one key, put once.
    Put {
        lease: i64,
        key: String,
    },
    /// One keep-alive; `ttl` is the TTL the server answered (0: the lease
    /// was not found, i.e. already expired or revoked).
    KeepAlive {
        lease: i64,
        ttl: i64,
    },
    Revoke {
        lease: i64,
    },
    /// A linearizable read of the lease keys' prefix: the keys present.
    Read {
        keys: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseOp {
    /// The client; `REFERENCE` for the final read after every lease should
    /// have expired.
    pub process: u32,
    pub action: LeaseAction,
    pub invoke: Nanos,
    pub complete: Nanos,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The `watcher` (or `process`) number of the reference history and final
/// reads.
pub const REFERENCE: u32 = u32::MAX;

/// One line of `history.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Op(Operation),
    Fault(FaultWindow),
    Watch(WatchEvent),
    Mark(WatchMark),
    Txn(Transaction),
    Lease(LeaseOp),
}
