//! When the work of the request being served must stop: its deadline, set
//! by the timeout filter for the task serving it, or its client going away.
//! Read by work that runs without awaiting (CEL evaluation) and so cannot
//! be dropped at an await when the timeout fires or hyper sees the client
//! go.

use std::future::Future;
use std::time::Instant;

use super::ClientPresence;

#[derive(Debug, Clone)]
struct Bounds {
    deadline: Instant,
    client: Option<ClientPresence>,
}

tokio::task_local! {
    static BOUNDS: Bounds;
}

/// Runs `work` with `deadline` as the request's deadline, and `client`
/// (where the request came over a connection) as its client.
pub async fn within<F: Future>(deadline: Instant, client: Option<ClientPresence>, work: F) -> F::Output {
    BOUNDS.scope(Bounds { deadline, client }, work).await
}

/// The deadline of the request this task serves; None outside one (a
/// long-running request, a controller).
pub fn current() -> Option<Instant> {
    BOUNDS.try_with(|bounds| bounds.deadline).ok()
}

/// The client of the request this task serves; None outside one, or for
/// a request that came over no connection.
pub fn client() -> Option<ClientPresence> {
    BOUNDS.try_with(|bounds| bounds.client.clone()).ok().flatten()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn the_deadline_and_client_are_seen_only_inside_their_scope() {
        assert_eq!(current(), None);
        let deadline = Instant::now() + Duration::from_secs(5);
        let (presence, _client) = crate::request::presence::connected().await;
        let seen = within(deadline, Some(presence), async { (current(), client().is_some()) }).await;
        assert_eq!(seen, (Some(deadline), true));
        assert_eq!(current(), None);
        assert!(client().is_none());
    }
}
