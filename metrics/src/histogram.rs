//! A Prometheus histogram over fixed upper bounds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Observations counted per bucket, with their sum.
#[derive(Debug)]
pub struct Histogram {
    /// Upper bounds, ascending; the implicit last bucket is `+Inf`.
    bounds: Vec<f64>,
    /// Observations per bucket (not cumulative), `+Inf` last.
    counts: Vec<AtomicU64>,
    /// Sum of observations: an f64's bits (f64 has no atomic add, so it is
    /// added with compare-and-swap). Whole units or nanounits in an integer
    /// would overflow on large values (lease TTLs, certificate lifetimes).
    sum_bits: AtomicU64,
}

impl Histogram {
    /// `count` bounds, the first `start`, each `factor` times the one
    /// before (Prometheus's `ExponentialBuckets`, as etcd declares its).
    pub fn exponential(start: f64, factor: f64, count: usize) -> Self {
        Self::with_bounds(std::iter::successors(Some(start), |b| Some(b * factor)).take(count).collect())
    }

    /// Over these upper bounds (ascending).
    pub fn with_bounds(bounds: Vec<f64>) -> Self {
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram { bounds, counts, sum_bits: AtomicU64::new(0f64.to_bits()) }
    }

    /// Prometheus's default buckets (`prometheus.DefBuckets`), in seconds.
    pub fn default_buckets() -> Self {
        Self::with_bounds(vec![0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0])
    }

    pub fn observe(&self, value: f64) {
        let bucket = self.bounds.iter().position(|&bound| value <= bound).unwrap_or(self.bounds.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let add = |bits: u64| Some((f64::from_bits(bits) + value).to_bits());
        // The closure always answers Some: the update cannot fail.
        let _ = self.sum_bits.fetch_update(Ordering::Relaxed, Ordering::Relaxed, add);
    }

    /// Observes a duration in seconds.
    pub fn observe_duration(&self, elapsed: Duration) {
        self.observe(elapsed.as_secs_f64());
    }

    /// Cumulative counts per bound (`+Inf` last), the count and the sum.
    pub fn snapshot(&self) -> (Vec<(f64, u64)>, u64, f64) {
        let mut total = 0;
        let mut buckets = Vec::with_capacity(self.counts.len());
        for (i, count) in self.counts.iter().enumerate() {
            total += count.load(Ordering::Relaxed);
            buckets.push((self.bounds.get(i).copied().unwrap_or(f64::INFINITY), total));
        }
        (buckets, total, f64::from_bits(self.sum_bits.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_bounded_above() {
        let histogram = Histogram::exponential(0.001, 2.0, 3);
        for value in [0.0005, 0.001, 0.003, 10.0] {
            histogram.observe(value);
        }
        let (buckets, count, sum) = histogram.snapshot();
        assert_eq!(buckets, vec![(0.001, 2), (0.002, 2), (0.004, 3), (f64::INFINITY, 4)]);
        assert_eq!(count, 4);
        assert!((sum - 10.0045).abs() < 1e-6, "{sum}");
    }

    #[test]
    fn large_values_add_up_without_overflow() {
        // A thousand one-year certificate lifetimes, in seconds.
        let histogram = Histogram::exponential(1.0, 2.0, 4);
        for _ in 0..1000 {
            histogram.observe(3.15e7);
        }
        assert_eq!(histogram.snapshot().2, 3.15e10);
    }
}
