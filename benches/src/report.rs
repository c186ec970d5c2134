//! The summary etcd's benchmark tool prints (so numbers read the same for
//! both), or one JSON object with `--json`.

use serde::Serialize;

use crate::load::Outcome;

/// Everything a report says, in milliseconds.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub requests: u64,
    pub errors: u64,
    pub elapsed_secs: f64,
    pub requests_per_sec: f64,
    pub avg_ms: f64,
    pub stddev_ms: f64,
    pub fastest_ms: f64,
    pub slowest_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    /// A few of the errors' messages (kept with `--json` so a script's
    /// results say why requests failed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_samples: Vec<String>,
}

fn ms(micros: f64) -> f64 {
    micros / 1000.0
}

pub fn summarize(outcome: &Outcome) -> Summary {
    let h = &outcome.latencies;
    let ok = h.len();
    let at = |q: f64| ms(h.value_at_quantile(q) as f64);
    let secs = outcome.elapsed.as_secs_f64().max(1e-9);
    Summary {
        requests: ok,
        errors: outcome.errors,
        elapsed_secs: secs,
        requests_per_sec: ok as f64 / secs,
        avg_ms: ms(h.mean()),
        stddev_ms: ms(h.stdev()),
        fastest_ms: ms(h.min() as f64),
        slowest_ms: ms(h.max() as f64),
        p50_ms: at(0.5),
        p90_ms: at(0.9),
        p99_ms: at(0.99),
        p999_ms: at(0.999),
        error_samples: outcome.error_samples.clone(),
    }
}

/// etcd benchmark's text layout (seconds, four decimals).
pub fn text(s: &Summary) -> String {
    let sec = |ms: f64| format!("{:.4} secs.", ms / 1000.0);
    let mut out = format!(
        "\nSummary:\n  Total:\t{:.4} secs.\n  Slowest:\t{}\n  Fastest:\t{}\n  Average:\t{}\n  Stddev:\t{}\n  \
         Requests/sec:\t{:.4}\n\nLatency distribution:\n  50% in {}\n  90% in {}\n  99% in {}\n  99.9% in {}\n",
        s.elapsed_secs,
        sec(s.slowest_ms),
        sec(s.fastest_ms),
        sec(s.avg_ms),
        sec(s.stddev_ms),
        s.requests_per_sec,
        sec(s.p50_ms),
        sec(s.p90_ms),
        sec(s.p99_ms),
        sec(s.p999_ms),
    );
    if s.errors > 0 {
        out.push_str(&format!("\nErrors: {}\n", s.errors));
        for e in &s.error_samples {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}
