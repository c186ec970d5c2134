//! One test run: start the cluster, run the clients and the nemesis side by
//! side for the given time, stop, check, and write the results directory.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::checker;
use crate::cluster::{Cluster, ClusterError, Target};
use crate::history::Record;
use crate::nemesis::{self, Fault, Schedule};
use crate::proxy::Network;
use crate::recorder::{Recorder, Rng};
use crate::summary::Summary;
use crate::workload;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub nodes: usize,
    pub time: Duration,
    pub faults: Vec<Fault>,
    pub schedule: Schedule,
    /// Register clients and keys.
    pub clients: u32,
    pub keys: u32,
    /// List-append clients, and keys per generation.
    pub txn_clients: u32,
    pub txn_keys: u32,
    pub lease_clients: u32,
    /// Watchers on the workload keys' prefix.
    pub watchers: u32,
    /// Watchers ask for progress notifications (etcd before 3.4.24 may
    /// send one ahead of events still queued: etcd issue 15220).
    pub progress_requests: bool,
    /// Auth on, peer TLS.
    pub security: crate::cluster::Security,
    pub seed: u64,
    /// The results directory (created; the cluster's data and logs go in
    /// `cluster/` inside it).
    pub out: PathBuf,
    /// Print a progress line to stderr every second.
    pub progress: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("writing results to {0}: {1}")]
    Results(String, std::io::Error),
}

pub async fn run(config: &RunConfig) -> Result<Summary, RunError> {
    let results = |e| RunError::Results(config.out.display().to_string(), e);
    std::fs::create_dir_all(&config.out).map_err(results)?;
    let net = Arc::new(Network::default());
    let mut cluster = Cluster::start(
        config.target.clone(),
        config.nodes,
        &config.out.join("cluster"),
        net,
        config.security,
    )
    .await?;
    let rec = Recorder::new();
    let until = Instant::now() + config.time;
    let endpoints = cluster.client_urls();
    let endpoint = |i: u32| endpoints[i as usize % endpoints.len()].clone();
    let seed = |n: u64| config.seed.wrapping_mul(31).wrapping_add(n + 1);
    let mut clients: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    for p in 0..config.clients {
        let (n, keys) = (config.clients, config.keys);
        let task = workload::register::client(endpoint(p), p, n, keys, until, rec.clone(), seed(p.into()));
        clients.push(tokio::spawn(task));
    }
    for p in 0..config.txn_clients {
        let (n, keys) = (config.txn_clients, config.txn_keys);
        let task =
            workload::append::client(endpoint(p), p, n, keys, until, rec.clone(), seed(1000 + u64::from(p)));
        clients.push(tokio::spawn(task));
    }
    for p in 0..config.lease_clients {
        let task = workload::lease::client(endpoint(p + 1), p, until, rec.clone(), seed(2000 + u64::from(p)));
        clients.push(tokio::spawn(task));
    }
    let progress = config.progress.then(|| spawn_progress(rec.clone(), config.time));
    let watchers: Vec<_> = (0..config.watchers)
        .map(|w| {
            let task = workload::watch::watcher(endpoint(w), w, config.progress_requests, until, rec.clone());
            tokio::spawn(task)
        })
        .collect();
    let mut rng = Rng::new(config.seed);
    let mut reference = workload::watch::Reference::default();
    let injected =
        nemesis::run(&mut cluster, &config.faults, config.schedule, until, &rec, &mut rng, &mut reference)
            .await;
    for task in clients.into_iter().chain(watchers) {
        let _ = task.await;
    }
    final_reads(config, &endpoints, &mut reference, &rec).await;
    if let Some(progress) = progress {
        progress.abort();
        eprintln!();
    }
    cluster.stop();
    injected?;

    let history = rec.snapshot();
    write_history(&config.out, &history).map_err(results)?;
    let summary = Summary {
        target: config.target.name(),
        seed: config.seed,
        seconds: config.time.as_secs(),
        faults: config.faults.iter().map(|f| f.name().to_string()).collect(),
        fault_windows: history.iter().filter(|r| matches!(r, Record::Fault(_))).count(),
        verdicts: checker::check_all(&history),
    };
    let json = serde_json::to_string_pretty(&summary).map_err(|e| results(std::io::Error::other(e)))?;
    std::fs::write(config.out.join("summary.json"), json).map_err(results)?;
    std::fs::write(config.out.join("report.html"), crate::report::html(&summary, &history))
        .map_err(results)?;
    std::fs::write(config.out.join("report.svg"), crate::report::svg(&summary, &history)).map_err(results)?;
    Ok(summary)
}

/// After the load: the reads the checkers compare against (retried on
/// every member: the cluster has just healed from the last fault).
async fn final_reads(
    config: &RunConfig,
    endpoints: &[String],
    reference: &mut workload::watch::Reference,
    rec: &Recorder,
) {
    let deadline = Instant::now() + FINAL_READS_WITHIN;
    let mut attempts = endpoints.iter().cycle();
    let mut pending = (config.watchers > 0, config.txn_clients > 0, config.lease_clients > 0);
    while pending != (false, false, false) && Instant::now() < deadline {
        let Some(endpoint) = attempts.next() else { return };
        if pending.0 {
            pending.0 = reference.read_to_current(endpoint, rec).await.is_err();
        }
        if pending.1 {
            pending.1 = workload::append::final_read(endpoint, rec).await.is_err();
        }
        if pending.2 {
            let within = LEASES_GONE_WITHIN;
            pending.2 = workload::lease::final_read(endpoint, within, rec).await.is_err();
        }
        if pending != (false, false, false) {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    if pending != (false, false, false) {
        eprintln!(
            "rtcd-jepsen: the final reads failed for {FINAL_READS_WITHIN:?} (watch, append, lease: {pending:?})"
        );
    }
}

/// How long the final reads may take (each is retried on every member).
const FINAL_READS_WITHIN: Duration = Duration::from_secs(60);

/// After the load stops, every lease key must be gone within this: the
/// longest TTL the workload grants (5 s), plus a new leader's extension
/// (an election timeout plus the remaining TTL) and the revoke's commit.
const LEASES_GONE_WITHIN: Duration = Duration::from_secs(20);

fn write_history(dir: &std::path::Path, history: &[Record]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("history.jsonl"))?);
    for record in history {
        serde_json::to_writer(&mut out, record).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// "[ 12s/60s] ops 1234 (ok 1000, fail 20, info 3)" once a second.
fn spawn_progress(rec: Recorder, total: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let start = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let (mut ok, mut fail, mut info, mut faults) = (0, 0, 0, 0);
            rec.for_each(|r| match r {
                Record::Op(op) => match op.outcome {
                    crate::history::Outcome::Ok => ok += 1,
                    crate::history::Outcome::Fail => fail += 1,
                    crate::history::Outcome::Info => info += 1,
                },
                Record::Fault(_) => faults += 1,
                _ => {}
            });
            let done = start.elapsed().as_secs().min(total.as_secs());
            let width = 30;
            let filled = (done * width / total.as_secs().max(1)) as usize;
            eprint!(
                "\r[{}{}] {done:>3}s/{}s  ops {} (ok {ok}, fail {fail}, info {info})  faults {faults} ",
                "#".repeat(filled),
                " ".repeat(width as usize - filled.min(width as usize)),
                total.as_secs(),
                ok + fail + info,
            );
        }
    })
}
