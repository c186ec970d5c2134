//! Leases for objects with a TTL (Events), shared the way kube-apiserver's
//! lease manager shares them: one lease serves every object created within
//! a short window (5% of the TTL, at most a minute), so a stream of Events
//! costs etcd a lease a minute rather than one each. Objects may then live
//! up to that window longer than their TTL, as in Kubernetes.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest a lease is reused (kube's `--lease-reuse-duration-seconds`).
const MAX_REUSE: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
pub struct LeaseReuse {
    current: Mutex<Option<Granted>>,
}

#[derive(Debug, Clone, Copy)]
struct Granted {
    id: i64,
    expires: Instant,
}

impl LeaseReuse {
    /// A lease already granted that outlives `ttl` from now, if any.
    pub fn reusable(&self, ttl: Duration, now: Instant) -> Option<i64> {
        let current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        current.filter(|g| g.expires >= now + ttl).map(|g| g.id)
    }

    /// The TTL to grant a new lease for objects of `ttl`: with the reuse
    /// window on top.
    pub fn grant_ttl(ttl: Duration) -> Duration {
        ttl + reuse_window(ttl)
    }

    /// Records a lease granted at `now` with `granted` TTL.
    pub fn granted(&self, id: i64, granted: Duration, now: Instant) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        *current = Some(Granted { id, expires: now + granted });
    }
}

fn reuse_window(ttl: Duration) -> Duration {
    (ttl / 20).min(MAX_REUSE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_shared_within_its_window_then_replaced() {
        let reuse = LeaseReuse::default();
        let hour = Duration::from_secs(3600);
        let t0 = Instant::now();
        assert_eq!(reuse.reusable(hour, t0), None);
        assert_eq!(LeaseReuse::grant_ttl(hour), hour + Duration::from_secs(60));
        reuse.granted(7, LeaseReuse::grant_ttl(hour), t0);
        assert_eq!(reuse.reusable(hour, t0 + Duration::from_secs(59)), Some(7));
        assert_eq!(reuse.reusable(hour, t0 + Duration::from_secs(61)), None);
        // Short TTLs get a proportionally short window: 5%.
        assert_eq!(LeaseReuse::grant_ttl(Duration::from_secs(20)), Duration::from_secs(21));
    }
}
