//! One priority level's seats and queues (kube's `fairqueuing/queueset`).
//!
//! A request needs its estimate's seats. At an exempt level it always runs;
//! at a `Reject` level it runs if the seats are free and is refused if not;
//! at a `Queue` level it waits in one of the level's queues: the shortest
//! (by work waiting) of a hand dealt from its flow's hash, so a flow can fill
//! only its own few queues. Whenever seats free up, the queue whose head
//! would finish first in virtual time goes next (fair queuing): virtual time
//! `R` grows with real time divided among the queues with work, so each
//! active queue gets an equal share of the seats whatever its flow sends.
//!
//! Work is counted in seat-seconds, with kube's 3 ms per seat as a
//! request's guess, corrected by its real duration once it is done.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::oneshot;

use super::demand::Demand;
use super::shuffle;
use super::work::WorkEstimate;

/// kube's guess at how long a seat is held, until a request says better.
const ESTIMATED_SERVICE: Duration = Duration::from_millis(3);

/// How a level treats what it cannot run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Exempt,
    Reject,
    Queue { queues: usize, hand_size: usize, queue_length_limit: usize },
}

/// Why a request was refused, as kube's `reason` label says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    QueueFull,
    ConcurrencyLimit,
    TimeOut,
    Cancelled,
}

impl Rejection {
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue-full",
            Rejection::ConcurrencyLimit => "concurrency-limit",
            Rejection::TimeOut => "time-out",
            Rejection::Cancelled => "cancelled",
        }
    }
}

/// What a request is, for dumps and fairness.
#[derive(Debug, Clone, Default)]
pub struct Described {
    pub schema: String,
    pub flow: String,
    pub user: String,
    pub verb: String,
    pub path: String,
    pub namespace: String,
    pub name: String,
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
}

#[derive(Debug)]
struct Entry {
    id: u64,
    described: Arc<Described>,
    work: WorkEstimate,
    arrived: SystemTime,
    started: Option<SystemTime>,
    /// When it was dispatched, what its service time is counted from.
    dispatched_at: Option<Instant>,
}

impl Entry {
    fn total_work(&self) -> f64 {
        let initial = f64::from(self.work.initial_seats) * ESTIMATED_SERVICE.as_secs_f64();
        initial + f64::from(self.work.final_seats) * self.work.additional_latency.as_secs_f64()
    }
}

#[derive(Debug)]
struct Waiting {
    entry: Entry,
    arrival_r: f64,
    dispatched: oneshot::Sender<()>,
}

#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<Waiting>,
    /// The waiting requests' seats and work, kept as they come and go.
    seats_waiting: u32,
    work_waiting: f64,
    executing: BTreeMap<u64, Entry>,
    seats_in_use: u32,
    next_dispatch_r: f64,
}

impl Queue {
    fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.executing.is_empty()
    }

    fn push(&mut self, waiting: Waiting) {
        self.seats_waiting += waiting.entry.work.max_seats();
        self.work_waiting += waiting.entry.total_work();
        self.waiting.push_back(waiting);
    }

    fn take(&mut self, at: usize) -> Option<Waiting> {
        let taken = self.waiting.remove(at)?;
        self.seats_waiting -= taken.entry.work.max_seats();
        // Float sums drift; an empty queue has no work.
        self.work_waiting = match self.waiting.is_empty() {
            true => 0.0,
            false => self.work_waiting - taken.entry.total_work(),
        };
        Some(taken)
    }

    /// Its next start is never before its head arrived (kube's anti-windup).
    fn bound_next_dispatch(&mut self) {
        if let Some(head) = self.waiting.front() {
            self.next_dispatch_r = self.next_dispatch_r.max(head.arrival_r);
        }
    }
}

/// Counts since the level was made, for dumps.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub dispatched: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub cancelled: u64,
}

#[derive(Debug)]
struct State {
    mode: Mode,
    limit: u32,
    queues: Vec<Queue>,
    /// Requests running outside queues (exempt and `Reject` levels).
    queueless: BTreeMap<u64, Entry>,
    /// Virtual time, in seat-seconds per queue.
    r: f64,
    synced: Instant,
    seats_in_use: u32,
    seats_waiting: u32,
    executing: u32,
    waiting: u32,
    robin: usize,
    enqueues: usize,
    next_id: u64,
    totals: Totals,
    demand: Demand,
}

/// A priority level's dispatcher.
#[derive(Debug)]
pub struct QueueSet {
    state: Mutex<State>,
}

/// Where an admitted request runs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Queue(usize),
    Queueless,
}

impl QueueSet {
    pub fn new(mode: Mode, limit: u32) -> Arc<QueueSet> {
        let now = Instant::now();
        let state = State {
            mode,
            limit,
            queues: Vec::new(),
            queueless: BTreeMap::new(),
            r: 0.0,
            synced: now,
            seats_in_use: 0,
            seats_waiting: 0,
            executing: 0,
            waiting: 0,
            robin: 0,
            enqueues: 0,
            next_id: 0,
            totals: Totals::default(),
            demand: Demand::new(now),
        };
        let set = Arc::new(QueueSet { state: Mutex::new(state) });
        set.reconfigure(mode, limit);
        set
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is plain counts; a panic elsewhere leaves it usable.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.sync_time();
        state
    }

    /// A new mode (queue counts) or seat limit; waiting requests go on
    /// waiting in their queues, and run as the new limit allows.
    pub fn reconfigure(&self, mode: Mode, limit: u32) {
        let mut state = self.lock();
        state.mode = mode;
        state.limit = limit;
        let wanted = match mode {
            Mode::Queue { queues, .. } => queues,
            _ => 0,
        };
        // Queues beyond the new count are kept until they are idle: their
        // requests know them by index.
        while state.queues.len() < wanted {
            state.queues.push(Queue::default());
        }
        state.drop_idle_surplus_queues();
        state.dispatch_all();
    }

    /// The current seat limit (borrowing moves it).
    pub fn set_limit(&self, limit: u32) {
        let mut state = self.lock();
        state.limit = limit;
        state.dispatch_all();
    }

    /// Asks for `work`'s seats for a request of flow `hash`.
    pub fn start(
        self: &Arc<Self>,
        described: Arc<Described>,
        work: WorkEstimate,
        hash: u64,
    ) -> Result<Pending, Rejection> {
        let mut state = self.lock();
        state.next_id += 1;
        let id = state.next_id;
        let entry =
            Entry { id, described, work, arrived: SystemTime::now(), started: None, dispatched_at: None };
        let (dispatched, receiver) = oneshot::channel();
        let mut waits_in = None;
        match state.mode {
            Mode::Exempt => state.run_queueless(entry),
            Mode::Reject if state.can_accommodate(work.max_seats()) => state.run_queueless(entry),
            Mode::Reject => {
                state.totals.rejected += 1;
                return Err(Rejection::ConcurrencyLimit);
            }
            Mode::Queue { hand_size, queue_length_limit, queues } => {
                let chosen = state.choose_queue(hash, queues, hand_size);
                let queue = &state.queues[chosen];
                if state.seats_in_use >= state.limit && queue.waiting.len() >= queue_length_limit {
                    state.totals.rejected += 1;
                    return Err(Rejection::QueueFull);
                }
                state.enqueue(chosen, Waiting { entry, arrival_r: 0.0, dispatched });
                state.dispatch_all();
                waits_in = Some(chosen);
            }
        }
        Ok(Pending { set: Some(self.clone()), id, queue: waits_in, receiver })
    }

    /// `(seats in use, requests executing, requests waiting)`.
    pub fn occupancy(&self) -> (u32, u32, u32) {
        let state = self.lock();
        (state.seats_in_use, state.executing, state.waiting)
    }

    /// The seat demand since the last call: `(average, deviation, high
    /// watermark)`, or None when no time has passed.
    pub fn take_demand(&self) -> Option<(f64, f64, f64)> {
        let mut state = self.lock();
        let now = Instant::now();
        let current = f64::from(state.seats_in_use + state.seats_waiting);
        state.demand.take(now, current)
    }

    /// A request left without having run: out of its queue, or its seats
    /// back if it was dispatched meanwhile.
    fn cancel(&self, id: u64, queue: Option<usize>, timed_out: bool) -> Option<Place> {
        let mut state = self.lock();
        if queue.is_some_and(|index| state.remove_waiting(id, index)) {
            if timed_out {
                state.totals.timed_out += 1;
            } else {
                state.totals.cancelled += 1;
            }
            state.dispatch_all();
            return None;
        }
        match queue {
            Some(index) => {
                state.queues.get(index)?.executing.contains_key(&id).then_some(Place::Queue(index))
            }
            None => state.queueless.contains_key(&id).then_some(Place::Queueless),
        }
    }

    fn finish(self: &Arc<Self>, id: u64, place: Place) {
        let mut state = self.lock();
        let Some(entry) = state.stop_executing(id, place) else { return };
        let seats = entry.work.max_seats();
        let linger = if entry.work.final_seats > 0 { entry.work.additional_latency } else { Duration::ZERO };
        if linger.is_zero() {
            state.release(place, seats);
            return;
        }
        drop(state);
        // The seats stay taken while the change's events go out.
        let set = self.clone();
        let release = async move {
            tokio::time::sleep(linger).await;
            set.lock().release(place, seats);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(release);
            }
            Err(_) => self.lock().release(place, seats),
        }
    }

    /// The level at one instant, for `dump_priority_levels`.
    pub fn summary(&self) -> Summary {
        let state = self.lock();
        Summary {
            active_queues: state.queues.iter().filter(|q| !q.waiting.is_empty()).count(),
            waiting: state.waiting,
            executing: state.executing,
            totals: state.totals,
        }
    }

    /// Each queue's state, for `dump_queues`.
    pub fn dump_queues(&self) -> Vec<QueueDump> {
        let state = self.lock();
        state
            .queues
            .iter()
            .map(|q| QueueDump {
                pending: q.waiting.len(),
                executing: q.executing.len(),
                seats_in_use: q.seats_in_use,
                next_dispatch_r: q.next_dispatch_r,
                initial_seats_sum: q.waiting.iter().map(|w| w.entry.work.initial_seats).sum(),
                max_seats_sum: q.seats_waiting,
                total_work_sum: q.work_waiting,
            })
            .collect()
    }

    /// Every request waiting or running, for `dump_requests`.
    pub fn dump_requests(&self) -> Vec<RequestDump> {
        let state = self.lock();
        let mut out = Vec::new();
        let dump = |queue: i64, index: i64, e: &Entry| RequestDump {
            queue,
            index,
            described: e.described.clone(),
            work: e.work,
            arrived: e.arrived,
            started: e.started,
        };
        for (q, queue) in state.queues.iter().enumerate() {
            let q = i64::try_from(q).unwrap_or(i64::MAX);
            for (i, waiting) in queue.waiting.iter().enumerate() {
                out.push(dump(q, i64::try_from(i).unwrap_or(i64::MAX), &waiting.entry));
            }
            out.extend(queue.executing.values().map(|e| dump(q, -1, e)));
        }
        out.extend(state.queueless.values().map(|e| dump(-1, -1, e)));
        out
    }
}

/// A level's queues with requests waiting, its requests waiting and
/// running, and its counts.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub active_queues: usize,
    pub waiting: u32,
    pub executing: u32,
    pub totals: Totals,
}

/// One queue as `dump_queues` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueDump {
    pub pending: usize,
    pub executing: usize,
    pub seats_in_use: u32,
    pub next_dispatch_r: f64,
    pub initial_seats_sum: u32,
    pub max_seats_sum: u32,
    pub total_work_sum: f64,
}

/// One request as `dump_requests` shows it: its queue and place in it (-1:
/// running, or outside queues).
#[derive(Debug, Clone)]
pub struct RequestDump {
    pub queue: i64,
    pub index: i64,
    pub described: Arc<Described>,
    pub work: WorkEstimate,
    pub arrived: SystemTime,
    pub started: Option<SystemTime>,
}

impl State {
    /// Moves virtual time on by the real time since the last look, shared
    /// among the queues with work.
    fn sync_time(&mut self) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(self.synced).as_secs_f64();
        self.synced = now;
        let active = self.queues.iter().filter(|q| !q.is_idle()).count();
        if active == 0 {
            return;
        }
        let requested: u32 = self.queues.iter().map(|q| q.seats_in_use + q.seats_waiting).sum();
        let rate = f64::from(requested.min(self.limit)) / active as f64;
        self.r += rate * elapsed;
    }

    fn note_demand(&mut self) {
        let current = f64::from(self.seats_in_use + self.seats_waiting);
        self.demand.set(Instant::now(), current);
    }

    fn can_accommodate(&self, seats: u32) -> bool {
        match self.mode {
            Mode::Exempt => true,
            // A request wider than the level runs alone.
            _ if seats > self.limit => self.executing == 0,
            _ => self.seats_in_use + seats <= self.limit,
        }
    }

    fn run_queueless(&mut self, mut entry: Entry) {
        entry.started = Some(SystemTime::now());
        entry.dispatched_at = Some(Instant::now());
        let seats = entry.work.max_seats();
        self.seats_in_use += seats;
        self.executing += 1;
        self.totals.dispatched += 1;
        self.queueless.insert(entry.id, entry);
        self.note_demand();
    }

    /// The queue of `hash`'s hand with the least work waiting; hands are
    /// dealt from the first `queues` (those the configuration asks for).
    fn choose_queue(&mut self, hash: u64, queues: usize, hand_size: usize) -> usize {
        let hand = shuffle::deal(hash, queues, hand_size);
        let offset = self.enqueues % hand.len().max(1);
        self.enqueues = self.enqueues.wrapping_add(1);
        let mut best = hand[0];
        let mut least = f64::INFINITY;
        for i in 0..hand.len() {
            let index = hand[(offset + i) % hand.len()];
            let work = self.queues[index].work_waiting;
            if work < least {
                least = work;
                best = index;
            }
        }
        best
    }

    fn enqueue(&mut self, index: usize, mut waiting: Waiting) {
        waiting.arrival_r = self.r;
        let seats = waiting.entry.work.max_seats();
        let r = self.r;
        let queue = &mut self.queues[index];
        if queue.is_idle() {
            queue.next_dispatch_r = r;
        }
        queue.push(waiting);
        queue.bound_next_dispatch();
        self.waiting += 1;
        self.seats_waiting += seats;
        self.note_demand();
    }

    fn dispatch_all(&mut self) {
        while self.waiting > 0 && self.seats_in_use < self.limit && self.dispatch_one() {}
    }

    /// Starts the head of the queue that would finish it first in virtual
    /// time, if its seats are free.
    fn dispatch_one(&mut self) -> bool {
        let count = self.queues.len();
        let mut best: Option<(usize, f64)> = None;
        for step in 1..=count {
            let index = (self.robin + step) % count;
            let queue = &self.queues[index];
            if let Some(head) = queue.waiting.front() {
                let finish = queue.next_dispatch_r + head.entry.total_work();
                if best.is_none_or(|(_, least)| finish < least) {
                    best = Some((index, finish));
                }
            }
        }
        let Some((index, _)) = best else { return false };
        let seats = self.queues[index].waiting.front().map_or(0, |h| h.entry.work.max_seats());
        if !self.can_accommodate(seats) {
            return false;
        }
        let Some(Waiting { mut entry, dispatched, .. }) = self.queues[index].take(0) else {
            return false;
        };
        self.robin = index;
        self.waiting -= 1;
        self.seats_waiting -= seats;
        self.executing += 1;
        self.seats_in_use += seats;
        self.totals.dispatched += 1;
        entry.started = Some(SystemTime::now());
        entry.dispatched_at = Some(Instant::now());
        let queue = &mut self.queues[index];
        queue.next_dispatch_r += entry.total_work();
        queue.seats_in_use += seats;
        queue.executing.insert(entry.id, entry);
        queue.bound_next_dispatch();
        self.note_demand();
        // A waiter that has just given up still finds itself running.
        let _ = dispatched.send(());
        true
    }

    fn remove_waiting(&mut self, id: u64, index: usize) -> bool {
        let Some(queue) = self.queues.get_mut(index) else { return false };
        let Some(at) = queue.waiting.iter().position(|w| w.entry.id == id) else { return false };
        let removed = queue.take(at);
        queue.bound_next_dispatch();
        if let Some(removed) = removed {
            self.waiting -= 1;
            self.seats_waiting -= removed.entry.work.max_seats();
        }
        self.drop_idle_surplus_queues();
        self.note_demand();
        true
    }

    /// Takes a finished request out of the running; its queue's virtual
    /// time gets back what the guess overcharged (or pays what it missed).
    fn stop_executing(&mut self, id: u64, place: Place) -> Option<Entry> {
        let entry = match place {
            Place::Queueless => self.queueless.remove(&id)?,
            Place::Queue(index) => {
                let queue = self.queues.get_mut(index)?;
                let entry = queue.executing.remove(&id)?;
                let ran = entry.dispatched_at.map_or(Duration::ZERO, |at| at.elapsed());
                let overcharge = ESTIMATED_SERVICE.as_secs_f64() - ran.as_secs_f64();
                queue.next_dispatch_r -= f64::from(entry.work.initial_seats) * overcharge;
                queue.bound_next_dispatch();
                entry
            }
        };
        self.executing -= 1;
        Some(entry)
    }

    fn release(&mut self, place: Place, seats: u32) {
        self.seats_in_use = self.seats_in_use.saturating_sub(seats);
        if let Place::Queue(index) = place
            && let Some(queue) = self.queues.get_mut(index)
        {
            queue.seats_in_use = queue.seats_in_use.saturating_sub(seats);
        }
        self.drop_idle_surplus_queues();
        self.note_demand();
        self.dispatch_all();
    }

    /// Trailing queues past the configured count, once idle.
    fn drop_idle_surplus_queues(&mut self) {
        let wanted = match self.mode {
            Mode::Queue { queues, .. } => queues,
            _ => 0,
        };
        while self.queues.len() > wanted
            && self.queues.last().is_some_and(|q| q.is_idle() && q.seats_in_use == 0)
        {
            self.queues.pop();
        }
    }
}

/// A request admitted to wait: [`Pending::wait`] until it may run. Dropped
/// (its client gone), it leaves its queue.
#[derive(Debug)]
pub struct Pending {
    set: Option<Arc<QueueSet>>,
    id: u64,
    /// The queue it waits in; None when it runs outside queues.
    queue: Option<usize>,
    receiver: oneshot::Receiver<()>,
}

impl Pending {
    /// Waits until the request's seats are its, or `until` passes.
    pub async fn wait(mut self, until: tokio::time::Instant) -> Result<Ticket, Rejection> {
        let Some(set) = self.set.clone() else { return Err(Rejection::Cancelled) };
        let receiver = &mut self.receiver;
        let _ = tokio::time::timeout_at(until, receiver).await;
        // Dispatched or not, the queue set says which.
        self.set = None;
        match set.cancel(self.id, self.queue, true) {
            Some(place) => Ok(Ticket { set: Some(set), id: self.id, place }),
            None => Err(Rejection::TimeOut),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(set) = self.set.take()
            && let Some(place) = set.cancel(self.id, self.queue, false)
        {
            set.finish(self.id, place);
        }
    }
}

/// Seats held by a running request, given back when it is dropped.
#[derive(Debug)]
pub struct Ticket {
    set: Option<Arc<QueueSet>>,
    id: u64,
    place: Place,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(set) = self.set.take() {
            set.finish(self.id, self.place);
        }
    }
}

#[cfg(test)]
mod tests;
