//! What the operations measured: a latency histogram per operation and
//! the counts behind them, for the breakdown beside the common summary.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;

use super::ops::{Op, Plan};
use crate::load::{self, LoadError};

/// Per-operation latencies and counts, beside the summary's histogram.
#[derive(Debug)]
pub struct Stats {
    /// Successful operations' latencies in microseconds, in [`Op::ALL`]'s order.
    latencies: [Mutex<Histogram<u64>>; 4],
    pub(super) created: AtomicU64,
    pub(super) already_existed: AtomicU64,
    pub(super) updated: AtomicU64,
    pub(super) conflicts: AtomicU64,
    pub(super) pages: AtomicU64,
    pub(super) listed: AtomicU64,
}

impl Stats {
    pub fn new() -> Result<Self, LoadError> {
        let h = || load::histogram().map(Mutex::new);
        Ok(Self {
            latencies: [h()?, h()?, h()?, h()?],
            created: AtomicU64::new(0),
            already_existed: AtomicU64::new(0),
            updated: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
            pages: AtomicU64::new(0),
            listed: AtomicU64::new(0),
        })
    }

    /// The writes this run made: one revision, and one event per watcher, each.
    pub fn writes(&self) -> u64 {
        self.created.load(Ordering::Relaxed) + self.updated.load(Ordering::Relaxed)
    }

    pub(super) fn record(&self, op: Op, elapsed: Duration) {
        let mut h = self.latencies[op as usize].lock().unwrap_or_else(|e| e.into_inner());
        let _ = h.record(load::micros(elapsed));
    }

    /// One line per operation: count, latency quantiles, what else it did.
    pub fn breakdown(&self, plan: &Plan, (start, end): (i64, i64)) -> String {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = format!(
            "kube: {} objects in {} namespaces; revision {start} -> {end} (+{}); {} writes by this run\n",
            plan.objects,
            plan.namespaces,
            end - start,
            self.writes()
        );
        for op in Op::ALL {
            let h = self.latencies[op as usize].lock().unwrap_or_else(|e| e.into_inner()).clone();
            let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
            let lists = h.len().max(1) as f64;
            let note = match op {
                Op::Create => format!("{} already existed", count(&self.already_existed)),
                Op::Update => format!("{} conflicts retried", count(&self.conflicts)),
                Op::List => format!(
                    "{:.1} pages, {:.0} keys each",
                    count(&self.pages) as f64 / lists,
                    count(&self.listed) as f64 / lists
                ),
                Op::Get => String::new(),
            };
            out.push_str(&format!(
                "  {:<6} {:>7} ok   p50 {:>8.3} ms   p90 {:>8.3} ms   p99 {:>8.3} ms   max {:>8.3} ms   {note}\n",
                op.name(),
                h.len(),
                ms(0.5),
                ms(0.9),
                ms(0.99),
                h.max() as f64 / 1000.0,
            ));
        }
        out.trim_end().to_string()
    }
}
