//! kube's `apiserver_flowcontrol_*` metrics: per flow schema and priority
//! level, what was dispatched, refused (and why), waits and runs now, and
//! how long requests waited; per level, its seat bounds and current limit.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

use super::allocation::Bounds;

/// kube's buckets for request wait durations, in seconds.
const WAIT_BUCKETS: [f64; 13] = [0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0];

#[derive(Debug, Clone, Default)]
struct Histogram {
    /// Per bucket, observations at or below its bound (not yet cumulative).
    buckets: [u64; WAIT_BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, value: f64) {
        if let Some(i) = WAIT_BUCKETS.iter().position(|bound| value <= *bound) {
            self.buckets[i] += 1;
        }
        self.sum += value;
        self.count += 1;
    }
}

#[derive(Debug, Clone, Default)]
struct Flow {
    dispatched: u64,
    rejected: BTreeMap<&'static str, u64>,
    in_queue: i64,
    executing: i64,
    executing_seats: i64,
    /// Waits of requests that then ran (true) or were refused (false).
    waits: BTreeMap<bool, Histogram>,
}

/// `(priority level, flow schema)`.
type Key = (String, String);

/// A gauge family of flows: its name, help, and the value it reads.
type FlowGauge = (&'static str, &'static str, fn(&Flow) -> i64);
/// A gauge family of levels: from a level's bounds and current limit.
type LevelGauge = (&'static str, &'static str, fn(&Bounds, u32) -> u32);

#[derive(Debug, Default)]
pub struct FlowMetrics {
    flows: Mutex<BTreeMap<Key, Flow>>,
}

impl FlowMetrics {
    fn with(&self, level: &str, schema: &str, change: impl FnOnce(&mut Flow)) {
        let mut flows = self.flows.lock().unwrap_or_else(|p| p.into_inner());
        change(flows.entry((level.to_string(), schema.to_string())).or_default());
    }

    pub fn queued(&self, level: &str, schema: &str, delta: i64) {
        self.with(level, schema, |f| f.in_queue += delta);
    }

    pub fn waited(&self, level: &str, schema: &str, seconds: f64, executed: bool) {
        self.with(level, schema, |f| f.waits.entry(executed).or_default().observe(seconds));
    }

    pub fn executing(&self, level: &str, schema: &str, seats: u32, delta: i64) {
        self.with(level, schema, |f| {
            f.executing += delta;
            f.executing_seats += delta * i64::from(seats);
            if delta > 0 {
                f.dispatched += 1;
            }
        });
    }

    pub fn rejected(&self, level: &str, schema: &str, reason: &'static str) {
        self.with(level, schema, |f| *f.rejected.entry(reason).or_default() += 1);
    }

    /// Appends every family; `levels` are each level's name, bounds and
    /// current limit.
    pub fn write(&self, out: &mut String, levels: &[(String, Bounds, u32)]) {
        let flows = self.flows.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let label = |(level, schema): &Key| format!("flow_schema=\"{schema}\",priority_level=\"{level}\"");
        header(
            out,
            "dispatched_requests_total",
            "counter",
            "[BETA] Number of requests executed by API Priority and Fairness subsystem",
        );
        for (key, flow) in &flows {
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_dispatched_requests_total{{{}}} {}",
                label(key),
                flow.dispatched
            );
        }
        header(
            out,
            "rejected_requests_total",
            "counter",
            "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
        );
        for (key, flow) in &flows {
            for (reason, count) in &flow.rejected {
                let _ = writeln!(
                    out,
                    "apiserver_flowcontrol_rejected_requests_total{{{},reason=\"{reason}\"}} {count}",
                    label(key)
                );
            }
        }
        let gauges: [FlowGauge; 3] = [
            (
                "current_inqueue_requests",
                "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
                |f| f.in_queue,
            ),
            (
                "current_executing_requests",
                "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
                |f| f.executing,
            ),
            (
                "current_executing_seats",
                "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
                |f| f.executing_seats,
            ),
        ];
        for (name, help, value) in gauges {
            header(out, name, "gauge", help);
            for (key, flow) in &flows {
                let _ = writeln!(out, "apiserver_flowcontrol_{name}{{{}}} {}", label(key), value(flow));
            }
        }
        header(
            out,
            "request_wait_duration_seconds",
            "histogram",
            "[BETA] Length of time a request spent waiting in its queue",
        );
        for (key, flow) in &flows {
            for (executed, histogram) in &flow.waits {
                let labels = format!("{},execute=\"{executed}\"", label(key));
                write_histogram(
                    out,
                    "apiserver_flowcontrol_request_wait_duration_seconds",
                    &labels,
                    histogram,
                );
            }
        }
        let level_gauges: [LevelGauge; 4] = [
            (
                "nominal_limit_seats",
                "[BETA] Nominal number of execution seats configured for each priority level",
                |b, _| b.nominal,
            ),
            (
                "lower_limit_seats",
                "[ALPHA] Configured lower bound on number of execution seats available to each priority level",
                |b, _| b.lower,
            ),
            (
                "upper_limit_seats",
                "[ALPHA] Configured upper bound on number of execution seats available to each priority level",
                |b, _| b.upper,
            ),
            (
                "current_limit_seats",
                "[ALPHA] current derived number of execution seats available to each priority level",
                |_, current| current,
            ),
        ];
        for (name, help, value) in level_gauges {
            header(out, name, "gauge", help);
            for (level, bounds, current) in levels {
                let _ = writeln!(
                    out,
                    "apiserver_flowcontrol_{name}{{priority_level=\"{level}\"}} {}",
                    value(bounds, *current)
                );
            }
        }
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP apiserver_flowcontrol_{name} {help}");
    let _ = writeln!(out, "# TYPE apiserver_flowcontrol_{name} {kind}");
}

fn write_histogram(out: &mut String, name: &str, labels: &str, histogram: &Histogram) {
    let mut cumulative = 0;
    for (bound, count) in WAIT_BUCKETS.iter().zip(histogram.buckets) {
        cumulative += count;
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
    }
    let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", histogram.count);
    let _ = writeln!(out, "{name}_sum{{{labels}}} {}", histogram.sum);
    let _ = writeln!(out, "{name}_count{{{labels}}} {}", histogram.count);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_are_counted_under_kubes_names_and_labels() {
        let metrics = FlowMetrics::default();
        metrics.queued("global-default", "global-default", 1);
        metrics.queued("global-default", "global-default", -1);
        metrics.waited("global-default", "global-default", 0.01, true);
        metrics.executing("global-default", "global-default", 3, 1);
        metrics.rejected("catch-all", "catch-all", "concurrency-limit");
        let bounds = Bounds { nominal: 49, lower: 24, upper: 649, max_seats: 8 };
        let mut out = String::new();
        metrics.write(&mut out, &[("global-default".into(), bounds, 60)]);
        let flow = "flow_schema=\"global-default\",priority_level=\"global-default\"";
        for line in [
            format!("apiserver_flowcontrol_dispatched_requests_total{{{flow}}} 1"),
            "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"catch-all\",priority_level=\"catch-all\",reason=\"concurrency-limit\"} 1".into(),
            format!("apiserver_flowcontrol_current_inqueue_requests{{{flow}}} 0"),
            format!("apiserver_flowcontrol_current_executing_seats{{{flow}}} 3"),
            format!("apiserver_flowcontrol_request_wait_duration_seconds_bucket{{{flow},execute=\"true\",le=\"0.005\"}} 0"),
            format!("apiserver_flowcontrol_request_wait_duration_seconds_bucket{{{flow},execute=\"true\",le=\"0.02\"}} 1"),
            format!("apiserver_flowcontrol_request_wait_duration_seconds_count{{{flow},execute=\"true\"}} 1"),
            "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"global-default\"} 49".into(),
            "apiserver_flowcontrol_current_limit_seats{priority_level=\"global-default\"} 60".into(),
            "# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram".into(),
        ] {
            assert!(out.lines().any(|l| l == line), "missing {line}\n{out}");
        }
    }
}
