//! How long each request took to apply, as etcd measures it: a histogram
//! per operation and outcome (`etcd_server_apply_duration_seconds`), and
//! the requests slower than `--experimental-warning-apply-duration`, each
//! counted (`etcd_server_slow_apply_total`) and logged with etcd's warning
//! (`apply request took too long`). Read-only ranges are held to the same
//! bound, as etcd holds them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rtcd_metrics::Histogram;

use crate::apply::WriteRequest;
use crate::auth::AuthRequest;

/// etcd's default `--experimental-warning-apply-duration`.
pub const DEFAULT_WARNING_APPLY_DURATION: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub struct ApplyTimes {
    warn_after: Duration,
    /// By `(operation, succeeded)`; few keys, made on first use.
    by_op: Mutex<BTreeMap<(&'static str, bool), Arc<Histogram>>>,
    slow: AtomicU64,
}

impl ApplyTimes {
    pub fn new(warn_after: Duration) -> Self {
        ApplyTimes { warn_after, by_op: Mutex::default(), slow: AtomicU64::new(0) }
    }

    /// One applied request.
    pub(crate) fn applied(&self, request: &WriteRequest, succeeded: bool, took: Duration) {
        let op = op_name(request);
        {
            let mut by_op = self.by_op.lock().unwrap_or_else(|e| e.into_inner());
            // etcd's buckets: 0.1 ms doubling, 20 of them.
            let histogram = by_op
                .entry((op, succeeded))
                .or_insert_with(|| Arc::new(Histogram::exponential(0.0001, 2.0, 20)));
            histogram.observe_duration(took);
        }
        if took > self.warn_after {
            self.slow.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                took = ?took,
                expected_duration = ?self.warn_after,
                request = op,
                key = %summary(request),
                succeeded,
                "apply request took too long"
            );
        }
    }

    /// A read-only range served in `took`.
    pub fn ranged(&self, key: &[u8], took: Duration) {
        if took > self.warn_after {
            self.slow.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                took = ?took,
                expected_duration = ?self.warn_after,
                prefix = "read-only range ",
                key = %String::from_utf8_lossy(key),
                "apply request took too long"
            );
        }
    }

    /// Requests slower than the bound, reads included.
    pub fn slow(&self) -> u64 {
        self.slow.load(Ordering::Relaxed)
    }

    /// Every `(operation, succeeded)` seen, with its histogram.
    pub fn histograms(&self) -> Vec<(&'static str, bool, Arc<Histogram>)> {
        let by_op = self.by_op.lock().unwrap_or_else(|e| e.into_inner());
        by_op.iter().map(|((op, succeeded), histogram)| (*op, *succeeded, histogram.clone())).collect()
    }
}

/// The operation as etcd's label names it (the request's method).
fn op_name(request: &WriteRequest) -> &'static str {
    match request {
        WriteRequest::Put(_) => "Put",
        WriteRequest::DeleteRange(_) => "DeleteRange",
        WriteRequest::Txn(_) => "Txn",
        WriteRequest::Compact(_) => "Compaction",
        WriteRequest::LeaseGrant(_) => "LeaseGrant",
        WriteRequest::LeaseRevoke(_) => "LeaseRevoke",
        WriteRequest::LeaseCheckpoint(_) => "LeaseCheckpoint",
        WriteRequest::Alarm(_) => "Alarm",
        WriteRequest::Auth(auth) => match auth {
            AuthRequest::Enable => "AuthEnable",
            AuthRequest::Disable => "AuthDisable",
            AuthRequest::UserAdd(_) => "AuthUserAdd",
            AuthRequest::UserDelete(_) => "AuthUserDelete",
            AuthRequest::UserChangePassword(_) => "AuthUserChangePassword",
            AuthRequest::UserGrantRole(_) => "AuthUserGrantRole",
            AuthRequest::UserRevokeRole(_) => "AuthUserRevokeRole",
            AuthRequest::RoleAdd(_) => "AuthRoleAdd",
            AuthRequest::RoleDelete(_) => "AuthRoleDelete",
            AuthRequest::RoleGrantPermission(_) => "AuthRoleGrantPermission",
            AuthRequest::RoleRevokePermission(_) => "AuthRoleRevokePermission",
            AuthRequest::Authenticate { .. } => "Authenticate",
        },
    }
}

/// The key a slow request touched, for the warning (values are never
/// logged: they may be secrets).
fn summary(request: &WriteRequest) -> String {
    match request {
        WriteRequest::Put(p) => String::from_utf8_lossy(&p.key).into_owned(),
        WriteRequest::DeleteRange(d) => String::from_utf8_lossy(&d.key).into_owned(),
        WriteRequest::Txn(t) => {
            format!("{} compares, {} + {} ops", t.compare.len(), t.success.len(), t.failure.len())
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use rtcd_proto::etcdserverpb::PutRequest;

    use super::*;

    #[test]
    fn requests_are_timed_by_operation_and_outcome_and_slow_ones_counted() {
        let times = ApplyTimes::new(Duration::from_millis(100));
        let put = WriteRequest::Put(PutRequest { key: "k".into(), ..Default::default() });
        times.applied(&put, true, Duration::from_micros(150));
        times.applied(&put, false, Duration::from_millis(150));
        times.applied(&WriteRequest::Auth(AuthRequest::Enable), true, Duration::from_micros(50));
        times.ranged(b"k", Duration::from_millis(101));
        times.ranged(b"k", Duration::from_millis(99));
        let seen: Vec<_> =
            times.histograms().into_iter().map(|(op, ok, h)| (op, ok, h.snapshot().1)).collect();
        assert_eq!(seen, [("AuthEnable", true, 1), ("Put", false, 1), ("Put", true, 1)]);
        assert_eq!(times.slow(), 2, "the slow put and the slow read");
    }
}
