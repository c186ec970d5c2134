//! The list-append checker, in the manner of Jepsen's Elle: it infers from
//! the values the transactions read the order in which they must have
//! taken effect, and reports histories where no such order exists.
//!
//! Why lists: each key holds a list and each append adds an element unique
//! over the run, so every read shows not only the last write but the whole
//! order of the writes before it. That lets the checker recover, per key,
//! the *version order* (here: the longest list any committed transaction
//! read; every other read must be a prefix of it) and from it who depended
//! on whom, without searching over interleavings.
//!
//! Only committed transactions' reads count (`Ok`, and the final read that
//! follows the run, `process == REFERENCE`): a `Fail` transaction aborted
//! and an `Info` one has no read values. An `Info` transaction whose
//! element some read shows did commit, and joins the graph below.
//!
//! Anomalies about single reads and keys:
//!
//! * `duplicate-elements`: a list holds an element twice (each is appended
//!   once, so the store applied an append twice);
//! * `garbage-read`: a list holds an element no transaction appended to
//!   that key (corruption, or a read of another key's value);
//! * `aborted-read`: a committed read shows an element of a `Fail`
//!   transaction, which certainly did not commit (Adya's G1a);
//! * `incompatible-order`: a read of a key is not a prefix of the longest
//!   read of that key: two reads disagree on the order of the appends, or
//!   one lost an element another had seen;
//! * `lost-append`: an append acknowledged as committed is missing from the
//!   final read of its key (needs the final read; without it the append
//!   may simply be later than every read);
//! * `internal`: a read disagrees with its own transaction's earlier
//!   micro-ops (it must show the transaction's own appends, at the end, and
//!   two reads of one key may differ only by those appends), or shows an
//!   element its own transaction appends as if it were already there.
//!
//! Dependency cycles: each committed transaction is a node; edges say "must
//! come before":
//!
//! * `ww` (write-write): T1 appended element i of a key's version order and
//!   T2 element i + 1;
//! * `wr` (write-read): T2 read a list whose last element T1 appended;
//! * `rw` (anti-dependency): T1 read a list ending at element i (or empty),
//!   and T2 appended element i + 1 (or the first element): T1 did not see
//!   T2's append, so T1 came first;
//! * `rt` (realtime): T1 completed before T2 was invoked (both `Ok`;
//!   etcd's transactions are strictly serializable, so they must take
//!   effect in that order too).
//!
//! A serializable history has an order of the transactions agreeing with
//! every edge, so a cycle is an anomaly. Each cycle found is named after
//! its edges, Adya-style: only `ww` is G0 (dirty write); `ww` and `wr` is
//! G1c (circular information flow); exactly one `rw` is G-single (read
//! skew); more is G2 (write skew, anti-dependency cycle). A cycle that
//! needs a realtime edge gets `-realtime` appended: the transactions could
//! be serialized, but not in the order the clients saw them finish (a stale
//! read, typically). An intermediate read (Adya's G1b: seeing one of a
//! transaction's appends to a key but not its next one) shows up as a
//! G-single cycle between the reader and that transaction.
//!
//! One cycle is reported per strongly connected component of the graph,
//! the most specific one found: components are searched with `ww` edges
//! only, then `ww`+`wr`, then with `rw` (preferring a single `rw`), and only
//! then with realtime edges, so a cycle without realtime edges is preferred.
//!
//! In explanations, `Tn` is the n-th list-append transaction of the
//! history (counting from 0, in `history.jsonl` order); an anomaly's
//! transactions are listed in the order the explanation names them.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde::Serialize;

use crate::history::{Micro, Nanos, Outcome, REFERENCE, Record, Transaction};

/// Anomalies listed per kind; all are counted in `anomaly_counts`.
const MAX_PER_KIND: usize = 20;
/// Transactions listed per anomaly.
const MAX_TRANSACTIONS: usize = 10;
/// Size of all listed transactions together (one per micro-op plus one per
/// element read): lists may be long, and a broken history must not produce
/// a summary of gigabytes.
const MAX_LISTED_SIZE: usize = 1_000_000;
/// Edges of a cycle spelled out in its explanation.
const MAX_SPELLED: usize = 30;
/// Edges looked at per component while looking for a cycle with a single
/// anti-dependency, before settling for any cycle.
const SEARCH_BUDGET: usize = 1_000_000;

const DUPLICATE: &str = "duplicate-elements";
const GARBAGE: &str = "garbage-read";
const ABORTED: &str = "aborted-read";
const INCOMPATIBLE: &str = "incompatible-order";
const LOST: &str = "lost-append";
const INTERNAL: &str = "internal";

#[derive(Debug, Clone, Serialize)]
pub struct AppendReport {
    pub valid: bool,
    /// Transactions by outcome (the final read excluded).
    pub ok: usize,
    pub fail: usize,
    pub info: usize,
    /// `Info` transactions that some read showed to have committed.
    pub info_committed: usize,
    pub keys: usize,
    /// Whether the final read was recorded (lost appends need it).
    pub final_read: bool,
    /// Dependency edges (`ww`, `wr`, `rw`) inferred between transactions.
    pub edges: usize,
    /// Realtime edges (after transitive reduction).
    pub realtime_edges: usize,
    /// How many anomalies of each kind were found, listed or not.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub anomaly_counts: BTreeMap<String, usize>,
    /// At most `MAX_PER_KIND` per kind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anomalies: Vec<Anomaly>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Anomaly {
    /// e.g. "G-single", "lost-append" (see the module documentation).
    pub kind: String,
    pub explanation: String,
    /// The transactions involved, in the order the explanation names them
    /// (at most `MAX_TRANSACTIONS`; the final read shows only the keys
    /// involved).
    pub transactions: Vec<Transaction>,
}

/// Checks the list-append transactions in `history` (none: trivially
/// valid).
pub fn check(history: &[Record]) -> AppendReport {
    let txns: Vec<&Transaction> =
        history.iter().filter_map(|r| if let Record::Txn(t) = r { Some(t) } else { None }).collect();
    let count = |o: Outcome| txns.iter().filter(|t| t.process != REFERENCE && t.outcome == o).count();
    let index = Index::new(&txns);
    let mut found = Found { txns: &txns, counts: BTreeMap::new(), anomalies: Vec::new(), listed: 0 };
    let mut edges = Edges::new();
    let reads = read_transactions(&index, &mut found);
    let committed = check_keys(&index, &reads.by_key, &mut found, &mut edges);
    lost_appends(&index, &reads.finals, &mut found);
    let dependencies = edges.raw.len();
    realtime(&txns, &mut edges);
    let realtime_edges = edges.raw.len() - dependencies;
    let graph = Graph::new(&txns, edges);
    find_cycles(&graph, &index, &mut found);
    AppendReport {
        valid: found.counts.is_empty(),
        ok: count(Outcome::Ok),
        fail: count(Outcome::Fail),
        info: count(Outcome::Info),
        info_committed: committed.iter().filter(|&&c| c).count(),
        keys: index.keys.len(),
        final_read: (0..txns.len()).any(|t| index.is_final(t as u32)),
        edges: dependencies,
        realtime_edges,
        anomaly_counts: found.counts,
        anomalies: found.anomalies,
    }
}

/// The transactions with their keys numbered, and who appended what.
struct Index<'a> {
    txns: &'a [&'a Transaction],
    keys: Vec<&'a str>,
    /// Per transaction, the key number of each micro-op.
    op_keys: Vec<Vec<u32>>,
    /// (key, element) → the transaction that appended it, whatever its
    /// outcome (elements are unique, so this names the writer of a read).
    appender: HashMap<(u32, u64), u32>,
}

impl<'a> Index<'a> {
    fn new(txns: &'a [&'a Transaction]) -> Self {
        let mut ids: HashMap<&'a str, u32> = HashMap::new();
        let mut keys = Vec::new();
        let mut appender = HashMap::new();
        let mut op_keys = Vec::with_capacity(txns.len());
        for (t, txn) in txns.iter().enumerate() {
            let txn: &'a Transaction = txn;
            let mut these = Vec::with_capacity(txn.ops.len());
            for op in &txn.ops {
                let (Micro::R { key, .. } | Micro::Append { key, .. }) = op;
                let k = *ids.entry(key.as_str()).or_insert_with(|| {
                    keys.push(key.as_str());
                    keys.len() as u32 - 1
                });
                these.push(k);
                if let Micro::Append { element, .. } = op {
                    appender.entry((k, *element)).or_insert(t as u32);
                }
            }
            op_keys.push(these);
        }
        Self { txns, keys, op_keys, appender }
    }

    fn txn(&self, t: u32) -> &'a Transaction {
        self.txns[t as usize]
    }

    fn is_final(&self, t: u32) -> bool {
        let txn = self.txn(t);
        txn.process == REFERENCE && txn.outcome == Outcome::Ok
    }

    fn key(&self, k: u32) -> &'a str {
        self.keys[k as usize]
    }

    /// The transaction that appended `element` to key `k`, unless it
    /// failed: only committed transactions are nodes of the graph.
    fn writer(&self, k: u32, element: u64) -> Option<u32> {
        self.appender.get(&(k, element)).copied().filter(|&a| self.txn(a).outcome != Outcome::Fail)
    }

    /// What transaction `t` appended to key `k`, in order.
    fn own_appends(&self, t: u32, k: u32) -> impl Iterator<Item = u64> + '_ {
        self.txn(t).ops.iter().zip(&self.op_keys[t as usize]).filter_map(move |(op, &key)| match op {
            Micro::Append { element, .. } if key == k => Some(*element),
            _ => None,
        })
    }

    fn name(&self, t: u32) -> String {
        if self.is_final(t) { format!("T{t} (the final read)") } else { format!("T{t}") }
    }

    /// "T1, T4 and T9", or "T1, T4 and others (12 reads)" when there are
    /// more reads than named.
    fn names(&self, (sample, total): &(Vec<u32>, usize)) -> String {
        let names: Vec<String> = sample.iter().map(|&t| self.name(t)).collect();
        match names.as_slice() {
            [] => "nobody".into(),
            [one] if *total <= 1 => one.clone(),
            [init @ .., last] if *total <= names.len() => format!("{} and {last}", init.join(", ")),
            _ => format!("{} and others ({total} reads)", names.join(", ")),
        }
    }
}

/// One read of a committed transaction.
struct Read<'a> {
    txn: u32,
    list: &'a [u64],
    /// For the transaction's first read of the key, when consistent with
    /// its own earlier appends: how much of the list came from other
    /// transactions (the list minus those appends). Only these reads make
    /// `wr` and `rw` edges: later reads add only the transaction's own
    /// appends.
    external: Option<usize>,
}

struct Reads<'a> {
    /// Per key, in history order.
    by_key: Vec<Vec<Read<'a>>>,
    /// Per key, the final read of it (the last one, if several).
    finals: Vec<Option<(u32, &'a [u64])>>,
}

/// Within one transaction, per key touched: the key, its last read, and
/// the transaction's appends since (or since the start, before any read).
type KeyState<'a> = (u32, Option<&'a [u64]>, Vec<u64>);

/// Collects the committed reads, checking each against its own
/// transaction's earlier micro-ops (`internal`).
fn read_transactions<'a>(index: &Index<'a>, found: &mut Found) -> Reads<'a> {
    let mut by_key: Vec<Vec<Read<'a>>> = index.keys.iter().map(|_| Vec::new()).collect();
    let mut finals = vec![None; index.keys.len()];
    for (t, &txn) in index.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let t = t as u32;
        let mut state: Vec<KeyState<'a>> = Vec::new();
        for (op, &k) in txn.ops.iter().zip(&index.op_keys[t as usize]) {
            let at = match state.iter().position(|s| s.0 == k) {
                Some(at) => at,
                None => {
                    state.push((k, None, Vec::new()));
                    state.len() - 1
                }
            };
            let (_, before, own) = &mut state[at];
            let list = match op {
                Micro::Append { element, .. } => {
                    own.push(*element);
                    continue;
                }
                Micro::R { value: Some(list), .. } => list.as_slice(),
                Micro::R { value: None, .. } => continue,
            };
            let key = index.key(k);
            let external = match before {
                None if list.ends_with(own) => Some(list.len() - own.len()),
                None => {
                    found.add(INTERNAL, &[key], || {
                        let text = format!(
                            "{} appended {} to {key}, then read {key} = {}, which does not end with its own appends",
                            index.name(t),
                            show(own),
                            show(list)
                        );
                        (text, vec![t])
                    });
                    None
                }
                Some(prev) => {
                    let consistent =
                        list.len() == prev.len() + own.len() && list.starts_with(prev) && list.ends_with(own);
                    if !consistent {
                        found.add(INTERNAL, &[key], || {
                            let between = if own.is_empty() {
                                String::new()
                            } else {
                                format!(", appended {}", show(own))
                            };
                            let text = format!(
                                "{} read {key} = {}{between}, then read {key} = {}",
                                index.name(t),
                                show(prev),
                                show(list)
                            );
                            (text, vec![t])
                        });
                    }
                    None
                }
            };
            by_key[k as usize].push(Read { txn: t, list, external });
            if index.is_final(t) {
                finals[k as usize] = Some((t, list));
            }
            *before = Some(list);
            own.clear();
        }
    }
    Reads { by_key, finals }
}

/// Up to `MAX_TRANSACTIONS - 1` distinct transactions (room for one more,
/// e.g. the writer), and how many there were with repeats.
fn sample(txns: impl Iterator<Item = u32>) -> (Vec<u32>, usize) {
    let mut sample = Vec::new();
    let mut total = 0;
    for t in txns {
        total += 1;
        if sample.len() < MAX_TRANSACTIONS - 1 && !sample.contains(&t) {
            sample.push(t);
        }
    }
    (sample, total)
}

/// Per key: the version order, the reads that disagree with it, the
/// elements no committed transaction appended, and the `ww`, `wr`, `rw`
/// edges. Returns which transactions were seen to have committed although
/// their outcome was unknown.
fn check_keys(index: &Index, by_key: &[Vec<Read>], found: &mut Found, edges: &mut Edges) -> Vec<bool> {
    let mut committed = vec![false; index.txns.len()];
    for (k, reads) in by_key.iter().enumerate() {
        let k = k as u32;
        let key = index.key(k);
        // The first of the longest reads: every read must be a prefix of
        // it. Comparing each read with it (rather than each pair of reads)
        // keeps this linear in the size of the history.
        let Some(longest) = reads.iter().reduce(|a, b| if b.list.len() > a.list.len() { b } else { a })
        else {
            continue;
        };
        let long = longest.list;
        let prefix: Vec<bool> = reads.iter().map(|r| long.starts_with(r.list)).collect();
        // The reads that saw position `p` of the longest list.
        let containing = |p: usize| {
            sample(reads.iter().zip(&prefix).filter(|(r, ok)| **ok && r.list.len() > p).map(|(r, _)| r.txn))
        };
        // Position of each element in the longest list. The version order
        // stops before the first repeated element: past it, positions mean
        // nothing.
        let mut pos: HashMap<u64, usize> = HashMap::with_capacity(long.len());
        let mut order_len = long.len();
        for (p, &e) in long.iter().enumerate() {
            if let Some(&first) = pos.get(&e) {
                order_len = order_len.min(p);
                found.add(DUPLICATE, &[key], || {
                    let readers = containing(p);
                    let text = format!(
                        "{key} held {e} twice (positions {first} and {p} of {}), as read by {}",
                        show(long),
                        index.names(&readers)
                    );
                    (text, readers.0)
                });
                continue;
            }
            pos.insert(e, p);
            observe(index, found, &mut committed, k, e, || containing(p));
        }
        let mut duplicates = HashSet::new();
        let mut seen_elsewhere = HashSet::new();
        for (r, _) in reads.iter().zip(&prefix).filter(|(_, ok)| !**ok) {
            let d = r.list.iter().zip(long).take_while(|(a, b)| a == b).count();
            found.add(INCOMPATIBLE, &[key], || {
                let text = format!(
                    "{} read {key} = {}, which is not a prefix of {}'s read {}: they differ at position {d} ({} vs {})",
                    index.name(r.txn),
                    show(r.list),
                    index.name(longest.txn),
                    show(long),
                    r.list.get(d).map_or("end".into(), u64::to_string),
                    long.get(d).map_or("end".into(), u64::to_string),
                );
                (text, vec![r.txn, longest.txn])
            });
            // What this read holds beyond the longest one: elements checked
            // there already are not reported again.
            let mut here = HashSet::with_capacity(r.list.len());
            for (p, &e) in r.list.iter().enumerate() {
                if !here.insert(e) && p >= d && duplicates.insert(e) {
                    found.add(DUPLICATE, &[key], || {
                        let text = format!(
                            "{} read {key} = {}, which holds {e} twice",
                            index.name(r.txn),
                            show(r.list)
                        );
                        (text, vec![r.txn])
                    });
                }
            }
            for &e in &r.list[d..] {
                if !pos.contains_key(&e) && seen_elsewhere.insert(e) {
                    observe(index, found, &mut committed, k, e, || (vec![r.txn], 1));
                }
            }
        }
        for w in long[..order_len].windows(2) {
            if let (Some(a), Some(b)) = (index.writer(k, w[0]), index.writer(k, w[1])) {
                edges.add(a, b, Label { dep: Dep::Ww, key: k, seen: Some(w[0]), next: Some(w[1]) });
            }
        }
        for (r, &is_prefix) in reads.iter().zip(&prefix) {
            let Some(external) = r.external else { continue };
            let seen = &r.list[..external];
            // Its own append already there before it made it: a read from
            // the future, or an append applied twice.
            let early = index.own_appends(r.txn, k).find(|e| {
                if is_prefix { pos.get(e).is_some_and(|&p| p < external) } else { seen.contains(e) }
            });
            if let Some(e) = early {
                found.add(INTERNAL, &[key], || {
                    let text = format!(
                        "{} read {key} = {}, which already holds {e}, an element {} appends itself",
                        index.name(r.txn),
                        show(r.list),
                        index.name(r.txn)
                    );
                    (text, vec![r.txn])
                });
                continue;
            }
            let last = seen.last().copied();
            if let Some(a) = last.and_then(|e| index.writer(k, e)) {
                edges.add(a, r.txn, Label { dep: Dep::Wr, key: k, seen: last, next: None });
            }
            // The anti-dependency needs to know what came next: only for
            // reads that agree with the version order.
            if is_prefix && external < order_len {
                let next = long[external];
                if let Some(b) = index.writer(k, next) {
                    edges.add(r.txn, b, Label { dep: Dep::Rw, key: k, seen: last, next: Some(next) });
                }
            }
        }
    }
    committed
}

/// A committed read showed element `e` of key `k`: who appended it?
fn observe(
    index: &Index,
    found: &mut Found,
    committed: &mut [bool],
    k: u32,
    e: u64,
    readers: impl FnOnce() -> (Vec<u32>, usize),
) {
    let key = index.key(k);
    let Some(&a) = index.appender.get(&(k, e)) else {
        found.add(GARBAGE, &[key], || {
            let readers = readers();
            let mut text = format!(
                "{} read {e} in {key}, but no transaction appended {e} to {key}",
                index.names(&readers)
            );
            // A read of the wrong key, perhaps.
            if let Some(((other, _), writer)) = index.appender.iter().find(|((_, x), _)| *x == e) {
                text.push_str(&format!(" ({} appended it to {})", index.name(*writer), index.key(*other)));
            }
            (text, readers.0)
        });
        return;
    };
    match index.txn(a).outcome {
        Outcome::Fail => found.add(ABORTED, &[key], || {
            let readers = readers();
            let text = format!(
                "{} appended {e} to {key} and failed (it certainly did not commit), yet {} read it",
                index.name(a),
                index.names(&readers)
            );
            (text, [a].into_iter().chain(readers.0).collect())
        }),
        Outcome::Info => committed[a as usize] = true,
        Outcome::Ok => {}
    }
}

/// Every acknowledged append must be in the final read of its key.
fn lost_appends(index: &Index, finals: &[Option<(u32, &[u64])>], found: &mut Found) {
    let mut sets: Vec<Option<HashSet<u64>>> = finals.iter().map(|_| None).collect();
    for (t, txn) in index.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok || txn.process == REFERENCE {
            continue;
        }
        let t = t as u32;
        for (op, &k) in txn.ops.iter().zip(&index.op_keys[t as usize]) {
            let Micro::Append { element, .. } = op else { continue };
            let Some((f, list)) = finals[k as usize] else { continue };
            let set = sets[k as usize].get_or_insert_with(|| list.iter().copied().collect());
            if !set.contains(element) {
                let key = index.key(k);
                found.add(LOST, &[key], || {
                    let text = format!(
                        "{} appended {element} to {key} and committed, but the final read of {key} = {} does not hold it",
                        index.name(t),
                        show(list)
                    );
                    (text, vec![t, f])
                });
            }
        }
    }
}

/// Realtime edges between `Ok` transactions: T1 → T2 when T1 completed
/// before T2 was invoked. Linking every such pair would be quadratic;
/// instead, sweeping through time, each invoked transaction is linked from
/// the *frontier*: the completed transactions no completed transaction
/// follows yet. A transaction leaves the frontier once one of its
/// successors completes, and is still reachable through that successor,
/// so the graph keeps every realtime order with about one edge per
/// transaction and concurrent client.
fn realtime(txns: &[&Transaction], edges: &mut Edges) {
    let mut events: Vec<(Nanos, bool, u32)> = Vec::new();
    for (t, txn) in txns.iter().enumerate() {
        if txn.outcome == Outcome::Ok {
            // Invocations sort before completions at the same instant:
            // completing at the instant another is invoked is not "before".
            events.push((txn.invoke, false, t as u32));
            events.push((txn.complete.max(txn.invoke), true, t as u32));
        }
    }
    events.sort_unstable();
    let mut frontier: Vec<u32> = Vec::new();
    let mut in_frontier = vec![false; txns.len()];
    // Per transaction, its incoming realtime edges (a range of `edges.raw`).
    let mut preds = vec![(0, 0); txns.len()];
    for (_, completed, t) in events {
        if completed {
            let (from, to) = preds[t as usize];
            for &(p, _, _) in &edges.raw[from..to] {
                in_frontier[p as usize] = false;
            }
            frontier.retain(|&p| in_frontier[p as usize]);
            frontier.push(t);
            in_frontier[t as usize] = true;
        } else {
            let from = edges.raw.len();
            edges.raw.extend(frontier.iter().map(|&p| (p, t, RT_LABEL)));
            preds[t as usize] = (from, edges.raw.len());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dep {
    Ww,
    Wr,
    Rw,
    Rt,
}

impl Dep {
    fn bit(self) -> u8 {
        1 << self as u8
    }

    fn name(self) -> &'static str {
        match self {
            Dep::Ww => "ww",
            Dep::Wr => "wr",
            Dep::Rw => "rw",
            Dep::Rt => "rt",
        }
    }
}

const WW: u8 = 1;
const WR: u8 = 2;
const RW: u8 = 4;
const RT: u8 = 8;

/// Why an edge is there.
#[derive(Debug, Clone, Copy)]
struct Label {
    dep: Dep,
    key: u32,
    /// `ww`: the earlier element; `wr`, `rw`: the last element read (`None`:
    /// the list was empty).
    seen: Option<u64>,
    /// `ww`, `rw`: the element appended next.
    next: Option<u64>,
}

/// All realtime edges share this label.
const RT_LABEL: u32 = 0;

struct Edges {
    /// (from, to, label).
    raw: Vec<(u32, u32, u32)>,
    labels: Vec<Label>,
}

impl Edges {
    fn new() -> Self {
        Self { raw: Vec::new(), labels: vec![Label { dep: Dep::Rt, key: 0, seen: None, next: None }] }
    }

    /// Self-edges say nothing (a transaction reading its own appends).
    fn add(&mut self, from: u32, to: u32, label: Label) {
        if from != to {
            self.raw.push((from, to, self.labels.len() as u32));
            self.labels.push(label);
        }
    }
}

/// The dependency graph in compressed rows: node v's edges are
/// `targets[offsets[v]..offsets[v + 1]]`, dependencies first (`ww`, `wr`,
/// `rw`), from `rt_start[v]` its realtime edges, so searches that ignore
/// realtime skip them.
struct Graph {
    offsets: Vec<usize>,
    rt_start: Vec<usize>,
    targets: Vec<u32>,
    /// Per edge: its label, and its `Dep` bit.
    edge_labels: Vec<u32>,
    bits: Vec<u8>,
    labels: Vec<Label>,
    /// Per transaction: (invoke, complete) if `Ok` (realtime applies).
    times: Vec<Option<(Nanos, Nanos)>>,
}

/// One step of a cycle: from, to, and the dependency edge (`None`:
/// realtime, an edge of the graph or implied by it).
#[derive(Debug, Clone, Copy)]
struct Step {
    from: u32,
    to: u32,
    edge: Option<usize>,
}

/// Reused between searches.
struct Search {
    stamp: Vec<u32>,
    dist: Vec<u32>,
    parent: Vec<(u32, usize)>,
    generation: u32,
}

const UNSEEN: u32 = u32::MAX;

/// Tarjan's bookkeeping, kept off the call stack.
struct Tarjan {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: Vec<bool>,
    stack: Vec<u32>,
    /// The depth-first path: each node and the next of its edges to follow.
    calls: Vec<(u32, usize)>,
    next: u32,
}

impl Tarjan {
    fn visit(&mut self, v: u32, first_edge: usize) {
        self.index[v as usize] = self.next;
        self.low[v as usize] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v as usize] = true;
        self.calls.push((v, first_edge));
    }
}

impl Graph {
    fn new(txns: &[&Transaction], edges: Edges) -> Self {
        let n = txns.len();
        let Edges { raw, labels } = edges;
        // A counting sort by source (a comparison sort of a million edges
        // is what made this slow): dependencies first, then realtime.
        let is_rt = |label: u32| labels[label as usize].dep == Dep::Rt;
        let mut offsets = vec![0; n + 1];
        let mut data = vec![0; n];
        for &(from, _, label) in &raw {
            offsets[from as usize + 1] += 1;
            if !is_rt(label) {
                data[from as usize] += 1;
            }
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let rt_start: Vec<usize> = (0..n).map(|v| offsets[v] + data[v]).collect();
        let mut cursor: Vec<usize> = offsets[..n].to_vec();
        let mut rt_cursor = rt_start.clone();
        let mut placed = vec![(0u32, 0u32); raw.len()];
        for (from, to, label) in raw {
            let at = if is_rt(label) { &mut rt_cursor[from as usize] } else { &mut cursor[from as usize] };
            placed[*at] = (to, label);
            *at += 1;
        }
        // The few dependencies of a node strongest first: a search then
        // takes the most telling of parallel edges.
        for v in 0..n {
            placed[offsets[v]..rt_start[v]]
                .sort_unstable_by_key(|&(to, label)| (labels[label as usize].dep, to));
        }
        let bits = placed.iter().map(|&(_, label)| labels[label as usize].dep.bit()).collect();
        let (targets, edge_labels) = placed.into_iter().unzip();
        let times = txns
            .iter()
            .map(|t| (t.outcome == Outcome::Ok).then_some((t.invoke, t.complete.max(t.invoke))))
            .collect();
        Self { offsets, rt_start, targets, edge_labels, bits, labels, times }
    }

    /// Node v's edges, realtime ones only if `mask` has them.
    fn out(&self, v: u32, mask: u8) -> std::ops::Range<usize> {
        let end = if mask & RT != 0 { self.offsets[v as usize + 1] } else { self.rt_start[v as usize] };
        self.offsets[v as usize]..end
    }

    fn label(&self, e: usize) -> &Label {
        &self.labels[self.edge_labels[e] as usize]
    }

    /// Whether `a` completed before `b` was invoked, both `Ok`: realtime
    /// order, known without following edges.
    fn precedes(&self, a: u32, b: u32) -> bool {
        match (self.times[a as usize], self.times[b as usize]) {
            (Some((_, complete)), Some((invoke, _))) => complete < invoke,
            _ => false,
        }
    }

    /// Strongly connected components of more than one node, using the
    /// edges in `mask` (Tarjan's algorithm, iterative: histories have
    /// long chains). Also returns each node's component (`UNSEEN`: none).
    fn components(&self, mask: u8) -> (Vec<u32>, Vec<Vec<u32>>) {
        let n = self.offsets.len() - 1;
        let mut t = Tarjan {
            index: vec![UNSEEN; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            calls: Vec::new(),
            next: 0,
        };
        let mut component = vec![UNSEEN; n];
        let mut components = Vec::new();
        for root in 0..n as u32 {
            if t.index[root as usize] != UNSEEN {
                continue;
            }
            t.visit(root, self.offsets[root as usize]);
            while let Some(&(v, mut e)) = t.calls.last() {
                let end = self.out(v, mask).end;
                let mut child = None;
                while e < end {
                    let w = self.targets[e];
                    let follow = self.bits[e] & mask != 0;
                    e += 1;
                    if !follow {
                        continue;
                    }
                    if t.index[w as usize] == UNSEEN {
                        child = Some(w);
                        break;
                    }
                    if t.on_stack[w as usize] {
                        t.low[v as usize] = t.low[v as usize].min(t.index[w as usize]);
                    }
                }
                if let Some(top) = t.calls.last_mut() {
                    top.1 = e;
                }
                if let Some(w) = child {
                    t.visit(w, self.offsets[w as usize]);
                    continue;
                }
                t.calls.pop();
                if let Some(&(parent, _)) = t.calls.last() {
                    t.low[parent as usize] = t.low[parent as usize].min(t.low[v as usize]);
                }
                if t.low[v as usize] == t.index[v as usize] {
                    let mut members = Vec::new();
                    while let Some(w) = t.stack.pop() {
                        t.on_stack[w as usize] = false;
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if members.len() > 1 {
                        for &w in &members {
                            component[w as usize] = components.len() as u32;
                        }
                        members.sort_unstable();
                        components.push(members);
                    }
                }
            }
        }
        (component, components)
    }

    /// A path from `from` to `to` (a cycle if they are the same) over
    /// edges in `mask` between nodes `inside` accepts, with the fewest
    /// dependency edges: realtime edges cost nothing (a run of them is one
    /// realtime step), and with realtime in `mask`, reaching a transaction
    /// that completed before `to` was invoked ends the path. `None` if there
    /// is none, or the budget (edges looked at) runs out.
    fn path(
        &self,
        search: &mut Search,
        (from, to): (u32, u32),
        mask: u8,
        inside: &dyn Fn(u32) -> bool,
        budget: &mut usize,
    ) -> Option<Vec<Step>> {
        search.generation += 1;
        let generation = search.generation;
        search.stamp[from as usize] = generation;
        search.dist[from as usize] = 0;
        // 0-1 breadth-first search: free edges to the front of the queue.
        let mut queue = VecDeque::from([(from, 0u32)]);
        // (cost, last node, last edge) of the best way into `to` so far.
        let mut best: Option<(u32, u32, Option<usize>)> = None;
        while let Some((u, d)) = queue.pop_front() {
            if d > search.dist[u as usize] {
                continue;
            }
            if best.is_some_and(|(cost, _, _)| cost <= d) {
                break;
            }
            if mask & RT != 0 && self.precedes(u, to) {
                best = Some((d, u, None));
                break;
            }
            for e in self.out(u, mask) {
                *budget = budget.checked_sub(1)?;
                let w = self.targets[e];
                if self.bits[e] & mask == 0 || !inside(w) {
                    continue;
                }
                let realtime = self.bits[e] == RT;
                let nd = d + u32::from(!realtime);
                if w == to {
                    if best.is_none_or(|(cost, _, _)| nd < cost) {
                        best = Some((nd, u, Some(e)));
                    }
                    continue;
                }
                if search.stamp[w as usize] != generation || nd < search.dist[w as usize] {
                    search.stamp[w as usize] = generation;
                    search.dist[w as usize] = nd;
                    search.parent[w as usize] = (u, e);
                    if realtime { queue.push_front((w, nd)) } else { queue.push_back((w, nd)) }
                }
            }
        }
        let (_, last, edge) = best?;
        let dependency = |e: usize| (self.bits[e] != RT).then_some(e);
        let mut steps = vec![Step { from: last, to, edge: edge.and_then(dependency) }];
        let mut v = last;
        while v != from {
            let (p, e) = search.parent[v as usize];
            steps.push(Step { from: p, to: v, edge: dependency(e) });
            v = p;
        }
        steps.reverse();
        Some(steps)
    }

    /// Dependency edges (in `mask`, within the component) against realtime
    /// order: the target completed before the source was invoked. A cycle
    /// needing realtime has one, or more, of these; searches start there.
    fn backward(&self, members: &[u32], mask: u8, inside: &dyn Fn(u32) -> bool) -> Vec<(u32, usize)> {
        let mut found = Vec::new();
        if mask & RT != 0 {
            for &a in members {
                for e in self.out(a, mask & !RT) {
                    let b = self.targets[e];
                    if self.bits[e] & mask != 0 && inside(b) && self.precedes(b, a) {
                        found.push((a, e));
                    }
                }
            }
        }
        found
    }

    /// A cycle through exactly one `rw` edge of the component, if one is
    /// found within the budget: the rw edge a → b, then a path back from b
    /// to a without `rw` edges. Edges against realtime order are tried
    /// first.
    fn single_rw_cycle(
        &self,
        search: &mut Search,
        members: &[u32],
        mask: u8,
        inside: &dyn Fn(u32) -> bool,
    ) -> Option<Vec<Step>> {
        let mut candidates = self.backward(members, mask, inside);
        candidates.retain(|&(_, e)| self.bits[e] == RW);
        for &a in members {
            for e in self.out(a, mask & !RT) {
                if self.bits[e] == RW && inside(self.targets[e]) && !self.precedes(self.targets[e], a) {
                    candidates.push((a, e));
                }
            }
        }
        let mut budget = SEARCH_BUDGET;
        for (a, e) in candidates {
            let b = self.targets[e];
            if let Some(path) = self.path(search, (b, a), mask & !RW, inside, &mut budget) {
                return Some([Step { from: a, to: b, edge: Some(e) }].into_iter().chain(path).collect());
            }
            if budget == 0 {
                return None;
            }
        }
        None
    }

    /// Some cycle of the component: through the source of an edge against
    /// realtime order if there is one (the likely culprit), else through
    /// its first member.
    fn any_cycle(
        &self,
        search: &mut Search,
        members: &[u32],
        mask: u8,
        inside: &dyn Fn(u32) -> bool,
    ) -> Option<Vec<Step>> {
        let start = self.backward(members, mask, inside).first().map_or(members[0], |&(a, _)| a);
        self.path(search, (start, start), mask, inside, &mut { usize::MAX })
    }
}

/// A cycle made readable: starting with a dependency, each run of realtime
/// steps merged into one (realtime order is transitive).
fn tidy(mut steps: Vec<Step>) -> Vec<Step> {
    if let Some(first) = steps.iter().position(|s| s.edge.is_some()) {
        steps.rotate_left(first);
    }
    let mut tidy: Vec<Step> = Vec::with_capacity(steps.len());
    for step in steps {
        match tidy.last_mut() {
            Some(last) if last.edge.is_none() && step.edge.is_none() => last.to = step.to,
            _ => tidy.push(step),
        }
    }
    tidy
}

/// Reports one cycle per strongly connected component, the most specific
/// kind first: components over fewer kinds of edges are searched first,
/// and a component sharing a transaction with one already reported is
/// skipped (it is the same tangle seen through more edges).
fn find_cycles(graph: &Graph, index: &Index, found: &mut Found) {
    // (edges, look for a single anti-dependency first)
    const LEVELS: [(u8, bool); 6] = [
        (WW, false),
        (WW | WR, false),
        (WW | WR | RW, true),
        (WW | RT, false),
        (WW | WR | RT, false),
        (WW | WR | RW | RT, true),
    ];
    // Most histories have no cycle at all: one pass over everything says so.
    let everything = graph.components(WW | WR | RW | RT);
    if everything.1.is_empty() {
        return;
    }
    let n = index.txns.len();
    let mut search = Search { stamp: vec![0; n], dist: vec![0; n], parent: vec![(0, 0); n], generation: 0 };
    let mut covered = vec![false; n];
    for (mask, single) in LEVELS {
        let level;
        let (component, components) = if mask == WW | WR | RW | RT {
            (&everything.0, &everything.1)
        } else {
            level = graph.components(mask);
            (&level.0, &level.1)
        };
        for (id, members) in components.iter().enumerate() {
            if members.iter().any(|&v| covered[v as usize]) {
                continue;
            }
            for &v in members {
                covered[v as usize] = true;
            }
            let inside = |v: u32| component[v as usize] == id as u32;
            let cycle =
                if single { graph.single_rw_cycle(&mut search, members, mask, &inside) } else { None };
            if let Some(cycle) = cycle.or_else(|| graph.any_cycle(&mut search, members, mask, &inside)) {
                report_cycle(graph, index, found, &tidy(cycle));
            }
        }
    }
}

fn report_cycle(graph: &Graph, index: &Index, found: &mut Found, cycle: &[Step]) {
    let dep = |s: &Step| s.edge.map_or(Dep::Rt, |e| graph.label(e).dep);
    let count = |d: Dep| cycle.iter().filter(|s| dep(s) == d).count();
    let (base, what) = match (count(Dep::Rw), count(Dep::Wr)) {
        (0, 0) => (
            "G0",
            "a cycle of write-write dependencies (dirty write: the keys' lists order these appends differently)",
        ),
        (0, _) => ("G1c", "a cycle of write-write and write-read dependencies (circular information flow)"),
        (1, _) => (
            "G-single",
            "a cycle with exactly one anti-dependency (read skew: a read missed an append that, by the other edges, came before it)",
        ),
        _ => ("G2", "a cycle of two or more anti-dependencies (write skew)"),
    };
    let realtime = count(Dep::Rt) > 0;
    let kind = if realtime { format!("{base}-realtime") } else { base.to_string() };
    let mut keys: Vec<&str> = Vec::new();
    for e in cycle.iter().filter_map(|s| s.edge) {
        let key = index.key(graph.label(e).key);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    found.add(&kind, &keys, || {
        let mut text = index.name(cycle[0].from);
        for step in cycle.iter().take(MAX_SPELLED) {
            let to = index.name(step.to);
            match step.edge {
                None => text.push_str(&format!(" -rt-> {to}")),
                Some(e) => {
                    let label = graph.label(e);
                    text.push_str(&format!(" -{}({})-> {to}", label.dep.name(), index.key(label.key)));
                }
            }
        }
        if cycle.len() > MAX_SPELLED {
            text.push_str(&format!(" ... ({} more edges)", cycle.len() - MAX_SPELLED));
        }
        text.push_str(": ");
        text.push_str(what);
        if realtime {
            text.push_str(
                "; it needs realtime order, so the transactions are serializable, but not in the order the clients saw them complete",
            );
        }
        text.push('.');
        for step in cycle.iter().take(MAX_SPELLED) {
            text.push(' ');
            text.push_str(&explain_step(graph, index, step));
        }
        (text, cycle.iter().map(|s| s.from).collect())
    });
}

/// One sentence on why a step of a cycle is there.
fn explain_step(graph: &Graph, index: &Index, step: &Step) -> String {
    let (a, b) = (index.name(step.from), index.name(step.to));
    let Some(e) = step.edge else {
        let (t1, t2) = (index.txn(step.from), index.txn(step.to));
        return format!(
            "{a} completed at {} before {b} was invoked at {}.",
            secs(t1.complete),
            secs(t2.invoke)
        );
    };
    let label = graph.label(e);
    let key = index.key(label.key);
    let element = |x: Option<u64>| x.map_or("?".into(), |x| x.to_string());
    let (seen, next) = (element(label.seen), element(label.next));
    match label.dep {
        Dep::Ww => format!("{b} appended {next} to {key} right after {a}'s {seen}."),
        Dep::Wr => format!("{b} read {key} up to {seen}, appended by {a}."),
        Dep::Rw if label.seen.is_none() => {
            format!("{a} read {key} empty, and {b} appended its first element, {next}.")
        }
        Dep::Rw => format!("{a} read {key} up to {seen}, and {b} appended the next element, {next}."),
        Dep::Rt => format!("{a} completed before {b} was invoked."),
    }
}

fn secs(t: Nanos) -> String {
    format!("{:.6}s", t as f64 / 1e9)
}

/// A list for an explanation, its middle elided when long.
fn show(list: &[u64]) -> String {
    const HEAD: usize = 3;
    const TAIL: usize = 4;
    let join = |xs: &[u64]| xs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    if list.len() <= HEAD + TAIL + 1 {
        format!("[{}]", join(list))
    } else {
        let (head, tail) = (&list[..HEAD], &list[list.len() - TAIL..]);
        format!("[{}, ... {} more ..., {}]", join(head), list.len() - HEAD - TAIL, join(tail))
    }
}

/// The anomalies found so far.
struct Found<'a> {
    txns: &'a [&'a Transaction],
    counts: BTreeMap<String, usize>,
    anomalies: Vec<Anomaly>,
    /// Size of the transactions listed so far (see `MAX_LISTED_SIZE`).
    listed: usize,
}

impl Found<'_> {
    /// Counts an anomaly of `kind` and, while fewer than `MAX_PER_KIND` are
    /// listed, lists it: `what` gives the explanation and the transactions
    /// involved (only called when listed: it may be costly). The final read
    /// is listed with only the `keys` involved.
    fn add(&mut self, kind: &str, keys: &[&str], what: impl FnOnce() -> (String, Vec<u32>)) {
        let count = self.counts.entry(kind.to_string()).or_default();
        *count += 1;
        if *count > MAX_PER_KIND {
            return;
        }
        let (mut explanation, involved) = what();
        let mut shown: Vec<u32> = Vec::new();
        let mut transactions = Vec::new();
        let mut omitted = 0;
        for t in involved {
            if shown.contains(&t) {
                continue;
            }
            if shown.len() == MAX_TRANSACTIONS {
                break;
            }
            shown.push(t);
            let txn = self.txns[t as usize];
            let relevant = |op: &&Micro| {
                let (Micro::R { key, .. } | Micro::Append { key, .. }) = op;
                txn.process != REFERENCE || keys.contains(&key.as_str())
            };
            let size: usize = txn
                .ops
                .iter()
                .filter(relevant)
                .map(|op| 1 + if let Micro::R { value: Some(list), .. } = op { list.len() } else { 0 })
                .sum();
            if self.listed + size > MAX_LISTED_SIZE {
                omitted += 1;
                continue;
            }
            self.listed += size;
            transactions.push(Transaction {
                process: txn.process,
                ops: txn.ops.iter().filter(relevant).cloned().collect(),
                invoke: txn.invoke,
                complete: txn.complete,
                outcome: txn.outcome,
                error: txn.error.clone(),
            });
        }
        if omitted > 0 {
            explanation.push_str(&format!(
                " ({omitted} of its transactions not listed: the report is large enough)"
            ));
        }
        self.anomalies.push(Anomaly { kind: kind.to_string(), explanation, transactions });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn r(key: &str, list: &[u64]) -> Micro {
        Micro::R { key: key.into(), value: Some(list.to_vec()) }
    }

    fn a(key: &str, element: u64) -> Micro {
        Micro::Append { key: key.into(), element }
    }

    fn txn(process: u32, (invoke, complete): (u64, u64), outcome: Outcome, ops: Vec<Micro>) -> Record {
        let ops = if outcome == Outcome::Ok {
            ops
        } else {
            // As recorded: a transaction that did not complete has no
            // read values.
            ops.into_iter()
                .map(|op| match op {
                    Micro::R { key, .. } => Micro::R { key, value: None },
                    append => append,
                })
                .collect()
        };
        Record::Txn(Transaction { process, ops, invoke, complete, outcome, error: None })
    }

    fn ok(process: u32, times: (u64, u64), ops: Vec<Micro>) -> Record {
        txn(process, times, Outcome::Ok, ops)
    }

    fn final_read(at: u64, lists: &[(&str, &[u64])]) -> Record {
        ok(REFERENCE, (at, at + 1), lists.iter().map(|(k, l)| r(k, l)).collect())
    }

    fn kinds(report: &AppendReport) -> Vec<&str> {
        report.anomalies.iter().map(|a| a.kind.as_str()).collect()
    }

    #[track_caller]
    fn assert_valid(history: &[Record]) -> AppendReport {
        let report = check(history);
        assert!(report.valid, "{:#?}", report.anomalies);
        report
    }

    #[track_caller]
    fn assert_anomaly(history: &[Record], kind: &str) -> Anomaly {
        let report = check(history);
        assert!(!report.valid);
        let found = report.anomalies.iter().find(|a| a.kind == kind);
        found.unwrap_or_else(|| panic!("no {kind} in {:#?}", report.anomalies)).clone()
    }

    #[test]
    fn nothing_recorded_is_valid() {
        let report = assert_valid(&[]);
        assert_eq!((report.ok, report.fail, report.info, report.keys, report.edges), (0, 0, 0, 0, 0));
        assert!(!report.final_read);
    }

    #[test]
    fn a_serial_history_is_valid() {
        let history = [
            ok(0, (0, 1), vec![a("x", 1)]),
            ok(1, (2, 3), vec![r("x", &[1]), a("y", 2)]),
            ok(0, (4, 5), vec![r("x", &[1]), r("y", &[2]), a("x", 3), r("x", &[1, 3])]),
            ok(1, (6, 7), vec![r("y", &[2]), r("z", &[])]),
            final_read(10, &[("x", &[1, 3]), ("y", &[2]), ("z", &[])]),
        ];
        let report = assert_valid(&history);
        assert_eq!((report.ok, report.fail, report.info, report.keys), (4, 0, 0, 3));
        assert!(report.final_read);
        assert!(report.edges > 0 && report.realtime_edges > 0, "{report:?}");
    }

    #[test]
    fn concurrent_transactions_may_be_ordered_either_way() {
        let history = [
            ok(0, (0, 10), vec![a("x", 1), a("y", 2)]),
            ok(1, (0, 10), vec![a("z", 3)]),
            // Concurrent with the appends: may miss them, or not.
            ok(2, (5, 15), vec![r("x", &[]), r("z", &[3])]),
            ok(3, (5, 15), vec![r("x", &[1]), r("y", &[2])]),
            final_read(20, &[("x", &[1]), ("y", &[2]), ("z", &[3])]),
        ];
        assert_valid(&history);
    }

    #[test]
    fn indeterminate_appends_may_or_may_not_have_happened() {
        let history = [
            ok(0, (0, 1), vec![a("x", 1)]),
            txn(1, (2, 3), Outcome::Info, vec![a("x", 2), r("y", &[])]),
            txn(2, (2, 3), Outcome::Info, vec![a("y", 3)]),
            // Long after the client gave up, the append lands.
            ok(3, (10, 11), vec![r("x", &[1, 2])]),
            final_read(20, &[("x", &[1, 2]), ("y", &[])]),
        ];
        let report = assert_valid(&history);
        assert_eq!((report.ok, report.info, report.info_committed), (2, 2, 1));
    }

    #[test]
    fn a_failed_append_never_seen_is_fine_and_one_seen_is_an_aborted_read() {
        let history = vec![
            ok(0, (0, 1), vec![a("x", 1)]),
            txn(1, (2, 3), Outcome::Fail, vec![r("x", &[]), a("x", 2)]),
            final_read(10, &[("x", &[1])]),
        ];
        assert_eq!(assert_valid(&history).fail, 1);
        let mut history = history;
        history[2] = final_read(10, &[("x", &[1, 2])]);
        let anomaly = assert_anomaly(&history, "aborted-read");
        assert!(anomaly.explanation.contains("T1 appended 2 to x and failed"), "{}", anomaly.explanation);
        assert_eq!(anomaly.transactions.len(), 2);
    }

    #[test]
    fn a_duplicated_element_is_reported() {
        let history = [
            ok(0, (0, 1), vec![a("x", 1)]),
            ok(1, (2, 3), vec![r("x", &[1, 1])]),
            final_read(10, &[("x", &[1])]),
        ];
        assert_anomaly(&history, "duplicate-elements");
    }

    #[test]
    fn an_element_nobody_appended_is_garbage() {
        let history = [ok(0, (0, 1), vec![a("y", 5)]), final_read(10, &[("x", &[5]), ("y", &[5])])];
        let anomaly = assert_anomaly(&history, "garbage-read");
        assert!(anomaly.explanation.contains("read 5 in x"), "{}", anomaly.explanation);
        // The final read is listed with the key involved only.
        assert_eq!(anomaly.transactions[0].ops, [r("x", &[5])]);
        // Many readers: a few are listed.
        let mut history: Vec<Record> = (0..30).map(|i| ok(i, (0, 1), vec![r("x", &[5])])).collect();
        history.push(ok(99, (0, 1), vec![a("y", 5)]));
        let anomaly = assert_anomaly(&history, "garbage-read");
        assert_eq!(anomaly.transactions.len(), MAX_TRANSACTIONS - 1);
        assert!(anomaly.explanation.contains("and others (30 reads)"), "{}", anomaly.explanation);
        assert!(anomaly.explanation.contains("(T30 appended it to y)"), "{}", anomaly.explanation);
    }

    #[test]
    fn reads_that_disagree_on_the_order_are_incompatible() {
        let history = [
            ok(0, (0, 10), vec![a("x", 1)]),
            ok(1, (0, 10), vec![a("x", 2)]),
            ok(2, (20, 21), vec![r("x", &[1])]),
            ok(3, (20, 21), vec![r("x", &[2])]),
            final_read(30, &[("x", &[1, 2])]),
        ];
        let anomaly = assert_anomaly(&history, "incompatible-order");
        assert!(anomaly.explanation.starts_with("T3 read x = [2]"), "{}", anomaly.explanation);
    }

    #[test]
    fn an_acknowledged_append_missing_from_the_final_read_is_lost() {
        let history = vec![ok(0, (0, 1), vec![a("x", 1)]), ok(1, (0, 1), vec![a("x", 2)])];
        // Without a final read, the appends may just be later than any read.
        assert_valid(&history);
        let mut history = history;
        history.push(final_read(10, &[("x", &[2])]));
        let report = check(&history);
        assert_eq!(kinds(&report), ["lost-append"]);
        assert!(report.anomalies[0].explanation.starts_with("T0 appended 1 to x"));
    }

    #[test]
    fn a_read_must_agree_with_its_own_transaction() {
        let own_append_missing = [ok(0, (0, 1), vec![a("x", 1), r("x", &[])])];
        assert_anomaly(&own_append_missing, "internal");
        let changed_between_reads = [
            ok(0, (0, 1), vec![a("x", 1)]),
            ok(1, (0, 1), vec![a("x", 2)]),
            ok(2, (0, 5), vec![r("x", &[1]), r("x", &[1, 2])]),
        ];
        assert_anomaly(&changed_between_reads, "internal");
        let future_read = [ok(0, (0, 1), vec![r("x", &[1]), a("x", 1)]), final_read(10, &[("x", &[1])])];
        assert_anomaly(&future_read, "internal");
        let fine = [ok(0, (0, 1), vec![r("x", &[]), a("x", 1), r("x", &[1]), a("x", 2), r("x", &[1, 2])])];
        assert_valid(&fine);
    }

    #[test]
    fn appends_ordered_differently_on_two_keys_are_g0() {
        let history = [
            ok(0, (0, 10), vec![a("k1", 1), a("k2", 3)]),
            ok(1, (0, 10), vec![a("k1", 2), a("k2", 4)]),
            final_read(20, &[("k1", &[1, 2]), ("k2", &[4, 3])]),
        ];
        let report = check(&history);
        assert_eq!(kinds(&report), ["G0"]);
        let explanation = &report.anomalies[0].explanation;
        assert!(explanation.contains("T0 -ww(k1)-> T1 -ww(k2)-> T0"), "{explanation}");
    }

    #[test]
    fn each_reading_the_other_is_g1c() {
        let history = [
            ok(0, (0, 10), vec![a("x", 1), r("y", &[2])]),
            ok(1, (0, 10), vec![a("y", 2), r("x", &[1])]),
            final_read(20, &[("x", &[1]), ("y", &[2])]),
        ];
        let report = check(&history);
        assert_eq!(kinds(&report), ["G1c"]);
    }

    #[test]
    fn read_skew_is_g_single() {
        // T0 sees T1's append to y but not its append to x.
        let history = [
            ok(0, (0, 10), vec![r("x", &[]), r("y", &[2])]),
            ok(1, (0, 10), vec![a("x", 1), a("y", 2)]),
            final_read(20, &[("x", &[1]), ("y", &[2])]),
        ];
        let report = check(&history);
        assert_eq!(kinds(&report), ["G-single"]);
        let anomaly = &report.anomalies[0];
        assert!(anomaly.explanation.contains("T0 -rw(x)-> T1 -wr(y)-> T0"), "{}", anomaly.explanation);
        assert_eq!(anomaly.transactions.len(), 2);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["anomaly_counts"]["G-single"], 1);
        assert_eq!(json["anomalies"][0]["transactions"][1]["ops"][0]["f"], "append");
    }

    #[test]
    fn write_skew_is_g2() {
        let history = [
            ok(0, (0, 10), vec![r("x", &[]), a("y", 2)]),
            ok(1, (0, 10), vec![r("y", &[]), a("x", 1)]),
            final_read(20, &[("x", &[1]), ("y", &[2])]),
        ];
        let report = check(&history);
        assert_eq!(kinds(&report), ["G2"]);
    }

    #[test]
    fn a_stale_read_is_g_single_realtime() {
        let history = vec![
            ok(0, (0, 10), vec![a("x", 1)]),
            ok(1, (20, 30), vec![r("x", &[])]),
            final_read(40, &[("x", &[1])]),
        ];
        let report = check(&history);
        assert_eq!(kinds(&report), ["G-single-realtime"]);
        assert!(report.anomalies[0].explanation.contains("T1 -rw(x)-> T0 -rt-> T1"));
        // Concurrent with the append, the same read is fine.
        let mut history = history;
        history[1] = ok(1, (5, 30), vec![r("x", &[])]);
        assert_valid(&history);
    }

    #[test]
    fn reading_an_append_not_yet_invoked_is_g1c_realtime() {
        let history = [
            ok(0, (0, 10), vec![r("x", &[1])]),
            ok(1, (20, 30), vec![a("x", 1)]),
            final_read(40, &[("x", &[1])]),
        ];
        let report = check(&history);
        assert_eq!(kinds(&report), ["G1c-realtime"]);
        assert!(report.anomalies[0].explanation.starts_with("T1 -wr(x)-> T0 -rt-> T1:"));
    }

    #[test]
    fn a_final_read_shorter_than_an_earlier_read_is_a_cycle() {
        // The element came back from nowhere... or rather, went: a read saw
        // it, the final read does not.
        let history = [
            txn(0, (0, 1), Outcome::Info, vec![a("x", 1)]),
            ok(1, (2, 3), vec![r("x", &[1])]),
            final_read(10, &[("x", &[])]),
        ];
        assert_anomaly(&history, "G-single-realtime");
    }

    #[test]
    fn realtime_edges_keep_the_order_without_all_pairs() {
        // Eight clients, back to back: about one edge per transaction and
        // client, not one per pair.
        let mut history = Vec::new();
        for i in 0..1000u64 {
            let p = (i % 8) as u32;
            history.push(ok(p, (i * 10, i * 10 + 75), vec![a("x", i)]));
        }
        let list: Vec<u64> = (0..1000).collect();
        history.push(final_read(1_000_000, &[("x", &list)]));
        let report = assert_valid(&history);
        assert!(report.realtime_edges < 1001 * 9, "{}", report.realtime_edges);
        // A stale read at the end still closes a cycle through the chain.
        history.insert(1000, ok(9, (20_000, 20_001), vec![r("x", &[0])]));
        let anomaly = assert_anomaly(&history, "G-single-realtime");
        // The chain of realtime edges is one step.
        assert!(anomaly.explanation.starts_with("T1000 -rw(x)-> T1 -rt-> T1000:"), "{}", anomaly.explanation);
    }

    #[test]
    fn listings_are_capped() {
        let mut history: Vec<Record> = (0..100).map(|i| ok(0, (i, i + 1), vec![a("x", i)])).collect();
        history.push(final_read(1000, &[("x", &[])]));
        let report = check(&history);
        assert_eq!(report.anomaly_counts["lost-append"], 100);
        assert_eq!(report.anomalies.len(), MAX_PER_KIND);
    }

    #[test]
    fn a_long_serial_history_is_checked() {
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut lists: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut element = 0;
        let mut history = Vec::new();
        for i in 0..50_000u64 {
            let mut ops = Vec::new();
            for _ in 0..1 + random(4) {
                // Keys change every 500 transactions, as in the workload,
                // except one that grows to a long list.
                let key = if random(8) == 0 { "long".into() } else { format!("k{}-{}", i / 500, random(10)) };
                let list = lists.entry(key.clone()).or_default();
                if random(2) == 0 && (key != "long" || i % 100 == 0) {
                    ops.push(r(&key, list));
                } else {
                    element += 1;
                    list.push(element);
                    ops.push(a(&key, element));
                }
            }
            history.push(ok((i % 10) as u32, (i * 10, i * 10 + 9), ops));
        }
        let all: Vec<(&str, &[u64])> = lists.iter().map(|(k, l)| (k.as_str(), l.as_slice())).collect();
        history.push(final_read(1 << 40, &all));
        let report = assert_valid(&history);
        assert_eq!(report.ok, 50_000);
        assert!(lists["long"].len() > 5_000);
    }
}
