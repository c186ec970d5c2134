//! A level's seat demand over time (kube's `fairqueuing.Integrator`): the
//! seats in use plus those asked for by waiting requests, integrated so
//! that the borrowing adjustment sees its average, deviation and high
//! watermark over each period.

use std::time::Instant;

#[derive(Debug)]
pub struct Demand {
    /// When the value last changed, and the value since.
    since: Instant,
    value: f64,
    /// Since the period began: ∫value dt, ∫value² dt, the period's start,
    /// and the highest value seen.
    sum: f64,
    sum_of_squares: f64,
    began: Instant,
    high: f64,
}

impl Demand {
    pub fn new(now: Instant) -> Demand {
        Demand { since: now, value: 0.0, sum: 0.0, sum_of_squares: 0.0, began: now, high: 0.0 }
    }

    pub fn set(&mut self, now: Instant, value: f64) {
        self.accumulate(now);
        self.value = value;
        self.high = self.high.max(value);
    }

    /// The period's `(average, deviation, high watermark)`; a new period
    /// starts at `current`. None when the period took no time.
    pub fn take(&mut self, now: Instant, current: f64) -> Option<(f64, f64, f64)> {
        self.accumulate(now);
        let duration = now.saturating_duration_since(self.began).as_secs_f64();
        let high = self.high;
        let (sum, sum_of_squares) = (self.sum, self.sum_of_squares);
        *self =
            Demand { since: now, value: current, sum: 0.0, sum_of_squares: 0.0, began: now, high: current };
        if duration <= 0.0 {
            return None;
        }
        let average = sum / duration;
        let variance = (sum_of_squares / duration - average * average).max(0.0);
        Some((average, variance.sqrt(), high))
    }

    fn accumulate(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.since).as_secs_f64();
        self.sum += self.value * dt;
        self.sum_of_squares += self.value * self.value * dt;
        self.since = now;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_period_is_summarized_by_time() {
        let start = Instant::now();
        let mut demand = Demand::new(start);
        demand.set(start, 4.0);
        demand.set(start + Duration::from_secs(1), 0.0);
        // 4 seats for 1 s, none for 1 s: average 2, deviation 2, high 4.
        let (average, deviation, high) = demand.take(start + Duration::from_secs(2), 0.0).unwrap();
        assert!((average - 2.0).abs() < 1e-9 && (deviation - 2.0).abs() < 1e-9, "{average} {deviation}");
        assert_eq!(high, 4.0);
        // The next period starts from the value current at the cut.
        let later = start + Duration::from_secs(2);
        assert_eq!(demand.take(later, 3.0), None);
        assert_eq!(demand.take(later + Duration::from_secs(1), 3.0), Some((3.0, 0.0, 3.0)));
    }
}
