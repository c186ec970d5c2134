//! Linearizability checking of single-key register histories: the Wing–Gong
//! search with Lowe's memoization, as in Porcupine.
//!
//! The history is turned into a time-ordered doubly linked list of call and
//! return entries. A depth-first search repeatedly picks a call that appears
//! before the first remaining return (so it is concurrent with everything still
//! pending), applies it to the register model, and "lifts" its call and return
//! out of the list. Reaching a return entry means the operation it belongs to
//! was not placed in time, so the search backtracks. A cache of (set of
//! linearized operations, register value) pairs prunes states already explored.
//!
//! `Info` operations have no return entry: they may be linearized at any point
//! after their invocation, or never, and the search succeeds once every `Ok`
//! operation has been linearized.

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::history::{Nanos, Operation, Outcome, RegisterOp};

/// Result of checking one key's operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Linearizable,
    /// No linearization exists. `ops` are the operations (indices into the slice given to `check_key`) of a
    /// minimal-ish failing prefix that a user should look at: at least the operation that could not be
    /// placed and the operations concurrent with it. `explanation` is one human-readable sentence.
    NotLinearizable {
        ops: Vec<usize>,
        explanation: String,
    },
    /// The search gave up after `steps` steps (report as unknown, not as valid).
    Unknown {
        steps: u64,
    },
}

/// Checks `ops` as the history of a single register (the `key` field is not
/// looked at). At most `step_limit` search steps are taken.
pub fn check_key(ops: &[Operation], step_limit: u64) -> Verdict {
    let refs: Vec<&Operation> = ops.iter().collect();
    check_refs(&refs, step_limit)
}

/// Groups `ops` by key and checks each key; returns (key, verdict) for every key, sorted by key.
///
/// The indices in a `NotLinearizable` verdict refer to that key's operations
/// in the order they appear in `ops` (as if `check_key` had been given just
/// that key's operations).
pub fn check(ops: &[Operation], step_limit: u64) -> Vec<(String, Verdict)> {
    let mut by_key: BTreeMap<&str, Vec<&Operation>> = BTreeMap::new();
    for op in ops {
        by_key.entry(op.key.as_str()).or_default().push(op);
    }
    by_key.into_iter().map(|(key, key_ops)| (key.to_string(), check_refs(&key_ops, step_limit))).collect()
}

/// A register operation reduced to what the model needs (and `Copy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read(Option<u64>),
    Write(u64),
    Cas(u64, u64),
}

impl Kind {
    fn from_op(op: &RegisterOp) -> Self {
        match *op {
            RegisterOp::Read { value } => Kind::Read(value),
            RegisterOp::Write { value } => Kind::Write(value),
            RegisterOp::Cas { from, to } => Kind::Cas(from, to),
        }
    }

    /// The register model: the new value if the operation can happen in `state`.
    fn apply(self, state: Option<u64>) -> Option<Option<u64>> {
        match self {
            Kind::Read(v) => (v == state).then_some(state),
            Kind::Write(v) => Some(Some(v)),
            Kind::Cas(from, to) => (state == Some(from)).then_some(Some(to)),
        }
    }

    /// The value this operation leaves in the register, if it changes it.
    fn written(self) -> Option<u64> {
        match self {
            Kind::Read(_) => None,
            Kind::Write(v) | Kind::Cas(_, v) => Some(v),
        }
    }

    fn describe(self) -> String {
        match self {
            Kind::Read(Some(v)) => format!("read of {v}"),
            Kind::Read(None) => "read of nothing (key absent)".to_string(),
            Kind::Write(v) => format!("write {v}"),
            Kind::Cas(from, to) => format!("cas {from}->{to}"),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::Read(_) => "read",
            Kind::Write(_) => "write",
            Kind::Cas(..) => "cas",
        }
    }
}

/// An operation that takes part in the search.
#[derive(Debug, Clone, Copy)]
struct Op {
    /// Index into the caller's slice.
    orig: usize,
    kind: Kind,
    invoke: Nanos,
    /// `None` for `Info`: pending forever.
    complete: Option<Nanos>,
}

impl Op {
    /// Real-time order: `self` returned strictly before `other` was invoked.
    /// Equal times count as concurrent, matching the event order (calls
    /// before returns), which is the lenient reading of a tie.
    fn precedes(&self, other: &Op) -> bool {
        self.complete.is_some_and(|c| c < other.invoke)
    }

    fn concurrent(&self, other: &Op) -> bool {
        !self.precedes(other) && !other.precedes(self)
    }
}

/// Drops what cannot matter: `Fail` operations never happened and `Info`
/// reads observed nothing. `Info` writes whose value nothing ever needs are
/// dropped too: in any linearization that includes one, removing it leaves a
/// valid linearization (the next operation on its value could only be a write,
/// as no read or cas expects that value), and every such op in the list
/// multiplies the search space. Ops come back sorted by invocation, so the
/// linearized set of a search state is mostly a dense prefix (compact cache).
fn prepare(ops: &[&Operation]) -> Vec<Op> {
    let mut kept: Vec<Op> = ops
        .iter()
        .enumerate()
        .filter_map(|(orig, o)| {
            let kind = Kind::from_op(&o.op);
            let complete = match o.outcome {
                Outcome::Fail => return None,
                Outcome::Info if matches!(kind, Kind::Read(_)) => return None,
                Outcome::Info => None,
                // A clock glitch must not make an op end before it starts.
                Outcome::Ok => Some(o.complete.max(o.invoke)),
            };
            Some(Op { orig, kind, invoke: o.invoke, complete })
        })
        .collect();
    // Repeat: dropping an Info cas may leave the value it expected unneeded.
    loop {
        let needed: HashSet<u64> = kept
            .iter()
            .filter_map(|o| match o.kind {
                Kind::Read(v) => v,
                Kind::Cas(from, _) => Some(from),
                Kind::Write(_) => None,
            })
            .collect();
        let before = kept.len();
        kept.retain(|o| o.complete.is_some() || o.kind.written().is_some_and(|v| needed.contains(&v)));
        if kept.len() == before {
            break;
        }
    }
    kept.sort_by_key(|o| (o.invoke, o.orig));
    kept
}

/// Minimal multiply-xor hasher: cache keys are a few machine words, and
/// SipHash would dominate the search time.
#[derive(Default)]
struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(buf));
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    fn finish(&self) -> u64 {
        // murmur3 finalizer: hashbrown uses both the low and the top bits.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Fixed-size bitset of linearized operations.
struct Bitset {
    words: Vec<u64>,
}

impl Bitset {
    fn new(bits: usize) -> Self {
        Bitset { words: vec![0; bits.div_ceil(64)] }
    }

    fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    fn clear(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    /// Writes a compact form into `key`: the number of leading all-ones words
    /// and the rest without trailing zero words. Ops are numbered in call
    /// order, so this is usually one to three words instead of n/64.
    fn compact_into(&self, key: &mut CacheKey) {
        let lead = self.words.iter().take_while(|&&w| w == u64::MAX).count();
        let rest = self.words.get(lead..).unwrap_or(&[]);
        let len = rest.iter().rposition(|&w| w != 0).map_or(0, |p| p + 1);
        key.lead = lead;
        key.words.clear();
        key.words.extend_from_slice(rest.get(..len).unwrap_or(&[]));
    }
}

/// A memoized search state: which ops are linearized, and the register value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct CacheKey {
    lead: usize,
    words: Vec<u64>,
    state: Option<u64>,
}

const NIL: usize = usize::MAX;
const HEAD: usize = 0;

/// The entry list: node 0 is the head sentinel, node `i + 1` is event `i`.
/// Removed nodes keep their links, so they can be put back in reverse order
/// of removal (dancing links).
struct Entries {
    prev: Vec<usize>,
    next: Vec<usize>,
    /// Op of each node (unused for the head).
    op: Vec<usize>,
    /// For call nodes: the node of the matching return (`NIL` for `Info`
    /// ops); `None` for return nodes and the head.
    ret: Vec<Option<usize>>,
}

impl Entries {
    fn build(ops: &[Op]) -> Self {
        // (time, 0 = call / 1 = return, op): calls sort before returns at equal
        // times, so ops touching at an instant count as concurrent.
        let mut events: Vec<(Nanos, u8, usize)> = Vec::with_capacity(ops.len() * 2);
        for (i, o) in ops.iter().enumerate() {
            events.push((o.invoke, 0, i));
            if let Some(c) = o.complete {
                events.push((c, 1, i));
            }
        }
        events.sort_unstable();
        let n = events.len() + 1;
        let mut e = Entries {
            prev: (0..n).map(|i| i.checked_sub(1).unwrap_or(NIL)).collect(),
            next: (0..n).map(|i| if i + 1 < n { i + 1 } else { NIL }).collect(),
            op: vec![0; n],
            ret: vec![None; n],
        };
        let mut ret_node = vec![NIL; ops.len()];
        for (pos, &(_, kind, op)) in events.iter().enumerate() {
            e.op[pos + 1] = op;
            if kind == 1 {
                ret_node[op] = pos + 1;
            }
        }
        for (pos, &(_, kind, op)) in events.iter().enumerate() {
            if kind == 0 {
                e.ret[pos + 1] = Some(ret_node[op]);
            }
        }
        e
    }

    fn remove(&mut self, n: usize) {
        let (p, x) = (self.prev[n], self.next[n]);
        self.next[p] = x;
        if x != NIL {
            self.prev[x] = p;
        }
    }

    fn reinsert(&mut self, n: usize) {
        let (p, x) = (self.prev[n], self.next[n]);
        self.next[p] = n;
        if x != NIL {
            self.prev[x] = n;
        }
    }

    fn lift(&mut self, call: usize) {
        self.remove(call);
        if let Some(r) = self.ret[call].filter(|&r| r != NIL) {
            self.remove(r);
        }
    }

    fn unlift(&mut self, call: usize) {
        if let Some(r) = self.ret[call].filter(|&r| r != NIL) {
            self.reinsert(r);
        }
        self.reinsert(call);
    }
}

enum Search {
    Ok,
    GaveUp(u64),
    /// The op whose return was the furthest (latest in time) the search
    /// ever got stuck at.
    Stuck(Option<usize>),
}

fn search(ops: &[Op], step_limit: u64) -> Search {
    let mut remaining = ops.iter().filter(|o| o.complete.is_some()).count();
    if remaining == 0 {
        return Search::Ok;
    }
    let mut list = Entries::build(ops);
    let mut linearized = Bitset::new(ops.len());
    let mut cache: HashSet<CacheKey, BuildHasherDefault<WordHasher>> = HashSet::default();
    let mut scratch = CacheKey::default();
    // (call node lifted, register value before it)
    let mut stack: Vec<(usize, Option<u64>)> = Vec::new();
    let mut state: Option<u64> = None;
    let mut entry = list.next[HEAD];
    let mut steps: u64 = 0;
    let mut stuck: Option<(usize, usize)> = None;

    loop {
        if steps >= step_limit {
            return Search::GaveUp(steps);
        }
        steps += 1;
        let call = (entry != NIL).then(|| list.ret[entry]).flatten();
        if call.is_some() {
            let i = list.op[entry];
            let applied = ops.get(i).and_then(|o| o.kind.apply(state));
            if let Some(new_state) = applied {
                linearized.set(i);
                linearized.compact_into(&mut scratch);
                scratch.state = new_state;
                if cache.insert(scratch.clone()) {
                    stack.push((entry, state));
                    state = new_state;
                    list.lift(entry);
                    if ops.get(i).is_some_and(|o| o.complete.is_some()) {
                        remaining -= 1;
                        if remaining == 0 {
                            return Search::Ok;
                        }
                    }
                    entry = list.next[HEAD];
                    continue;
                }
                linearized.clear(i);
            }
            entry = list.next[entry];
        } else {
            // A return: its op was not linearized before its deadline. (NIL
            // cannot be reached while an Ok op remains, but backtrack anyway.)
            if entry != NIL && stuck.is_none_or(|(node, _)| entry > node) {
                stuck = Some((entry, list.op[entry]));
            }
            let Some((call, before)) = stack.pop() else {
                return Search::Stuck(stuck.map(|(_, op)| op));
            };
            let i = list.op[call];
            state = before;
            linearized.clear(i);
            if ops.get(i).is_some_and(|o| o.complete.is_some()) {
                remaining += 1;
            }
            list.unlift(call);
            entry = list.next[call];
        }
    }
}

fn check_refs(all: &[&Operation], step_limit: u64) -> Verdict {
    let ops = prepare(all);
    match search(&ops, step_limit) {
        Search::Ok => Verdict::Linearizable,
        Search::GaveUp(steps) => Verdict::Unknown { steps },
        Search::Stuck(op) => {
            // Some Ok op always blocks a failing search; fall back to the first.
            let x = op.or_else(|| ops.iter().position(|o| o.complete.is_some())).unwrap_or(0);
            let (ops, explanation) = diagnose(all, &ops, x);
            Verdict::NotLinearizable { ops, explanation }
        }
    }
}

fn at(op: &Op) -> String {
    match op.complete {
        Some(c) => format!("t={}..{}", op.invoke, c),
        None => format!("t={}..(indeterminate)", op.invoke),
    }
}

/// Names the operations around the stuck op `x` and says, where a simple
/// real-time argument proves it, why `x` cannot be placed.
fn diagnose(all: &[&Operation], ops: &[Op], x: usize) -> (Vec<usize>, String) {
    let Some(xo) = ops.get(x).copied() else {
        return (Vec::new(), "no linearization exists".to_string());
    };
    let mut involved: Vec<usize> = vec![xo.orig];
    // The last ops to finish before x began: they fix the value x starts from.
    let latest_start = ops.iter().filter(|o| o.precedes(&xo)).map(|o| o.invoke).max();
    if let Some(m) = latest_start {
        involved.extend(ops.iter().filter(|o| o.precedes(&xo) && o.complete >= Some(m)).map(|o| o.orig));
    }
    // Concurrent ops could go either side of x. An Info op never ends, so it
    // is concurrent with everything after it; only name the recent ones (not
    // ordered after those last ops), or the list would grow with the run.
    let since = latest_start.unwrap_or(0);
    let concurrent = ops
        .iter()
        .filter(|o| o.orig != xo.orig && o.concurrent(&xo) && (o.complete.is_some() || o.invoke >= since))
        .count();
    involved.extend(
        ops.iter()
            .filter(|o| o.orig != xo.orig && o.concurrent(&xo) && (o.complete.is_some() || o.invoke >= since))
            .map(|o| o.orig),
    );

    let what = xo.kind.describe();
    let noun = xo.kind.noun();
    let when = at(&xo);
    let needed = match xo.kind {
        Kind::Read(v) => Some(v),
        Kind::Cas(from, _) => Some(Some(from)),
        Kind::Write(_) => None,
    };
    let generic = || {
        format!(
            "{what} at {when} cannot be ordered consistently with the {concurrent} operation(s) concurrent \
             with it and those that completed before it began"
        )
    };

    let explanation = match needed {
        Some(Some(v)) => {
            let writers: Vec<&Op> =
                ops.iter().filter(|o| o.orig != xo.orig && o.kind.written() == Some(v)).collect();
            involved.extend(writers.iter().map(|o| o.orig));
            // An overwrite of w that certainly happened between w and x; the
            // last one to complete is the one a reader recognises.
            let overwrite = |w: &Op| {
                ops.iter()
                    .filter(|y| {
                        y.complete.is_some()
                            && y.kind.written().is_some_and(|u| u != v)
                            && w.precedes(y)
                            && y.precedes(&xo)
                    })
                    .max_by_key(|y| y.complete)
            };
            if writers.is_empty() {
                let failed: Vec<usize> = all
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| o.outcome == Outcome::Fail && Kind::from_op(&o.op).written() == Some(v))
                    .map(|(i, _)| i)
                    .collect();
                if failed.is_empty() {
                    format!("{what} at {when} cannot be ordered: no operation ever wrote {v}")
                } else {
                    involved.extend(failed);
                    format!(
                        "{what} at {when} cannot be ordered: {v} was only written by an operation that \
                         failed, and so never took effect"
                    )
                }
            } else if writers.iter().all(|w| xo.precedes(w)) {
                format!("{what} at {when} cannot be ordered: {v} was only written after the {noun} completed")
            } else if let Some(ys) = writers
                .iter()
                .map(|w| if w.complete.is_some() { overwrite(w) } else { None })
                .collect::<Option<Vec<&Op>>>()
            {
                // Every write of v was certainly overwritten before x began.
                involved.extend(ys.iter().map(|y| y.orig));
                let y = ys
                    .first()
                    .map_or_else(String::new, |y| format!(" by {} at {}", y.kind.describe(), at(y)));
                format!(
                    "{what} at {when} cannot be ordered: {v} was overwritten{y}, which completed before the \
                     {noun} began"
                )
            } else {
                generic()
            }
        }
        Some(None) => {
            // Once written, the key never becomes absent again.
            match ops.iter().find(|y| y.kind.written().is_some() && y.precedes(&xo)) {
                Some(y) => {
                    involved.push(y.orig);
                    format!(
                        "{what} at {when} cannot be ordered: the key had already been written by {} at {}, \
                         which completed before the read began",
                        y.kind.describe(),
                        at(y)
                    )
                }
                None => generic(),
            }
        }
        None => generic(),
    };
    involved.sort_unstable();
    involved.dedup();
    (involved, explanation)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    const LIMIT: u64 = 1_000_000;

    fn op(
        process: u32,
        key: &str,
        op: RegisterOp,
        invoke: u64,
        complete: u64,
        outcome: Outcome,
    ) -> Operation {
        Operation { process, key: key.to_string(), op, invoke, complete, outcome, error: None }
    }
    fn w(p: u32, v: u64, i: u64, c: u64, o: Outcome) -> Operation {
        op(p, "k", RegisterOp::Write { value: v }, i, c, o)
    }
    fn r(p: u32, v: Option<u64>, i: u64, c: u64, o: Outcome) -> Operation {
        op(p, "k", RegisterOp::Read { value: v }, i, c, o)
    }
    fn cas(p: u32, from: u64, to: u64, i: u64, c: u64, o: Outcome) -> Operation {
        op(p, "k", RegisterOp::Cas { from, to }, i, c, o)
    }
    use Outcome::{Fail, Info, Ok};

    fn not_lin(v: Verdict) -> (Vec<usize>, String) {
        match v {
            Verdict::NotLinearizable { ops, explanation } => (ops, explanation),
            other => panic!("expected NotLinearizable, got {other:?}"),
        }
    }

    #[test]
    fn empty_and_trivial() {
        assert_eq!(check_key(&[], LIMIT), Verdict::Linearizable);
        assert!(check(&[], LIMIT).is_empty());
        assert_eq!(check_key(&[r(0, None, 0, 1, Ok)], LIMIT), Verdict::Linearizable);
        // Only Fail/Info ops: nothing must be linearized.
        assert_eq!(check_key(&[w(0, 1, 0, 1, Fail), r(1, Some(7), 0, 1, Info)], 0), Verdict::Linearizable);
    }

    #[test]
    fn sequential_valid() {
        let h = [
            r(0, None, 0, 1, Ok),
            w(0, 1, 2, 3, Ok),
            r(1, Some(1), 4, 5, Ok),
            cas(1, 1, 2, 6, 7, Ok),
            cas(0, 1, 3, 8, 9, Fail),
            r(0, Some(2), 10, 11, Ok),
            w(1, 4, 12, 13, Ok),
            r(0, Some(4), 14, 15, Ok),
        ];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
    }

    #[test]
    fn concurrent_read_sees_either_value() {
        for seen in [Some(1), Some(2)] {
            let h = [w(0, 1, 0, 1, Ok), w(0, 2, 10, 20, Ok), r(1, seen, 12, 18, Ok)];
            assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable, "read saw {seen:?}");
        }
        // Ends touching at an instant count as concurrent.
        let h = [w(0, 1, 0, 5, Ok), r(1, None, 5, 6, Ok)];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
        // Overlapping reads may see the write in either order...
        let h =
            [w(0, 1, 0, 1, Ok), w(0, 2, 10, 30, Ok), r(1, Some(2), 11, 13, Ok), r(2, Some(1), 12, 14, Ok)];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
        // ...but once a read that finished saw the new value, a later read cannot see the old one.
        let h =
            [w(0, 1, 0, 1, Ok), w(0, 2, 10, 30, Ok), r(1, Some(2), 11, 12, Ok), r(2, Some(1), 13, 14, Ok)];
        assert!(matches!(check_key(&h, LIMIT), Verdict::NotLinearizable { .. }));
        let h =
            [w(0, 1, 0, 1, Ok), w(0, 2, 10, 30, Ok), r(1, Some(1), 11, 13, Ok), r(2, Some(2), 12, 14, Ok)];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
    }

    #[test]
    fn stale_read() {
        let h = [w(0, 1, 0, 1, Ok), w(1, 2, 2, 3, Ok), r(2, Some(1), 4, 5, Ok)];
        let (ops, why) = not_lin(check_key(&h, LIMIT));
        assert_eq!(ops, vec![0, 1, 2]);
        assert!(why.contains("overwritten by write 2"), "{why}");
    }

    #[test]
    fn lost_write() {
        let h = [w(0, 1, 0, 1, Ok), r(1, None, 2, 3, Ok), r(2, None, 4, 5, Ok)];
        let (ops, why) = not_lin(check_key(&h, LIMIT));
        assert!(ops.contains(&0) && ops.contains(&1), "{ops:?}");
        assert!(why.contains("already been written by write 1"), "{why}");
    }

    #[test]
    fn read_of_value_never_written() {
        let h = [w(0, 1, 0, 1, Ok), r(1, Some(9), 0, 3, Ok)];
        let (ops, why) = not_lin(check_key(&h, LIMIT));
        assert_eq!(ops, vec![0, 1]);
        assert!(why.contains("no operation ever wrote 9"), "{why}");
    }

    #[test]
    fn read_before_write_began() {
        let h = [r(1, Some(1), 0, 1, Ok), w(0, 1, 2, 3, Ok)];
        let (_, why) = not_lin(check_key(&h, LIMIT));
        assert!(why.contains("only written after the read completed"), "{why}");
    }

    #[test]
    fn info_write_later_read() {
        // The client gave up at t=2; the write took effect much later.
        let h = [
            w(0, 1, 0, 2, Info),
            r(1, None, 3, 4, Ok),
            r(1, Some(1), 100, 101, Ok),
            r(2, Some(1), 102, 103, Ok),
        ];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
        // Info cas that took effect.
        let h = [w(0, 1, 0, 1, Ok), cas(1, 1, 2, 2, 3, Info), r(0, Some(2), 50, 51, Ok)];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
    }

    #[test]
    fn info_write_never_seen() {
        let h = [w(0, 1, 0, 1, Ok), w(1, 2, 2, 3, Info), r(0, Some(1), 4, 5, Ok), r(0, Some(1), 6, 7, Ok)];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
        // Many unseen Info writes must not blow up the search.
        let mut h: Vec<Operation> = (0..200).map(|i| w(i, 1000 + u64::from(i), 0, 1, Info)).collect();
        h.extend((0..200).map(|i| r(0, None, 10 + 2 * i, 11 + 2 * i, Ok)));
        assert_eq!(check_key(&h, 10_000), Verdict::Linearizable);
    }

    #[test]
    fn info_write_cannot_undo_order() {
        // An Info write may happen late, but not before it was invoked.
        let h = [r(1, Some(1), 0, 1, Ok), w(0, 1, 2, 3, Info)];
        assert!(matches!(check_key(&h, LIMIT), Verdict::NotLinearizable { .. }));
        // And it happens at most once: 1 cannot come back after 2.
        let h = [w(0, 1, 0, 1, Info), r(1, Some(1), 2, 3, Ok), w(1, 2, 4, 5, Ok), r(1, Some(1), 6, 7, Ok)];
        assert!(matches!(check_key(&h, LIMIT), Verdict::NotLinearizable { .. }));
    }

    #[test]
    fn cas_then_stale_read() {
        let h = [w(0, 1, 0, 1, Ok), cas(0, 1, 2, 2, 3, Ok), r(1, Some(1), 4, 5, Ok)];
        let (ops, why) = not_lin(check_key(&h, LIMIT));
        assert_eq!(ops, vec![0, 1, 2]);
        assert!(why.contains("overwritten by cas 1->2"), "{why}");
    }

    #[test]
    fn double_cas_from_same_value() {
        let h = [w(0, 1, 0, 1, Ok), cas(0, 1, 2, 2, 3, Ok), cas(1, 1, 3, 4, 5, Ok)];
        let (ops, why) = not_lin(check_key(&h, LIMIT));
        assert!(ops.contains(&2) && ops.contains(&1), "{ops:?}");
        assert!(why.starts_with("cas 1->3"), "{why}");
        // Control: with 1 put back in between (a cas, as writes are unique), both may succeed.
        let h = [w(0, 1, 0, 1, Ok), cas(0, 1, 2, 2, 3, Ok), cas(0, 2, 1, 4, 5, Ok), cas(1, 1, 3, 6, 7, Ok)];
        assert_eq!(check_key(&h, LIMIT), Verdict::Linearizable);
        // Concurrent cas ops from the same value: only one may succeed.
        let h = [w(0, 1, 0, 1, Ok), cas(0, 1, 2, 2, 9, Ok), cas(1, 1, 3, 3, 8, Ok)];
        assert!(matches!(check_key(&h, LIMIT), Verdict::NotLinearizable { .. }));
    }

    #[test]
    fn failed_write_is_not_seen() {
        let h = [w(0, 1, 0, 1, Fail), r(1, Some(1), 2, 3, Ok)];
        let (ops, why) = not_lin(check_key(&h, LIMIT));
        assert_eq!(ops, vec![0, 1]);
        assert!(why.contains("failed"), "{why}");
        // A failed cas did not take effect either.
        let h = [w(0, 1, 0, 1, Ok), cas(0, 1, 2, 2, 3, Fail), r(1, Some(2), 4, 5, Ok)];
        assert!(matches!(check_key(&h, LIMIT), Verdict::NotLinearizable { .. }));
    }

    #[test]
    fn odd_input_does_not_panic() {
        let h = [
            w(0, 1, 10, 5, Ok),
            w(1, 1, 0, 0, Ok),
            r(2, Some(1), u64::MAX, 0, Ok),
            cas(3, 1, 1, 3, 3, Info),
            r(4, Some(1), u64::MAX, u64::MAX, Ok),
        ];
        let _ = check_key(&h, LIMIT);
        let _ = check_key(&h, 0);
        assert!(matches!(check_key(&[w(0, 1, 0, 1, Ok)], 0), Verdict::Unknown { steps: 0 }));
    }

    #[test]
    fn gives_up_at_step_limit() {
        // Many concurrent writes with an impossible read: exponential without the cache, still big with it.
        let mut h: Vec<Operation> = (0..20).map(|i| w(i, u64::from(i) + 1, 0, 100, Ok)).collect();
        h.push(r(30, Some(999), 0, 100, Ok));
        assert_eq!(check_key(&h, 50), Verdict::Unknown { steps: 50 });
    }

    #[test]
    fn check_groups_keys() {
        let mut h = vec![
            w(0, 1, 0, 1, Ok),
            op(1, "b", RegisterOp::Write { value: 1 }, 0, 1, Ok),
            op(1, "b", RegisterOp::Read { value: Some(1) }, 2, 3, Ok),
            w(0, 2, 2, 3, Ok),
            op(2, "a", RegisterOp::Read { value: None }, 0, 1, Ok),
            r(1, Some(1), 4, 5, Ok), // stale on "k"
        ];
        h.push(op(2, "a", RegisterOp::Read { value: None }, 5, 6, Ok));
        let res = check(&h, LIMIT);
        let keys: Vec<&str> = res.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "k"]);
        assert_eq!(res[0].1, Verdict::Linearizable);
        assert_eq!(res[1].1, Verdict::Linearizable);
        // Indices are into key "k"'s own ops: w1, w2, r1.
        let (ops, _) = not_lin(res[2].1.clone());
        assert_eq!(ops, vec![0, 1, 2]);
    }

    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    enum Proc {
        Idle,
        Invoked { op: RegisterOp, invoke: u64 },
        Applied { op: RegisterOp, invoke: u64, outcome: Outcome },
    }

    /// Simulates clients against a real atomic register: each op is invoked,
    /// takes effect atomically some time later, and completes later still,
    /// with other processes' steps interleaved in between. Some ops time out
    /// (Info) after or without taking effect; some writes are refused (Fail).
    fn simulate(seed: u64, n_ops: usize, n_procs: u32, key: &str) -> Vec<Operation> {
        let mut rng = XorShift(seed);
        let mut procs: Vec<Proc> = (0..n_procs).map(|_| Proc::Idle).collect();
        let mut reg: Option<u64> = None;
        let mut next_value = 1u64;
        let mut time = 0u64;
        let mut out = Vec::new();
        while out.len() < n_ops {
            time += 1 + rng.below(3);
            let p = rng.below(u64::from(n_procs)) as usize;
            let done = |op: RegisterOp, invoke: u64, outcome: Outcome| Operation {
                process: p as u32,
                key: key.to_string(),
                op,
                invoke,
                complete: time,
                outcome,
                error: None,
            };
            procs[p] = match std::mem::replace(&mut procs[p], Proc::Idle) {
                Proc::Idle => {
                    let op = match rng.below(10) {
                        0..4 => RegisterOp::Read { value: None },
                        4..7 => {
                            next_value += 1;
                            RegisterOp::Write { value: next_value }
                        }
                        _ => {
                            let from = match (rng.below(2), reg) {
                                (0, Some(v)) => v,
                                _ => 1 + rng.below(next_value),
                            };
                            next_value += 1;
                            RegisterOp::Cas { from, to: next_value }
                        }
                    };
                    Proc::Invoked { op, invoke: time }
                }
                Proc::Invoked { op, invoke } => match rng.below(40) {
                    0 => {
                        out.push(done(op, invoke, Info)); // timed out, never applied
                        Proc::Idle
                    }
                    1 if matches!(op, RegisterOp::Write { .. }) => {
                        out.push(done(op, invoke, Fail)); // refused
                        Proc::Idle
                    }
                    _ => {
                        let (op, outcome) = match op {
                            RegisterOp::Read { .. } => (RegisterOp::Read { value: reg }, Ok),
                            RegisterOp::Write { value } => {
                                reg = Some(value);
                                (op, Ok)
                            }
                            RegisterOp::Cas { from, to } if reg == Some(from) => {
                                reg = Some(to);
                                (op, Ok)
                            }
                            RegisterOp::Cas { .. } => (op, Fail),
                        };
                        Proc::Applied { op, invoke, outcome }
                    }
                },
                Proc::Applied { op, invoke, outcome } => {
                    let outcome = if outcome == Ok && rng.below(25) == 0 { Info } else { outcome };
                    out.push(done(op, invoke, outcome));
                    Proc::Idle
                }
            };
        }
        // Ops still in flight when the run stops may or may not have taken effect.
        for (p, proc_) in procs.into_iter().enumerate() {
            if let Proc::Invoked { op, invoke } | Proc::Applied { op, invoke, .. } = proc_ {
                let complete = time + 1;
                out.push(Operation {
                    process: p as u32,
                    key: key.to_string(),
                    op,
                    invoke,
                    complete,
                    outcome: Info,
                    error: None,
                });
            }
        }
        out
    }

    #[test]
    fn randomized_valid_history() {
        for seed in [0x9e37_79b9_7f4a_7c15, 12345, 777] {
            let h = simulate(seed, 500, 5, "k");
            assert!(h.iter().any(|o| o.outcome == Info) && h.iter().any(|o| o.outcome == Fail));
            let start = std::time::Instant::now();
            let v = check_key(&h, 5_000_000);
            eprintln!("randomized 500 ops seed {seed}: {v:?} in {:?}", start.elapsed());
            assert_eq!(v, Verdict::Linearizable);
        }
    }

    #[test]
    fn randomized_history_corrupted() {
        let mut h = simulate(42, 500, 5, "k");
        // Make a read in the middle return a value written much later.
        let (idx, late) = {
            let i = h
                .iter()
                .position(|o| o.outcome == Ok && matches!(o.op, RegisterOp::Read { .. }) && o.invoke > 300);
            let i = i.unwrap();
            let late = h.iter().rev().find_map(|o| match o.op {
                RegisterOp::Write { value } if o.outcome == Ok && o.invoke > h[i].complete + 50 => {
                    Some(value)
                }
                _ => None,
            });
            (i, late.unwrap())
        };
        h[idx].op = RegisterOp::Read { value: Some(late) };
        let (ops, why) = not_lin(check_key(&h, 5_000_000));
        assert!(ops.contains(&idx), "{ops:?}: {why}");

        // A stale read: a read that starts after a later write completed sees an older value.
        let mut h = simulate(43, 500, 5, "k");
        let ok_writes: Vec<usize> = h
            .iter()
            .enumerate()
            .filter(|(_, o)| o.outcome == Ok && matches!(o.op, RegisterOp::Write { .. }))
            .map(|(i, _)| i)
            .collect();
        let old = ok_writes[ok_writes.len() / 4];
        let RegisterOp::Write { value: old_value } = h[old].op else { unreachable!() };
        let t = h[ok_writes[ok_writes.len() / 2]].complete;
        let i =
            h.iter().position(|o| o.outcome == Ok && matches!(o.op, RegisterOp::Read { .. }) && o.invoke > t);
        let i = i.unwrap();
        h[i].op = RegisterOp::Read { value: Some(old_value) };
        let (ops, why) = not_lin(check_key(&h, 5_000_000));
        assert!(ops.contains(&i), "{ops:?}: {why}");
        eprintln!("{why}");
    }

    #[test]
    fn larger_history_scales() {
        let h = simulate(99, 3000, 10, "k");
        let start = std::time::Instant::now();
        let v = check_key(&h, 20_000_000);
        eprintln!("randomized 3000 ops / 10 procs: {v:?} in {:?}", start.elapsed());
        assert_eq!(v, Verdict::Linearizable);
    }
}
