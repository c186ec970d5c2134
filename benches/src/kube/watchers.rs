//! The watch side: one watch per watcher on the resource prefix, as each
//! kube-apiserver cacher has (`WithPrefix, WithPrevKV, WithProgressNotify`,
//! from the listed revision + 1), each on its own stream and sending a
//! progress request every interval, as consistent reads from the watch cache
//! do. Each must see every write of the run once, in revision order, with
//! prev_kv on updates; events at or below a progress revision the watcher
//! already had (which break the bookmark guarantee the cacher relies on)
//! are counted too.

use std::time::{Duration, Instant};

use etcd_client::{Client, WatchOptions, WatchResponse, WatchStream};
use hdrhistogram::Histogram;
use tokio::sync::{mpsc, watch as signal};
use tokio::task::JoinHandle;

use crate::Target;
use crate::load;

/// How long opening a watch may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// How long after the last operation every watcher has to get its events.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The watchers, receiving while the operations run.
#[derive(Debug)]
pub struct Watchers {
    tasks: Vec<JoinHandle<Tally>>,
    goal: signal::Sender<Option<Goal>>,
}

/// What every watcher should have received, and until when it may take.
#[derive(Debug, Clone)]
struct Goal {
    events: u64,
    deadline: tokio::time::Instant,
}

impl Watchers {
    /// Opens `count` watchers on `prefix` from revision `start`, over their
    /// own `--conns` connections; returns once each is created (or failed).
    pub async fn open(
        target: &Target,
        prefix: &str,
        start: i64,
        count: u64,
        interval: Option<Duration>,
    ) -> Result<Self, String> {
        let conns = load::connections(&target.endpoints, target.conns).await.map_err(|e| e.to_string())?;
        let empty = load::histogram().map_err(|e| e.to_string())?;
        let (goal, goal_rx) = signal::channel(None);
        let (ready, mut ready_rx) = mpsc::channel(1);
        let tasks = (0..count as usize)
            .map(|w| {
                let client = conns[w % conns.len()].clone();
                let tally = Tally::new(empty.clone());
                let (prefix, ready, goal_rx) = (prefix.to_string(), ready.clone(), goal_rx.clone());
                tokio::spawn(tally.watch(client, prefix, start, interval, ready, goal_rx))
            })
            .collect();
        drop(ready);
        // Every task reports once; `None` once all have (or died).
        while ready_rx.recv().await.is_some() {}
        Ok(Self { tasks, goal })
    }

    /// Tells the watchers they should each get `writes` events, and waits up
    /// to [`DRAIN_TIMEOUT`] for them.
    pub async fn finish(self, writes: u64) -> Seen {
        let began = Instant::now();
        let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
        let _ = self.goal.send(Some(Goal { events: writes, deadline }));
        let mut seen = Seen { watchers: self.tasks.len() as u64, ..Seen::default() };
        for task in self.tasks {
            match task.await {
                Ok(tally) => seen.add(&tally, writes),
                Err(e) => {
                    seen.missing += writes;
                    seen.broken_streams += 1;
                    seen.broken.push(format!("a watcher task died: {e}"));
                }
            }
        }
        seen.drained_in = began.elapsed();
        seen
    }
}

/// One watcher's counts.
#[derive(Debug)]
struct Tally {
    events: u64,
    /// Events at or before the revision of one received before them.
    disorder: u64,
    /// Events for updates (not creates) without the previous key-value,
    /// which kube-apiserver refuses ("etcd event received with PrevKv=nil").
    no_prev_kv: u64,
    /// Events at or below a progress notification's revision received before
    /// them: the notification claimed they had all been delivered.
    late: u64,
    /// Events without a key-value.
    malformed: u64,
    requested: u64,
    answered: u64,
    /// Progress request sent → progress notification received, in µs.
    progress: Histogram<u64>,
    broken: Option<String>,
    /// The last event's revision and key.
    last: Option<(i64, Vec<u8>)>,
    progress_revision: i64,
    /// When the latest unanswered progress request went out.
    pending: Option<Instant>,
}

impl Tally {
    fn new(progress: Histogram<u64>) -> Self {
        Self {
            events: 0,
            disorder: 0,
            no_prev_kv: 0,
            late: 0,
            malformed: 0,
            requested: 0,
            answered: 0,
            progress,
            broken: None,
            last: None,
            progress_revision: 0,
            pending: None,
        }
    }

    async fn watch(
        mut self,
        mut client: Client,
        prefix: String,
        start: i64,
        interval: Option<Duration>,
        ready: mpsc::Sender<()>,
        goal: signal::Receiver<Option<Goal>>,
    ) -> Self {
        let opened = tokio::time::timeout(OPEN_TIMEOUT, open(&mut client, &prefix, start)).await;
        let _ = ready.send(()).await;
        drop(ready);
        match opened {
            Ok(Ok(stream)) => self.receive(stream, interval, goal).await,
            Ok(Err(why)) => self.broken = Some(why),
            Err(_) => self.broken = Some(format!("no watch created within {OPEN_TIMEOUT:?}")),
        }
        self
    }

    /// Reads until the goal's events are in or its deadline passes, sending
    /// a progress request every `interval` meanwhile.
    async fn receive(
        &mut self,
        mut stream: WatchStream,
        interval: Option<Duration>,
        mut goal_rx: signal::Receiver<Option<Goal>>,
    ) {
        let mut ticker = interval.map(|every| {
            let mut t = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            t
        });
        let mut goal: Option<Goal> = None;
        loop {
            if let Some(g) = &goal
                && self.events >= g.events
            {
                break;
            }
            let deadline = goal.as_ref().map(|g| g.deadline);
            let timeout = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now));
            let tick = async {
                match ticker.as_mut() {
                    Some(t) => t.tick().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = goal_rx.changed(), if goal.is_none() => {
                    if changed.is_err() {
                        break; // the run ended without a goal: nothing to wait for
                    }
                    goal = goal_rx.borrow_and_update().clone();
                }
                () = timeout, if deadline.is_some() => break,
                _ = tick => {
                    if let Err(e) = stream.request_progress().await {
                        self.broken = Some(format!("sending a progress request: {e}"));
                        break;
                    }
                    self.requested += 1;
                    self.pending = Some(Instant::now());
                }
                message = stream.message() => match message {
                    Ok(Some(response)) => {
                        if let Err(why) = self.handle(&response) {
                            self.broken = Some(why);
                            break;
                        }
                    }
                    Ok(None) => {
                        self.broken = Some("the server closed a watch stream".into());
                        break;
                    }
                    Err(e) => {
                        self.broken = Some(format!("watch stream: {e}"));
                        break;
                    }
                },
            }
        }
    }

    /// Counts a response's events, or takes it as a progress notification.
    fn handle(&mut self, response: &WatchResponse) -> Result<(), String> {
        if response.canceled() {
            return Err(format!(
                "watch canceled: {:?} (compact revision {})",
                response.cancel_reason(),
                response.compact_revision()
            ));
        }
        if response.events().is_empty() {
            if !response.created() {
                self.progressed(response.header().map_or(0, |h| h.revision()));
            }
            return Ok(());
        }
        for event in response.events() {
            // Not `event.event_type()`: etcd-client panics on a type it does
            // not know. A create is an event whose kv was created at its
            // own revision, as kube-apiserver's parseEvent tells them apart.
            let Some(kv) = event.kv() else {
                self.malformed += 1;
                continue;
            };
            let revision = kv.mod_revision();
            if let Some((last, key)) = &self.last
                && (revision < *last || (revision == *last && key.as_slice() == kv.key()))
            {
                self.disorder += 1;
            }
            if revision <= self.progress_revision {
                self.late += 1;
            }
            if kv.create_revision() != revision && event.prev_kv().is_none() {
                self.no_prev_kv += 1;
            }
            self.events += 1;
            self.last = Some((revision, kv.key().to_vec()));
        }
        Ok(())
    }

    /// A progress notification at `revision`: the answer to the pending
    /// request if there is one (etcd 3.4 answers a request only when the
    /// stream's watchers are synced, so some go unanswered and the next
    /// answer is the latest one's), else a periodic one.
    fn progressed(&mut self, revision: i64) {
        self.progress_revision = self.progress_revision.max(revision);
        if let Some(sent) = self.pending.take() {
            self.answered += 1;
            let _ = self.progress.record(load::micros(sent.elapsed()));
        }
    }
}

/// kube-apiserver's cacher watch: the prefix from `start`, with prev_kv and
/// progress notifications; returns once the server has created it.
async fn open(client: &mut Client, prefix: &str, start: i64) -> Result<WatchStream, String> {
    let options =
        WatchOptions::new().with_prefix().with_prev_key().with_progress_notify().with_start_revision(start);
    let mut stream =
        client.watch(prefix, Some(options)).await.map_err(|e| format!("opening a watch: {e}"))?;
    loop {
        match stream.message().await {
            Ok(Some(response)) if response.created() => {
                if response.canceled() {
                    return Err(format!("watch create refused: {:?}", response.cancel_reason()));
                }
                return Ok(stream);
            }
            Ok(Some(_)) => continue, // nothing else comes before it but progress
            Ok(None) => return Err("the server closed the watch stream".into()),
            Err(e) => return Err(format!("watch stream: {e}")),
        }
    }
}

/// What all the watchers saw.
#[derive(Debug, Default)]
pub struct Seen {
    watchers: u64,
    events: u64,
    missing: u64,
    surplus: u64,
    disorder: u64,
    no_prev_kv: u64,
    late: u64,
    malformed: u64,
    requested: u64,
    answered: u64,
    progress: Option<Histogram<u64>>,
    broken_streams: u64,
    /// Why streams broke, each reason once.
    broken: Vec<String>,
    drained_in: Duration,
}

impl Seen {
    fn add(&mut self, tally: &Tally, writes: u64) {
        self.events += tally.events;
        self.missing += writes.saturating_sub(tally.events);
        self.surplus += tally.events.saturating_sub(writes);
        self.disorder += tally.disorder;
        self.no_prev_kv += tally.no_prev_kv;
        self.late += tally.late;
        self.malformed += tally.malformed;
        self.requested += tally.requested;
        self.answered += tally.answered;
        match self.progress.as_mut() {
            Some(h) => {
                let _ = h.add(&tally.progress);
            }
            None => self.progress = Some(tally.progress.clone()),
        }
        if let Some(why) = &tally.broken {
            self.broken_streams += 1;
            if !self.broken.contains(why) {
                self.broken.push(why.clone());
            }
        }
    }

    /// The errors, each as a count and why. Events below a progress
    /// revision are not among them: etcd before 3.4.24 sends requested
    /// progress notifications ahead of pending events (etcd-io/etcd#15220,
    /// why kube-apiserver requires 3.4.31), and this measures etcd too; the
    /// breakdown shows their count.
    pub fn errors(&self) -> Vec<(u64, String)> {
        let drain = DRAIN_TIMEOUT.as_secs();
        let mut errors: Vec<(u64, String)> = [
            (
                self.missing,
                format!("watch: events never arrived (waited {drain} s after the last operation)"),
            ),
            (self.surplus, "watch: events more than the writes made".into()),
            (self.disorder, "watch: events out of revision order or repeated".into()),
            (self.no_prev_kv, "watch: update events without prev_kv".into()),
            (self.malformed, "watch: events without a key-value".into()),
        ]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, why)| (count, format!("{count} {why}")))
        .collect();
        // Why streams broke, as samples: their cost is the events missed.
        errors.extend(self.broken.iter().map(|why| (0, why.clone())));
        errors
    }

    /// Two lines for the breakdown: events, then progress requests.
    pub fn describe(&self, writes: u64) -> String {
        let ms = |q: f64| self.progress.as_ref().map_or(0.0, |h| h.value_at_quantile(q) as f64 / 1000.0);
        format!(
            "  watch  {} watchers: {} of {} events in {:.3} s after the run ({} missing, {} extra, {} out of \
             order, {} updates without prev_kv, {} below a progress revision, {} streams broken)\n  \
             progress {} requests, {} answered: p50 {:.3} ms   p90 {:.3} ms   p99 {:.3} ms   max {:.3} ms",
            self.watchers,
            self.events,
            self.watchers * writes,
            self.drained_in.as_secs_f64(),
            self.missing,
            self.surplus,
            self.disorder,
            self.no_prev_kv,
            self.late,
            self.broken_streams,
            self.requested,
            self.answered,
            ms(0.5),
            ms(0.9),
            ms(0.99),
            self.progress.as_ref().map_or(0.0, |h| h.max() as f64 / 1000.0),
        )
    }
}
