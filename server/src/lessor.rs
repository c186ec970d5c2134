//! Lease expiry timers. Which leases exist, their TTLs and checkpointed
//! remaining TTLs are replicated state (the store's lease table); when each
//! lease expires is the leader's business alone, as in etcd: only the
//! primary lessor (on the leader) has timers, renews them on keep-alives and
//! expires leases by proposing revokes. Followers hand keep-alives to it.
//!
//! A new leader cannot know how long ago its predecessor last saw a
//! keep-alive, so on promotion each lease gets its checkpointed remaining
//! TTL (or its full TTL if never checkpointed) plus one election timeout.
//! The leader checkpoints remaining TTLs periodically, which bounds how far
//! leader changes can extend a lease nobody keeps alive.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rtcd_store::LeaseInfo;

#[derive(Debug, Clone, Copy)]
struct Timer {
    ttl: i64,
    expires: Instant,
    /// The store holds a remaining TTL for this lease (a checkpoint) that a
    /// renewal makes stale.
    checkpointed: bool,
}

/// The timers of a primary lessor, and the term it leads in.
#[derive(Debug)]
struct Primary {
    term: u64,
    timers: HashMap<i64, Timer>,
}

/// `None` on followers: no timers.
#[derive(Debug, Default)]
pub struct Lessor {
    primary: Mutex<Option<Primary>>,
}

fn secs(n: i64) -> Duration {
    Duration::from_secs(n.max(0) as u64)
}

/// What a renewal did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renewed {
    pub ttl: i64,
    /// The lease's stored remaining TTL must be cleared, or a new leader
    /// would use it and expire a lease that is being kept alive.
    pub clear_checkpoint: bool,
}

impl Lessor {
    fn primary(&self) -> std::sync::MutexGuard<'_, Option<Primary>> {
        // Timer updates cannot be left half-done, so a poisoned lock is usable.
        self.primary.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn timers(&self) -> TimersGuard<'_> {
        TimersGuard(self.primary())
    }

    /// The term this lessor was promoted in, if it is the primary.
    pub fn primary_term(&self) -> Option<u64> {
        self.primary().as_ref().map(|p| p.term)
    }

    /// Becomes the primary for `term`, with a timer for every lease `load`
    /// returns (read while the lessor is locked, so no grant applied
    /// meanwhile is missed).
    pub fn promote(&self, term: u64, load: impl FnOnce() -> Vec<LeaseInfo>, extend: Duration) {
        let mut primary = self.primary();
        let now = Instant::now();
        let started = load()
            .into_iter()
            .map(|l| {
                let left = if l.remaining_ttl > 0 { l.remaining_ttl } else { l.ttl };
                let timer = Timer {
                    ttl: l.ttl,
                    expires: now + secs(left) + extend,
                    checkpointed: l.remaining_ttl > 0,
                };
                (l.id, timer)
            })
            .collect();
        *primary = Some(Primary { term, timers: started });
    }

    pub fn demote(&self) {
        *self.primary() = None;
    }

    /// A grant was applied: its timer starts now (on the primary only).
    pub fn granted(&self, id: i64, ttl: i64) {
        if let Some(timers) = self.timers().as_mut() {
            timers.insert(id, Timer { ttl, expires: Instant::now() + secs(ttl), checkpointed: false });
        }
    }

    /// A revoke was applied.
    pub fn revoked(&self, id: i64) {
        if let Some(timers) = self.timers().as_mut() {
            timers.remove(&id);
        }
    }

    /// Checkpoints were applied: a checkpoint of 0 clears the stored value.
    pub fn checkpointed(&self, id: i64, remaining_ttl: i64) {
        if let Some(timer) = self.timers().as_mut().and_then(|t| t.get_mut(&id)) {
            timer.checkpointed = remaining_ttl > 0;
        }
    }

    /// Pushes expiry a full TTL into the future; `None` for unknown or
    /// already expired leases, or when this lessor is not the primary.
    pub fn renew(&self, id: i64) -> Option<Renewed> {
        let now = Instant::now();
        let mut timers = self.timers();
        let timer = timers.as_mut()?.get_mut(&id).filter(|t| t.expires > now)?;
        timer.expires = now + secs(timer.ttl);
        Some(Renewed { ttl: timer.ttl, clear_checkpoint: timer.checkpointed })
    }

    /// Whole seconds left, as etcd reports them (rounded down); `None` for
    /// unknown leases or when this lessor is not the primary.
    pub fn remaining(&self, id: i64) -> Option<i64> {
        let t = *self.timers().as_ref()?.get(&id)?;
        Some(remaining_secs(&t, Instant::now()))
    }

    pub fn expired(&self) -> Vec<i64> {
        let now = Instant::now();
        let timers = self.timers();
        let Some(timers) = timers.as_ref() else { return Vec::new() };
        timers.iter().filter(|(_, t)| t.expires <= now).map(|(id, _)| *id).collect()
    }

    /// Every live lease's remaining TTL (at least 1 s), to be checkpointed.
    pub fn remaining_ttls(&self) -> Vec<(i64, i64)> {
        let now = Instant::now();
        let timers = self.timers();
        let Some(timers) = timers.as_ref() else { return Vec::new() };
        let mut out: Vec<(i64, i64)> = timers
            .iter()
            .filter(|(_, t)| t.expires > now)
            .map(|(id, t)| (*id, remaining_secs(t, now).max(1)))
            .collect();
        out.sort_unstable();
        out
    }
}

/// The primary's timers, if this lessor is the primary.
struct TimersGuard<'a>(std::sync::MutexGuard<'a, Option<Primary>>);

impl TimersGuard<'_> {
    fn as_mut(&mut self) -> Option<&mut HashMap<i64, Timer>> {
        self.0.as_mut().map(|p| &mut p.timers)
    }

    fn as_ref(&self) -> Option<&HashMap<i64, Timer>> {
        self.0.as_ref().map(|p| &p.timers)
    }
}

fn remaining_secs(t: &Timer, now: Instant) -> i64 {
    t.expires.saturating_duration_since(now).as_secs() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(id: i64, ttl: i64, remaining_ttl: i64) -> LeaseInfo {
        LeaseInfo { id, ttl, remaining_ttl, ..Default::default() }
    }

    #[test]
    fn a_follower_has_no_timers() {
        let lessor = Lessor::default();
        lessor.granted(1, 30);
        assert_eq!(lessor.renew(1), None);
        assert_eq!(lessor.remaining(1), None);
        assert!(lessor.expired().is_empty());
        assert!(lessor.remaining_ttls().is_empty());
    }

    #[test]
    fn renew_restarts_the_ttl_and_unknown_leases_are_none() {
        let lessor = Lessor::default();
        lessor.promote(1, Vec::new, Duration::ZERO);
        lessor.granted(1, 30);
        assert_eq!(lessor.renew(1), Some(Renewed { ttl: 30, clear_checkpoint: false }));
        assert!(matches!(lessor.remaining(1), Some(29 | 30)));
        assert_eq!(lessor.renew(2), None);
        lessor.granted(3, 0);
        assert_eq!(lessor.expired(), vec![3]);
        assert_eq!(lessor.renew(3), None, "an expired lease cannot be kept alive");
        lessor.revoked(3);
        assert!(lessor.expired().is_empty());
    }

    #[test]
    fn promotion_uses_checkpoints_and_extends() {
        let lessor = Lessor::default();
        let extend = Duration::from_secs(1);
        lessor.promote(2, || vec![lease(1, 100, 5), lease(2, 10, 0)], extend);
        assert_eq!(lessor.primary_term(), Some(2));
        assert!(matches!(lessor.remaining(1), Some(5 | 6)), "checkpointed remaining TTL plus the extension");
        assert!(matches!(lessor.remaining(2), Some(10 | 11)), "never checkpointed: the full TTL");
        let renewed = lessor.renew(1).map(|r| r.clear_checkpoint);
        assert_eq!(renewed, Some(true), "renewing a checkpointed lease must clear its checkpoint");
        lessor.checkpointed(1, 0);
        assert_eq!(lessor.renew(1).map(|r| r.clear_checkpoint), Some(false));
        assert_eq!(lessor.remaining_ttls().iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![1, 2]);
        lessor.demote();
        assert_eq!(lessor.remaining(1), None);
        assert_eq!(lessor.primary_term(), None);
    }
}
