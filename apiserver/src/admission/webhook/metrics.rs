//! kube's webhook admission metrics (`apiserver_admission_webhook_*`):
//! calls by webhook, type and outcome, their latency, rejections and
//! fail-open calls.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// `admit` (mutating) or `validating`, as kube's `type` label says.
pub type Kind = &'static str;

#[derive(Debug, Default)]
pub struct WebhookMetrics {
    inner: Mutex<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    /// (name, type, operation, rejected) → (seconds, calls).
    duration: BTreeMap<(String, Kind, &'static str, bool), (f64, u64)>,
    /// (name, type, operation, code, rejected) → calls.
    requests: BTreeMap<(String, Kind, &'static str, u16, bool), u64>,
    /// (name, type, operation, error type, rejection code) → rejections.
    rejections: BTreeMap<(String, Kind, &'static str, &'static str, u16), u64>,
    /// (name, type) → calls that failed and were ignored.
    fail_open: BTreeMap<(String, Kind), u64>,
}

/// How one call ended, for the counters.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// The webhook's HTTP code (0 when none came back).
    pub code: u16,
    pub rejected: bool,
    /// `calling_webhook_error`, `apiserver_internal_error` or `no_error`
    /// (a denial), when rejected.
    pub error_type: &'static str,
    pub rejection_code: u16,
}

impl WebhookMetrics {
    pub fn observe(
        &self,
        name: &str,
        kind: Kind,
        operation: &'static str,
        elapsed: Duration,
        outcome: Outcome,
    ) {
        let mut c = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let entry = c.duration.entry((name.to_string(), kind, operation, outcome.rejected)).or_default();
        entry.0 += elapsed.as_secs_f64();
        entry.1 += 1;
        *c.requests
            .entry((name.to_string(), kind, operation, outcome.code, outcome.rejected))
            .or_default() += 1;
        if outcome.rejected {
            let key = (name.to_string(), kind, operation, outcome.error_type, outcome.rejection_code);
            *c.rejections.entry(key).or_default() += 1;
        }
    }

    pub fn fail_open(&self, name: &str, kind: Kind) {
        let mut c = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *c.fail_open.entry((name.to_string(), kind)).or_default() += 1;
    }
}

impl WebhookMetrics {
    /// Appends these metrics, in Prometheus text format.
    pub fn write_metrics(&self, out: &mut String) {
        let c = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        out.push_str("# HELP apiserver_admission_webhook_admission_duration_seconds Admission webhook latency in seconds (sum and count), by webhook, type, operation and whether rejected.\n");
        out.push_str("# TYPE apiserver_admission_webhook_admission_duration_seconds summary\n");
        for ((name, kind, op, rejected), (sum, count)) in &c.duration {
            let labels =
                format!("name=\"{name}\",type=\"{kind}\",operation=\"{op}\",rejected=\"{rejected}\"");
            let _ =
                writeln!(out, "apiserver_admission_webhook_admission_duration_seconds_sum{{{labels}}} {sum}");
            let _ = writeln!(
                out,
                "apiserver_admission_webhook_admission_duration_seconds_count{{{labels}}} {count}"
            );
        }
        out.push_str("# HELP apiserver_admission_webhook_request_total Admission webhook calls by webhook, type, operation, HTTP code and whether rejected.\n");
        out.push_str("# TYPE apiserver_admission_webhook_request_total counter\n");
        for ((name, kind, op, code, rejected), count) in &c.requests {
            let _ = writeln!(
                out,
                "apiserver_admission_webhook_request_total{{name=\"{name}\",type=\"{kind}\",operation=\"{op}\",code=\"{code}\",rejected=\"{rejected}\"}} {count}"
            );
        }
        out.push_str("# HELP apiserver_admission_webhook_rejection_count Admission webhook rejections by webhook, type, operation, error type and code.\n");
        out.push_str("# TYPE apiserver_admission_webhook_rejection_count counter\n");
        for ((name, kind, op, error_type, code), count) in &c.rejections {
            let _ = writeln!(
                out,
                "apiserver_admission_webhook_rejection_count{{name=\"{name}\",type=\"{kind}\",operation=\"{op}\",error_type=\"{error_type}\",rejection_code=\"{code}\"}} {count}"
            );
        }
        out.push_str("# HELP apiserver_admission_webhook_fail_open_count Admission webhook calls that failed and were ignored (failurePolicy Ignore).\n");
        out.push_str("# TYPE apiserver_admission_webhook_fail_open_count counter\n");
        for ((name, kind), count) in &c.fail_open {
            let _ = writeln!(
                out,
                "apiserver_admission_webhook_fail_open_count{{name=\"{name}\",type=\"{kind}\"}} {count}"
            );
        }
    }
}
