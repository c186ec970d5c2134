//! Lease timers. The store keeps which leases exist and their keys (that is
//! replicated state); the lessor keeps when each one expires (local state:
//! restarting a member gives every lease a fresh TTL, or its checkpointed
//! remaining TTL, as etcd does). Expiry revokes through the normal write path.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rtcd_store::LeaseInfo;

#[derive(Debug, Clone, Copy)]
struct Timer {
    ttl: i64,
    expires: Instant,
}

#[derive(Debug, Default)]
pub struct Lessor {
    timers: Mutex<HashMap<i64, Timer>>,
}

fn secs(n: i64) -> Duration {
    Duration::from_secs(n.max(0) as u64)
}

impl Lessor {
    fn timers(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Timer>> {
        // Timer updates cannot be left half-done, so a poisoned lock is usable.
        self.timers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts timers for leases found in the store at startup.
    pub fn restore(&self, leases: &[LeaseInfo]) {
        let now = Instant::now();
        let mut timers = self.timers();
        for l in leases {
            let left = if l.remaining_ttl > 0 { l.remaining_ttl } else { l.ttl };
            timers.insert(l.id, Timer { ttl: l.ttl, expires: now + secs(left) });
        }
    }

    pub fn granted(&self, id: i64, ttl: i64) {
        self.timers().insert(id, Timer { ttl, expires: Instant::now() + secs(ttl) });
    }

    pub fn revoked(&self, id: i64) {
        self.timers().remove(&id);
    }

    /// Pushes expiry a full TTL into the future; `None` for unknown or
    /// already expired leases.
    pub fn renew(&self, id: i64) -> Option<i64> {
        let now = Instant::now();
        let mut timers = self.timers();
        let timer = timers.get_mut(&id).filter(|t| t.expires > now)?;
        timer.expires = now + secs(timer.ttl);
        Some(timer.ttl)
    }

    /// Whole seconds left, as etcd reports them (rounded down).
    pub fn remaining(&self, id: i64) -> Option<i64> {
        let t = *self.timers().get(&id)?;
        Some(t.expires.saturating_duration_since(Instant::now()).as_secs() as i64)
    }

    pub fn expired(&self) -> Vec<i64> {
        let now = Instant::now();
        self.timers().iter().filter(|(_, t)| t.expires <= now).map(|(id, _)| *id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renew_restarts_the_ttl_and_unknown_leases_are_none() {
        let lessor = Lessor::default();
        lessor.granted(1, 30);
        assert_eq!(lessor.renew(1), Some(30));
        assert!(matches!(lessor.remaining(1), Some(29 | 30)));
        assert_eq!(lessor.renew(2), None);
        lessor.granted(3, 0);
        assert_eq!(lessor.expired(), vec![3]);
        assert_eq!(lessor.renew(3), None, "an expired lease cannot be kept alive");
        lessor.revoked(3);
        assert!(lessor.expired().is_empty());
    }
}
