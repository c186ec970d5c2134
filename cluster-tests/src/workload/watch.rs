//! The watch workload: watchers on the workload keys' prefix, each through
//! one member, from revision 1. They ask for progress notifications now and
//! then; when a stream breaks (a fault) a watcher reconnects and resumes
//! after the last revision it knows complete (its last event or progress
//! notification), as etcd's clients do; when its start revision was
//! compacted it resumes at the compaction revision. The reference history
//! the checker compares against is read by `Reference`: before each
//! compaction (the compacted part is gone afterwards) and after the run.

use std::time::{Duration, Instant};

use etcd_client::{EventType, WatchOptions, WatchResponse};

use crate::cluster::connect;
use crate::history::{MarkKind, REFERENCE, Record, WatchEvent, WatchMark};
use crate::recorder::Recorder;

/// The prefix every workload key lives under.
pub const PREFIX: &str = "jepsen/";

const RECONNECT_PAUSE: Duration = Duration::from_millis(100);

/// How often a watcher asks for a progress notification.
const PROGRESS_EVERY: Duration = Duration::from_millis(700);

/// One watcher's state across its streams.
struct Watcher {
    id: u32,
    /// Ask for progress notifications.
    progress: bool,
    /// The revision to resume at.
    next: i64,
    /// Responses received so far (numbers each response).
    responses: u64,
}

/// Watches until `until`, recording every event and mark received;
/// `progress`: ask for progress notifications now and then.
pub async fn watcher(endpoint: String, id: u32, progress: bool, until: Instant, rec: Recorder) {
    let mut w = Watcher { id, progress, next: 1, responses: 0 };
    let deadline = tokio::time::Instant::from_std(until);
    while Instant::now() < until {
        if tokio::time::timeout_at(deadline, w.follow(&endpoint, &rec)).await.is_err() {
            return;
        }
        tokio::time::sleep(RECONNECT_PAUSE).await;
    }
}

impl Watcher {
    /// One watch stream from `self.next`, until it breaks.
    async fn follow(&mut self, endpoint: &str, rec: &Recorder) {
        let Ok(mut client) = connect(endpoint).await else { return };
        let options = WatchOptions::new().with_prefix().with_start_revision(self.next);
        let Ok(mut stream) = client.watch(PREFIX, Some(options)).await else { return };
        let mut progress = tokio::time::interval(PROGRESS_EVERY);
        loop {
            let resp = tokio::select! {
                message = stream.message() => match message {
                    Ok(Some(resp)) => resp,
                    Ok(None) | Err(_) => return,
                },
                _ = progress.tick(), if self.progress => {
                    if stream.request_progress().await.is_err() {
                        return;
                    }
                    continue;
                }
            };
            if !self.receive(&resp, rec) {
                return;
            }
        }
    }

    /// Records one response; false when the watch was canceled.
    fn receive(&mut self, resp: &WatchResponse, rec: &Recorder) -> bool {
        let response = self.responses;
        self.responses += 1;
        let mark = |kind, revision| {
            rec.record(Record::Mark(WatchMark { watcher: self.id, kind, revision, at: rec.now() }));
        };
        if resp.compact_revision() > 0 {
            mark(MarkKind::Compacted, resp.compact_revision());
            self.next = self.next.max(resp.compact_revision());
            return false;
        }
        if resp.canceled() {
            return false;
        }
        if resp.events().is_empty() {
            // etcd's IsProgressNotify: an empty response that neither
            // creates nor cancels is a progress notification.
            let revision = resp.header().map_or(0, |h| h.revision());
            if !resp.created() && revision > 0 {
                mark(MarkKind::Progress, revision);
                self.next = self.next.max(revision + 1);
            }
            return true;
        }
        for event in resp.events() {
            if let Some(revision) = record(rec, self.id, response, event) {
                self.next = self.next.max(revision + 1);
            }
        }
        true
    }
}

/// The reference history: every event under the prefix, read in pieces
/// (each piece through a linearizable read's revision), recorded as
/// `REFERENCE` events.
#[derive(Debug)]
pub struct Reference {
    /// The first revision not read yet.
    next: i64,
    responses: u64,
}

impl Default for Reference {
    fn default() -> Self {
        Self { next: 1, responses: 0 }
    }
}

impl Reference {
    /// Reads the history through `endpoint` up to its current revision;
    /// returns that revision (everything up to it is recorded).
    pub async fn read_to_current(&mut self, endpoint: &str, rec: &Recorder) -> Result<i64, String> {
        let mut client = connect(endpoint).await.map_err(|e| e.to_string())?;
        // A linearizable read: the member has applied up to `current`.
        let resp = client.get("jepsen-reference", None).await.map_err(|e| e.to_string())?;
        let current = resp.header().map_or(0, |h| h.revision());
        if current < self.next {
            return Ok(current);
        }
        let options = WatchOptions::new().with_prefix().with_start_revision(self.next);
        let mut stream = client.watch(PREFIX, Some(options)).await.map_err(|e| e.to_string())?;
        while self.next <= current {
            let message = tokio::time::timeout(Duration::from_secs(10), stream.message()).await;
            let resp = match message {
                Ok(Ok(Some(resp))) => resp,
                Ok(Ok(None)) => return Err("the reference watch ended".into()),
                Ok(Err(e)) => return Err(e.to_string()),
                Err(_) => return Err(format!("no event up to revision {current} within 10 s")),
            };
            if resp.canceled() {
                return Err(format!("the reference watch was canceled: {}", resp.cancel_reason()));
            }
            let response = self.responses;
            self.responses += 1;
            for event in resp.events() {
                if let Some(revision) = record(rec, REFERENCE, response, event) {
                    self.next = self.next.max(revision + 1);
                }
            }
            if resp.events().is_empty() && !resp.created() {
                // A progress notification would mean nothing more up to
                // its revision; the watch itself never asked for one.
                let revision = resp.header().map_or(0, |h| h.revision());
                self.next = self.next.max(revision + 1);
            }
        }
        Ok(current)
    }
}

/// Records one received event; returns its revision.
fn record(rec: &Recorder, watcher: u32, response: u64, event: &etcd_client::Event) -> Option<i64> {
    let kv = event.kv()?;
    let value = match event.event_type() {
        EventType::Put => Some(fingerprint(kv.value())),
        EventType::Delete => None,
    };
    let key = kv.key_str().unwrap_or_default().to_string();
    rec.record(Record::Watch(WatchEvent {
        watcher,
        revision: kv.mod_revision(),
        key,
        value,
        at: rec.now(),
        response,
    }));
    Some(kv.mod_revision())
}

/// Short values as they are; long ones (the append workload's lists) as a
/// hash and length, which is enough to compare events and keeps the history
/// file small.
fn fingerprint(value: &[u8]) -> String {
    if value.len() <= 40 {
        return String::from_utf8_lossy(value).into_owned();
    }
    // FNV-1a, 64 bits.
    let hash = value
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("#{hash:016x}/{}", value.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_fingerprinted_short_ones_kept() {
        assert_eq!(fingerprint(b"123"), "123");
        let long = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19";
        let other = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 20";
        assert!(fingerprint(long.as_bytes()).ends_with("/47"));
        assert_ne!(fingerprint(long.as_bytes()), fingerprint(other.as_bytes()));
    }
}
