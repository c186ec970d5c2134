//! Runs one workload: `clients` concurrent clients over `conns` gRPC
//! connections issue requests until `total` have been made, optionally at a
//! fixed overall `rate`; every request's latency goes into one histogram.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions};
use hdrhistogram::Histogram;

/// How the load is spread.
#[derive(Debug, Clone)]
pub struct Shape {
    pub endpoints: Vec<String>,
    pub conns: usize,
    pub clients: usize,
    pub total: u64,
    /// Requests per second over all clients; 0 = as fast as possible.
    pub rate: u64,
}

/// What a run measured.
#[derive(Debug)]
pub struct Outcome {
    /// Successful requests' latencies, in microseconds.
    pub latencies: Histogram<u64>,
    pub errors: u64,
    /// The first few distinct error texts.
    pub error_samples: Vec<String>,
    pub elapsed: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("connecting to {0:?}: {1}")]
    Connect(Vec<String>, etcd_client::Error),
    #[error("connecting to {0}: {1}")]
    Dial(String, String),
    #[error("histogram: {0}")]
    Histogram(String),
}

/// Opens `conns` connections, each over every endpoint (the client
/// balances across them).
pub async fn connections(endpoints: &[String], conns: usize) -> Result<Vec<Client>, LoadError> {
    let options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(5));
    let mut clients = Vec::new();
    for _ in 0..conns.max(1) {
        let client = Client::connect(endpoints, Some(options.clone()))
            .await
            .map_err(|e| LoadError::Connect(endpoints.to_vec(), e))?;
        clients.push(client);
    }
    Ok(clients)
}

/// Runs `request(client, n)` for n in 0..total across the clients, over
/// `etcd-client` connections; `tick` is called with the number of requests
/// done so far, now and then.
pub async fn run<F, Fut>(
    shape: &Shape,
    request: F,
    tick: impl Fn(u64) + Send + Sync + 'static,
) -> Result<Outcome, LoadError>
where
    F: Fn(Client, u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), etcd_client::Error>> + Send,
{
    let conns = connections(&shape.endpoints, shape.conns).await?;
    run_on(shape, conns, request, tick).await
}

/// `run` over connections the caller made: client `c` uses `conns[c % len]`
/// (a clone per request, so a clone must be cheap).
pub async fn run_on<C, F, Fut, E>(
    shape: &Shape,
    conns: Vec<C>,
    request: F,
    tick: impl Fn(u64) + Send + Sync + 'static,
) -> Result<Outcome, LoadError>
where
    C: Clone + Send + 'static,
    F: Fn(C, u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send,
    E: std::fmt::Display,
{
    if conns.is_empty() {
        return Err(LoadError::Dial(format!("{:?}", shape.endpoints), "no connection".into()));
    }
    let histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3)
        .map_err(|e| LoadError::Histogram(e.to_string()))?;
    let shared = Arc::new(Shared {
        next: AtomicU64::new(0),
        done: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        histogram: Mutex::new(histogram),
        error_samples: Mutex::new(Vec::new()),
    });
    let request = Arc::new(request);
    let start = Instant::now();
    // Each client paces itself to its share of the rate.
    let interval =
        (shape.rate > 0).then(|| Duration::from_secs_f64(shape.clients as f64 / shape.rate as f64));
    let tick = Arc::new(tick);
    let progress = {
        let (shared, tick) = (shared.clone(), tick.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                tick(shared.done.load(Ordering::Relaxed));
            }
        })
    };
    let tasks: Vec<_> = (0..shape.clients.max(1))
        .map(|c| {
            let client = conns[c % conns.len()].clone();
            let (shared, request, total) = (shared.clone(), request.clone(), shape.total);
            tokio::spawn(async move { shared.client_loop(client, request.as_ref(), total, interval).await })
        })
        .collect();
    for task in tasks {
        let _ = task.await;
    }
    progress.abort();
    let elapsed = start.elapsed();
    tick(shared.done.load(Ordering::Relaxed));
    let latencies = shared.histogram.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let error_samples = shared.error_samples.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(Outcome { latencies, errors: shared.errors.load(Ordering::Relaxed), error_samples, elapsed })
}

struct Shared {
    /// The next request number to hand out.
    next: AtomicU64,
    done: AtomicU64,
    errors: AtomicU64,
    histogram: Mutex<Histogram<u64>>,
    error_samples: Mutex<Vec<String>>,
}

impl Shared {
    async fn client_loop<C, F, Fut, E>(&self, client: C, request: &F, total: u64, interval: Option<Duration>)
    where
        C: Clone,
        F: Fn(C, u64) -> Fut,
        Fut: Future<Output = Result<(), E>>,
        E: std::fmt::Display,
    {
        let mut ticker = interval.map(tokio::time::interval);
        // Latencies are recorded locally and merged once: no lock per request.
        let mut local = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).ok();
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            if n >= total {
                break;
            }
            if let Some(t) = ticker.as_mut() {
                t.tick().await;
            }
            let began = Instant::now();
            match request(client.clone(), n).await {
                Ok(()) => {
                    let micros = began.elapsed().as_micros().clamp(1, 60_000_000) as u64;
                    if let Some(h) = local.as_mut() {
                        let _ = h.record(micros);
                    }
                }
                Err(e) => {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                    let mut samples = self.error_samples.lock().unwrap_or_else(|e| e.into_inner());
                    let text = e.to_string();
                    if samples.len() < 5 && !samples.contains(&text) {
                        samples.push(text);
                    }
                }
            }
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(h) = local {
            let _ = self.histogram.lock().unwrap_or_else(|e| e.into_inner()).add(h);
        }
    }
}

/// An empty latency histogram: 1 µs to 60 s, three significant digits.
pub fn histogram() -> Result<Histogram<u64>, LoadError> {
    Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).map_err(|e| LoadError::Histogram(e.to_string()))
}

/// `elapsed` in whole microseconds, within the histogram's bounds.
pub fn micros(elapsed: Duration) -> u64 {
    elapsed.as_micros().clamp(1, 60_000_000) as u64
}

/// Errors gathered by many tasks, for the subcommands that drive their own
/// streams instead of `run`'s request loop (their tasks keep latencies in
/// local histograms, made from `histogram()` here, and merge them once).
#[derive(Debug)]
pub struct Tally {
    empty: Histogram<u64>,
    errors: AtomicU64,
    error_samples: Mutex<Vec<String>>,
}

impl Tally {
    pub fn new() -> Result<Self, LoadError> {
        Ok(Self { empty: histogram()?, errors: AtomicU64::new(0), error_samples: Mutex::default() })
    }

    /// An empty histogram with `run`'s bounds.
    pub fn histogram(&self) -> Histogram<u64> {
        self.empty.clone()
    }

    /// Counts `count` errors, and `text` as a sample of why if any.
    pub fn errors(&self, count: u64, text: impl Into<String>) {
        if count > 0 {
            self.errors.fetch_add(count, Ordering::Relaxed);
            self.sample(text);
        }
    }

    pub fn error(&self, text: impl Into<String>) {
        self.errors(1, text);
    }

    /// Keeps `text` if it is one of the first few distinct ones, without
    /// counting an error: for causes whose effect is counted elsewhere (a
    /// broken stream, counted as the events it then misses).
    pub fn sample(&self, text: impl Into<String>) {
        let text = text.into();
        let mut samples = self.error_samples.lock().unwrap_or_else(|e| e.into_inner());
        if samples.len() < 5 && !samples.contains(&text) {
            samples.push(text);
        }
    }

    pub fn outcome(&self, elapsed: Duration, latencies: &Histogram<u64>) -> Outcome {
        Outcome {
            latencies: latencies.clone(),
            errors: self.errors.load(Ordering::Relaxed),
            error_samples: self.error_samples.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            elapsed,
        }
    }
}

/// Calls `tick` with `done`'s count every half second until dropped, and
/// once more then, so the bar ends on the final count.
pub struct Ticker<T: Fn(u64) + Send + Sync + 'static> {
    done: Arc<AtomicU64>,
    tick: Arc<T>,
    task: tokio::task::JoinHandle<()>,
}

impl<T: Fn(u64) + Send + Sync + 'static> Ticker<T> {
    pub fn start(done: Arc<AtomicU64>, tick: T) -> Self {
        let tick = Arc::new(tick);
        let task = {
            let (done, tick) = (done.clone(), tick.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    tick(done.load(Ordering::Relaxed));
                }
            })
        };
        Self { done, tick, task }
    }
}

impl<T: Fn(u64) + Send + Sync + 'static> Drop for Ticker<T> {
    fn drop(&mut self) {
        self.task.abort();
        (self.tick)(self.done.load(Ordering::Relaxed));
    }
}
