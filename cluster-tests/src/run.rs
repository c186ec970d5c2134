//! One test run: start the cluster, run the clients and the nemesis side by
//! side for the given time, stop, check, and write the results directory.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::checker::watch::WatchReport;
use crate::checker::{self, RegisterReport};
use crate::cluster::{Cluster, ClusterError, Target};
use crate::history::Record;
use crate::nemesis::{self, Fault, Schedule};
use crate::proxy::Network;
use crate::recorder::{Recorder, Rng};
use crate::workload;

#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: Target,
    pub nodes: usize,
    pub time: Duration,
    pub faults: Vec<Fault>,
    pub schedule: Schedule,
    pub clients: u32,
    /// Watchers on the register keys (not run with the compaction fault:
    /// they replay from revision 1).
    pub watchers: u32,
    pub keys: u32,
    pub seed: u64,
    /// The results directory (created; the cluster's data and logs go in
    /// `cluster/` inside it).
    pub out: PathBuf,
    /// Print a progress line to stderr every second.
    pub progress: bool,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    pub target: &'static str,
    pub seed: u64,
    pub seconds: u64,
    pub faults: Vec<String>,
    pub fault_windows: usize,
    pub register: RegisterReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchReport>,
}

impl Summary {
    /// `Some(true)`: every checker found the history valid.
    pub fn valid(&self) -> Option<bool> {
        match (&self.register.valid, &self.watch) {
            (_, Some(w)) if !w.valid => Some(false),
            (valid, _) => *valid,
        }
    }
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
    let mut cluster =
        Cluster::start(config.target.clone(), config.nodes, &config.out.join("cluster"), net).await?;
    let rec = Recorder::new();
    let until = Instant::now() + config.time;
    let endpoints = cluster.client_urls();
    let clients: Vec<_> = (0..config.clients)
        .map(|p| {
            let endpoint = endpoints[p as usize % endpoints.len()].clone();
            let seed = config.seed.wrapping_mul(31).wrapping_add(u64::from(p) + 1);
            tokio::spawn(workload::register::client(
                endpoint,
                p,
                config.clients,
                config.keys,
                until,
                rec.clone(),
                seed,
            ))
        })
        .collect();
    let progress = config.progress.then(|| spawn_progress(rec.clone(), config.time));
    let watching = config.watchers > 0 && !config.faults.contains(&Fault::Compact);
    let watchers: Vec<_> = (0..if watching { config.watchers } else { 0 })
        .map(|w| {
            let endpoint = endpoints[w as usize % endpoints.len()].clone();
            tokio::spawn(workload::watch::watcher(endpoint, w, until, rec.clone()))
        })
        .collect();
    let mut rng = Rng::new(config.seed);
    let injected = nemesis::run(&mut cluster, &config.faults, config.schedule, until, &rec, &mut rng).await;
    for task in clients.into_iter().chain(watchers) {
        let _ = task.await;
    }
    if watching {
        let reference = workload::watch::reference(&endpoints[0], crate::history::REFERENCE, &rec).await;
        if let Err(e) = reference {
            eprintln!("rtcd-jepsen: reading the reference history: {e}");
        }
    }
    if let Some(progress) = progress {
        progress.abort();
        eprintln!();
    }
    cluster.stop();
    injected?;

    let history = rec.snapshot();
    write_history(&config.out, &history).map_err(results)?;
    let register = checker::check_registers(&history);
    let watch = watching.then(|| checker::watch::check(&history));
    let summary = Summary {
        target: config.target.name(),
        seed: config.seed,
        seconds: config.time.as_secs(),
        faults: config.faults.iter().map(|f| f.name().to_string()).collect(),
        fault_windows: history.iter().filter(|r| matches!(r, Record::Fault(_))).count(),
        register,
        watch,
    };
    let json = serde_json::to_string_pretty(&summary).map_err(|e| results(std::io::Error::other(e)))?;
    std::fs::write(config.out.join("summary.json"), json).map_err(results)?;
    std::fs::write(config.out.join("report.html"), crate::report::html(&summary, &history))
        .map_err(results)?;
    Ok(summary)
}

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
            let history = rec.snapshot();
            let (mut ok, mut fail, mut info, mut faults) = (0, 0, 0, 0);
            for r in &history {
                match r {
                    Record::Op(op) => match op.outcome {
                        crate::history::Outcome::Ok => ok += 1,
                        crate::history::Outcome::Fail => fail += 1,
                        crate::history::Outcome::Info => info += 1,
                    },
                    Record::Fault(_) => faults += 1,
                    Record::Watch(_) => {}
                }
            }
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
