//! kube's admission step metrics: how long each plugin's mutating and
//! validating steps take (`apiserver_admission_controller_admission_duration_seconds`)
//! and the whole of each step (`apiserver_admission_step_admission_duration_seconds`),
//! by operation and whether the write was refused there.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// `admit` or `validate`, as kube's `type` label says.
pub type Step = &'static str;

/// (plugin name or "" for the step, type, operation, rejected) → (seconds, count).
type Durations = BTreeMap<(&'static str, Step, &'static str, bool), (f64, u64)>;

#[derive(Debug, Default)]
pub struct StepMetrics {
    inner: Mutex<Durations>,
}

impl StepMetrics {
    /// One plugin's step (`plugin` named), or the whole step (`plugin` "").
    pub fn observe(
        &self,
        plugin: &'static str,
        step: Step,
        operation: &'static str,
        rejected: bool,
        took: Duration,
    ) {
        let mut durations = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let entry = durations.entry((plugin, step, operation, rejected)).or_default();
        entry.0 += took.as_secs_f64();
        entry.1 += 1;
    }
}

impl StepMetrics {
    /// Appends these metrics, in Prometheus text format.
    pub fn write_metrics(&self, out: &mut String) {
        let durations = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        for (metric, help, plugins) in [
            (
                "step",
                "Admission sub-step latency in seconds (sum and count), by type, operation and whether rejected.",
                false,
            ),
            (
                "controller",
                "Admission plugin latency in seconds (sum and count), by plugin, type, operation and whether rejected.",
                true,
            ),
        ] {
            let name = format!("apiserver_admission_{metric}_admission_duration_seconds");
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} summary");
            for ((plugin, step, operation, rejected), (sum, count)) in durations.iter() {
                if plugin.is_empty() == plugins {
                    continue;
                }
                let mut labels = format!("type=\"{step}\",operation=\"{operation}\",rejected=\"{rejected}\"");
                if plugins {
                    labels = format!("name=\"{plugin}\",{labels}");
                }
                let _ = writeln!(out, "{name}_sum{{{labels}}} {sum}");
                let _ = writeln!(out, "{name}_count{{{labels}}} {count}");
            }
        }
    }
}
