//! Fault hooks: ways to hold a member inside a window that is otherwise too
//! short for a test to hit, off unless the environment turns them on (etcd's
//! failpoints serve the same end). Read once, when the member starts.

use std::time::Duration;

/// Names the hook that makes a leader's own entries lag (see `leader_lag`).
pub const LEADER_LAG_ENV: &str = "RTCD_FAULT_LEADER_LAG_MS";

/// With `RTCD_FAULT_LEADER_LAG_MS=<ms>`, entries this member proposes as
/// leader are replicated at once, but reach its own WAL, and its store, only
/// that long after they were appended. Followers acknowledge and apply them
/// meanwhile (they commit without the leader), so a SIGKILL inside the delay
/// leaves the leader without entries a quorum holds: the state a power loss
/// leaves a leader in when its fsync (which runs beside replication) and its
/// unsynced store writes had not finished.
pub fn leader_lag() -> Option<Duration> {
    let raw = std::env::var(LEADER_LAG_ENV).ok()?;
    match raw.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => {
            tracing::warn!(delay_ms = ms, "fault hook on: this member's own entries reach its disk late");
            Some(Duration::from_millis(ms))
        }
        _ => None,
    }
}
