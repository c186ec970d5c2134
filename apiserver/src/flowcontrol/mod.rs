//! API Priority and Fairness (kube's `util/flowcontrol`): every request is
//! classified by the FlowSchema of lowest `matchingPrecedence` whose rules
//! match it, which names its priority level and how its flow is told
//! apart; the level then runs it at once (exempt), when seats are free
//! (`Reject`), or after a fair turn in its queues (`Queue`). The server's
//! seats (`--max-requests-inflight` + `--max-mutating-requests-inflight`)
//! are split among the levels by their shares, lent and borrowed as their
//! demand moves (see `allocation`).
//!
//! The configuration is a snapshot of the stored FlowSchemas and priority
//! levels, replaced whenever the `flowcontrol` controller reads them; a
//! level keeps its queues across changes, and one removed lets its running
//! and waiting requests finish.

mod allocation;
mod classify;
mod demand;
mod dump;
mod metrics;
mod queueset;
mod retry_after;
mod shuffle;
mod work;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

use axum::http::Uri;
use k8s_openapi::api::flowcontrol::v1 as flowcontrol;
use serde_json::Value;

use allocation::{Bounds, DemandStats, Shares};
pub use classify::Classification;
use classify::Config;
use queueset::{Described, Mode, Pending, QueueSet, Ticket};
pub use work::{ResourceStats, WorkEstimate};

use crate::request::{RequestInfo, UserInfo};

/// How often levels lend and borrow seats (kube's adjustment period).
pub const BORROWING_PERIOD: Duration = Duration::from_secs(10);
/// The longest a request waits in a queue, whatever its deadline.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// A priority level as configured, and its dispatcher.
#[derive(Debug)]
struct Level {
    shares: Shares,
    mode: Mode,
    bounds: Bounds,
    demand: DemandStats,
    current: u32,
    set: Arc<QueueSet>,
}

/// The classification, the levels, and what they count.
#[derive(Debug)]
pub struct FlowControl {
    /// The server's seats.
    server_limit: u32,
    /// How long a request with no deadline (a watch) may wait.
    default_wait: Duration,
    config: RwLock<Arc<Config>>,
    levels: Mutex<BTreeMap<String, Level>>,
    stats: OnceLock<Arc<dyn ResourceStats>>,
    retry_after: retry_after::RetryAfter,
    metrics: metrics::FlowMetrics,
}

/// A request refused: answer 429 with this `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub retry_after: u64,
}

/// A request admitted to run; its seats are given back when dropped.
#[derive(Debug)]
pub struct Admission {
    ticket: Option<Ticket>,
    level: String,
    schema: String,
    seats: u32,
    flow_control: Arc<FlowControl>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.ticket.take();
        self.flow_control.metrics.executing(&self.level, &self.schema, self.seats, -1);
    }
}

impl FlowControl {
    /// `server_limit` seats in all; `request_timeout` bounds waits (a
    /// quarter of it for requests without a deadline).
    pub fn new(server_limit: u32, request_timeout: Duration) -> FlowControl {
        FlowControl {
            server_limit,
            default_wait: request_timeout / 4,
            config: RwLock::default(),
            levels: Mutex::default(),
            stats: OnceLock::new(),
            retry_after: retry_after::RetryAfter::default(),
            metrics: metrics::FlowMetrics::default(),
        }
    }

    /// Where list and write estimates read object counts and watchers.
    pub fn set_stats(&self, stats: Arc<dyn ResourceStats>) {
        let _ = self.stats.set(stats);
    }

    fn levels(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Level>> {
        self.levels.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the configuration with the stored `schemas` and `levels`
    /// (JSON as served); objects that do not decode are left out.
    pub fn configure(&self, schemas: &[Value], levels: &[Value]) {
        let schemas =
            schemas.iter().filter_map(|s| serde_json::from_value::<flowcontrol::FlowSchema>(s.clone()).ok());
        let levels: Vec<flowcontrol::PriorityLevelConfiguration> = levels
            .iter()
            .filter_map(|l| serde_json::from_value::<flowcontrol::PriorityLevelConfiguration>(l.clone()).ok())
            .collect();
        self.configure_levels(&levels);
        let config = Config::new(schemas.collect(), levels);
        if let Ok(mut current) = self.config.write() {
            *current = Arc::new(config);
        }
    }

    /// The levels' dispatchers as `levels` configure them; unchanged ones
    /// are left as they are (their demand periods go on).
    fn configure_levels(&self, levels: &[flowcontrol::PriorityLevelConfiguration]) {
        let wanted: BTreeMap<String, (Shares, Mode)> =
            levels.iter().filter_map(|l| Some((l.metadata.name.clone()?, level_spec(l)?))).collect();
        let mut current = self.levels();
        let same = wanted.len() == current.len()
            && wanted.iter().all(|(name, (shares, mode))| {
                current.get(name).is_some_and(|l| l.shares == *shares && l.mode == *mode)
            });
        if same {
            return;
        }
        let specs: Vec<Shares> = wanted.values().map(|(shares, _)| *shares).collect();
        let bounds = allocation::bounds(self.server_limit, &specs);
        let mut next = BTreeMap::new();
        for ((name, (shares, mode)), bounds) in wanted.into_iter().zip(bounds) {
            let level = match current.remove(&name) {
                Some(level) => {
                    level.set.reconfigure(mode, level.current);
                    Level { shares, mode, bounds, ..level }
                }
                None => {
                    // kube starts a level halfway into what it may lend.
                    let lendable = bounds.nominal - bounds.lower;
                    let limit = bounds.nominal - lendable / 2;
                    let set = QueueSet::new(mode, limit);
                    Level { shares, mode, bounds, demand: DemandStats::default(), current: limit, set }
                }
            };
            next.insert(name, level);
        }
        *current = next;
        adjust_limits(&mut current);
    }

    /// Moves seats between levels by their demand since the last time.
    pub fn adjust_borrowing(&self) {
        adjust_limits(&mut self.levels());
    }

    /// Adjusts borrowing every [`BORROWING_PERIOD`] while the server runs.
    pub async fn run_borrowing(self: Arc<Self>) {
        let mut tick = tokio::time::interval(BORROWING_PERIOD);
        tick.tick().await;
        loop {
            tick.tick().await;
            self.adjust_borrowing();
        }
    }

    /// How `user`'s request is classified; None until a configuration is
    /// read, or when nothing matches and there is no `catch-all`.
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<Classification> {
        let config = self.config.read().ok()?.clone();
        config.classify(user, info)
    }

    /// Waits for the seats `request` needs at its level, at most until
    /// `deadline` (the request's own) allows: a quarter of the time left,
    /// at most a minute. Refused when the level is full, or the wait ends
    /// first.
    pub async fn admit(
        self: &Arc<Self>,
        classification: &Classification,
        request: (&RequestInfo, &Uri, &UserInfo),
        deadline: Option<Instant>,
    ) -> Result<Admission, Refused> {
        let (info, uri, user) = request;
        let found = self.levels().get(&classification.level).map(|l| (l.set.clone(), l.bounds.max_seats));
        let (level, schema) = (classification.level.clone(), classification.schema.clone());
        let Some((set, max_seats)) = found else {
            // Configured a moment ago and not yet dispatched: run it.
            self.metrics.executing(&level, &schema, 1, 1);
            return Ok(Admission { ticket: None, level, schema, seats: 1, flow_control: self.clone() });
        };
        let work = match self.stats.get() {
            Some(stats) => work::estimate(info, uri, stats.as_ref(), max_seats),
            None => WorkEstimate::ONE_SEAT,
        };
        let described = Arc::new(describe(classification, info, uri, user));
        let hash = shuffle::flow_hash(&classification.schema, &classification.flow);
        let arrived = Instant::now();
        let wait = match deadline {
            Some(deadline) => deadline.saturating_duration_since(arrived) / 4,
            None => self.default_wait,
        };
        let until = tokio::time::Instant::from_std(arrived + wait.min(MAX_WAIT));
        let pending = match set.start(described, work, hash) {
            Ok(pending) => pending,
            Err(rejection) => return Err(self.refuse(&level, &schema, rejection.reason())),
        };
        let ticket = self.wait(pending, until, &level, &schema).await;
        let waited = arrived.elapsed().as_secs_f64();
        self.metrics.waited(&level, &schema, waited, ticket.is_ok());
        match ticket {
            Ok(ticket) => {
                let seats = work.max_seats();
                self.metrics.executing(&level, &schema, seats, 1);
                Ok(Admission { ticket: Some(ticket), level, schema, seats, flow_control: self.clone() })
            }
            Err(rejection) => Err(self.refuse(&level, &schema, rejection.reason())),
        }
    }

    async fn wait(
        &self,
        pending: Pending,
        until: tokio::time::Instant,
        level: &str,
        schema: &str,
    ) -> Result<Ticket, queueset::Rejection> {
        /// Counts the request out of the queue however the wait ends,
        /// its client going away included.
        struct Queued<'a>(&'a metrics::FlowMetrics, &'a str, &'a str);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                self.0.queued(self.1, self.2, -1);
            }
        }
        self.metrics.queued(level, schema, 1);
        let _queued = Queued(&self.metrics, level, schema);
        pending.wait(until).await
    }

    fn refuse(&self, level: &str, schema: &str, reason: &'static str) -> Refused {
        self.metrics.rejected(level, schema, reason);
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_secs();
        Refused { retry_after: self.retry_after.refused(level, now) }
    }

    /// `/debug/api_priority_and_fairness/dump_priority_levels`.
    pub fn dump_priority_levels(&self) -> String {
        let levels: Vec<_> =
            self.levels().iter().map(|(name, level)| (name.clone(), level.set.summary())).collect();
        dump::priority_levels(&levels)
    }

    /// `/debug/api_priority_and_fairness/dump_queues`.
    pub fn dump_queues(&self) -> String {
        let levels: Vec<_> =
            self.levels().iter().map(|(name, level)| (name.clone(), level.set.dump_queues())).collect();
        dump::queues(&levels)
    }

    /// `/debug/api_priority_and_fairness/dump_requests`, with who sent each
    /// and what it asks when `details`.
    pub fn dump_requests(&self, details: bool) -> String {
        let levels: Vec<_> =
            self.levels().iter().map(|(name, level)| (name.clone(), level.set.dump_requests())).collect();
        dump::requests(&levels, details)
    }

    /// Appends the `apiserver_flowcontrol_*` families.
    pub fn write_metrics(&self, out: &mut String) {
        let levels: Vec<(String, Bounds, u32)> =
            self.levels().iter().map(|(name, level)| (name.clone(), level.bounds, level.current)).collect();
        self.metrics.write(out, &levels);
    }
}

/// Sets every level's current limit from its demand since the last call.
fn adjust_limits(levels: &mut BTreeMap<String, Level>) {
    for level in levels.values_mut() {
        let (seats, _, _) = level.set.occupancy();
        level.demand.update(level.set.take_demand(), seats);
    }
    let table: Vec<_> = levels.values().map(|l| (l.shares, l.bounds, l.demand)).collect();
    let limits = allocation::current_limits(&table);
    for (level, limit) in levels.values_mut().zip(limits) {
        level.current = limit;
        level.set.set_limit(limit);
    }
}

/// A level's shares and mode, with kube's defaults for what is unset.
fn level_spec(level: &flowcontrol::PriorityLevelConfiguration) -> Option<(Shares, Mode)> {
    let spec = &level.spec;
    let percent = |p: Option<i32>| u32::try_from(p.unwrap_or(0)).unwrap_or(0);
    if spec.type_ == "Exempt" {
        let exempt = spec.exempt.clone().unwrap_or_default();
        let shares = Shares {
            exempt: true,
            nominal_shares: percent(exempt.nominal_concurrency_shares),
            lendable_percent: percent(exempt.lendable_percent),
            borrowing_limit_percent: None,
            hand_size: None,
        };
        return Some((shares, Mode::Exempt));
    }
    let limited = spec.limited.as_ref()?;
    let queuing = Some(&limited.limit_response).filter(|r| r.type_ == "Queue").map(|r| {
        let queuing = r.queuing.clone().unwrap_or_default();
        let count =
            |v: Option<i32>, default: usize| v.and_then(|v| usize::try_from(v).ok()).unwrap_or(default);
        (count(queuing.queues, 64), count(queuing.hand_size, 8), count(queuing.queue_length_limit, 50))
    });
    let shares = Shares {
        exempt: false,
        nominal_shares: u32::try_from(limited.nominal_concurrency_shares.unwrap_or(30)).unwrap_or(0),
        lendable_percent: percent(limited.lendable_percent),
        borrowing_limit_percent: limited.borrowing_limit_percent.map(|p| u32::try_from(p).unwrap_or(0)),
        hand_size: queuing.map(|(_, hand, _)| u32::try_from(hand).unwrap_or(u32::MAX)),
    };
    let mode = match queuing {
        Some((queues, hand_size, queue_length_limit)) => {
            Mode::Queue { queues, hand_size, queue_length_limit }
        }
        None => Mode::Reject,
    };
    Some((shares, mode))
}

fn describe(classification: &Classification, info: &RequestInfo, uri: &Uri, user: &UserInfo) -> Described {
    let mut described = Described {
        schema: classification.schema.clone(),
        flow: classification.flow.clone(),
        user: user.name.clone(),
        verb: info.verb().to_string(),
        path: uri.path().to_string(),
        ..Described::default()
    };
    if let RequestInfo::Resource(request) = info {
        described.namespace = request.namespace.clone().unwrap_or_default();
        described.name = request.name.clone().unwrap_or_default();
        described.api_version = match request.group.as_str() {
            "" => request.version.clone(),
            group => format!("{group}/{}", request.version),
        };
        described.resource = request.resource.clone();
        described.subresource = request.subresource.clone().unwrap_or_default();
    }
    described
}

#[cfg(test)]
pub(super) mod tests;
