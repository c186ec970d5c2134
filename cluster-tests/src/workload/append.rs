//! The list-append workload: transactions of a few reads and appends over
//! several keys, each key holding a list of unique elements. A transaction
//! reads every key it touches, then commits its appends in one Txn guarded
//! by `mod_revision == observed` compares on all of them — the way
//! Kubernetes' GuaranteedUpdate writes. A failed compare aborts it.
//! Read-only transactions are one linearizable Txn of ranges.
//!
//! Keys rotate every `KEY_EPOCH` so lists stay short.

use std::time::{Duration, Instant};

use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};

use super::{Connection, Process};
use crate::cluster::connect;
use crate::history::{Micro, Outcome, REFERENCE, Record, Transaction};
use crate::recorder::{Recorder, Rng};

/// Where the lists live (under the watchers' prefix).
pub const PREFIX: &str = "jepsen/a";

/// How long a generation of keys is used before the next one.
const KEY_EPOCH: Duration = Duration::from_secs(10);

/// One client: transactions on `keys` keys per generation through
/// `endpoint` until `until`. After an indeterminate commit the client
/// continues as a new process.
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
    while Instant::now() < until {
        let Some(c) = connection.get().await else { continue };
        let epoch = rec.now() / KEY_EPOCH.as_nanos() as u64;
        let mut ops = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let key = format!("{PREFIX}{epoch}-{}", rng.below(u64::from(keys)));
            if rng.below(2) == 0 {
                ops.push(Micro::R { key, value: None });
            } else {
                ops.push(Micro::Append { key, element: process.unique_value() });
            }
        }
        let stale_reads = rng.below(2) == 0;
        let invoke = rec.now();
        let (ops, outcome, error) = perform(c, ops, stale_reads).await;
        let complete = rec.now();
        let failed = error.is_some();
        rec.record(Record::Txn(Transaction { process: process.id, ops, invoke, complete, outcome, error }));
        process.finish(outcome, failed, &mut connection).await;
    }
}

/// Reads, then commits under compares. `stale_reads`: the first read is
/// serializable (it may be stale; the compares catch that).
async fn perform(
    c: &mut etcd_client::Client,
    mut ops: Vec<Micro>,
    stale_reads: bool,
) -> (Vec<Micro>, Outcome, Option<String>) {
    let mut keys: Vec<String> = ops.iter().map(|op| key_of(op).to_string()).collect();
    keys.sort();
    keys.dedup();
    let read_only = ops.iter().all(|op| matches!(op, Micro::R { .. }));
    let options = (stale_reads && !read_only).then(|| GetOptions::new().with_serializable());
    let gets: Vec<TxnOp> = keys.iter().map(|k| TxnOp::get(k.as_str(), options.clone())).collect();
    let observed = match c.txn(Txn::new().and_then(gets)).await {
        Ok(resp) => lists(&keys, &resp.op_responses()),
        Err(e) => return (ops, Outcome::Fail, Some(e.to_string())),
    };
    // What each read sees: the observed list plus this transaction's own
    // earlier appends.
    let mut current: Vec<(String, Vec<u64>)> =
        keys.iter().cloned().zip(observed.iter().map(|(list, _)| list.clone())).collect();
    for op in &mut ops {
        let Some((_, list)) = current.iter_mut().find(|(k, _)| k == key_of(op)) else { continue };
        match op {
            Micro::R { value, .. } => *value = Some(list.clone()),
            Micro::Append { element, .. } => list.push(*element),
        }
    }
    if read_only {
        return (ops, Outcome::Ok, None);
    }
    let compares: Vec<Compare> = keys
        .iter()
        .zip(&observed)
        .map(|(k, (_, revision))| Compare::mod_revision(k.as_str(), CompareOp::Equal, *revision))
        .collect();
    let appended: Vec<&String> =
        ops.iter().filter(|op| matches!(op, Micro::Append { .. })).map(key_of).collect();
    let puts: Vec<TxnOp> = current
        .iter()
        .filter(|(k, _)| appended.contains(&k))
        .map(|(k, list)| TxnOp::put(k.as_str(), encode(list), None))
        .collect();
    let forget = |mut ops: Vec<Micro>| {
        for op in &mut ops {
            if let Micro::R { value, .. } = op {
                *value = None;
            }
        }
        ops
    };
    match c.txn(Txn::new().when(compares).and_then(puts)).await {
        Ok(resp) if resp.succeeded() => (ops, Outcome::Ok, None),
        Ok(_) => (forget(ops), Outcome::Fail, None),
        Err(e) => (forget(ops), Outcome::Info, Some(e.to_string())),
    }
}

fn key_of(op: &Micro) -> &String {
    match op {
        Micro::R { key, .. } | Micro::Append { key, .. } => key,
    }
}

/// (list, mod_revision) per key from a Txn of gets, in `keys` order.
fn lists(keys: &[String], responses: &[TxnOpResponse]) -> Vec<(Vec<u64>, i64)> {
    keys.iter()
        .zip(responses)
        .map(|(_, resp)| match resp {
            TxnOpResponse::Get(get) => get.kvs().first().map_or((Vec::new(), 0), |kv| {
                (decode(&String::from_utf8_lossy(kv.value())), kv.mod_revision())
            }),
            _ => (Vec::new(), 0),
        })
        .collect()
}

fn encode(list: &[u64]) -> String {
    list.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
}

/// An element that does not parse is kept as `u64::MAX`: the checker
/// reports it as a garbage read.
fn decode(value: &str) -> Vec<u64> {
    value.split_whitespace().map(|e| e.parse().unwrap_or(u64::MAX)).collect()
}

/// After the run: one linearizable read of every key the transactions
/// touched, recorded as the `REFERENCE` transaction.
pub async fn final_read(endpoint: &str, rec: &Recorder) -> Result<(), String> {
    let mut keys = std::collections::BTreeSet::new();
    rec.for_each(|r| {
        if let Record::Txn(t) = r {
            keys.extend(t.ops.iter().map(|op| key_of(op).clone()));
        }
    });
    let mut client = connect(endpoint).await.map_err(|e| e.to_string())?;
    let invoke = rec.now();
    let resp = client.get(PREFIX, Some(GetOptions::new().with_prefix())).await.map_err(|e| e.to_string())?;
    let ops = keys
        .into_iter()
        .map(|key| {
            let list = resp.kvs().iter().find(|kv| kv.key() == key.as_bytes());
            let value = list.map_or(Vec::new(), |kv| decode(&String::from_utf8_lossy(kv.value())));
            Micro::R { key, value: Some(value) }
        })
        .collect();
    let complete = rec.now();
    let process = REFERENCE;
    rec.record(Record::Txn(Transaction {
        process,
        ops,
        invoke,
        complete,
        outcome: Outcome::Ok,
        error: None,
    }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_round_trip_and_garbage_is_kept_visible() {
        assert_eq!(decode(&encode(&[3, 1, 2])), [3, 1, 2]);
        assert_eq!(decode(""), Vec::<u64>::new());
        assert_eq!(decode("1 x 2"), [1, u64::MAX, 2]);
    }
}
