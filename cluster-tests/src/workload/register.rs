//! The linearizable register workload: clients read, write and
//! compare-and-set a few keys through different members. Written values are
//! unique, so every read names the write it saw.

use std::collections::HashMap;
use std::time::Instant;

use etcd_client::{Compare, CompareOp, Txn, TxnOp};

use super::{Connection, Process};
use crate::history::{Operation, Outcome, Record, RegisterOp};
use crate::recorder::{Recorder, Rng};

/// One client: operations on `keys` keys through `endpoint` until `until`.
/// After an indeterminate write the client continues as a new process (the
/// old one may still be "in flight"), as Jepsen does.
pub async fn client(
    endpoint: String,
    process: u32,
    processes: u32,
    keys: u32,
    until: Instant,
    rec: Recorder,
    seed: u64,
) {
    let mut rng = Rng::new(seed);
    let mut process = Process::new(process, processes);
    let mut connection = Connection::new(endpoint);
    // The last value this client knows per key: what a CAS compares with.
    let mut known: HashMap<String, u64> = HashMap::new();
    while Instant::now() < until {
        let Some(c) = connection.get().await else { continue };
        let key = format!("jepsen/r{}", rng.below(u64::from(keys)));
        let fresh = process.unique_value();
        let op = match (rng.below(10), known.get(&key)) {
            (0..4, _) => RegisterOp::Read { value: None },
            (4..7, Some(&from)) => RegisterOp::Cas { from, to: fresh },
            _ => RegisterOp::Write { value: fresh },
        };
        let invoke = rec.now();
        let (op, outcome, error) = perform(c, &key, op).await;
        let complete = rec.now();
        match &op {
            RegisterOp::Read { value: Some(v) } if outcome == Outcome::Ok => {
                known.insert(key.clone(), *v);
            }
            RegisterOp::Write { value } | RegisterOp::Cas { to: value, .. } if outcome == Outcome::Ok => {
                known.insert(key.clone(), *value);
            }
            _ => {}
        }
        let failed = outcome != Outcome::Ok && error.is_some();
        rec.record(Record::Op(Operation { process: process.id, key, op, invoke, complete, outcome, error }));
        process.finish(outcome, failed, &mut connection).await;
    }
}

/// Runs one operation; reads that fail are `Fail` (they change nothing),
/// writes that fail are `Info` (they may still take effect).
async fn perform(
    c: &mut etcd_client::Client,
    key: &str,
    op: RegisterOp,
) -> (RegisterOp, Outcome, Option<String>) {
    match op {
        RegisterOp::Read { .. } => match c.get(key, None).await {
            Ok(resp) => {
                let value = resp.kvs().first().and_then(|kv| kv.value_str().ok()?.parse().ok());
                (RegisterOp::Read { value }, Outcome::Ok, None)
            }
            Err(e) => (op, Outcome::Fail, Some(e.to_string())),
        },
        RegisterOp::Write { value } => match c.put(key, value.to_string(), None).await {
            Ok(_) => (op, Outcome::Ok, None),
            Err(e) => (op, Outcome::Info, Some(e.to_string())),
        },
        RegisterOp::Cas { from, to } => {
            let txn = Txn::new()
                .when([Compare::value(key, CompareOp::Equal, from.to_string())])
                .and_then([TxnOp::put(key, to.to_string(), None)]);
            match c.txn(txn).await {
                Ok(resp) if resp.succeeded() => (op, Outcome::Ok, None),
                Ok(_) => (op, Outcome::Fail, None),
                Err(e) => (op, Outcome::Info, Some(e.to_string())),
            }
        }
    }
}
