//! `watch` and `watch-latency`, etcd's two watch benchmarks.
//!
//! Both open `--streams` gRPC watch streams spread over the `--conns`
//! connections and create their watchers one at a time per stream (etcd's
//! client waits for each watcher's `created` response before the next), then
//! put to the watched keys and count every event every watcher gets. An event
//! that should have come and did not within [`EVENT_TIMEOUT`] of the last put
//! is an error, and so is one that should not have come.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use etcd_client::{Client, Event, WatchOptions, WatchStream};
use hdrhistogram::Histogram;
use tokio::sync::{mpsc, watch as signal};

use crate::Target;
use crate::load::{self, Outcome, Tally, Ticker};

/// How long a watcher's `created` response, or a put, may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long after the last put every watcher has to get its events.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// At least 1: zero streams, watchers or keys measure nothing.
fn positive() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

/// etcd's `benchmark watch` flags and defaults.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Watch streams (gRPC streams, spread over the connections).
    #[arg(long, default_value_t = 10, value_parser = positive())]
    streams: usize,
    /// Watchers per stream.
    #[arg(long, default_value_t = 100, value_parser = positive())]
    watch_per_stream: usize,
    /// Watched keys: watcher i watches key i mod this (etcd's
    /// `--watched-key-total`).
    #[arg(long, default_value_t = 1, value_parser = positive())]
    watched_key_total: usize,
    /// Puts per second over all clients (0: no limit).
    #[arg(long, default_value_t = 0)]
    put_rate: u64,
    /// Puts, round-robin over the watched keys.
    #[arg(long, default_value_t = 1000)]
    put_total: u64,
    /// Bytes per key.
    #[arg(long, default_value_t = 32, value_parser = positive())]
    key_size: usize,
    /// The watched keys are drawn from this many possible keys.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    key_space_size: u64,
    /// Watched keys 0, 1, 2, ... (mod the key space) instead of random ones.
    #[arg(long)]
    sequential_keys: bool,
}

/// etcd's `benchmark watch-latency` flags and defaults.
#[derive(Debug, clap::Args)]
pub struct LatencyArgs {
    /// Watch streams (gRPC streams, spread over the connections).
    #[arg(long, default_value_t = 10, value_parser = positive())]
    streams: usize,
    /// Watchers per stream, all on the one key.
    #[arg(long, default_value_t = 10, value_parser = positive())]
    watchers_per_stream: usize,
    /// Puts to the watched key, one after another.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    put_total: u64,
    /// Puts per second (0: each as soon as the previous one is answered).
    #[arg(long, default_value_t = 100)]
    put_rate: u64,
    /// Bytes per key.
    #[arg(long, default_value_t = 32, value_parser = positive())]
    key_size: usize,
    /// Bytes per value.
    #[arg(long, default_value_t = 32)]
    val_size: usize,
    /// Ask for the previous key-value in every event (bigger events).
    #[arg(long = "prevkv")]
    prev_kv: bool,
}

/// `watch`: the primary histogram is watcher creation (create request sent →
/// `created` response); event delivery is reported as a count and a rate,
/// since per-event latency is what `watch-latency` measures.
pub async fn watch(target: &Target, args: WatchArgs) -> Result<Outcome, String> {
    let watchers = args.streams * args.watch_per_stream;
    // Entry i of the watched list and the distinct key it names: with a
    // small key space several entries share a key, and a put to it then
    // reaches the watchers of all of them (as in etcd's count).
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut known: HashMap<Vec<u8>, usize> = HashMap::new();
    let entries: Vec<usize> = (0..args.watched_key_total as u64)
        .map(|i| {
            let index = if args.sequential_keys { i } else { crate::mix(i) } % args.key_space_size;
            let key = crate::key_bytes(index, args.key_size);
            *known.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                keys.len() - 1
            })
        })
        .collect();
    let watched = |g: usize| entries[g % entries.len()];
    let plans = (0..args.streams)
        .map(|s| (0..args.watch_per_stream).map(|j| watched(s * args.watch_per_stream + j)).collect());
    let keys = Arc::new(keys);
    let run =
        Streams::open(target, keys.clone(), WatchOptions::new(), Measure::Count, plans, watchers as u64)
            .await?;
    let created_in = run.opened_in;

    // Successful puts per key: what each watcher should see.
    let puts: Arc<Vec<AtomicU64>> = Arc::new(keys.iter().map(|_| AtomicU64::new(0)).collect());
    let mut per_key = vec![0u64; keys.len()];
    for n in 0..args.put_total {
        per_key[entries[(n % entries.len() as u64) as usize]] += 1;
    }
    let expected: u64 = run.plans.iter().flatten().map(|&k| per_key[k]).sum();
    let put = {
        let (keys, entries, puts) = (keys.clone(), entries.clone(), puts.clone());
        move |mut client: Client, n: u64| {
            let k = entries[(n % entries.len() as u64) as usize];
            let (key, puts) = (keys[k].clone(), puts.clone());
            async move {
                client.put(key, "data", None).await?;
                puts[k].fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
        }
    };
    let ticker = run.ticker(expected, target.quiet);
    let began = Instant::now();
    let put_outcome = load::run(&target.shape(args.put_total, args.put_rate), put, |_| {})
        .await
        .map_err(|e| e.to_string())?;
    for sample in &put_outcome.error_samples {
        run.tally.sample(format!("put: {sample}"));
    }
    run.tally.errors(put_outcome.errors, "put failed");
    let puts: Vec<u64> = puts.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    let tally = run.tally.clone();
    let received = run.finish(puts).await;
    let events_in = began.elapsed();
    drop(ticker);

    say(
        target.quiet,
        &format!(
            "Watch: {watchers} watchers on {} keys; {} of {expected} expected events received in {} \
             responses in {:.4} secs. ({:.1} events/sec); {} puts failed.",
            keys.len(),
            received.events,
            received.responses,
            events_in.as_secs_f64(),
            received.events as f64 / events_in.as_secs_f64().max(1e-9),
            put_outcome.errors,
        ),
        "The summary below is of watch creation (create request to created response).",
    );
    Ok(tally.outcome(created_in, &received.created))
}

/// `watch-latency`: for every put and every watcher, the time from just
/// before the put is sent to that watcher's receiving its event. (etcd's tool
/// starts the clock at the put's response instead and clamps events that
/// beat the response to zero; starting before the send measures what a
/// writer waits until watchers know, and never needs the clamp.)
pub async fn latency(target: &Target, args: LatencyArgs) -> Result<Outcome, String> {
    let watchers = args.streams * args.watchers_per_stream;
    // A key of this run's own, so no earlier run's events or writers interfere.
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let key = crate::key_bytes(crate::mix(nanos), args.key_size);
    let mut putter = load::connections(&target.endpoints, 1)
        .await
        .map_err(|e| e.to_string())?
        .pop()
        .ok_or("no connection for the puts")?;
    // Events are matched to puts by the key's version, which counts on from
    // whatever the key had.
    let base_version = putter
        .get(key.clone(), None)
        .await
        .map_err(|e| format!("reading the watched key: {e}"))?
        .kvs()
        .first()
        .map_or(0, |kv| kv.version());
    let clock = Arc::new(PutClock {
        key: key.clone(),
        base_version,
        epoch: Instant::now(),
        sent: (0..args.put_total).map(|_| AtomicU64::new(0)).collect(),
    });
    let mut options = WatchOptions::new();
    if args.prev_kv {
        options = options.with_prev_key();
    }
    let plans = (0..args.streams).map(|_| vec![0; args.watchers_per_stream]);
    let measure = Measure::Latency(clock.clone());
    let run =
        Streams::open(target, Arc::new(vec![key.clone()]), options, measure, plans, watchers as u64).await?;

    let ticker = run.ticker(args.put_total * run.watchers(), target.quiet);
    let began = Instant::now();
    let value = vec![b'v'; args.val_size];
    let mut put_latencies = load::histogram().map_err(|e| e.to_string())?;
    let mut pace = (args.put_rate > 0)
        .then(|| tokio::time::interval(Duration::from_secs_f64(1.0 / args.put_rate as f64)));
    let mut done = 0;
    for _ in 0..args.put_total {
        if let Some(pace) = pace.as_mut() {
            pace.tick().await;
        }
        // The slot of the put about to be made is its key version's: a put
        // that fails leaves no event, and the next one takes its slot.
        let sent = clock.sending(done);
        match tokio::time::timeout(REQUEST_TIMEOUT, putter.put(key.clone(), value.clone(), None)).await {
            Ok(Ok(_)) => {
                let _ = put_latencies.record(load::micros(sent.elapsed()));
                done += 1;
            }
            Ok(Err(e)) => run.tally.error(format!("put: {e}")),
            Err(_) => run.tally.error(format!("put: no response within {REQUEST_TIMEOUT:?}")),
        }
    }
    let tally = run.tally.clone();
    let received = run.finish(vec![done]).await;
    let elapsed = began.elapsed();
    drop(ticker);

    let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    say(
        target.quiet,
        &format!(
            "Watch latency: {watchers} watchers on one key ({} created: p50 {:.3} ms, p99 {:.3} ms); \
             {done} of {} puts made (p50 {:.3} ms, p99 {:.3} ms).",
            received.created.len(),
            ms(&received.created, 0.5),
            ms(&received.created, 0.99),
            args.put_total,
            ms(&put_latencies, 0.5),
            ms(&put_latencies, 0.99),
        ),
        "The summary below is of event latencies, one per watcher per put (put sent to event received).",
    );
    Ok(tally.outcome(elapsed, &received.latencies))
}

/// A side note to the summary: on stdout before it, with a `heading` saying
/// what the summary measures, or on stderr with `--json` (stdout then holds
/// exactly one JSON object, whose meaning the subcommand's docs give).
fn say(quiet: bool, text: &str, heading: &str) {
    if quiet {
        eprintln!("{text}");
    } else {
        eprintln!();
        println!("{text}\n{heading}");
    }
}

/// When each put was sent, so watchers can time their events.
#[derive(Debug)]
struct PutClock {
    key: Vec<u8>,
    /// The key's version before the first put.
    base_version: i64,
    epoch: Instant,
    /// Per put slot: nanoseconds from `epoch` to sending, plus one (zero:
    /// not sent yet).
    sent: Vec<AtomicU64>,
}

impl PutClock {
    /// Marks put slot `slot` as being sent now.
    fn sending(&self, slot: u64) -> Instant {
        let now = Instant::now();
        if let Some(cell) = self.sent.get(slot as usize) {
            let nanos = now.duration_since(self.epoch).as_nanos() as u64;
            cell.store(nanos + 1, Ordering::Release);
        }
        now
    }

    /// The time from sending the put behind `event` to `received`.
    fn since_sent(&self, event: &Event, received: Instant) -> Result<Duration, String> {
        // Not `event.event_type()`: etcd-client panics on a type it does not
        // know, and a put always carries a kv anyway.
        let kv = event.kv().ok_or("an event without a key-value")?;
        if kv.key() != self.key.as_slice() {
            return Err("an event for a key nobody watches".into());
        }
        let slot = kv.version() - self.base_version - 1;
        let sent = usize::try_from(slot)
            .ok()
            .and_then(|slot| self.sent.get(slot))
            .map(|cell| cell.load(Ordering::Acquire))
            .filter(|&nanos| nanos > 0)
            .ok_or_else(|| format!("an event at version {} that no put of this run made", kv.version()))?;
        let sent = self.epoch + Duration::from_nanos(sent - 1);
        Ok(received.saturating_duration_since(sent))
    }
}

/// What a stream does with each event besides counting it.
#[derive(Debug, Clone)]
enum Measure {
    Count,
    Latency(Arc<PutClock>),
}

/// When the streams may stop reading: the successful puts per key (so
/// what each watcher should get), and by when.
#[derive(Debug, Clone)]
struct Goal {
    puts: Arc<Vec<u64>>,
    deadline: tokio::time::Instant,
}

impl Goal {
    /// The events a watcher of key `k` should get.
    fn wants(&self, k: usize) -> u64 {
        self.puts.get(k).copied().unwrap_or(0)
    }
}

/// The watch streams of one run, past watcher creation.
struct Streams {
    /// Per stream, the key index of each watcher.
    plans: Vec<Vec<usize>>,
    tasks: Vec<tokio::task::JoinHandle<StreamReport>>,
    goal: signal::Sender<Option<Goal>>,
    /// Events received so far, for the progress bar.
    received: Arc<AtomicU64>,
    tally: Arc<Tally>,
    /// From the first create request to the last stream being ready.
    opened_in: Duration,
}

/// What one stream task saw.
struct StreamReport {
    /// The events each watcher got; `None` if the stream broke before all
    /// its watchers were created (it is then left out of the event count).
    got: Option<Vec<u64>>,
    /// Responses that carried events: fewer than the events when the server
    /// batches several into one.
    responses: u64,
    created: Histogram<u64>,
    latencies: Histogram<u64>,
}

/// What all the streams saw, merged.
struct Received {
    events: u64,
    responses: u64,
    created: Histogram<u64>,
    latencies: Histogram<u64>,
}

impl Streams {
    /// Spawns one task per plan (a stream with a watcher per key index) and
    /// waits until every stream has created its watchers or given up, so
    /// that no put can come before a watcher exists.
    async fn open(
        target: &Target,
        keys: Arc<Vec<Vec<u8>>>,
        options: WatchOptions,
        measure: Measure,
        plans: impl Iterator<Item = Vec<usize>>,
        watchers: u64,
    ) -> Result<Self, String> {
        let conns = load::connections(&target.endpoints, target.conns).await.map_err(|e| e.to_string())?;
        let tally = Arc::new(Tally::new().map_err(|e| e.to_string())?);
        let received = Arc::new(AtomicU64::new(0));
        let created = Arc::new(AtomicU64::new(0));
        let (goal, goal_rx) = signal::channel(None);
        let (ready, mut ready_rx) = mpsc::channel(1);
        let began = Instant::now();
        let ticker = Ticker::start(created.clone(), crate::progress(watchers, target.quiet));
        let plans: Vec<Vec<usize>> = plans.collect();
        let tasks = plans
            .iter()
            .enumerate()
            .map(|(s, plan)| {
                let task = StreamTask {
                    keys: keys.clone(),
                    plan: plan.clone(),
                    options: options.clone(),
                    measure: measure.clone(),
                    tally: tally.clone(),
                    created: created.clone(),
                    received: received.clone(),
                };
                let (client, ready, goal) = (conns[s % conns.len()].clone(), ready.clone(), goal_rx.clone());
                tokio::spawn(task.run(client, ready, goal))
            })
            .collect();
        drop(ready);
        // Every task reports once; `None` when all have (or died).
        while ready_rx.recv().await.is_some() {}
        let opened_in = began.elapsed();
        drop(ticker);
        if !target.quiet {
            eprintln!();
        }
        Ok(Self { plans, tasks, goal, received, tally, opened_in })
    }

    /// The watchers planned (some may have failed to be created).
    fn watchers(&self) -> u64 {
        self.plans.iter().map(|p| p.len() as u64).sum()
    }

    /// A progress bar over the events received, out of `expected`.
    fn ticker(&self, expected: u64, quiet: bool) -> Ticker<impl Fn(u64) + Send + Sync + 'static> {
        Ticker::start(self.received.clone(), crate::progress(expected, quiet))
    }

    /// Tells the streams what they should get (`puts` per key) and waits for
    /// them; a watcher's missing or surplus events count as errors.
    async fn finish(self, puts: Vec<u64>) -> Received {
        let puts = Arc::new(puts);
        let deadline = tokio::time::Instant::now() + EVENT_TIMEOUT;
        let _ = self.goal.send(Some(Goal { puts: puts.clone(), deadline }));
        let mut merged = Received {
            events: 0,
            responses: 0,
            created: self.tally.histogram(),
            latencies: self.tally.histogram(),
        };
        let (mut missing, mut surplus) = (0, 0);
        for (task, plan) in self.tasks.into_iter().zip(&self.plans) {
            let report = match task.await {
                Ok(report) => report,
                Err(e) => {
                    self.tally.errors(plan.len() as u64, format!("a watch stream task died: {e}"));
                    continue;
                }
            };
            merged.responses += report.responses;
            let _ = merged.created.add(&report.created);
            let _ = merged.latencies.add(&report.latencies);
            let Some(got) = report.got else { continue };
            for (&k, &n) in plan.iter().zip(&got) {
                let want = puts.get(k).copied().unwrap_or(0);
                missing += want.saturating_sub(n);
                surplus += n.saturating_sub(want);
                merged.events += n;
            }
        }
        let tally = &self.tally;
        tally.errors(
            missing,
            format!("{missing} events never arrived (waited {EVENT_TIMEOUT:?} after the last put)"),
        );
        tally.errors(surplus, format!("{surplus} events more than the puts made"));
        merged
    }
}

/// One watch stream: its watchers, and what it shares with the others.
struct StreamTask {
    keys: Arc<Vec<Vec<u8>>>,
    /// The key index of each watcher.
    plan: Vec<usize>,
    options: WatchOptions,
    measure: Measure,
    tally: Arc<Tally>,
    /// Watchers created so far over all streams, for the progress bar.
    created: Arc<AtomicU64>,
    received: Arc<AtomicU64>,
}

impl StreamTask {
    async fn run(
        self,
        mut client: Client,
        ready: mpsc::Sender<()>,
        goal: signal::Receiver<Option<Goal>>,
    ) -> StreamReport {
        let mut report = StreamReport {
            got: None,
            responses: 0,
            created: self.tally.histogram(),
            latencies: self.tally.histogram(),
        };
        let opened = self.create(&mut client, &mut report.created).await;
        let _ = ready.send(()).await;
        drop(ready);
        match opened {
            Ok((stream, by_id)) => {
                self.receive(stream, by_id, goal, &mut report).await;
            }
            Err((created, why)) => {
                // The watchers never created are this stream's errors; the
                // stream is gone, and with it the ones that were, so its
                // events are not counted at all.
                self.tally.errors((self.plan.len() - created) as u64, why);
            }
        }
        report
    }

    /// Opens the stream and creates the watchers one at a time, timing each
    /// from its create request to its `created` response. The map is watch
    /// id → watcher; the error says how many were created before it.
    async fn create(
        &self,
        client: &mut Client,
        latencies: &mut Histogram<u64>,
    ) -> Result<(WatchStream, HashMap<i64, usize>), (usize, String)> {
        let mut by_id = HashMap::new();
        let mut stream: Option<WatchStream> = None;
        for (w, &k) in self.plan.iter().enumerate() {
            let began = Instant::now();
            let (key, options) = (self.keys[k].clone(), Some(self.options.clone()));
            // The first create request goes out with the stream itself.
            let send = async {
                match stream.as_mut() {
                    Some(stream) => stream.watch(key, options).await,
                    None => client.watch(key, options).await.map(|opened| stream = Some(opened)),
                }
            };
            match tokio::time::timeout(REQUEST_TIMEOUT, send).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err((w, format!("watch create request: {e}"))),
                Err(_) => {
                    return Err((w, format!("opening a watch stream: no answer within {REQUEST_TIMEOUT:?}")));
                }
            }
            let Some(opened) = stream.as_mut() else { return Err((w, "no watch stream".into())) };
            let id = match tokio::time::timeout(REQUEST_TIMEOUT, created(opened)).await {
                Ok(Ok(id)) => id,
                Ok(Err(why)) => return Err((w, why)),
                Err(_) => return Err((w, format!("no created response within {REQUEST_TIMEOUT:?}"))),
            };
            if by_id.insert(id, w).is_some() {
                return Err((w, format!("watch id {id} created twice on one stream")));
            }
            let _ = latencies.record(load::micros(began.elapsed()));
            self.created.fetch_add(1, Ordering::Relaxed);
        }
        stream.map(|s| (s, by_id)).ok_or_else(|| (0, "a stream with no watchers".into()))
    }

    /// Reads events until every watcher has had one per put to its key (once
    /// the puts are over and that is known) or the goal's deadline passes.
    /// Fills in `report`: the events each watcher got, their latencies.
    async fn receive(
        &self,
        mut stream: WatchStream,
        by_id: HashMap<i64, usize>,
        mut goal_rx: signal::Receiver<Option<Goal>>,
        report: &mut StreamReport,
    ) {
        let mut got = vec![0u64; self.plan.len()];
        let mut goal: Option<Goal> = None;
        // Events still owed, once the goal is known.
        let mut owed = u64::MAX;
        while owed > 0 {
            let deadline = goal.as_ref().map(|g| g.deadline);
            let timeout = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now));
            tokio::select! {
                changed = goal_rx.changed(), if goal.is_none() => {
                    if changed.is_err() {
                        break; // the run is over without a goal: nothing to wait for
                    }
                    goal = goal_rx.borrow_and_update().clone();
                    if let Some(g) = &goal {
                        owed = self.plan.iter().zip(&got).map(|(&k, &n)| g.wants(k).saturating_sub(n)).sum();
                    }
                }
                () = timeout, if deadline.is_some() => break,
                message = stream.message() => {
                    let received = Instant::now();
                    let response = match message {
                        Ok(Some(response)) => response,
                        Ok(None) => {
                            self.tally.sample("the server closed a watch stream");
                            break;
                        }
                        Err(e) => {
                            self.tally.sample(format!("watch stream: {e}"));
                            break;
                        }
                    };
                    if response.canceled() {
                        self.tally.sample(format!("watcher canceled: {:?}", response.cancel_reason()));
                    }
                    if response.events().is_empty() {
                        continue; // progress notifications, cancellations
                    }
                    let Some(&w) = by_id.get(&response.watch_id()) else {
                        let unknown = response.events().len() as u64;
                        self.tally.errors(unknown, "events for a watch id never created");
                        continue;
                    };
                    report.responses += 1;
                    let before = got[w];
                    for event in response.events() {
                        if let Measure::Latency(clock) = &self.measure {
                            match clock.since_sent(event, received) {
                                Ok(latency) => {
                                    let _ = report.latencies.record(load::micros(latency));
                                }
                                Err(why) => {
                                    self.tally.error(why);
                                    continue;
                                }
                            }
                        }
                        got[w] += 1;
                        if let Some(g) = &goal && got[w] <= g.wants(self.plan[w]) {
                            owed = owed.saturating_sub(1);
                        }
                    }
                    // Once per response, not per event: the counter is
                    // shared by every stream.
                    self.received.fetch_add(got[w] - before, Ordering::Relaxed);
                }
            }
        }
        report.got = Some(got);
    }
}

/// Waits for the `created` response to the create request just sent and
/// returns its watch id. Nothing else can come meanwhile but progress
/// notifications: the puts start once every watcher exists.
async fn created(stream: &mut WatchStream) -> Result<i64, String> {
    loop {
        match stream.message().await {
            Ok(Some(response)) if response.created() => {
                if response.canceled() {
                    return Err(format!("watch create refused: {:?}", response.cancel_reason()));
                }
                return Ok(response.watch_id());
            }
            Ok(Some(_)) => continue,
            Ok(None) => return Err("the server closed the watch stream".into()),
            Err(e) => return Err(format!("watch stream: {e}")),
        }
    }
}
