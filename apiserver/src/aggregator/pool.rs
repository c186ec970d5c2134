//! Idle connections to extension servers, kept for the next request: a
//! response's body gives its connection back once read to its end (a
//! client that leaves early, or an upgrade, takes it along instead).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;

use super::transport::Connection;

/// Enough for the requests one extension server sees at once here; more
/// are closed.
const IDLE_PER_SERVER: usize = 16;
/// How long a kept connection may take to be ready again.
const READY_WITHIN: Duration = Duration::from_secs(1);

/// Idle connections by where they go and how they were trusted.
#[derive(Debug, Default, Clone)]
pub struct Pool(Arc<Mutex<HashMap<String, Vec<Connection>>>>);

impl Pool {
    /// A kept connection to `key` that can take a request now.
    pub async fn take(&self, key: &str) -> Option<Connection> {
        loop {
            let mut connection = self.0.lock().unwrap_or_else(|p| p.into_inner()).get_mut(key)?.pop()?;
            if let Ok(Ok(())) = tokio::time::timeout(READY_WITHIN, connection.ready()).await {
                return Some(connection);
            }
        }
    }

    fn keep(&self, key: String, connection: Connection) {
        if connection.is_closed() {
            return;
        }
        let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let kept = idle.entry(key).or_default();
        if kept.len() < IDLE_PER_SERVER {
            kept.push(connection);
        }
    }

    /// `body`, giving `connection` back to `key`'s idle ones at its end.
    pub fn returning(&self, key: String, connection: Connection, body: Incoming) -> Body {
        Body::new(Returning { body, back: Some((self.clone(), key, connection)) })
    }
}

/// A response body that gives its connection back when it ends.
struct Returning {
    body: Incoming,
    back: Option<(Pool, String, Connection)>,
}

impl http_body::Body for Returning {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        // The server stops polling once the body says it has ended, so
        // the end is looked for after each frame too.
        let ended = matches!(polled, Poll::Ready(None)) || this.body.is_end_stream();
        if ended && let Some((pool, key, connection)) = this.back.take() {
            pool.keep(key, connection);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
