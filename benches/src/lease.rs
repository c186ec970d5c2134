//! `lease-keepalive`: etcd's `benchmark lease-keepalive`. Every client grants
//! one lease, then the clients renew their leases `--total` times between
//! them, each renewal timed from sending it to its response.
//!
//! Deviation from etcd: etcd's tool renews with `KeepAliveOnce`, which opens
//! a new LeaseKeepAlive stream per request, so its numbers include a stream
//! setup each time. Here each client keeps one stream open and sends every
//! renewal on it, as clients that hold leases (kube-apiserver, etcd's own
//! `KeepAlive`) do; a stream that breaks is reopened for the next renewal.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use etcd_client::{Client, LeaseKeepAliveStream, LeaseKeeper};
use hdrhistogram::Histogram;

use crate::Target;
use crate::load::{self, Outcome, Tally, Ticker};

/// etcd's benchmark grants 100 s leases: they outlive the run, so every
/// renewal finds its lease, and stay afterwards for a look.
const TTL: i64 = 100;
/// How long a grant or a renewal may take before it counts as failed.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep-alive requests over all clients.
    #[arg(long, default_value_t = 10_000)]
    total: u64,
}

pub async fn keepalive(target: &Target, args: Args) -> Result<Outcome, String> {
    let conns = load::connections(&target.endpoints, target.conns).await.map_err(|e| e.to_string())?;
    let tally = Arc::new(Tally::new().map_err(|e| e.to_string())?);
    let sessions = grant_all(&conns, target.clients.max(1), &tally).await;
    if sessions.is_empty() {
        return Err("no client could grant its lease".into());
    }

    let next = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let ticker = Ticker::start(done.clone(), crate::progress(args.total, target.quiet));
    let began = Instant::now();
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|session| {
            let (next, done, tally, total) = (next.clone(), done.clone(), tally.clone(), args.total);
            tokio::spawn(async move { session.renew_until(total, &next, &done, &tally).await })
        })
        .collect();
    let mut latencies = tally.histogram();
    for task in tasks {
        match task.await {
            Ok(local) => {
                let _ = latencies.add(&local);
            }
            Err(e) => tally.sample(format!("a keep-alive client died: {e}")),
        }
    }
    let elapsed = began.elapsed();
    drop(ticker);
    Ok(tally.outcome(elapsed, &latencies))
}

/// One lease per client, granted concurrently before the clock starts (etcd
/// counts the grants in its total time; they are not keep-alives).
async fn grant_all(conns: &[Client], clients: usize, tally: &Arc<Tally>) -> Vec<Session> {
    let grants: Vec<_> =
        (0..clients).map(|c| tokio::spawn(Session::grant(conns[c % conns.len()].clone()))).collect();
    let mut sessions = Vec::new();
    for grant in grants {
        match grant.await {
            Ok(Ok(session)) => sessions.push(session),
            Ok(Err(why)) => tally.error(why),
            Err(e) => tally.error(format!("a lease grant task died: {e}")),
        }
    }
    sessions
}

/// A client, its lease, and its keep-alive stream while that is up.
struct Session {
    client: Client,
    lease: i64,
    stream: Option<(LeaseKeeper, LeaseKeepAliveStream)>,
}

impl Session {
    async fn grant(mut client: Client) -> Result<Self, String> {
        let granted = tokio::time::timeout(REQUEST_TIMEOUT, client.lease_grant(TTL, None))
            .await
            .map_err(|_| format!("lease grant: no response within {REQUEST_TIMEOUT:?}"))?
            .map_err(|e| format!("lease grant: {e}"))?;
        Ok(Self { client, lease: granted.id(), stream: None })
    }

    /// Takes request numbers from `next` until `total` are taken, renewing
    /// the lease for each; returns the renewals' latencies.
    async fn renew_until(
        mut self,
        total: u64,
        next: &AtomicU64,
        done: &AtomicU64,
        tally: &Tally,
    ) -> Histogram<u64> {
        let mut latencies = tally.histogram();
        while next.fetch_add(1, Ordering::Relaxed) < total {
            match self.renew().await {
                Ok(latency) => {
                    let _ = latencies.record(load::micros(latency));
                }
                Err(why) => {
                    tally.error(why);
                    self.stream = None;
                }
            }
            done.fetch_add(1, Ordering::Relaxed);
        }
        latencies
    }

    /// One keep-alive on the session's stream (opened first if need be):
    /// its round trip, or why it failed.
    async fn renew(&mut self) -> Result<Duration, String> {
        if self.stream.is_none() {
            // Opening the stream makes one keep-alive round itself, which is
            // setup, not one of the measured requests.
            let opened = tokio::time::timeout(REQUEST_TIMEOUT, self.client.lease_keep_alive(self.lease))
                .await
                .map_err(|_| format!("opening a keep-alive stream: no response within {REQUEST_TIMEOUT:?}"))?
                .map_err(|e| format!("opening a keep-alive stream: {e}"))?;
            self.stream = Some(opened);
        }
        let Some((keeper, stream)) = self.stream.as_mut() else {
            return Err("no keep-alive stream".into());
        };
        let began = Instant::now();
        keeper.keep_alive().await.map_err(|e| format!("sending a keep-alive: {e}"))?;
        let response = tokio::time::timeout(REQUEST_TIMEOUT, stream.message())
            .await
            .map_err(|_| format!("keep-alive: no response within {REQUEST_TIMEOUT:?}"))?
            .map_err(|e| format!("keep-alive: {e}"))?
            .ok_or("keep-alive: the server closed the stream")?;
        let latency = began.elapsed();
        if response.id() != self.lease {
            return Err(format!("keep-alive for lease {:x} answered for {:x}", self.lease, response.id()));
        }
        if response.ttl() <= 0 {
            return Err(format!("keep-alive: lease {:x} not found", self.lease));
        }
        Ok(latency)
    }
}
