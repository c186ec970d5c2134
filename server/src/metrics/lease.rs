//! etcd's lease counters: grants (with their TTLs) and revocations as each
//! member applies them, renewals the leader accepts, and leases the leader
//! revoked because they expired.

use std::sync::atomic::{AtomicU64, Ordering};

use rtcd_metrics::Histogram;

#[derive(Debug)]
pub struct LeaseCounters {
    granted: AtomicU64,
    revoked: AtomicU64,
    renewed: AtomicU64,
    expired: AtomicU64,
    /// TTLs granted, in seconds.
    ttls: Histogram,
}

impl Default for LeaseCounters {
    fn default() -> Self {
        LeaseCounters {
            granted: AtomicU64::new(0),
            revoked: AtomicU64::new(0),
            renewed: AtomicU64::new(0),
            expired: AtomicU64::new(0),
            // etcd's buckets: 1 s doubling to 2^23 s.
            ttls: Histogram::exponential(1.0, 2.0, 24),
        }
    }
}

impl LeaseCounters {
    pub fn granted(&self, ttl: i64) {
        self.granted.fetch_add(1, Ordering::Relaxed);
        self.ttls.observe(ttl as f64);
    }

    pub fn revoked(&self) {
        self.revoked.fetch_add(1, Ordering::Relaxed);
    }

    pub fn renewed(&self) {
        self.renewed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn expired(&self) {
        self.expired.fetch_add(1, Ordering::Relaxed);
    }

    pub fn render(&self, out: &mut String) {
        let value = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
        let families = [
            ("etcd_debugging_lease_granted_total", "The total number of granted leases.", &self.granted),
            ("etcd_debugging_lease_revoked_total", "The total number of revoked leases.", &self.revoked),
            (
                "etcd_debugging_lease_renewed_total",
                "The number of renewed leases seen by the leader.",
                &self.renewed,
            ),
            (
                "etcd_debugging_server_lease_expired_total",
                "The total number of expired leases.",
                &self.expired,
            ),
        ];
        for (name, help, counter) in families {
            rtcd_metrics::text::single(out, name, "counter", help, value(counter));
        }
        let ttls = [(String::new(), &self.ttls)];
        rtcd_metrics::text::histogram(
            out,
            "etcd_debugging_lease_ttl_total",
            "Bucketed histogram of lease TTLs.",
            &ttls,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_counted_with_their_ttls() {
        let counters = LeaseCounters::default();
        counters.granted(5);
        counters.granted(60);
        counters.revoked();
        counters.renewed();
        let mut out = String::new();
        counters.render(&mut out);
        assert!(out.contains("\netcd_debugging_lease_granted_total 2\n"), "{out}");
        assert!(out.contains("\netcd_debugging_lease_revoked_total 1\n"), "{out}");
        assert!(out.contains("\netcd_debugging_lease_renewed_total 1\n"), "{out}");
        assert!(out.contains("\netcd_debugging_server_lease_expired_total 0\n"), "{out}");
        assert!(out.contains("etcd_debugging_lease_ttl_total_bucket{le=\"4\"} 0\n"), "{out}");
        assert!(out.contains("etcd_debugging_lease_ttl_total_bucket{le=\"8\"} 1\n"), "{out}");
        assert!(out.contains("etcd_debugging_lease_ttl_total_bucket{le=\"64\"} 2\n"), "{out}");
        assert!(out.contains("etcd_debugging_lease_ttl_total_sum 65\n"), "{out}");
    }
}
