//! Prometheus's text exposition format.

use std::fmt::Write;

/// One metric family: its HELP and TYPE lines, then a sample per
/// `(labels, value)` (labels as `name="value",...`, empty for none).
pub fn family(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    samples: impl IntoIterator<Item = (String, f64)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    for (labels, value) in samples {
        match labels.is_empty() {
            true => {
                let _ = writeln!(out, "{name} {value}");
            }
            false => {
                let _ = writeln!(out, "{name}{{{labels}}} {value}");
            }
        }
    }
}

/// A family of one sample without labels.
pub fn single(out: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    family(out, name, kind, help, [(String::new(), value)]);
}

/// A histogram family: `_bucket` samples per bound (`le`), `_sum` and
/// `_count`, each with `labels` (as `name="value"`, empty for none).
pub fn histogram(out: &mut String, name: &str, help: &str, series: &[(String, &crate::Histogram)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    for (labels, histogram) in series {
        let (buckets, count, sum) = histogram.snapshot();
        let with = |extra: String| match labels.is_empty() {
            true => extra,
            false if extra.is_empty() => labels.clone(),
            false => format!("{labels},{extra}"),
        };
        for (bound, cumulative) in buckets {
            let le = if bound.is_infinite() { "+Inf".to_string() } else { bound.to_string() };
            let _ = writeln!(out, "{name}_bucket{{{}}} {cumulative}", with(format!("le=\"{le}\"")));
        }
        let plain = with(String::new());
        let braces = if plain.is_empty() { String::new() } else { format!("{{{plain}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {sum}\n{name}_count{braces} {count}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_have_cumulative_buckets_a_sum_and_a_count() {
        let fsync = crate::Histogram::exponential(0.001, 2.0, 2);
        fsync.observe(0.0015);
        let mut out = String::new();
        histogram(&mut out, "etcd_disk_wal_fsync_duration_seconds", "Fsyncs.", &[(String::new(), &fsync)]);
        assert_eq!(
            out,
            "# HELP etcd_disk_wal_fsync_duration_seconds Fsyncs.\n# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n\
             etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 0\n\
             etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.002\"} 1\n\
             etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 1\n\
             etcd_disk_wal_fsync_duration_seconds_sum 0.0015\n\
             etcd_disk_wal_fsync_duration_seconds_count 1\n"
        );
        let mut out = String::new();
        histogram(&mut out, "rtt", "RTT.", &[("To=\"a\"".to_string(), &fsync)]);
        assert!(
            out.contains(
                "rtt_bucket{To=\"a\",le=\"+Inf\"} 1\nrtt_sum{To=\"a\"} 0.0015\nrtt_count{To=\"a\"} 1\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn families_are_written_as_prometheus_reads_them() {
        let mut out = String::new();
        single(&mut out, "etcd_server_has_leader", "gauge", "Whether a leader exists.", 1.0);
        family(&mut out, "x_total", "counter", "X.", [("a=\"b\"".to_string(), 2.5)]);
        assert_eq!(
            out,
            "# HELP etcd_server_has_leader Whether a leader exists.\n# TYPE etcd_server_has_leader gauge\n\
             etcd_server_has_leader 1\n# HELP x_total X.\n# TYPE x_total counter\nx_total{a=\"b\"} 2.5\n"
        );
    }
}
