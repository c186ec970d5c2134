//! The lease checker: what etcd promises about keys attached to leases.
//!
//! The workload grants leases under IDs it chooses, puts one key on each
//! (once), renews some with one-shot keep-alives, revokes some and lets the
//! rest expire, while reading which lease keys exist. Every time comes from
//! one monotonic clock on the machine the members also run on, so the
//! client's times and the leader's lease clock can be compared.
//!
//! # What the rules rest on
//!
//! * (A) A key attached to a lease exists only while its lease does: a put
//!   naming a lease that does not exist fails when applied, and a revoke —
//!   an expiry is a revoke the leader proposes — deletes the lease and its
//!   keys in one raft entry.
//! * (B) A lease, once gone, does not come back: the workload grants each
//!   ID once, and renewing an expired lease waits for its revocation and
//!   answers "not found". The rules that need this (1, 3, 5) skip a lease
//!   granted more than once (two grants of one ID that may both have taken
//!   effect: the second may re-create it after the first was revoked).
//! * (C) A key is put once, so once it existed and then did not, it is gone
//!   for good. Every rule but the final read skips a key put more than once.
//! * (D) Ok operations took effect at one instant between their invocation
//!   and completion (reads are linearizable), Fail ones not at all, Info
//!   ones perhaps, at any time after their invocation.
//! * (E) The leader sets a lease's expiry to (the instant it applies the
//!   grant or renewal) + TTL, proposes the revoke only once that has
//!   passed, and a new leader only extends what is left (it refreshes every
//!   lease to now + TTL + an election timeout, "now" being later than any
//!   renewal its predecessor answered).
//!
//! By (A), (B) and (C), a key is seen by an Ok read only if its put had
//! been applied and its lease had not yet been revoked at that read's
//! instant. The key "is known to have existed by" the completion of its Ok
//! put or of the first read that saw it, whichever is earlier.
//!
//! # The rules
//!
//! 1. **Revoked keys disappear.** An Ok revoke took effect by its
//!    completion, so the lease (B) and the key (A) are gone from then on: a
//!    read invoked after it completed must not see the key. No need to know
//!    that the put had been applied: a put landing later fails (A).
//! 2. **Never back.** If an Ok read invoked after the key is known to have
//!    existed does not see it, it had been deleted by then (C): a read
//!    invoked after that one completed must not see it. When the put was
//!    indeterminate and no read had yet seen the key, a read that misses it
//!    proves nothing (the put may land later), which is why the rule starts
//!    only once the key is known to have existed.
//! 3. **Not expired early.** An Ok grant or keep-alive answered with TTL t
//!    (> 0) was carried out at an instant x after its invocation, and by (E)
//!    the lease then lives at least until x + t ≥ invoke + t. It existed
//!    before x too (it was granted before, and was not re-created (B)). So
//!    an Ok read invoked after the key is known to have existed and
//!    completed before the largest such invoke + t must see the key — unless
//!    a revoke that may have taken effect (Ok or Info) had been invoked
//!    before the read completed. (A keep-alive invoked after the read counts
//!    too: the lease was alive at x, hence at the read.)
//! 4. **Expired keys are gone.** The final read (process `REFERENCE`) is
//!    taken once keep-alives have stopped and every TTL, with the margins
//!    of (E), has run out: it must see no lease key at all. Skipped when
//!    there is no final read.
//! 5. **"Not found" means gone.** An Ok keep-alive answered with TTL 0 found
//!    no lease at its instant. If the lease is known to have existed before
//!    the keep-alive was invoked (an Ok grant or put completed, or a read
//!    saw its key), it was gone for good (B): as for a revoke, a read
//!    invoked after the keep-alive completed must not see the key. (Before
//!    that, "not found" may only mean "not granted yet".)
//! 6. **Nothing that was not put.** A read does not see a key whose only put
//!    failed, a key no client put, or a key before its put was invoked.
//!
//! Each rule reports at most one problem per key (the earliest read
//! involved), naming the lease, the key and the operations' times.
//!
//! Not checked: that a lease expires within some bound of its deadline
//! before the end — etcd promises no such bound (every leader change
//! extends every lease).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::history::{LeaseAction, LeaseOp, Nanos, Outcome, REFERENCE, Record};

#[derive(Debug, Clone, Serialize)]
pub struct LeaseReport {
    pub valid: bool,
    /// Distinct leases granted (ok or indeterminate).
    pub leases: usize,
    /// Ok reads of the lease keys (the final read excluded).
    pub reads: usize,
    /// Ok keep-alives (renewed or "not found").
    pub keep_alives: usize,
    /// Ok revokes.
    pub revoked: usize,
    /// Each anomaly in a sentence (at most `MAX_PROBLEMS`, then a count).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

const MAX_PROBLEMS: usize = 50;

const SECOND: Nanos = 1_000_000_000;

/// What the history says about one lease.
#[derive(Debug, Default)]
struct Lease<'a> {
    /// Grants that may have taken effect (ok or indeterminate).
    grants: usize,
    /// The earliest completion of an ok grant: the lease existed by then.
    granted_by: Option<Nanos>,
    /// The largest `invoke + ttl` over ok grants and renewals, and the
    /// operation that promised it.
    alive_until: Option<(Nanos, &'a LeaseOp)>,
    /// The earliest invocation of a revoke that may have taken effect.
    revoke_invoked: Option<Nanos>,
    /// Ok revokes.
    revokes: Vec<&'a LeaseOp>,
    /// Ok keep-alives answered with TTL 0.
    not_found: Vec<&'a LeaseOp>,
}

/// The ok reads (final read excluded), sorted by invocation, and for each
/// key the indices of the reads that saw it (ascending).
struct Reads<'a> {
    reads: Vec<&'a LeaseOp>,
    seen: HashMap<&'a str, Vec<usize>>,
}

impl Reads<'_> {
    /// The index of the first read invoked after `t`.
    fn first_after(&self, t: Nanos) -> usize {
        self.reads.partition_point(|r| r.invoke <= t)
    }

    /// Of the reads in `seen`, the first invoked after `t`.
    fn first_seen_after(&self, seen: &[usize], t: Nanos) -> Option<usize> {
        seen.get(seen.partition_point(|&i| self.reads[i].invoke <= t)).copied()
    }
}

/// Checks the lease operations in `history` (none: trivially valid).
pub fn check(history: &[Record]) -> LeaseReport {
    let ops: Vec<&LeaseOp> =
        history.iter().filter_map(|r| if let Record::Lease(l) = r { Some(l) } else { None }).collect();
    let mut leases: HashMap<i64, Lease> = HashMap::new();
    let mut puts: BTreeMap<&str, Vec<(i64, &LeaseOp)>> = BTreeMap::new();
    let mut granted = HashSet::new();
    let (mut keep_alives, mut revoked) = (0, 0);
    let mut reads = Vec::new();
    let mut last_read: Option<&LeaseOp> = None;
    for &op in &ops {
        let ok = op.outcome == Outcome::Ok;
        match &op.action {
            LeaseAction::Grant { lease, ttl } => {
                if op.outcome == Outcome::Fail {
                    continue;
                }
                granted.insert(*lease);
                let l = leases.entry(*lease).or_default();
                l.grants += 1;
                if ok {
                    l.granted_by = Some(l.granted_by.map_or(op.complete, |g| g.min(op.complete)));
                    promise(l, op, *ttl);
                }
            }
            LeaseAction::Put { lease, key } => puts.entry(key).or_default().push((*lease, op)),
            LeaseAction::KeepAlive { lease, ttl } if ok => {
                keep_alives += 1;
                let l = leases.entry(*lease).or_default();
                if *ttl > 0 {
                    promise(l, op, *ttl);
                } else {
                    l.not_found.push(op);
                }
            }
            LeaseAction::KeepAlive { .. } => {}
            LeaseAction::Revoke { lease } => {
                if op.outcome == Outcome::Fail {
                    continue;
                }
                let l = leases.entry(*lease).or_default();
                l.revoke_invoked = Some(l.revoke_invoked.map_or(op.invoke, |r| r.min(op.invoke)));
                if ok {
                    revoked += 1;
                    l.revokes.push(op);
                }
            }
            LeaseAction::Read { .. } if !ok => {}
            LeaseAction::Read { .. } if op.process == REFERENCE => {
                if last_read.is_none_or(|f| f.invoke <= op.invoke) {
                    last_read = Some(op);
                }
            }
            LeaseAction::Read { .. } => reads.push(op),
        }
    }
    reads.sort_by_key(|r| (r.invoke, r.complete));
    let mut seen: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, read) in reads.iter().enumerate() {
        for key in keys(read) {
            let list = seen.entry(key.as_str()).or_default();
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    let reads = Reads { reads, seen };
    let all_keys: BTreeSet<&str> = puts.keys().copied().chain(reads.seen.keys().copied()).collect();
    let mut problems = Vec::new();
    for key in all_keys {
        let seen = reads.seen.get(key).map_or(&[][..], Vec::as_slice);
        let key_puts = puts.get(key).map_or(&[][..], Vec::as_slice);
        check_key(key, key_puts, seen, &leases, &reads, &mut problems);
    }
    if let Some(last) = last_read {
        for key in keys(last) {
            let about = describe(key, puts.get(key.as_str()).and_then(|p| p.first()).map(|(l, _)| *l));
            let promised = puts
                .get(key.as_str())
                .and_then(|p| p.first())
                .and_then(|(l, _)| leases.get(l)?.alive_until)
                .map_or(String::new(), |(until, _)| format!("; last promised alive until {} ms", ms(until)));
            problems.push(format!(
                "{about}: still present in the final read at {}, when every lease should have been \
                 revoked or expired{promised}",
                span(last)
            ));
        }
    }
    let total = super::cap_problems(&mut problems, MAX_PROBLEMS);
    LeaseReport {
        valid: total == 0,
        leases: granted.len(),
        reads: reads.reads.len(),
        keep_alives,
        revoked,
        problems,
    }
}

/// Records that `op` (an ok grant or renewal, invoked at `op.invoke`)
/// promised the lease `ttl` seconds.
fn promise<'a>(lease: &mut Lease<'a>, op: &'a LeaseOp, ttl: i64) {
    let until = op.invoke.saturating_add(u64::try_from(ttl).unwrap_or(0).saturating_mul(SECOND));
    if lease.alive_until.is_none_or(|(u, _)| u < until) {
        lease.alive_until = Some((until, op));
    }
}

fn keys(read: &LeaseOp) -> &[String] {
    match &read.action {
        LeaseAction::Read { keys } => keys,
        _ => &[],
    }
}

fn ms(t: Nanos) -> String {
    format!("{:.1}", t as f64 / 1e6)
}

/// An operation's invocation and completion, e.g. "1200.0–1210.5 ms".
fn span(op: &LeaseOp) -> String {
    format!("{}–{} ms", ms(op.invoke), ms(op.complete))
}

fn describe(key: &str, lease: Option<i64>) -> String {
    match lease {
        Some(id) => format!("{key} (lease {id})"),
        None => format!("{key} (no lease)"),
    }
}

fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => a.or(b),
    }
}

/// Every rule but the final read's, for one key; `seen` are the indices of
/// the reads that saw it.
fn check_key(
    key: &str,
    puts: &[(i64, &LeaseOp)],
    seen: &[usize],
    leases: &HashMap<i64, Lease>,
    reads: &Reads,
    problems: &mut Vec<String>,
) {
    let first_seen = seen.first().map(|&i| reads.reads[i]);
    let &[(id, put)] = puts else {
        if let Some(r) = first_seen {
            if puts.is_empty() {
                problems.push(format!("{key}: seen by the read at {}, but no client ever put it", span(r)));
            } else if puts.iter().all(|(_, p)| p.outcome == Outcome::Fail) {
                let lease = puts.first().map(|(l, _)| *l);
                problems.push(format!(
                    "{}: every put of it failed, yet the read at {} saw it (failed put visible)",
                    describe(key, lease),
                    span(r)
                ));
            }
        }
        // Put more than once: it may legitimately come and go.
        return;
    };
    let about = describe(key, Some(id));
    if put.outcome == Outcome::Fail {
        if let Some(r) = first_seen {
            problems.push(format!(
                "{about}: its put at {} failed, yet the read at {} saw it (failed put visible)",
                span(put),
                span(r)
            ));
        }
        return;
    }
    // Seen by a read that completed before the put was even invoked.
    if let Some(r) = seen
        .iter()
        .map(|&i| reads.reads[i])
        .take_while(|r| r.invoke < put.invoke)
        .find(|r| r.complete < put.invoke)
    {
        problems.push(format!(
            "{about}: seen by the read at {}, before its put was invoked at {}",
            span(r),
            span(put)
        ));
    }
    // When the key is known to have existed.
    let existed_by = earliest(
        (put.outcome == Outcome::Ok).then_some(put.complete),
        seen.iter().map(|&i| reads.reads[i].complete).min(),
    );
    let lease = leases.get(&id);
    // Rules 1, 3 and 5 need the lease to have been granted only once.
    let lease = lease.filter(|l| l.grants <= 1);
    if let Some(lease) = lease {
        gone_for_good(&about, lease, existed_by, seen, reads, problems);
    }
    let Some(existed_by) = existed_by else { return };
    never_back(&about, existed_by, seen, reads, problems);
    if let Some(lease) = lease {
        not_early(&about, lease, existed_by, seen, reads, problems);
    }
}

/// Rules 1 and 5: once the lease is known gone (an ok revoke, or a
/// keep-alive that found no lease it had had), no later read sees the key.
fn gone_for_good(
    about: &str,
    lease: &Lease,
    existed_by: Option<Nanos>,
    seen: &[usize],
    reads: &Reads,
    problems: &mut Vec<String>,
) {
    let existed_by = earliest(existed_by, lease.granted_by);
    let not_found = lease.not_found.iter().filter(|k| existed_by.is_some_and(|e| e < k.invoke));
    let Some(proof) = lease.revokes.iter().chain(not_found).min_by_key(|op| op.complete) else { return };
    let Some(r) = reads.first_seen_after(seen, proof.complete) else { return };
    let why = if matches!(proof.action, LeaseAction::Revoke { .. }) {
        format!("after the revoke at {} had completed (revoked keys disappear)", span(proof))
    } else {
        format!(
            "after the keep-alive at {} had answered TTL 0 (lease not found) although the lease had \
             existed",
            span(proof)
        )
    };
    problems.push(format!("{about}: seen by the read at {}, invoked {why}", span(reads.reads[r])));
}

/// Rule 2: a read invoked after the key existed that misses it, then a
/// read invoked after that one completed that sees it.
fn never_back(about: &str, existed_by: Nanos, seen: &[usize], reads: &Reads, problems: &mut Vec<String>) {
    let Some(&last) = seen.last() else { return };
    let back_by = reads.reads[last].invoke;
    let missed = (reads.first_after(existed_by)..reads.reads.len())
        .take_while(|&i| reads.reads[i].invoke < back_by)
        .find(|&i| reads.reads[i].complete < back_by && seen.binary_search(&i).is_err());
    let Some(missed) = missed.map(|i| reads.reads[i]) else { return };
    let Some(back) = reads.first_seen_after(seen, missed.complete) else { return };
    problems.push(format!(
        "{about}: existed by {} ms, missing from the read at {}, back in the read at {} (deleted keys \
         never reappear)",
        ms(existed_by),
        span(missed),
        span(reads.reads[back])
    ));
}

/// Rule 3: reads between the key's existence and the lease's promised
/// lifetime (cut short by any revoke invoked) see the key.
fn not_early(
    about: &str,
    lease: &Lease,
    existed_by: Nanos,
    seen: &[usize],
    reads: &Reads,
    problems: &mut Vec<String>,
) {
    let Some((until, by)) = lease.alive_until else { return };
    let limit = until.min(lease.revoke_invoked.unwrap_or(Nanos::MAX));
    let mut early = (reads.first_after(existed_by)..reads.reads.len())
        .take_while(|&i| reads.reads[i].invoke < limit)
        .filter(|&i| reads.reads[i].complete < limit && seen.binary_search(&i).is_err());
    let Some(first) = early.next() else { return };
    let more = early.count();
    let what = if matches!(by.action, LeaseAction::Grant { .. }) { "grant" } else { "keep-alive" };
    let ttl = match by.action {
        LeaseAction::Grant { ttl, .. } | LeaseAction::KeepAlive { ttl, .. } => ttl,
        _ => 0,
    };
    let more = if more > 0 { format!(" (and {more} later reads)") } else { String::new() };
    problems.push(format!(
        "{about}: existed by {} ms, missing from the read at {}{more}, but the {what} at {} (TTL {ttl} \
         s) kept the lease alive until at least {} ms and no revoke had been invoked (expired early)",
        ms(existed_by),
        span(reads.reads[first]),
        span(by),
        ms(until)
    ));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const S: Nanos = SECOND;
    const MS: Nanos = SECOND / 1000;

    fn op(action: LeaseAction, invoke: Nanos, complete: Nanos, outcome: Outcome) -> Record {
        Record::Lease(LeaseOp { process: 0, action, invoke, complete, outcome, error: None })
    }

    fn grant(lease: i64, ttl: i64, at: Nanos) -> Record {
        op(LeaseAction::Grant { lease, ttl }, at, at + 10 * MS, Outcome::Ok)
    }

    fn put(lease: i64, at: Nanos, outcome: Outcome) -> Record {
        op(LeaseAction::Put { lease, key: format!("k{lease}") }, at, at + 10 * MS, outcome)
    }

    fn read_between(keys: &[i64], invoke: Nanos, complete: Nanos) -> Record {
        let keys = keys.iter().map(|l| format!("k{l}")).collect();
        op(LeaseAction::Read { keys }, invoke, complete, Outcome::Ok)
    }

    fn read(keys: &[i64], at: Nanos) -> Record {
        read_between(keys, at, at + 10 * MS)
    }

    fn keep_alive(lease: i64, ttl: i64, at: Nanos) -> Record {
        op(LeaseAction::KeepAlive { lease, ttl }, at, at + 10 * MS, Outcome::Ok)
    }

    fn revoke(lease: i64, at: Nanos, outcome: Outcome) -> Record {
        op(LeaseAction::Revoke { lease }, at, at + 100 * MS, outcome)
    }

    fn final_read(keys: &[i64], at: Nanos) -> Record {
        let keys = keys.iter().map(|l| format!("k{l}")).collect();
        Record::Lease(LeaseOp {
            process: REFERENCE,
            action: LeaseAction::Read { keys },
            invoke: at,
            complete: at + MS,
            outcome: Outcome::Ok,
            error: None,
        })
    }

    fn problems(history: &[Record]) -> Vec<String> {
        let report = check(history);
        assert_eq!(report.valid, report.problems.is_empty());
        report.problems
    }

    fn assert_flags(history: &[Record], words: &str) {
        let found = problems(history);
        assert!(
            found.iter().any(|p| p.contains("k1 (lease 1)") && p.contains(words)),
            "expected {words:?}: {found:?}"
        );
    }

    fn assert_valid(history: &[Record]) {
        assert_eq!(problems(history), Vec::<String>::new(), "{history:?}");
    }

    #[test]
    fn a_key_seen_after_its_revoke_is_reported() {
        let h = [grant(1, 5, 0), put(1, S / 10, Outcome::Ok), revoke(1, S, Outcome::Ok), read(&[1], 2 * S)];
        assert_flags(&h, "revoked keys disappear");
        // Even when the put was indeterminate: a late put fails.
        let h = [grant(1, 5, 0), put(1, S / 10, Outcome::Info), revoke(1, S, Outcome::Ok), read(&[1], 2 * S)];
        assert_flags(&h, "revoked keys disappear");
    }

    #[test]
    fn a_key_seen_after_a_not_found_keep_alive_is_reported() {
        let h = [grant(1, 2, 0), put(1, S / 10, Outcome::Ok), keep_alive(1, 0, 3 * S), read(&[1], 4 * S)];
        assert_flags(&h, "lease not found");
    }

    #[test]
    fn a_not_found_keep_alive_before_the_lease_existed_proves_nothing() {
        let h = [
            keep_alive(1, 0, 0),
            op(LeaseAction::Grant { lease: 1, ttl: 5 }, 0, 2 * S, Outcome::Ok),
            put(1, 2 * S, Outcome::Ok),
            read(&[1], 3 * S),
        ];
        assert_valid(&h);
    }

    #[test]
    fn a_key_that_comes_back_is_reported() {
        let h = [grant(1, 2, 0), put(1, S / 10, Outcome::Ok), read(&[], 3 * S), read(&[1], 4 * S)];
        assert_flags(&h, "back in the read");
        // An indeterminate put, once seen, must not flicker either.
        let h = [
            grant(1, 2, 0),
            put(1, S / 10, Outcome::Info),
            read(&[1], S),
            read(&[], 3 * S),
            read(&[1], 4 * S),
        ];
        assert_flags(&h, "back in the read");
    }

    #[test]
    fn a_key_gone_before_its_ttl_is_reported() {
        // Read at grant.invoke + ttl/2, after the put: missing.
        let h = [grant(1, 4, 0), put(1, S / 10, Outcome::Ok), read(&[1], S), read(&[], 2 * S)];
        assert_flags(&h, "expired early");
        // Kept alive at 3 s for 4 s more: still there at 6 s.
        let h = [grant(1, 4, 0), put(1, S / 10, Outcome::Ok), keep_alive(1, 4, 3 * S), read(&[], 6 * S)];
        assert_flags(&h, "expired early");
        // A keep-alive renewing it later proves it was alive at the read.
        let h = [grant(1, 2, 0), put(1, S / 10, Outcome::Ok), read(&[], S), keep_alive(1, 2, S + S / 2)];
        assert_flags(&h, "expired early");
    }

    #[test]
    fn a_key_left_in_the_final_read_is_reported() {
        let h = [grant(1, 2, 0), put(1, S / 10, Outcome::Ok), read(&[1], S), final_read(&[1], 30 * S)];
        assert_flags(&h, "final read");
    }

    #[test]
    fn a_failed_put_that_shows_up_is_reported() {
        let h = [grant(1, 2, 0), put(1, S / 10, Outcome::Fail), read(&[1], S)];
        assert_flags(&h, "failed put visible");
    }

    #[test]
    fn keys_never_put_or_seen_before_their_put_are_reported() {
        let h = [read(&[7], S)];
        let found = problems(&h);
        assert!(found.iter().any(|p| p.contains("k7") && p.contains("no client ever put it")), "{found:?}");
        let h = [grant(1, 5, 0), read(&[1], S / 10), put(1, S, Outcome::Ok)];
        assert_flags(&h, "before its put was invoked");
    }

    #[test]
    fn a_lease_kept_alive_across_many_reads_is_valid() {
        let mut h = vec![grant(1, 2, 0), put(1, S / 10, Outcome::Ok)];
        for i in 0..20 {
            h.push(keep_alive(1, 2, S + i * S));
            h.push(read(&[1], S + i * S + S / 2));
        }
        // Not renewed after 20 s: gone by 23 s.
        h.extend([read(&[], 23 * S), final_read(&[], 30 * S)]);
        assert_valid(&h);
        let report = check(&h);
        assert_eq!((report.leases, report.reads, report.keep_alives, report.revoked), (1, 21, 20, 0));
    }

    #[test]
    fn a_lease_that_expires_is_valid() {
        // Missing after its deadline (no keep-alive), before and after the
        // final read.
        let h = [
            grant(1, 2, 0),
            put(1, S / 10, Outcome::Ok),
            read(&[1], S),
            read(&[], 2 * S + S / 10),
            read(&[], 3 * S),
            final_read(&[], 30 * S),
        ];
        assert_valid(&h);
        // A read overlapping the deadline may miss it.
        let h = [grant(1, 2, 0), put(1, S / 10, Outcome::Ok), read_between(&[], S, 3 * S)];
        assert_valid(&h);
    }

    #[test]
    fn an_indeterminate_put_seen_late_is_valid() {
        let h = [grant(1, 5, 0), put(1, S / 10, Outcome::Info), read(&[], S), read(&[1], 2 * S)];
        assert_valid(&h);
        // Never seen at all: also fine.
        let h = [grant(1, 5, 0), put(1, S / 10, Outcome::Info), read(&[], S), read(&[], 2 * S)];
        assert_valid(&h);
    }

    #[test]
    fn an_indeterminate_revoke_is_valid() {
        let h = [
            grant(1, 5, 0),
            put(1, S / 10, Outcome::Ok),
            read(&[1], S / 2),
            revoke(1, S, Outcome::Info),
            read(&[1], S + S / 2),
            read(&[], 2 * S),
            read(&[], 3 * S),
            final_read(&[], 30 * S),
        ];
        assert_valid(&h);
        let report = check(&h);
        assert_eq!((report.leases, report.revoked, report.reads), (1, 0, 4));
    }

    #[test]
    fn reads_overlapping_the_revoke_may_see_the_key_or_not() {
        let h = [
            grant(1, 5, 0),
            put(1, S / 10, Outcome::Ok),
            op(LeaseAction::Revoke { lease: 1 }, S, 2 * S, Outcome::Ok),
            read_between(&[], S + S / 10, S + S / 2),
            read_between(&[1], S + S / 5, S + 3 * S / 5),
            read_between(&[], S + 7 * S / 10, S + 4 * S / 5),
            read(&[], 3 * S),
        ];
        assert_valid(&h);
        assert_eq!(check(&h).revoked, 1);
    }

    #[test]
    fn an_empty_history_is_valid() {
        let report = check(&[]);
        assert!(report.valid);
        assert_eq!((report.leases, report.reads, report.keep_alives, report.revoked), (0, 0, 0, 0));
    }

    #[test]
    fn a_lease_granted_twice_is_not_held_to_one_lifetime() {
        // The second grant may re-create it after the revoke.
        let h = [
            grant(1, 5, 0),
            op(LeaseAction::Grant { lease: 1, ttl: 5 }, 0, S, Outcome::Info),
            put(1, S / 10, Outcome::Info),
            revoke(1, S, Outcome::Ok),
            read(&[1], 2 * S),
        ];
        assert_valid(&h);
        assert_eq!(check(&h).leases, 1);
    }

    #[test]
    fn problems_are_capped() {
        let h: Vec<Record> = (1..=60).flat_map(|l| [put(l, 0, Outcome::Fail), read(&[l], S)]).collect();
        let report = check(&h);
        assert!(!report.valid);
        assert_eq!(report.problems.len(), MAX_PROBLEMS + 1);
        assert_eq!(report.problems.last().unwrap(), "... and 10 more");
    }

    /// A long, correct run: 2000 leases (revoked, renewed or left to
    /// expire), 20000 reads of about 35 keys each.
    #[test]
    fn a_large_valid_history_passes_quickly() {
        let n = 2000;
        let mut h = Vec::new();
        // For each lease: its key appears from `from` until `to` (instants).
        let mut lives = Vec::new();
        for i in 0..n {
            let g = i * 100 * MS;
            let ttl = 2 + (i % 4) as i64;
            let lease = i as i64;
            h.push(grant(lease, ttl, g));
            h.push(op(
                LeaseAction::Put { lease, key: format!("k{lease}") },
                g + 20 * MS,
                g + 30 * MS,
                Outcome::Ok,
            ));
            let gone = match i % 3 {
                0 => {
                    let r = g + S + (i % 7) * 100 * MS;
                    h.push(op(LeaseAction::Revoke { lease }, r, r + 10 * MS, Outcome::Ok));
                    r + 5 * MS
                }
                1 => {
                    let mut last = g;
                    for k in 1..=1 + i % 5 {
                        last = g + k * S;
                        h.push(keep_alive(lease, ttl, last));
                    }
                    last + 5 * MS + ttl as Nanos * S + 300 * MS
                }
                _ => g + 5 * MS + ttl as Nanos * S + 300 * MS,
            };
            lives.push((g + 25 * MS, gone));
        }
        let reads = 20 * n;
        for j in 0..reads {
            let t = j * 10 * MS + 3 * MS;
            let newest = (t / (100 * MS)).min(n - 1);
            let oldest = newest.saturating_sub(150);
            let keys: Vec<i64> = (oldest..=newest)
                .filter(|&i| lives[i as usize].0 <= t && t < lives[i as usize].1)
                .map(|i| i as i64)
                .collect();
            h.push(read_between(&keys, t - 2 * MS, t + 2 * MS));
        }
        h.push(final_read(&[], (n * 100 + 60_000) * MS));
        let start = std::time::Instant::now();
        let report = check(&h);
        assert!(report.valid, "{:?}", report.problems);
        assert_eq!((report.leases, report.reads, report.revoked), (n as usize, reads as usize, 667));
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "{:?}", start.elapsed());
        // One key dropped from one read in the middle is noticed.
        let middle = h.len() - 1 - reads as usize / 2;
        let Record::Lease(LeaseOp { action: LeaseAction::Read { keys }, .. }) = &mut h[middle] else {
            panic!("not a read")
        };
        assert!(keys.len() > 20, "{keys:?}");
        let dropped = keys.remove(keys.len() / 2);
        let found = problems(&h);
        assert!(!found.is_empty() && found.iter().all(|p| p.contains(&format!("{dropped} "))), "{found:?}");
    }
}
