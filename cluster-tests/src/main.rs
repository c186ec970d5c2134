//! `rtcd-jepsen`: run a fault-injection test against a local rtcd (or etcd)
//! cluster, or re-check a recorded history.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use rtcd_cluster_tests::checker::Verdicts;
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
        /// Faults: names (partition-leader, partition-halves, partition-bridge, partition-flapping, delay,
        /// drop-connections, kill-one, kill-leader, kill-leader-fast-restart, kill-minority, kill-all, pause-one,
        /// pause-leader, compact, membership) or groups (all, partition, kill, pause, none), comma-separated.
        #[arg(long, default_value = "all")]
        nemesis: String,
        /// Seconds between faults, and of each fault.
        #[arg(long, default_value_t = 3)]
        quiet: u64,
        #[arg(long, default_value_t = 5)]
        fault_time: u64,
        /// Register clients (read, write, compare-and-set).
        #[arg(long, default_value_t = 10)]
        clients: u32,
        /// Register keys.
        #[arg(long, default_value_t = 3)]
        keys: u32,
        /// List-append transaction clients.
        #[arg(long, default_value_t = 4)]
        txn_clients: u32,
        /// List-append keys per 10-second generation.
        #[arg(long, default_value_t = 6)]
        txn_keys: u32,
        /// Lease clients.
        #[arg(long, default_value_t = 2)]
        lease_clients: u32,
        /// Watchers on all workload keys.
        #[arg(long, default_value_t = 3)]
        watchers: u32,
        /// Watchers ask for progress notifications (true/false). etcd before 3.4.24 can answer one ahead of
        /// events it has not sent yet (etcd issue 15220), which the watch checker reports.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        progress_requests: bool,
        /// Turn auth on; every client authenticates as root.
        #[arg(long)]
        auth: bool,
        /// Peer links over TLS, peer certificates required (made with openssl).
        #[arg(long)]
        peer_tls: bool,
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
            keys,
            txn_clients,
            txn_keys,
            lease_clients,
            watchers,
            progress_requests,
            auth,
            peer_tls,
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
                keys,
                txn_clients,
                txn_keys,
                lease_clients,
                watchers,
                progress_requests,
                security: rtcd_cluster_tests::cluster::Security { auth, peer_tls },
                seed,
                out,
                progress: !quiet_progress,
            };
            report(runtime.block_on(run(&config)), &config)
        }
    }
}

fn report(
    outcome: Result<rtcd_cluster_tests::summary::Summary, rtcd_cluster_tests::run::RunError>,
    config: &RunConfig,
) -> ExitCode {
    let summary = match outcome {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rtcd-jepsen: {e}");
            return ExitCode::from(2);
        }
    };
    let r = &summary.verdicts.register;
    println!(
        "{} seed {}: {} register ops (ok {}, fail {}, info {}), {} fault windows",
        summary.target,
        summary.seed,
        r.ok + r.fail + r.info,
        r.ok,
        r.fail,
        r.info,
        summary.fault_windows
    );
    print_verdicts(&summary.verdicts);
    println!("results: {}", config.out.display());
    exit_code(summary.valid())
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
    let verdicts = rtcd_cluster_tests::checker::check_all(&history);
    println!("{}", serde_json::to_string_pretty(&verdicts).unwrap_or_default());
    print_verdicts(&verdicts);
    exit_code(verdicts.valid())
}

/// One line per checker, with the anomalies found.
fn print_verdicts(v: &Verdicts) {
    let word = |valid: bool| if valid { "valid" } else { "INVALID" };
    for key in &v.register.keys {
        println!("  {}: {}", key.key, key.verdict);
        if let Some(why) = &key.explanation {
            println!("    {why}");
        }
    }
    if let Some(a) = &v.append {
        println!(
            "  list-append: {} ({} committed, {} aborted, {} unknown; {} keys, {} dependencies)",
            word(a.valid),
            a.ok,
            a.fail,
            a.info,
            a.keys,
            a.edges
        );
        for anomaly in a.anomalies.iter().take(20) {
            println!("    {}: {}", anomaly.kind, anomaly.explanation);
        }
    }
    if let Some(l) = &v.lease {
        println!(
            "  lease: {} ({} leases, {} reads, {} keep-alives, {} revoked)",
            word(l.valid),
            l.leases,
            l.reads,
            l.keep_alives,
            l.revoked
        );
        for problem in l.problems.iter().take(20) {
            println!("    {problem}");
        }
    }
    if let Some(w) = &v.watch {
        println!(
            "  watch: {} ({} watchers, {} events, {} progress notifications, history of {})",
            word(w.valid),
            w.watchers,
            w.events,
            w.progress_notifications,
            w.reference_events
        );
        for problem in w.problems.iter().take(20) {
            println!("    {problem}");
        }
    }
}

fn exit_code(valid: Option<bool>) -> ExitCode {
    match valid {
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
