//! Load on rtcd and on real etcd, same machine, same load, same cluster
//! size: puts/s with 1 and with many concurrent clients, and ranges/s with
//! 100 clients (linearizable and serializable single-key gets). Clients are
//! spread over every member. Prints one line per workload with both
//! servers' throughput, latency and the ratio.
//!
//! `cargo bench --workspace --bench kv_load` (release build). Environment:
//! `RTCD_LOAD_SECS` per workload (default 10), `RTCD_LOAD_MEMBERS` (1 or 3,
//! default 1; with 3 the many-clients put uses 1000 clients). Under
//! `cargo test` it runs every workload for a moment as a smoke test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/it/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use harness::{Kind, start, start_cluster};
use rtcd_proto::etcdserverpb::{PutRequest, RangeRequest, kv_client::KvClient};
use tokio::sync::Mutex;
use tonic::transport::Channel;

/// Connections shared by the clients, as an application pool would.
const CONNECTIONS: usize = 10;
const KEYS: usize = 10_000;
const VALUE_BYTES: usize = 256;

#[derive(Clone, Copy, Debug)]
enum Workload {
    Put { clients: usize },
    Range { clients: usize, serializable: bool },
}

struct Outcome {
    ops_per_sec: f64,
    p50: Duration,
    p99: Duration,
}

/// `CONNECTIONS` channels, spread over the members.
async fn channels(urls: &[String]) -> Vec<Channel> {
    let mut out = Vec::new();
    for i in 0..CONNECTIONS {
        let url = &urls[i % urls.len()];
        out.push(Channel::from_shared(url.clone()).unwrap().connect().await.unwrap());
    }
    out
}

fn key(i: usize) -> Bytes {
    Bytes::from(format!("bench/{:05}", i % KEYS))
}

async fn run(urls: &[String], workload: Workload, duration: Duration) -> Outcome {
    let channels = channels(urls).await;
    let clients = match workload {
        Workload::Put { clients } | Workload::Range { clients, .. } => clients,
    };
    let value = Bytes::from(vec![b'v'; VALUE_BYTES]);
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let mut kv = KvClient::new(channels[c % channels.len()].clone());
        let value = value.clone();
        let latencies = latencies.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            let mut i = c;
            while started.elapsed() < duration {
                let t = Instant::now();
                match workload {
                    Workload::Put { .. } => {
                        let put = PutRequest { key: key(i), value: value.clone(), ..Default::default() };
                        kv.put(put).await.unwrap();
                    }
                    Workload::Range { serializable, .. } => {
                        kv.range(RangeRequest { key: key(i), serializable, ..Default::default() })
                            .await
                            .unwrap();
                    }
                }
                mine.push(t.elapsed());
                i += clients;
            }
            latencies.lock().await.extend(mine);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let elapsed = started.elapsed();
    let mut all = std::mem::take(&mut *latencies.lock().await);
    all.sort_unstable();
    let at = |q: f64| all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1))).copied();
    Outcome {
        ops_per_sec: all.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.5).unwrap_or_default(),
        p99: at(0.99).unwrap_or_default(),
    }
}

/// Writes every key once so ranges find data.
async fn preload(urls: &[String]) {
    let mut kv = KvClient::new(channels(urls).await.remove(0));
    for i in 0..KEYS {
        let put =
            PutRequest { key: key(i), value: Bytes::from(vec![b'v'; VALUE_BYTES]), ..Default::default() };
        kv.put(put).await.unwrap();
    }
}

#[tokio::main]
async fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let secs = std::env::var("RTCD_LOAD_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let duration = Duration::from_secs_f64(if measuring { secs } else { 0.2 });
    let members: usize = std::env::var("RTCD_LOAD_MEMBERS").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let many = if members > 1 { 1000 } else { 100 };
    let workloads = [
        Workload::Put { clients: 1 },
        Workload::Put { clients: many },
        Workload::Range { clients: 100, serializable: false },
        Workload::Range { clients: 100, serializable: true },
    ];
    if !measuring {
        println!("kv_load smoke run (not a measurement): use `cargo bench --workspace --bench kv_load`");
    }
    let (etcd, rtcd) = if members > 1 {
        (start_cluster(Kind::Etcd, members), start_cluster(Kind::Rtcd, members))
    } else {
        (vec![start(Kind::Etcd, "load")], vec![start(Kind::Rtcd, "load")])
    };
    let etcd_urls: Vec<String> = etcd.iter().map(|m| m.client_url.clone()).collect();
    let rtcd_urls: Vec<String> = rtcd.iter().map(|m| m.client_url.clone()).collect();
    if measuring {
        preload(&etcd_urls).await;
        preload(&rtcd_urls).await;
    }
    println!("{members} member(s) each");
    println!(
        "{:<18} {:>12} {:>10} {:>10} {:>12} {:>10} {:>10} {:>8}",
        "workload", "etcd ops/s", "p50", "p99", "rtcd ops/s", "p50", "p99", "ratio"
    );
    for w in workloads {
        let theirs = run(&etcd_urls, w, duration).await;
        let ours = run(&rtcd_urls, w, duration).await;
        assert!(theirs.ops_per_sec > 0.0 && ours.ops_per_sec > 0.0, "{w:?}: no operation completed");
        let name = match w {
            Workload::Put { clients } => format!("put, {clients} clients"),
            Workload::Range { clients, serializable: false } => format!("range (l), {clients} cl."),
            Workload::Range { clients, serializable: true } => format!("range (s), {clients} cl."),
        };
        println!(
            "{:<18} {:>12.0} {:>10.2?} {:>10.2?} {:>12.0} {:>10.2?} {:>10.2?} {:>7.2}x",
            name,
            theirs.ops_per_sec,
            theirs.p50,
            theirs.p99,
            ours.ops_per_sec,
            ours.p50,
            ours.p99,
            ours.ops_per_sec / theirs.ops_per_sec
        );
    }
}
