//! `rtcd-bench`: a load generator with the shape of etcd's `tools/benchmark`
//! (same global flags, subcommands and summary), so the same command line
//! measures rtcd and etcd side by side: `put`, `txn-put`, `range`, `watch`,
//! `watch-latency`, `lease-keepalive` and `kube` (kube-apiserver's pattern);
//! and `apiserver`, which measures a Kubernetes-style API server over HTTP.

mod apiserver;
mod kube;
mod kv;
mod lease;
mod load;
mod report;
mod watch;

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use clap::{Parser, Subcommand};

use load::Shape;

#[derive(Debug, Parser)]
#[command(name = "rtcd-bench", version, about = "etcd-style benchmark against rtcd or etcd")]
struct Cli {
    /// gRPC endpoints, comma-separated.
    #[arg(long, default_value = "127.0.0.1:2379", value_delimiter = ',')]
    endpoints: Vec<String>,
    /// Total number of gRPC connections.
    #[arg(long, default_value_t = 1)]
    conns: usize,
    /// Total number of concurrent clients (spread over the connections).
    #[arg(long, default_value_t = 1)]
    clients: usize,
    /// Send every request to the leader (found with Maintenance.Status).
    #[arg(long)]
    target_leader: bool,
    /// Print one JSON object instead of the text summary.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Puts keys.
    Put {
        #[command(flatten)]
        writes: Writes,
        /// Keys 0, 1, 2, ... (mod the key space) instead of random ones.
        #[arg(long)]
        sequential_keys: bool,
    },
    /// Transactions of `--txn-ops` puts each.
    TxnPut {
        #[command(flatten)]
        writes: Writes,
        /// Puts per transaction.
        #[arg(long, default_value_t = 1)]
        txn_ops: u64,
    },
    /// Reads KEY, or the range [KEY, END).
    Range {
        key: String,
        end: Option<String>,
        /// l (linearizable) or s (serializable).
        #[arg(long, default_value = "l")]
        consistency: String,
        #[arg(long, default_value_t = 10_000)]
        total: u64,
        #[arg(long, default_value_t = 0)]
        rate: u64,
    },
    /// Watch streams × watchers per stream, then puts to the watched keys.
    Watch(watch::WatchArgs),
    /// Latency from sending a put to its event at every watcher.
    WatchLatency(watch::LatencyArgs),
    /// Lease keep-alives over long-lived streams.
    LeaseKeepalive(lease::Args),
    /// kube-apiserver's storage pattern: create-if-absent, GuaranteedUpdate,
    /// paged lists, watches with prev_kv and progress requests.
    Kube(kube::Args),
    /// A Kubernetes-style API server over HTTP (`--server`): creates, lists
    /// and watch fanout of ConfigMaps.
    Apiserver(apiserver::Args),
}

/// The flags `put` and `txn-put` share (etcd's names and defaults).
#[derive(Debug, clap::Args)]
struct Writes {
    #[arg(long, default_value_t = 10_000)]
    total: u64,
    #[arg(long, default_value_t = 8)]
    key_size: usize,
    #[arg(long, default_value_t = 8)]
    val_size: usize,
    #[arg(long, default_value_t = 1)]
    key_space_size: u64,
    /// Requests per second over all clients (0: no limit).
    #[arg(long, default_value_t = 0)]
    rate: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&e.to_string()),
    };
    match runtime.block_on(bench(cli)) {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("rtcd-bench: {message}");
    ExitCode::from(2)
}

async fn bench(cli: Cli) -> Result<ExitCode, String> {
    let endpoints =
        if cli.target_leader { vec![leader(&cli.endpoints).await?] } else { cli.endpoints.clone() };
    let quiet = cli.json;
    let target = Target { endpoints: endpoints.clone(), conns: cli.conns, clients: cli.clients, quiet };
    let outcome = match cli.command {
        Command::Put {
            writes: Writes { total, key_size, val_size, key_space_size, rate },
            sequential_keys,
        } => {
            let value = Bytes::from(vec![b'v'; val_size]);
            let put = move |client: kv::Kv, n: u64| {
                let index = if sequential_keys { n } else { mix(n) } % key_space_size.max(1);
                kv::put(client, key_bytes(index, key_size).into(), value.clone())
            };
            target.run_kv(total, rate, put).await
        }
        Command::TxnPut { writes: Writes { total, key_size, val_size, key_space_size, rate }, txn_ops } => {
            if txn_ops > key_space_size {
                return Err(format!("--txn-ops {txn_ops} needs at least as many keys (--key-space-size)"));
            }
            let value = Bytes::from(vec![b'v'; val_size]);
            let txn = move |client: kv::Kv, n: u64| {
                // Consecutive keys from a pseudo-random start: distinct
                // within the transaction (a Txn may not put one key twice).
                let start = mix(n);
                let keys = (0..txn_ops.max(1))
                    .map(|i| key_bytes(start.wrapping_add(i) % key_space_size.max(1), key_size).into())
                    .collect();
                kv::txn_put(client, keys, value.clone())
            };
            target.run_kv(total, rate, txn).await
        }
        Command::Range { key, end, consistency, total, rate } => {
            let serializable = match consistency.as_str() {
                "l" => false,
                "s" => true,
                other => return Err(format!("--consistency {other:?}: l or s")),
            };
            let (key, end) = (Bytes::from(key), Bytes::from(end.unwrap_or_default()));
            let range = move |client: kv::Kv, _| kv::range(client, key.clone(), end.clone(), serializable);
            target.run_kv(total, rate, range).await
        }
        Command::Watch(args) => watch::watch(&target, args).await,
        Command::WatchLatency(args) => watch::latency(&target, args).await,
        Command::LeaseKeepalive(args) => lease::keepalive(&target, args).await,
        Command::Kube(args) => kube::run(&target, args).await,
        Command::Apiserver(args) => apiserver::run(&target, args).await,
    }?;
    let summary = report::summarize(&outcome);
    if cli.json {
        println!("{}", serde_json::to_string(&summary).map_err(|e| e.to_string())?);
    } else {
        eprintln!();
        println!("{}", report::text(&summary));
    }
    Ok(if summary.errors == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Where and how wide the load goes, for the subcommands in their own
/// modules (the global flags, with `--target-leader` already resolved).
#[derive(Debug, Clone)]
pub struct Target {
    pub endpoints: Vec<String>,
    pub conns: usize,
    pub clients: usize,
    /// `--json`: no progress bar.
    pub quiet: bool,
}

impl Target {
    /// The runner's shape for `total` requests at `rate` per second.
    pub fn shape(&self, total: u64, rate: u64) -> Shape {
        Shape { endpoints: self.endpoints.clone(), conns: self.conns, clients: self.clients, total, rate }
    }

    /// `total` KV requests at `rate` per second over `kv`'s connections.
    async fn run_kv<F, Fut>(&self, total: u64, rate: u64, request: F) -> Result<load::Outcome, String>
    where
        F: Fn(kv::Kv, u64) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), tonic::Status>> + Send,
    {
        let conns = kv::connect(&self.endpoints, self.conns).await.map_err(|e| e.to_string())?;
        load::run_on(&self.shape(total, rate), conns, request, progress(total, self.quiet))
            .await
            .map_err(|e| e.to_string())
    }
}

/// A progress bar on stderr (none with `--json`).
pub fn progress(total: u64, quiet: bool) -> impl Fn(u64) + Send + Sync + 'static {
    move |done| {
        if quiet {
            return;
        }
        let width = 40;
        let filled = (done.min(total) * width / total.max(1)) as usize;
        eprint!("\r[{}{}] {done}/{total}", "#".repeat(filled), " ".repeat(width as usize - filled));
        let _ = std::io::stderr().flush();
    }
}

/// The endpoint of the member that leads.
async fn leader(endpoints: &[String]) -> Result<String, String> {
    let mut leader_id = 0;
    let mut by_id = Vec::new();
    for endpoint in endpoints {
        let Ok(mut clients) = load::connections(std::slice::from_ref(endpoint), 1).await else { continue };
        let Some(client) = clients.first_mut() else { continue };
        let status = tokio::time::timeout(Duration::from_secs(5), client.status()).await;
        let Ok(Ok(status)) = status else { continue };
        leader_id = status.leader();
        by_id.push((status.header().map_or(0, |h| h.member_id()), endpoint.clone()));
    }
    by_id
        .into_iter()
        .find(|(id, _)| *id == leader_id && *id != 0)
        .map(|(_, e)| e)
        .ok_or_else(|| format!("no endpoint of {endpoints:?} is the leader"))
}

/// Spreads request numbers over the key space (splitmix64), so "random"
/// keys replay identically run after run.
fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `index` as a key of `size` bytes: its little-endian bytes, zero-padded
/// (etcd's benchmark writes a varint there; either way one key per index).
fn key_bytes(index: u64, size: usize) -> Vec<u8> {
    let mut key = vec![0u8; size.max(1)];
    for (b, byte) in key.iter_mut().zip(index.to_le_bytes()) {
        *b = byte;
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_requested_size_and_differ_by_index() {
        assert_eq!(key_bytes(1, 8), [1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(key_bytes(258, 3), [2, 1, 0]);
        assert_ne!(key_bytes(mix(1) % 1000, 8), key_bytes(mix(2) % 1000, 8));
    }
}
