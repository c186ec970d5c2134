//! The watch workload: watchers on the register keys' prefix, each through
//! one member, from revision 1. When a stream breaks (a fault), the watcher
//! reconnects and resumes at the revision after the last event it received,
//! as etcd's clients do. After the run, one last watch reads the whole
//! history as the reference.

use std::time::{Duration, Instant};

use etcd_client::{EventType, WatchOptions};

use crate::cluster::connect;
use crate::history::{Record, WatchEvent};
use crate::recorder::Recorder;

/// The prefix every workload key lives under.
pub const PREFIX: &str = "jepsen/";

const RECONNECT_PAUSE: Duration = Duration::from_millis(100);

/// Watches until `until`, recording every event received.
pub async fn watcher(endpoint: String, watcher: u32, until: Instant, rec: Recorder) {
    let mut next = 1;
    while Instant::now() < until {
        let deadline = tokio::time::Instant::from_std(until);
        match tokio::time::timeout_at(deadline, follow(&endpoint, watcher, next, &rec)).await {
            Ok(Ok(last)) | Ok(Err(last)) => next = last,
            Err(_) => return,
        }
        tokio::time::sleep(RECONNECT_PAUSE).await;
    }
}

/// One watch stream from `from`; returns the revision to resume at (as Err
/// when the stream failed).
async fn follow(endpoint: &str, watcher: u32, from: i64, rec: &Recorder) -> Result<i64, i64> {
    let mut next = from;
    let Ok(mut client) = connect(endpoint).await else { return Err(next) };
    let options = WatchOptions::new().with_prefix().with_start_revision(from);
    let Ok(mut stream) = client.watch(PREFIX, Some(options)).await else { return Err(next) };
    loop {
        let resp = match stream.message().await {
            Ok(Some(resp)) => resp,
            Ok(None) | Err(_) => return Err(next),
        };
        if resp.canceled() {
            return Err(next);
        }
        for event in resp.events() {
            if let Some(revision) = record(rec, watcher, event) {
                next = next.max(revision + 1);
            }
        }
    }
}

/// Every event under the prefix up to the current revision, read through
/// `endpoint` once the faults are over.
pub async fn reference(endpoint: &str, watcher: u32, rec: &Recorder) -> Result<(), etcd_client::Error> {
    let mut client = connect(endpoint).await?;
    let current = client.get("jepsen-reference", None).await?.header().map_or(0, |h| h.revision());
    let options = WatchOptions::new().with_prefix().with_start_revision(1);
    let mut stream = client.watch(PREFIX, Some(options)).await?;
    let mut seen = 0;
    while seen < current {
        let Some(resp) =
            tokio::time::timeout(Duration::from_secs(10), stream.message()).await.ok().transpose()?.flatten()
        else {
            break;
        };
        for event in resp.events() {
            seen = seen.max(record(rec, watcher, event).unwrap_or(0));
        }
        if resp.events().is_empty() && resp.canceled() {
            break;
        }
    }
    Ok(())
}

/// Records one received event; returns its revision.
fn record(rec: &Recorder, watcher: u32, event: &etcd_client::Event) -> Option<i64> {
    let kv = event.kv()?;
    let value = match event.event_type() {
        EventType::Put => kv.value_str().ok().and_then(|v| v.parse().ok()),
        EventType::Delete => None,
    };
    let key = kv.key_str().unwrap_or_default().to_string();
    rec.record(Record::Watch(WatchEvent { watcher, revision: kv.mod_revision(), key, value, at: rec.now() }));
    Some(kv.mod_revision())
}
