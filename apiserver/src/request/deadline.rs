//! When the request being served must be done by: set by the timeout
//! filter for the task serving it, read by work that runs without awaiting
//! (CEL evaluation) and so cannot be dropped at an await when the timeout
//! fires.

use std::future::Future;
use std::time::Instant;

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Runs `work` with `deadline` as the request's deadline.
pub async fn within<F: Future>(deadline: Instant, work: F) -> F::Output {
    DEADLINE.scope(deadline, work).await
}

/// The deadline of the request this task serves; None outside one (a
/// long-running request, a controller).
pub fn current() -> Option<Instant> {
    DEADLINE.try_with(|deadline| *deadline).ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn the_deadline_is_seen_only_inside_its_scope() {
        assert_eq!(current(), None);
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(within(deadline, async { current() }).await, Some(deadline));
        assert_eq!(current(), None);
    }
}
