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

#[cfg(test)]
mod tests {
    use super::*;

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
