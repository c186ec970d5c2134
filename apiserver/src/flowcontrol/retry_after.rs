//! The `Retry-After` of a refused request (kube's dropped-requests
//! tracker): 1 second at first; doubled (to at most 32) when a level keeps
//! refusing at least three requests per second of the current value, and
//! brought down a second at a time once refusals fall below one per second
//! of it. Clients that honor it back off together instead of hammering a
//! level that is full.

use std::collections::HashMap;
use std::sync::Mutex;

const MAX_RETRY_AFTER: u64 = 32;

#[derive(Debug)]
struct Level {
    /// Refusals per second (unix time), the current one last.
    history: Vec<(u64, u64)>,
    retry_after: u64,
    /// When `retry_after` last went up.
    raised_at: u64,
}

impl Level {
    fn new() -> Level {
        Level { history: Vec::new(), retry_after: 1, raised_at: 0 }
    }

    fn record(&mut self, now: u64) {
        match self.history.last_mut() {
            Some((second, count)) if *second == now => {
                *count += 1;
                return;
            }
            _ => self.history.push((now, 1)),
        }
        // A new second: the seconds before it decide the value.
        let keep = (2 * self.retry_after).min(MAX_RETRY_AFTER);
        self.history.retain(|(second, _)| now - second <= keep);
        let recent: u64 = self
            .history
            .iter()
            .filter(|(second, _)| *second < now && now - second <= self.retry_after)
            .map(|(_, count)| count)
            .sum();
        if now - self.raised_at >= self.retry_after && recent >= 3 * self.retry_after {
            self.retry_after = (self.retry_after * 2).min(MAX_RETRY_AFTER);
            self.raised_at = now;
        } else if recent < self.retry_after && self.retry_after > 1 {
            self.retry_after -= 1;
        }
    }
}

/// Refusals per priority level.
#[derive(Debug, Default)]
pub struct RetryAfter {
    levels: Mutex<HashMap<String, Level>>,
}

impl RetryAfter {
    /// Notes a refusal at `level` at unix second `now`; answers the
    /// `Retry-After` to send with it.
    pub fn refused(&self, level: &str, now: u64) -> u64 {
        let mut levels = self.levels.lock().unwrap_or_else(|p| p.into_inner());
        let state = levels.entry(level.to_string()).or_insert_with(Level::new);
        state.record(now);
        state.retry_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_refusals_double_the_wait_and_quiet_brings_it_down() {
        let tracker = RetryAfter::default();
        assert_eq!(tracker.refused("l", 100), 1);
        for _ in 0..5 {
            tracker.refused("l", 100);
        }
        // Six refusals in the second before: at least 3 × 1.
        assert_eq!(tracker.refused("l", 101), 2);
        for second in 102..110 {
            for _ in 0..10 {
                tracker.refused("l", second);
            }
        }
        let high = tracker.refused("l", 110);
        assert!(high >= 8, "{high}");
        assert_eq!(tracker.refused("other", 110), 1, "per level");
        // One refusal a while later, then none: it comes down step by step.
        let later = tracker.refused("l", 200);
        assert_eq!(later, high - 1);
        assert!(tracker.refused("l", 300) < later);
    }
}
