//! Authentication's families (kube's `endpoints/filters/metrics.go` and
//! its x509 authenticator): every attempt by result and how long it took,
//! authenticated requests by (compressed) user name, and the remaining
//! lifetime of each client certificate a request authenticates with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::family::{Histogram, Kind, Meta, Stability};

const ATTEMPTS: Meta = Meta::new(
    "authentication_attempts",
    Kind::Counter,
    Stability::Alpha,
    "Counter of authenticated attempts.",
);
const DURATION: Meta = Meta::new(
    "authentication_duration_seconds",
    Kind::Histogram,
    Stability::Alpha,
    "Authentication duration in seconds broken out by result.",
);
/// `ExponentialBuckets(0.001, 2, 15)`.
const DURATION_BUCKETS: &[f64] = &[
    0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384,
];
const USERS: Meta = Meta::new(
    "authenticated_user_requests",
    Kind::Counter,
    Stability::Alpha,
    "Counter of authenticated requests broken out by username.",
);
const CERTIFICATE_EXPIRATION: Meta = Meta::new(
    "apiserver_client_certificate_expiration_seconds",
    Kind::Histogram,
    Stability::Alpha,
    "Distribution of the remaining lifetime on the certificate used to authenticate a request.",
);
const CERTIFICATE_BUCKETS: &[f64] = &[
    0.0, 1800.0, 3600.0, 7200.0, 21600.0, 43200.0, 86400.0, 172800.0, 345600.0, 604800.0, 2592000.0,
    7776000.0, 15552000.0, 31104000.0,
];

/// `result`: success, failure (no authenticator recognized the request),
/// error (a credential was refused).
const RESULTS: [&str; 3] = ["success", "failure", "error"];
/// kube's `compressUsername` categories.
const USER_NAMES: [&str; 7] = [
    "admin",
    "client",
    "kube_proxy",
    "kubelet",
    "system:serviceaccount:kube-system:default",
    "email_id",
    "other",
];

/// How an authentication attempt ended.
#[derive(Debug, Clone, Copy)]
pub enum Attempt<'a> {
    Success { user: &'a str },
    Failure,
    Error,
}

#[derive(Debug)]
pub struct AuthnMetrics {
    attempts: [AtomicU64; 3],
    durations: [Histogram; 3],
    users: [AtomicU64; USER_NAMES.len()],
    certificates: Histogram,
}

impl Default for AuthnMetrics {
    fn default() -> Self {
        AuthnMetrics {
            attempts: Default::default(),
            durations: std::array::from_fn(|_| Histogram::new(DURATION_BUCKETS)),
            users: Default::default(),
            certificates: Histogram::new(CERTIFICATE_BUCKETS),
        }
    }
}

impl AuthnMetrics {
    /// kube's recordAuthenticationMetrics.
    pub fn attempt(&self, attempt: Attempt<'_>, took: Duration) {
        let result = match attempt {
            Attempt::Success { user } => {
                self.users[compress_username(user)].fetch_add(1, Ordering::Relaxed);
                0
            }
            Attempt::Failure => 1,
            Attempt::Error => 2,
        };
        self.attempts[result].fetch_add(1, Ordering::Relaxed);
        self.durations[result].observe(took.as_secs_f64());
    }

    /// A request presented a client certificate valid for `seconds` more
    /// (negative: expired).
    pub fn client_certificate(&self, seconds: f64) {
        self.certificates.observe(seconds);
    }

    pub fn write(&self, out: &mut String) {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let attempts = RESULTS.iter().zip(&self.attempts).filter(|(_, c)| count(c) > 0);
        ATTEMPTS.write(out, ["result"], attempts.map(|(r, c)| ([*r], count(c) as f64)));
        let durations = RESULTS.iter().zip(&self.durations).filter(|(_, h)| h.count() > 0);
        DURATION.write_histograms(out, ["result"], durations.map(|(r, h)| ([*r], h)));
        let users = USER_NAMES.iter().zip(&self.users).filter(|(_, c)| count(c) > 0);
        USERS.write(out, ["username"], users.map(|(u, c)| ([*u], count(c) as f64)));
        // Not a vector in kube: there from the start.
        CERTIFICATE_EXPIRATION.write_histograms(out, [], [([], &self.certificates)]);
    }
}

/// kube's `compressUsername`: the index of its category.
fn compress_username(user: &str) -> usize {
    match USER_NAMES[..5].iter().position(|known| *known == user) {
        Some(known) => known,
        None if user.contains('@') => 5,
        None => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_users_and_certificates_are_counted_as_kube_counts_them() {
        let metrics = AuthnMetrics::default();
        metrics.attempt(Attempt::Success { user: "jane@example.com" }, Duration::from_micros(50));
        metrics.attempt(Attempt::Success { user: "kubelet" }, Duration::from_micros(50));
        metrics.attempt(Attempt::Success { user: "system:serviceaccount:x:y" }, Duration::from_micros(50));
        metrics.attempt(Attempt::Error, Duration::from_millis(3));
        metrics.client_certificate(-5.0);
        metrics.client_certificate(86_000.0);
        let mut out = String::new();
        metrics.write(&mut out);
        assert!(out.contains("authentication_attempts{result=\"success\"} 3\n"), "{out}");
        assert!(out.contains("authentication_attempts{result=\"error\"} 1\n"));
        assert!(!out.contains("result=\"failure\""));
        assert!(out.contains("authentication_duration_seconds_bucket{result=\"error\",le=\"0.004\"} 1\n"));
        assert!(out.contains("authenticated_user_requests{username=\"email_id\"} 1\n"));
        assert!(out.contains("authenticated_user_requests{username=\"kubelet\"} 1\n"));
        assert!(out.contains("authenticated_user_requests{username=\"other\"} 1\n"));
        assert!(out.contains("apiserver_client_certificate_expiration_seconds_bucket{le=\"0\"} 1\n"));
        assert!(out.contains("apiserver_client_certificate_expiration_seconds_bucket{le=\"86400\"} 2\n"));
        assert!(out.contains("apiserver_client_certificate_expiration_seconds_count 2\n"));
    }
}
