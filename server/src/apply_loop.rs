//! Single-member write path with group commit: proposals queue on a channel,
//! one thread drains whatever has arrived and applies it as one store batch
//! (one fsync for all of them), then answers each proposer. The Raft issue
//! replaces the queue with the replicated log; callers do not change.

use std::sync::Arc;

use rtcd_store::{Applied, AppliedMark, Store, StoreError, WriteRequest};
use tokio::sync::{mpsc, oneshot};

use crate::errors::EtcdError;
use crate::watch::Hub;

/// Upper bound on requests per batch, so one batch cannot grow without limit
/// under a flood of writes.
const MAX_BATCH: usize = 1024;

type Reply = oneshot::Sender<Result<Applied, StoreError>>;

#[derive(Debug, Clone)]
pub struct Proposer {
    queue: mpsc::UnboundedSender<(WriteRequest, Reply)>,
}

impl Proposer {
    /// Starts the apply thread over `store`; applied events go to `hub`.
    pub fn start(store: Arc<Store>, hub: Hub) -> std::io::Result<Self> {
        let (queue, rx) = mpsc::unbounded_channel();
        std::thread::Builder::new().name("rtcd-apply".into()).spawn(move || apply_thread(store, hub, rx))?;
        Ok(Self { queue })
    }

    /// Applies `req` durably and returns its outcome.
    pub async fn propose(&self, req: WriteRequest) -> Result<Applied, EtcdError> {
        let (reply, answer) = oneshot::channel();
        self.queue.send((req, reply)).map_err(|_| EtcdError::Stopped)?;
        Ok(answer.await.map_err(|_| EtcdError::Stopped)??)
    }
}

fn apply_thread(store: Arc<Store>, hub: Hub, mut rx: mpsc::UnboundedReceiver<(WriteRequest, Reply)>) {
    let mut index = store.applied().map(|m| m.index).unwrap_or(0);
    while let Some(first) = rx.blocking_recv() {
        let mut requests = vec![first.0];
        let mut replies = vec![first.1];
        while requests.len() < MAX_BATCH {
            let Ok((req, reply)) = rx.try_recv() else { break };
            requests.push(req);
            replies.push(reply);
        }
        index += 1;
        match store.apply(&requests, AppliedMark { index, context: Vec::new() }) {
            Ok(mut outcomes) => {
                // Watchers hear of the batch in revision order, from this one
                // thread, before any writer is acknowledged.
                let events =
                    outcomes.iter_mut().flat_map(|o| o.as_mut().map(|a| std::mem::take(&mut a.events)));
                hub.publish(events.flatten().collect());
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    let _ = reply.send(outcome);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "applying a batch failed; the store stops accepting writes");
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }
}
