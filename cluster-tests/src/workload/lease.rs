//! The lease workload: clients grant short leases (IDs they choose), put
//! one key on each, then keep some alive for a while, revoke some and let
//! the rest expire, while reading which lease keys exist. After the run,
//! with keep-alives stopped, every lease key must disappear.

use std::time::{Duration, Instant};

use etcd_client::{GetOptions, LeaseGrantOptions, PutOptions};

use super::{Connection, ERROR_PAUSE};
use crate::cluster::connect;
use crate::history::{LeaseAction, LeaseOp, Outcome, REFERENCE, Record};
use crate::recorder::{Recorder, Rng};

/// Where the lease keys live (under the watchers' prefix).
pub const PREFIX: &str = "jepsen/lease/";

/// Leases a client has in play at once.
const ACTIVE: usize = 3;

/// Pause between a client's operations: lease traffic is light.
const PAUSE: Duration = Duration::from_millis(30);

/// What happens to a lease after its key is put.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// Revoked at the given time.
    Revoke(Instant),
    /// Kept alive until the given time, then left to expire.
    KeepAlive(Instant),
    /// Never renewed.
    Expire,
}

struct Active {
    lease: i64,
    plan: Plan,
}

/// One client through `endpoint` until `until`.
pub async fn client(endpoint: String, process: u32, until: Instant, rec: Recorder, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut counter = 0i64;
    let mut active: Vec<Active> = Vec::new();
    let mut connection = Connection::new(endpoint);
    while Instant::now() < until {
        let Some(c) = connection.get().await else { continue };
        let action = if rng.below(2) == 0 {
            LeaseAction::Read { keys: Vec::new() }
        } else if active.len() < ACTIVE {
            counter += 1;
            let lease = (i64::from(process) + 1) << 32 | counter;
            let plan = match rng.below(3) {
                0 => Plan::Revoke(Instant::now() + Duration::from_millis(500 + rng.below(3000))),
                1 => Plan::KeepAlive(Instant::now() + Duration::from_millis(2000 + rng.below(8000))),
                _ => Plan::Expire,
            };
            let ttl = 2 + rng.below(4) as i64;
            let granted = perform(c, process, LeaseAction::Grant { lease, ttl }, &rec).await;
            if granted == Outcome::Ok {
                let key = format!("{PREFIX}{lease}");
                if perform(c, process, LeaseAction::Put { lease, key }, &rec).await == Outcome::Ok {
                    active.push(Active { lease, plan });
                }
            }
            continue;
        } else {
            let i = rng.below(active.len() as u64) as usize;
            let Active { lease, plan } = active[i];
            match plan {
                Plan::Revoke(at) if Instant::now() >= at => {
                    active.swap_remove(i);
                    LeaseAction::Revoke { lease }
                }
                Plan::KeepAlive(at) if Instant::now() < at => LeaseAction::KeepAlive { lease, ttl: 0 },
                Plan::Revoke(_) => continue,
                Plan::KeepAlive(_) | Plan::Expire => {
                    active.swap_remove(i);
                    continue;
                }
            }
        };
        let outcome = perform(c, process, action, &rec).await;
        if outcome == Outcome::Info {
            connection.reset();
        }
        tokio::time::sleep(if outcome == Outcome::Ok { PAUSE } else { ERROR_PAUSE }).await;
    }
}

/// Runs and records one action.
async fn perform(c: &mut etcd_client::Client, process: u32, action: LeaseAction, rec: &Recorder) -> Outcome {
    let invoke = rec.now();
    let (action, outcome, error) = match action {
        LeaseAction::Grant { lease, ttl } => {
            match c.lease_grant(ttl, Some(LeaseGrantOptions::new().with_id(lease))).await {
                Ok(resp) => (LeaseAction::Grant { lease, ttl: resp.ttl() }, Outcome::Ok, None),
                Err(e) => (LeaseAction::Grant { lease, ttl }, Outcome::Info, Some(e.to_string())),
            }
        }
        LeaseAction::Put { lease, key } => {
            match c.put(key.as_str(), lease.to_string(), Some(PutOptions::new().with_lease(lease))).await {
                Ok(_) => (LeaseAction::Put { lease, key }, Outcome::Ok, None),
                // etcd refuses a put on a missing lease before proposing.
                Err(e) if e.to_string().contains("requested lease not found") => {
                    (LeaseAction::Put { lease, key }, Outcome::Fail, Some(e.to_string()))
                }
                Err(e) => (LeaseAction::Put { lease, key }, Outcome::Info, Some(e.to_string())),
            }
        }
        LeaseAction::KeepAlive { lease, .. } => match keep_alive_once(c, lease).await {
            Ok(ttl) => (LeaseAction::KeepAlive { lease, ttl }, Outcome::Ok, None),
            Err(e) => (LeaseAction::KeepAlive { lease, ttl: 0 }, Outcome::Info, Some(e)),
        },
        LeaseAction::Revoke { lease } => match c.lease_revoke(lease).await {
            Ok(_) => (LeaseAction::Revoke { lease }, Outcome::Ok, None),
            Err(e) => (LeaseAction::Revoke { lease }, Outcome::Info, Some(e.to_string())),
        },
        LeaseAction::Read { .. } => match read_keys(c).await {
            Ok(keys) => (LeaseAction::Read { keys }, Outcome::Ok, None),
            Err(e) => (LeaseAction::Read { keys: Vec::new() }, Outcome::Fail, Some(e.to_string())),
        },
    };
    let complete = rec.now();
    rec.record(Record::Lease(LeaseOp { process, action, invoke, complete, outcome, error }));
    outcome
}

/// One keep-alive on a fresh stream; the TTL answered (0: no such lease).
async fn keep_alive_once(c: &mut etcd_client::Client, lease: i64) -> Result<i64, String> {
    let once = async {
        let (mut keeper, mut stream) = c.lease_keep_alive(lease).await.map_err(|e| e.to_string())?;
        keeper.keep_alive().await.map_err(|e| e.to_string())?;
        match stream.message().await.map_err(|e| e.to_string())? {
            Some(resp) => Ok(resp.ttl()),
            None => Err("the keep-alive stream ended without an answer".to_string()),
        }
    };
    tokio::time::timeout(Duration::from_secs(3), once).await.map_err(|_| "timed out".to_string())?
}

async fn read_keys(c: &mut etcd_client::Client) -> Result<Vec<String>, etcd_client::Error> {
    let resp = c.get(PREFIX, Some(GetOptions::new().with_prefix().with_keys_only())).await?;
    Ok(resp.kvs().iter().map(|kv| String::from_utf8_lossy(kv.key()).into_owned()).collect())
}

/// After the run: reads until no lease key is left, or `within` has
/// passed; the last read is recorded as the `REFERENCE` read.
pub async fn final_read(endpoint: &str, within: Duration, rec: &Recorder) -> Result<(), String> {
    let deadline = Instant::now() + within;
    let mut client = connect(endpoint).await.map_err(|e| e.to_string())?;
    loop {
        let invoke = rec.now();
        let read = read_keys(&mut client).await;
        let complete = rec.now();
        let gone = read.as_ref().is_ok_and(Vec::is_empty);
        if gone || Instant::now() >= deadline {
            let keys = read.map_err(|e| e.to_string())?;
            let action = LeaseAction::Read { keys };
            let op =
                LeaseOp { process: REFERENCE, action, invoke, complete, outcome: Outcome::Ok, error: None };
            rec.record(Record::Lease(op));
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
