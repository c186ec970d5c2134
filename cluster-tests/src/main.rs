//! `rtcd-jepsen`: run a fault-injection test against a local rtcd (or etcd)
//! cluster, or re-check a recorded history.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use rtcd_cluster_tests::cluster::Target;
use rtcd_cluster_tests::history::Record;
use rtcd_cluster_tests::nemesis::{Fault, Schedule};
use rtcd_cluster_tests::run::{RunConfig, run};

#[derive(Debug, Parser)]
#[command(name = "rtcd-jepsen", version, about = "Jepsen-style fault injection against rtcd or etcd")]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Start a cluster, run clients and faults, check the history.
    Run {
        /// rtcd or etcd (Debian's etcd-server, the control).
        #[arg(long, default_value = "rtcd")]
        target: String,
        /// The rtcd binary (default: `rtcd` next to this program).
        #[arg(long)]
        rtcd_bin: Option<PathBuf>,
        #[arg(long, default_value_t = 3)]
        nodes: usize,
        /// Seconds of load.
        #[arg(long, default_value_t = 60)]
        time: u64,
        /// Faults: names (partition-leader, partition-halves, partition-flapping, delay, drop-connections,
        /// kill-one, kill-leader, kill-minority, kill-all, pause-one, pause-leader, compact) or groups (all, partition,
        /// kill, pause, none), comma-separated.
        #[arg(long, default_value = "all")]
        nemesis: String,
        /// Seconds between faults, and of each fault.
        #[arg(long, default_value_t = 3)]
        quiet: u64,
        #[arg(long, default_value_t = 5)]
        fault_time: u64,
        #[arg(long, default_value_t = 10)]
        clients: u32,
        /// Watchers on the workload's keys (skipped with the compact fault).
        #[arg(long, default_value_t = 3)]
        watchers: u32,
        #[arg(long, default_value_t = 3)]
        keys: u32,
        #[arg(long)]
        seed: Option<u64>,
        /// Results directory (default: ./jepsen-results/<target>-<seed>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// No progress line.
        #[arg(long)]
        quiet_progress: bool,
    },
    /// Check a recorded history.jsonl again.
    Check { history: PathBuf },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rtcd-jepsen: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Commands::Check { history } => check(&history),
        Commands::Run {
            target,
            rtcd_bin,
            nodes,
            time,
            nemesis,
            quiet,
            fault_time,
            clients,
            watchers,
            keys,
            seed,
            out,
            quiet_progress,
        } => {
            let target = match target.as_str() {
                "rtcd" => Target::Rtcd(rtcd_bin.unwrap_or_else(default_rtcd)),
                "etcd" => Target::Etcd,
                other => return usage(&format!("unknown target {other:?} (rtcd or etcd)")),
            };
            let faults = match Fault::parse_list(&nemesis) {
                Ok(f) => f,
                Err(e) => return usage(&e),
            };
            let seed = seed.unwrap_or_else(|| {
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs())
            });
            let out =
                out.unwrap_or_else(|| PathBuf::from(format!("jepsen-results/{}-{seed}", target.name())));
            let config = RunConfig {
                target,
                nodes,
                time: Duration::from_secs(time),
                faults,
                schedule: Schedule {
                    quiet: Duration::from_secs(quiet),
                    fault: Duration::from_secs(fault_time),
                },
                clients,
                watchers,
                keys,
                seed,
                out,
                progress: !quiet_progress,
            };
            report(runtime.block_on(run(&config)), &config)
        }
    }
}

fn report(
    outcome: Result<rtcd_cluster_tests::run::Summary, rtcd_cluster_tests::run::RunError>,
    config: &RunConfig,
) -> ExitCode {
    let summary = match outcome {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rtcd-jepsen: {e}");
            return ExitCode::from(2);
        }
    };
    let r = &summary.register;
    println!(
        "{} seed {}: {} ops (ok {}, fail {}, info {}), {} fault windows",
        summary.target,
        summary.seed,
        r.ok + r.fail + r.info,
        r.ok,
        r.fail,
        r.info,
        summary.fault_windows
    );
    for key in &r.keys {
        println!("  {}: {}", key.key, key.verdict);
        if let Some(why) = &key.explanation {
            println!("    {why}");
        }
    }
    if let Some(w) = &summary.watch {
        let verdict = if w.valid { "valid" } else { "INVALID" };
        println!(
            "  watch: {verdict} ({} watchers, {} events, history of {})",
            w.watchers, w.events, w.reference_events
        );
        for problem in w.problems.iter().take(20) {
            println!("    {problem}");
        }
    }
    println!("results: {}", config.out.display());
    match summary.valid() {
        Some(true) => {
            println!("VALID");
            ExitCode::SUCCESS
        }
        Some(false) => {
            println!("INVALID");
            ExitCode::from(1)
        }
        None => {
            println!("UNKNOWN");
            ExitCode::from(3)
        }
    }
}

fn check(path: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return usage(&format!("reading {}: {e}", path.display())),
    };
    let mut history = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        match serde_json::from_str::<Record>(line) {
            Ok(record) => history.push(record),
            Err(e) => return usage(&format!("{}:{}: {e}", path.display(), n + 1)),
        }
    }
    let report = rtcd_cluster_tests::checker::check_registers(&history);
    println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    let watch = rtcd_cluster_tests::checker::watch::check(&history);
    println!("{}", serde_json::to_string_pretty(&watch).unwrap_or_default());
    match report.valid {
        _ if !watch.valid => ExitCode::from(1),
        Some(true) => ExitCode::SUCCESS,
        Some(false) => ExitCode::from(1),
        None => ExitCode::from(3),
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("rtcd-jepsen: {message}");
    ExitCode::from(2)
}

/// `rtcd` beside this binary (both are built into the same target dir).
fn default_rtcd() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    [dir.join("rtcd"), dir.join("../rtcd")]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("rtcd"))
}
