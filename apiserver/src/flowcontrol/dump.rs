//! kube's APF debug dumps (`/debug/api_priority_and_fairness/...`): rows of
//! comma-terminated cells aligned in columns as Go's `tabwriter` (minimum
//! width 8, padding 1, blanks) aligns them.

use std::time::SystemTime;

use super::queueset::{QueueDump, RequestDump, Summary};

const MIN_WIDTH: usize = 8;
const PADDING: usize = 1;

/// Lines of cells; all but each line's last are aligned.
fn tabulate(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![MIN_WIDTH; columns];
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(row.len().saturating_sub(1)) {
            let width = cell.chars().count() + 1 + PADDING;
            widths[i] = widths[i].max(width);
        }
    }
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                out.push_str(cell);
            } else {
                let text = format!("{cell},");
                out.push_str(&text);
                out.extend(std::iter::repeat_n(' ', widths[i] - text.chars().count()));
            }
        }
        out.push('\n');
    }
    out
}

fn strings(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
}

pub fn priority_levels(levels: &[(String, Summary)]) -> String {
    let mut rows = vec![strings(&[
        "PriorityLevelName",
        "ActiveQueues",
        "IsIdle",
        "IsQuiescing",
        "WaitingRequests",
        "ExecutingRequests",
        "DispatchedRequests",
        "RejectedRequests",
        "TimedoutRequests",
        "CancelledRequests",
    ])];
    for (name, level) in levels {
        rows.push(vec![
            name.clone(),
            level.active_queues.to_string(),
            (level.waiting == 0 && level.executing == 0).to_string(),
            // A level removed from the configuration is dropped from here
            // at once; its requests finish on their own.
            "false".into(),
            level.waiting.to_string(),
            level.executing.to_string(),
            level.totals.dispatched.to_string(),
            level.totals.rejected.to_string(),
            level.totals.timed_out.to_string(),
            level.totals.cancelled.to_string(),
        ]);
    }
    tabulate(&rows)
}

pub fn queues(levels: &[(String, Vec<QueueDump>)]) -> String {
    let mut rows = vec![strings(&[
        "PriorityLevelName",
        "Index",
        "PendingRequests",
        "ExecutingRequests",
        "SeatsInUse",
        "NextDispatchR",
        "InitialSeatsSum",
        "MaxSeatsSum",
        "TotalWorkSum",
    ])];
    for (name, queues) in levels {
        for (index, queue) in queues.iter().enumerate() {
            rows.push(vec![
                name.clone(),
                index.to_string(),
                queue.pending.to_string(),
                queue.executing.to_string(),
                queue.seats_in_use.to_string(),
                seat_seconds(queue.next_dispatch_r),
                queue.initial_seats_sum.to_string(),
                queue.max_seats_sum.to_string(),
                seat_seconds(queue.total_work_sum),
            ]);
        }
    }
    tabulate(&rows)
}

pub fn requests(levels: &[(String, Vec<RequestDump>)], details: bool) -> String {
    let mut header = strings(&[
        "PriorityLevelName",
        "FlowSchemaName",
        "QueueIndex",
        "RequestIndexInQueue",
        "FlowDistingsher",
        "ArriveTime",
        "InitialSeats",
        "FinalSeats",
        "AdditionalLatency",
        "StartTime",
    ]);
    if details {
        header.extend(strings(&[
            "UserName",
            "Verb",
            "APIPath",
            "Namespace",
            "Name",
            "APIVersion",
            "Resource",
            "SubResource",
        ]));
    }
    let mut rows = vec![header];
    for (name, requests) in levels {
        for request in requests {
            let d = &request.described;
            let mut row = vec![
                name.clone(),
                d.schema.clone(),
                request.queue.to_string(),
                request.index.to_string(),
                d.flow.clone(),
                rfc3339(Some(request.arrived)),
                request.work.initial_seats.to_string(),
                request.work.final_seats.to_string(),
                rtcd_duration::format(request.work.additional_latency),
                rfc3339(request.started),
            ];
            if details {
                row.extend([
                    d.user.clone(),
                    d.verb.clone(),
                    d.path.clone(),
                    d.namespace.clone(),
                    d.name.clone(),
                    d.api_version.clone(),
                    d.resource.clone(),
                    d.subresource.clone(),
                ]);
            }
            rows.push(row);
        }
    }
    tabulate(&rows)
}

/// Seat-seconds as kube prints them: nine decimals, "ss" after.
fn seat_seconds(value: f64) -> String {
    format!("{value:.9}ss")
}

/// Go's `time.RFC3339Nano` in UTC (no trailing zeros in the fraction);
/// Go's zero time for none.
fn rfc3339(time: Option<SystemTime>) -> String {
    match time.and_then(|t| jiff::Timestamp::try_from(t).ok()) {
        Some(at) => at.strftime("%Y-%m-%dT%H:%M:%S%.fZ").to_string(),
        None => "0001-01-01T00:00:00Z".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flowcontrol::queueset::Totals;

    #[test]
    fn levels_are_dumped_in_aligned_columns() {
        let level = |name: &str| {
            let totals = Totals { dispatched: 12, rejected: 0, timed_out: 0, cancelled: 0 };
            (name.to_string(), Summary { active_queues: 0, waiting: 0, executing: 0, totals })
        };
        let text = priority_levels(&[level("catch-all"), level("workload-low")]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, "), "{text}");
        assert!(lines[0].ends_with("CancelledRequests"), "{text}");
        assert!(lines[1].starts_with("catch-all,         0,            true,   false,       0, "), "{text}");
        assert!(lines[2].starts_with("workload-low,      0, "), "{text}");
    }

    #[test]
    fn times_are_go_rfc3339_nano() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_120);
        assert_eq!(rfc3339(Some(at)), "2023-11-14T22:13:20.12Z");
        let whole = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        assert_eq!(rfc3339(Some(whole)), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(None), "0001-01-01T00:00:00Z");
    }
}
