//! One client's Watch RPC: its watchers, and the single task that serves
//! them. Everything a stream sends goes out from this task in order, so a
//! watcher's `created` response always precedes its events, and a progress
//! response never overtakes an event it vouches for.
//!
//! Each watcher remembers the next revision it owes the client. A watcher is
//! *synced* when that is just past the newest batch the stream has taken from
//! the hub; it then gets events straight from the hub. Otherwise (started in
//! the past, or the stream fell behind the hub's ring) it catches up from the
//! store's history in bounded chunks until it is synced again.
//!
//! Batches that queued up while the task was busy are served together: each
//! synced watcher gets one response for all of them rather than one per
//! revision (as etcd does for watchers that fall behind). Under a write load
//! that keeps the stream busy this cuts the responses, and their framing and
//! flushing, by the number of revisions merged.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rtcd_proto::etcdserverpb::{
    WatchCancelRequest, WatchCreateRequest, WatchRequest, WatchResponse, watch_request::RequestUnion,
};
use rtcd_store::{AuthError, StoreError};
use tokio::sync::{broadcast, mpsc};
use tonic::Status;

use super::fragment::fragments;
use super::requests::Requests;
use super::watcher::Watcher;
use crate::auth::Credentials;
use crate::errors::{EtcdError, WatchRefusal};
use crate::hub::{LiveBatch, event_revision, with_queued};
use crate::node::Node;

/// Events read from history per catch-up step: bounds the memory and the
/// time one step holds the task.
const CATCH_UP_EVENTS: usize = 1000;

pub type Outgoing = mpsc::Sender<Result<WatchResponse, Status>>;

/// The client went away (or the server is stopping): stop serving.
#[derive(Debug)]
struct Gone;

pub struct WatchStream {
    node: Arc<Node>,
    out: Outgoing,
    /// Who the stream is from (see `auth`).
    credentials: Credentials,
    watchers: BTreeMap<i64, Watcher>,
    next_auto_id: i64,
    live: broadcast::Receiver<Arc<LiveBatch>>,
    /// Every revision up to this one has been taken from the hub (or was in
    /// the store before the stream subscribed).
    live_revision: i64,
    /// A `WatchProgressRequest` waiting for every watcher to be synced.
    progress_requested: bool,
    /// Some watcher may be behind `live_revision`. Looking for one costs a
    /// pass over every watcher, too much on each of thousands of creates in
    /// a row; so the pass runs only after something that can leave a watcher
    /// behind (a create in the past, batches a watcher skipped).
    maybe_unsynced: bool,
}

impl WatchStream {
    pub fn new(node: Arc<Node>, out: Outgoing, credentials: Credentials) -> Result<Self, EtcdError> {
        // Subscribe before reading the revision: a batch applied in between
        // is then both in the ring and in the store, never in neither.
        let live = node.hub().subscribe();
        let live_revision = node.store().revision().map_err(EtcdError::from)?;
        node.metrics().watch.stream_opened();
        Ok(Self {
            node,
            out,
            credentials,
            watchers: BTreeMap::new(),
            next_auto_id: 0,
            live,
            live_revision,
            progress_requested: false,
            maybe_unsynced: false,
        })
    }

    /// Serves the stream until the client goes away (or, if it asked for a
    /// leader, until the leader is lost). A client that only half-closes
    /// keeps receiving events, as with etcd.
    pub async fn run<S>(mut self, incoming: S, progress_interval: Duration, require_leader: bool)
    where
        S: tokio_stream::Stream<Item = Result<WatchRequest, Status>> + Send + Unpin + 'static,
    {
        let node = self.node.clone();
        let leader_lost = async move {
            if require_leader {
                node.leader_lost().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::pin!(leader_lost);
        let mut progress = tokio::time::interval_at(
            tokio::time::Instant::now() + progress_interval,
            with_jitter(progress_interval),
        );
        progress.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut incoming = Requests::spawn(incoming);
        let mut receiving = true;
        loop {
            let lagging = self.maybe_unsynced && self.first_unsynced().is_some();
            self.maybe_unsynced = lagging;
            let step = tokio::select! {
                () = self.out.closed() => Err(Gone),
                req = incoming.next(), if receiving => match req {
                    Ok(Some(req)) => self.handle(req).await,
                    Ok(None) => {
                        receiving = false;
                        Ok(())
                    }
                    // A request that does not decode (or a broken body) ends
                    // the stream with its error, as on etcd; a client gone
                    // away does not read it.
                    Err(status) => {
                        let _ = self.out.send(Err(status)).await;
                        Err(Gone)
                    }
                },
                batch = self.live.recv() => match batch {
                    Ok(batch) => {
                        let batches = with_queued(&mut self.live, batch);
                        self.on_live(&batches).await
                    }
                    // Missed batches are read back from history.
                    Err(broadcast::error::RecvError::Lagged(_)) => Ok(()),
                    Err(broadcast::error::RecvError::Closed) => Err(Gone),
                },
                _ = progress.tick() => self.on_progress_tick().await,
                () = std::future::ready(()), if lagging => self.catch_up().await,
                () = &mut leader_lost => {
                    let _ = self.out.send(Err(EtcdError::NoLeader.into())).await;
                    return;
                }
            };
            if step.is_err() {
                return;
            }
            if self.progress_requested && self.answer_progress().await.is_err() {
                return;
            }
        }
    }

    async fn handle(&mut self, req: WatchRequest) -> Result<(), Gone> {
        match req.request_union {
            Some(RequestUnion::CreateRequest(create)) => self.create(create).await,
            Some(RequestUnion::CancelRequest(cancel)) => self.cancel(cancel).await,
            Some(RequestUnion::ProgressRequest(_)) => {
                self.progress_requested = true;
                Ok(())
            }
            // etcd ignores requests it does not understand.
            None => Ok(()),
        }
    }

    async fn create(&mut self, req: WatchCreateRequest) -> Result<(), Gone> {
        let current = self.current_revision();
        let id = match self.admit(&req) {
            Ok(id) => id,
            Err(refusal) => {
                let mut resp = self.response(current, -1);
                resp.created = true;
                resp.canceled = true;
                resp.cancel_reason = refusal.reason().to_string();
                return self.send(resp).await;
            }
        };
        let start = if req.start_revision == 0 { current + 1 } else { req.start_revision };
        self.watchers.insert(id, Watcher::new(id, &req, start));
        self.node.metrics().watch.watcher_added();
        self.maybe_unsynced |= start <= self.live_revision;
        let mut resp = self.response(current, id);
        resp.created = true;
        self.send(resp).await
    }

    /// Checks a create request and picks its watch ID: the client's, or the
    /// lowest free one counting up from where auto-assignment left off.
    fn admit(&mut self, req: &WatchCreateRequest) -> Result<i64, WatchRefusal> {
        // etcd checks permission first.
        self.permitted(req)?;
        // etcd 3.4 accepted it and then silently dropped events until its
        // next sync; etcd 3.5 and later refuse it, and so does rtcd.
        if req.start_revision < 0 {
            return Err(WatchRefusal::NegativeRevision);
        }
        let key: &[u8] = if req.key.is_empty() { &[0] } else { &req.key };
        if !matches!(req.range_end.as_ref(), [] | [0]) && key >= req.range_end.as_ref() {
            return Err(WatchRefusal::EmptyRange);
        }
        if req.watch_id != 0 {
            return match self.watchers.contains_key(&req.watch_id) {
                true => Err(WatchRefusal::DuplicateId),
                false => Ok(req.watch_id),
            };
        }
        while self.watchers.contains_key(&self.next_auto_id) {
            self.next_auto_id += 1;
        }
        self.next_auto_id += 1;
        Ok(self.next_auto_id - 1)
    }

    /// etcd checks read permission on the watched range at each create,
    /// for the stream's caller as the auth store is now. (etcd 3.4 checks a
    /// watch on "key and above", range end "\0", as if it were on the key
    /// alone; rtcd checks the whole range.)
    fn permitted(&self, req: &WatchCreateRequest) -> Result<(), WatchRefusal> {
        let key: &[u8] = if req.key.is_empty() { &[0] } else { &req.key };
        let caller = self.node.authenticator().caller(self.node.store(), &self.credentials);
        let checked = caller.and_then(|caller| self.node.check_read(&caller, key, &req.range_end));
        match checked {
            Ok(()) => Ok(()),
            Err(EtcdError::Store(StoreError::Auth(why))) => Err(WatchRefusal::Denied(why)),
            // The store failed: no better answer than etcd's default.
            Err(_) => Err(WatchRefusal::Denied(AuthError::PermissionDenied)),
        }
    }

    async fn cancel(&mut self, req: WatchCancelRequest) -> Result<(), Gone> {
        // etcd says nothing about IDs it does not know.
        if self.watchers.remove(&req.watch_id).is_none() {
            return Ok(());
        }
        self.node.metrics().watch.watcher_removed();
        let mut resp = self.response(self.current_revision(), req.watch_id);
        resp.canceled = true;
        self.send(resp).await
    }

    /// Hands consecutive batches to every synced watcher, all its events in
    /// one response. Watchers that are behind skip them and read them from
    /// history later.
    async fn on_live(&mut self, batches: &[Arc<LiveBatch>]) -> Result<(), Gone> {
        let (Some(first), Some(last)) = (batches.first(), batches.last()) else { return Ok(()) };
        let (first, last) = (first.first_revision(), last.last_revision());
        let mut responses = Vec::new();
        for w in self.watchers.values_mut() {
            if w.next_revision < first {
                self.maybe_unsynced = true;
                continue;
            }
            let events: Vec<_> = batches.iter().flat_map(|batch| w.select(&batch.events)).collect();
            if let Some(rev) = events.last().map(event_revision) {
                responses.push((w.id, rev, events));
            }
            w.served_through(last);
        }
        self.live_revision = self.live_revision.max(last);
        for (id, rev, events) in responses {
            self.send_events(id, rev, events).await?;
        }
        Ok(())
    }

    /// The unsynced watcher furthest behind, if any.
    fn first_unsynced(&self) -> Option<i64> {
        self.watchers.values().map(|w| w.next_revision).filter(|&rev| rev <= self.live_revision).min()
    }

    /// Serves one chunk of history to every unsynced watcher waiting at the
    /// oldest revision (one read serves them all); cancels them if that
    /// history has been compacted away.
    async fn catch_up(&mut self) -> Result<(), Gone> {
        let Some(from) = self.first_unsynced() else { return Ok(()) };
        let waiting: Vec<i64> =
            self.watchers.values().filter(|w| w.next_revision == from).map(|w| w.id).collect();
        let history = match self.node.store().history(from, CATCH_UP_EVENTS) {
            Ok(history) => history,
            Err(StoreError::Compacted) => return self.cancel_compacted(&waiting).await,
            Err(e) => {
                // A storage failure: end the stream with the error, the way
                // a client sees any other failed call.
                let _ = self.out.send(Err(EtcdError::from(e).into())).await;
                return Err(Gone);
            }
        };
        // Stop where the hub takes over: later revisions arrive from it.
        let through = (history.next_revision - 1).min(self.live_revision);
        let events: Vec<_> =
            history.events.into_iter().take_while(|e| event_revision(e) <= through).collect();
        let mut responses = Vec::new();
        for id in waiting {
            let Some(w) = self.watchers.get_mut(&id) else { continue };
            let selected = w.select(&events);
            if !selected.is_empty() {
                responses.push((id, selected));
            }
            w.served_through(through);
        }
        for (id, events) in responses {
            self.send_events(id, through, events).await?;
        }
        Ok(())
    }

    async fn cancel_compacted(&mut self, ids: &[i64]) -> Result<(), Gone> {
        let compacted = self.node.store().compacted_revision().unwrap_or(0);
        for id in ids {
            if self.watchers.remove(id).is_some() {
                self.node.metrics().watch.watcher_removed();
            }
            // etcd sends these without a revision in the header.
            let mut resp = self.response(0, *id);
            resp.compact_revision = compacted;
            resp.canceled = true;
            self.send(resp).await?;
        }
        Ok(())
    }

    /// Answers a `WatchProgressRequest` once every watcher on the stream is
    /// synced: one response, `watch_id` -1, whose revision promises that all
    /// earlier events have been sent. With no watchers there is nothing to
    /// vouch for and, like etcd, nothing is sent.
    async fn answer_progress(&mut self) -> Result<(), Gone> {
        self.take_published().await?;
        // A watcher waiting for a revision not yet written owes nothing,
        // like one that is caught up (etcd keeps both in its synced group).
        if !self.watchers.values().all(|w| w.next_revision > self.live_revision) {
            return Ok(());
        }
        self.progress_requested = false;
        if self.watchers.is_empty() {
            return Ok(());
        }
        let resp = self.response(self.live_revision, -1);
        self.send(resp).await
    }

    /// Takes every batch already published, so progress answers are as
    /// fresh as the hub.
    async fn take_published(&mut self) -> Result<(), Gone> {
        loop {
            match self.live.try_recv() {
                Ok(batch) => {
                    let batches = with_queued(&mut self.live, batch);
                    self.on_live(&batches).await?;
                }
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(broadcast::error::TryRecvError::Empty) => return Ok(()),
                Err(broadcast::error::TryRecvError::Closed) => return Err(Gone),
            }
        }
    }

    /// The periodic report for `progress_notify` watchers that are synced
    /// and were sent no events since the last one.
    async fn on_progress_tick(&mut self) -> Result<(), Gone> {
        let mut due = Vec::new();
        for w in self.watchers.values_mut() {
            if w.progress_notify && !w.sent_since_progress && w.next_revision > self.live_revision {
                due.push(w.id);
            }
            w.sent_since_progress = false;
        }
        for id in due {
            let resp = self.response(self.live_revision, id);
            self.send(resp).await?;
        }
        Ok(())
    }

    async fn send_events(
        &mut self,
        id: i64,
        revision: i64,
        events: Vec<rtcd_proto::mvccpb::Event>,
    ) -> Result<(), Gone> {
        let Some(w) = self.watchers.get_mut(&id) else { return Ok(()) };
        w.sent_since_progress = true;
        let fragment = w.fragment;
        let mut resp = self.response(revision, id);
        self.node.metrics().watch.events_sent(events.len());
        resp.events = events;
        if !fragment {
            return self.send(resp).await;
        }
        for part in fragments(resp, self.node.settings().max_message_bytes()) {
            self.send(part).await?;
        }
        Ok(())
    }

    fn response(&self, revision: i64, watch_id: i64) -> WatchResponse {
        let mut resp = WatchResponse { watch_id, ..Default::default() };
        self.node.identity().fill(&mut resp.header, revision, self.node.term());
        resp
    }

    fn current_revision(&self) -> i64 {
        self.node.store().revision().unwrap_or(self.live_revision)
    }

    async fn send(&self, resp: WatchResponse) -> Result<(), Gone> {
        self.out.send(Ok(resp)).await.map_err(|_| Gone)
    }
}

impl Drop for WatchStream {
    fn drop(&mut self) {
        self.node.metrics().watch.stream_closed(self.watchers.len());
    }
}

/// etcd adds up to a tenth of the interval so watchers created together do
/// not all report at once.
fn with_jitter(interval: Duration) -> Duration {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    interval + interval.mul_f64(f64::from(nanos % 1000) / 10_000.0)
}
