//! The process families Prometheus's Go client exports for every program
//! (`process_*`: CPU time, memory, file descriptors, start time), read from
//! Linux's `/proc` at each scrape. Elsewhere, or when `/proc` cannot be
//! read, the families are left out, as the Go client leaves them out.

use crate::text::single;

/// Linux's clock tick for `/proc/*/stat` times (`USER_HZ`, 100 on every
/// architecture Linux reports it for).
const TICKS_PER_SECOND: f64 = 100.0;
const PAGE_SIZE: f64 = 4096.0;

/// What `/proc/self/stat` says, with the fields the families use.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    cpu_ticks: u64,
    start_ticks: u64,
    virtual_bytes: u64,
    resident_pages: u64,
}

/// Parses `/proc/self/stat`; the command name (field 2) may hold spaces
/// and parentheses, so fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let fields: Vec<&str> = text.get(text.rfind(')')? + 1..)?.split_whitespace().collect();
    // `fields[0]` is field 3 (state); field N is `fields[N - 3]`.
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(Stat {
        cpu_ticks: field(14)? + field(15)?,
        start_ticks: field(22)?,
        virtual_bytes: field(23)?,
        resident_pages: field(24)?,
    })
}

/// A soft limit from `/proc/self/limits` (`unlimited` as the Go client
/// reports it: the largest u64).
fn soft_limit(limits: &str, name: &str) -> Option<f64> {
    let line = limits.lines().find(|line| line.starts_with(name))?;
    let soft = line[name.len()..].split_whitespace().next()?;
    match soft {
        "unlimited" => Some(u64::MAX as f64),
        n => n.parse().ok(),
    }
}

/// The boot time from `/proc/stat`, in seconds since the epoch.
fn boot_time(proc_stat: &str) -> Option<u64> {
    proc_stat.lines().find_map(|line| line.strip_prefix("btime ")?.trim().parse().ok())
}

fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}

/// Appends the `process_*` families of this process.
pub fn render(out: &mut String) {
    let Some(stat) = std::fs::read_to_string("/proc/self/stat").ok().as_deref().and_then(parse_stat) else {
        return;
    };
    let cpu = stat.cpu_ticks as f64 / TICKS_PER_SECOND;
    single(
        out,
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time spent in seconds.",
        cpu,
    );
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    if let Some(fds) = open_fds() {
        single(out, "process_open_fds", "gauge", "Number of open file descriptors.", fds as f64);
    }
    if let Some(max) = soft_limit(&limits, "Max open files") {
        single(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", max);
    }
    let virtual_bytes = stat.virtual_bytes as f64;
    single(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", virtual_bytes);
    if let Some(max) = soft_limit(&limits, "Max address space") {
        let help = "Maximum amount of virtual memory available in bytes.";
        single(out, "process_virtual_memory_max_bytes", "gauge", help, max);
    }
    let resident = stat.resident_pages as f64 * PAGE_SIZE;
    single(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", resident);
    let boot = std::fs::read_to_string("/proc/stat").ok().as_deref().and_then(boot_time);
    if let Some(boot) = boot {
        let start = boot as f64 + stat.start_ticks as f64 / TICKS_PER_SECOND;
        let help = "Start time of the process since unix epoch in seconds.";
        single(out, "process_start_time_seconds", "gauge", help, start);
    }
}

/// This process's open file descriptors and their limit (etcd's `os_fd_*`).
pub fn file_descriptors() -> Option<(usize, f64)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    Some((open_fds()?, soft_limit(&limits, "Max open files")?))
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use super::*;

    fn now_seconds() -> f64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
    }

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let line = "4242 (rtcd (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 \
                    12345 1000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let stat = parse_stat(line).unwrap();
        assert_eq!(
            stat,
            Stat { cpu_ticks: 300, start_ticks: 12345, virtual_bytes: 1_000_000, resident_pages: 300 }
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn limits_read_the_soft_value() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 524288               files\n\
                      Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max open files"), Some(1024.0));
        assert_eq!(soft_limit(limits, "Max address space"), Some(u64::MAX as f64));
        assert_eq!(soft_limit(limits, "Max stack size"), None);
        assert_eq!(boot_time("cpu 1 2 3\nbtime 1700000000\n"), Some(1_700_000_000));
    }

    #[test]
    fn this_process_is_described_on_linux() {
        let mut out = String::new();
        render(&mut out);
        if cfg!(target_os = "linux") {
            for family in ["process_cpu_seconds_total", "process_open_fds", "process_resident_memory_bytes"] {
                assert!(out.contains(&format!("# TYPE {family} ")), "{family}: {out}");
            }
            let start: f64 = (out.lines())
                .find_map(|l| l.strip_prefix("process_start_time_seconds "))
                .and_then(|v| v.parse().ok())
                .unwrap();
            assert!(
                start <= now_seconds() && start > now_seconds() - 3600.0,
                "started in the last hour: {start}"
            );
        }
    }
}
