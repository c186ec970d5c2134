//! `v3electionpb.Election`: etcd's election recipe run inside the member.
//! Candidates of election N each keep a key `N/<lease in hex>` (value: what
//! they proclaim) attached to their lease; the leader is the key created
//! first. Campaign waits until every key created before the candidate's is
//! gone; Proclaim and Resign act only while the candidate's key still has
//! the create revision it campaigned with; Observe follows the leader key.

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use rtcd_proto::etcdserverpb::{ResponseHeader, TxnRequest};
use rtcd_proto::mvccpb::event::EventType;
use rtcd_proto::mvccpb::{Event, KeyValue};
use rtcd_proto::v3electionpb::election_server::Election;
use rtcd_proto::v3electionpb::{
    CampaignRequest, CampaignResponse, LeaderKey, LeaderRequest, LeaderResponse, ProclaimRequest,
    ProclaimResponse, ResignRequest, ResignResponse,
};
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::local_client::{
    LocalClient, Withdrawal, created_at, get, lease_key, put_op, range_answer, range_op,
};
use crate::errors::EtcdError;
use crate::hub::{CursorEnd, EventCursor};
use crate::node::Node;

#[derive(Debug)]
pub struct ElectionService {
    client: Arc<LocalClient>,
}

impl ElectionService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { client: Arc::new(LocalClient::new(node)) }
    }

    /// Puts `value` on the candidate's key if it is still theirs.
    async fn proclaim_on(
        client: &LocalClient,
        key: &Bytes,
        revision: i64,
        lease: i64,
        value: Bytes,
    ) -> Result<Option<ResponseHeader>, Status> {
        let put = client
            .txn(TxnRequest {
                compare: vec![created_at(key, revision)],
                success: vec![put_op(key, value, lease)],
                failure: vec![],
            })
            .await?;
        if !put.succeeded {
            return Err(EtcdError::ElectionNotLeader.into());
        }
        Ok(put.header)
    }
}

fn prefix_of(name: &[u8]) -> Vec<u8> {
    [name, b"/"].concat()
}

#[tonic::async_trait]
impl Election for ElectionService {
    async fn campaign(
        &self,
        request: Request<CampaignRequest>,
    ) -> Result<Response<CampaignResponse>, Status> {
        let client = self.client.acting_for(&request);
        let req = request.into_inner();
        let lease = client.session_lease(req.lease).await?;
        let prefix = prefix_of(&req.name);
        let key = lease_key(&prefix, lease);
        let entered = client
            .txn(TxnRequest {
                compare: vec![created_at(&key, 0)],
                success: vec![put_op(&key, req.value.clone(), lease)],
                failure: vec![range_op(get(&key))],
            })
            .await?;
        let mut revision = entered.header.as_ref().map_or(0, |h| h.revision);
        if !entered.succeeded {
            // This lease campaigns already: keep its place, update its value.
            let existing = range_answer(&entered, 0)?.kvs.first();
            let existing = existing.ok_or_else(|| Status::internal("rtcd: campaign key vanished"))?;
            revision = existing.create_revision;
            if existing.value != req.value
                && let Err(status) =
                    Self::proclaim_on(&client, &key, revision, lease, req.value.clone()).await
            {
                let _ = client.withdraw(&key, revision).await;
                return Err(status);
            }
        }
        let candidacy = Withdrawal::new(client.clone(), key.clone(), revision);
        // A failed wait keeps the key (etcd resigns only when its caller went
        // away, which drops `candidacy` armed).
        let waited = client.wait_deletes(&prefix, revision - 1).await;
        candidacy.disarm();
        waited?;
        Ok(Response::new(CampaignResponse {
            header: entered.header,
            leader: Some(LeaderKey { name: req.name, key, rev: revision, lease }),
        }))
    }

    async fn proclaim(
        &self,
        request: Request<ProclaimRequest>,
    ) -> Result<Response<ProclaimResponse>, Status> {
        let client = self.client.acting_for(&request);
        let req = request.into_inner();
        let leader = req.leader.ok_or(EtcdError::MissingLeaderKey)?;
        let lease = client.session_lease(leader.lease).await?;
        let header = Self::proclaim_on(&client, &leader.key, leader.rev, lease, req.value).await?;
        Ok(Response::new(ProclaimResponse { header }))
    }

    async fn leader(&self, request: Request<LeaderRequest>) -> Result<Response<LeaderResponse>, Status> {
        let client = self.client.acting_for(&request);
        let first = client.first_created(&prefix_of(&request.get_ref().name)).await?;
        let kv = first.kvs.into_iter().next().ok_or(EtcdError::ElectionNoLeader)?;
        Ok(Response::new(LeaderResponse { header: first.header, kv: Some(kv) }))
    }

    type ObserveStream = Pin<Box<dyn Stream<Item = Result<LeaderResponse, Status>> + Send>>;

    async fn observe(
        &self,
        request: Request<LeaderRequest>,
    ) -> Result<Response<Self::ObserveStream>, Status> {
        let client = self.client.acting_for(&request);
        let prefix = prefix_of(&request.into_inner().name);
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            tokio::select! {
                () = tx.closed() => {}
                () = observe(&client, &prefix, &tx) => {}
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn resign(&self, request: Request<ResignRequest>) -> Result<Response<ResignResponse>, Status> {
        let client = self.client.acting_for(&request);
        let leader = request.into_inner().leader.ok_or(EtcdError::MissingLeaderKey)?;
        // etcd opens a session on the given lease here too (granting one for
        // lease 0) before it resigns.
        client.session_lease(leader.lease).await?;
        let resigned = client.withdraw(&leader.key, leader.rev).await?;
        Ok(Response::new(ResignResponse { header: resigned.header }))
    }
}

/// Sends the leader of the election under `prefix`, then every change of
/// it (a new value proclaimed, a new leader once the key is gone), until
/// the stream's reader leaves. A failed read ends the stream, as in etcd.
async fn observe(client: &LocalClient, prefix: &[u8], tx: &mpsc::Sender<Result<LeaderResponse, Status>>) {
    // The last leader value sent, so looking again after a gap sends
    // nothing twice.
    let mut sent: Option<(Bytes, i64)> = None;
    let mut send = |header: ResponseHeader, kv: KeyValue| {
        let fresh = sent.as_ref() != Some(&(kv.key.clone(), kv.mod_revision));
        sent = Some((kv.key.clone(), kv.mod_revision));
        let tx = tx.clone();
        async move { !fresh || tx.send(Ok(LeaderResponse { header: Some(header), kv: Some(kv) })).await.is_ok() }
    };
    loop {
        // Subscribed before reading, so nothing after the read is missed.
        let live = client.node().hub().subscribe();
        let Ok(first) = client.first_created(prefix).await else { return };
        let read_at = first.header.as_ref().map_or(0, |h| h.revision);
        let mut events = EventCursor::after(live, read_at);
        let (header, leader) = match first.kvs.into_iter().next() {
            Some(kv) => (first.header.unwrap_or_default(), kv),
            // No candidate yet: the first key put under the prefix leads.
            None => match next_put(&mut events, |key| key.starts_with(prefix)).await {
                Next::Put(kv) => (header_at(client, kv.mod_revision), kv),
                Next::Deleted | Next::LookAgain => continue,
                Next::End => return,
            },
        };
        let key = leader.key.clone();
        if !send(header, leader).await {
            return;
        }
        // Follow the leader's key: each put is news, its delete means a
        // new leader (or none) to look up.
        loop {
            match next_put(&mut events, |k| k == key).await {
                Next::Put(kv) => {
                    if !send(header_at(client, kv.mod_revision), kv).await {
                        return;
                    }
                }
                Next::Deleted | Next::LookAgain => break,
                Next::End => return,
            }
        }
    }
}

enum Next {
    /// A put, with the key-value it wrote.
    Put(KeyValue),
    Deleted,
    /// Revisions went by unseen: read the store again.
    LookAgain,
    /// The member is stopping.
    End,
}

/// The next put or delete of a key `wanted` picks.
async fn next_put(events: &mut EventCursor, wanted: impl Fn(&[u8]) -> bool) -> Next {
    loop {
        match events.next().await {
            Ok(event) if !event_key(&event).is_some_and(|k| wanted(k)) => {}
            Ok(event) if event.r#type == EventType::Delete as i32 => return Next::Deleted,
            Ok(event) => return event.kv.map_or(Next::Deleted, Next::Put),
            Err(CursorEnd::Gap) => return Next::LookAgain,
            Err(CursorEnd::Closed) => return Next::End,
        }
    }
}

fn event_key(event: &Event) -> Option<&Bytes> {
    event.kv.as_ref().map(|kv| &kv.key)
}

/// The member's header, at revision `revision` (the event's, as etcd's
/// watch-driven observer reports it).
fn header_at(client: &LocalClient, revision: i64) -> ResponseHeader {
    let mut header = client.node().header().unwrap_or_default();
    header.revision = revision;
    header
}
