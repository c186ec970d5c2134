//! `report.html` and `report.svg`: what a person looks at after a run.
//! Latency of every operation over time (one colour per outcome, one plot
//! per workload) with fault windows shaded, throughput per second, and
//! outcome counts. Plain SVG: no scripts, opens anywhere. Points that would
//! land on the same spot are drawn once, so a long run stays small.

use std::collections::HashSet;
use std::fmt::Write;

use crate::history::{FaultWindow, LeaseAction, Micro, Nanos, Outcome, REFERENCE, Record, RegisterOp};
use crate::summary::Summary;

const WIDTH: f64 = 1000.0;
const PLOT_HEIGHT: f64 = 180.0;
const LEFT: f64 = 70.0;

/// Any client operation, as the report sees it.
struct Timed {
    /// "read", "append txn", "lease grant", ...
    kind: &'static str,
    /// Which latency plot it goes in.
    workload: &'static str,
    invoke: Nanos,
    complete: Nanos,
    outcome: Outcome,
}

/// Every client operation of the run (final reference reads left out).
fn timed(history: &[Record]) -> Vec<Timed> {
    let t = |kind, workload, invoke, complete, outcome| Timed { kind, workload, invoke, complete, outcome };
    history
        .iter()
        .filter_map(|r| match r {
            Record::Op(op) => {
                let kind = match op.op {
                    RegisterOp::Read { .. } => "read",
                    RegisterOp::Write { .. } => "write",
                    RegisterOp::Cas { .. } => "cas",
                };
                Some(t(kind, "register", op.invoke, op.complete, op.outcome))
            }
            Record::Txn(tx) if tx.process != REFERENCE => {
                let read_only = tx.ops.iter().all(|m| matches!(m, Micro::R { .. }));
                let kind = if read_only { "read-only txn" } else { "append txn" };
                Some(t(kind, "list-append", tx.invoke, tx.complete, tx.outcome))
            }
            Record::Lease(l) if l.process != REFERENCE => {
                let kind = match l.action {
                    LeaseAction::Grant { .. } => "lease grant",
                    LeaseAction::Put { .. } => "lease put",
                    LeaseAction::KeepAlive { .. } => "keep-alive",
                    LeaseAction::Revoke { .. } => "revoke",
                    LeaseAction::Read { .. } => "lease read",
                };
                Some(t(kind, "lease", l.invoke, l.complete, l.outcome))
            }
            _ => None,
        })
        .collect()
}

fn color(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Ok => "#2b8a3e",
        Outcome::Fail => "#e8590c",
        Outcome::Info => "#c92a2a",
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn verdict(summary: &Summary) -> &'static str {
    match summary.valid() {
        Some(true) => "valid",
        Some(false) => "INVALID",
        None => "unknown",
    }
}

/// The plots of one run, titled: latency per workload, then throughput.
fn plots(history: &[Record]) -> (Vec<Timed>, Vec<(String, String)>) {
    let ops = timed(history);
    let faults: Vec<&FaultWindow> =
        history.iter().filter_map(|r| if let Record::Fault(f) = r { Some(f) } else { None }).collect();
    let end =
        ops.iter().map(|o| o.complete).chain(faults.iter().map(|f| f.end)).max().unwrap_or(1).max(1) as f64;
    let mut plots = Vec::new();
    for workload in ["register", "list-append", "lease"] {
        let of: Vec<&Timed> = ops.iter().filter(|o| o.workload == workload).collect();
        if !of.is_empty() {
            plots.push((format!("{workload} latency"), latency_plot(&of, &faults, end)));
        }
    }
    let all: Vec<&Timed> = ops.iter().collect();
    plots.push(("throughput (completed ok per second)".to_string(), throughput_plot(&all, &faults, end)));
    (ops, plots)
}

/// The whole page for one run.
pub fn html(summary: &Summary, history: &[Record]) -> String {
    let (ops, plots) = plots(history);
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html><meta charset=utf-8><title>rtcd-jepsen: {target} seed {seed}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:2px 10px;text-align:right}}</style>\
         <h1>{target}, seed {seed}: {verdict}</h1><p>{secs} s, faults: {faults_list}</p>",
        target = summary.target,
        seed = summary.seed,
        verdict = verdict(summary),
        secs = summary.seconds,
        faults_list = escape(&summary.faults.join(", ")),
    );
    page.push_str(&counts_table(&ops));
    for (title, svg) in &plots {
        let _ = write!(
            page,
            "<h2>{}</h2><svg width='{WIDTH}' height='{}'>{svg}</svg>",
            escape(title),
            PLOT_HEIGHT + 16.0
        );
    }
    page.push_str("<h2>faults</h2><table><tr><th>kind<th>targets<th>from (s)<th>to (s)</tr>");
    for f in history.iter().filter_map(|r| if let Record::Fault(f) = r { Some(f) } else { None }) {
        let _ = write!(
            page,
            "<tr><td>{}<td>{}<td>{:.1}<td>{:.1}</tr>",
            escape(&f.kind),
            escape(&f.targets.join(" ")),
            f.start as f64 / 1e9,
            f.end as f64 / 1e9
        );
    }
    page.push_str("</table>");
    page
}

/// The same plots stacked in one standalone SVG image.
pub fn svg(summary: &Summary, history: &[Record]) -> String {
    let (_, plots) = plots(history);
    let row = PLOT_HEIGHT + 40.0;
    let height = 30.0 + row * plots.len() as f64;
    let mut image = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{height}' font-family='sans-serif'>\
         <rect width='100%' height='100%' fill='white'/>\
         <text x='4' y='18' font-size='14'>{}, seed {}: {}</text>",
        summary.target,
        summary.seed,
        verdict(summary)
    );
    for (i, (title, plot)) in plots.iter().enumerate() {
        let y = 30.0 + row * i as f64;
        let _ = write!(
            image,
            "<text x='4' y='{}' font-size='12'>{}</text><g transform='translate(0,{})'>{plot}</g>",
            y + 12.0,
            escape(title),
            y + 18.0
        );
    }
    image.push_str("</svg>");
    image
}

fn counts_table(ops: &[Timed]) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for op in ops {
        if !kinds.contains(&op.kind) {
            kinds.push(op.kind);
        }
    }
    let mut t = String::from("<table><tr><th>operation<th>ok<th>fail<th>info</tr>");
    for k in kinds {
        let n = |o: Outcome| ops.iter().filter(|op| op.kind == k && op.outcome == o).count();
        let _ = write!(
            t,
            "<tr><td>{k}<td>{}<td>{}<td>{}</tr>",
            n(Outcome::Ok),
            n(Outcome::Fail),
            n(Outcome::Info)
        );
    }
    t.push_str("</table>");
    t
}

/// Shaded fault windows with their names, under the data.
fn fault_bands(faults: &[&FaultWindow], end: f64) -> String {
    let mut s = String::new();
    for f in faults {
        let x = LEFT + f.start as f64 / end * (WIDTH - LEFT);
        let w = ((f.end - f.start) as f64 / end * (WIDTH - LEFT)).max(1.0);
        let _ = write!(
            s,
            "<rect x='{x:.1}' y='0' width='{w:.1}' height='{PLOT_HEIGHT}' fill='#ffd8a8' opacity='0.6'/>\
             <text x='{x:.1}' y='10' font-size='9'>{}</text>",
            escape(&f.kind)
        );
    }
    s
}

fn axes(y_label: &str, y_max: &str, end: f64) -> String {
    format!(
        "<line x1='{LEFT}' y1='{PLOT_HEIGHT}' x2='{WIDTH}' y2='{PLOT_HEIGHT}' stroke='black'/>\
         <line x1='{LEFT}' y1='0' x2='{LEFT}' y2='{PLOT_HEIGHT}' stroke='black'/>\
         <text x='2' y='12' font-size='10'>{y_max}</text><text x='2' y='{}' font-size='10'>{y_label}</text>\
         <text x='{}' y='{}' font-size='10'>{:.0} s</text>",
        PLOT_HEIGHT / 2.0,
        WIDTH - 30.0,
        PLOT_HEIGHT + 12.0,
        end / 1e9
    )
}

/// Latency (log scale, 0.1 ms .. 10 s) against completion time; one dot
/// per 2x2 pixels and outcome.
fn latency_plot(ops: &[&Timed], faults: &[&FaultWindow], end: f64) -> String {
    let mut svg = fault_bands(faults, end);
    let (lo, hi) = (1e5_f64.log10(), 1e10_f64.log10());
    let mut drawn = HashSet::new();
    for op in ops {
        let latency = (op.complete.saturating_sub(op.invoke).max(1) as f64).log10().clamp(lo, hi);
        // Snapped to a 2-pixel grid: dots are 3 pixels wide anyway.
        let snap = |v: f64| (v / 2.0).round() * 2.0;
        let x = snap(LEFT + op.complete as f64 / end * (WIDTH - LEFT));
        let y = snap(PLOT_HEIGHT - (latency - lo) / (hi - lo) * PLOT_HEIGHT);
        if drawn.insert((x as i64, y as i64, op.outcome as u8)) {
            let _ = write!(svg, "<circle cx='{x}' cy='{y}' r='1.5' fill='{}'/>", color(op.outcome));
        }
    }
    svg.push_str(&axes("latency (log)", "10 s", end));
    svg
}

fn throughput_plot(ops: &[&Timed], faults: &[&FaultWindow], end: f64) -> String {
    let seconds = (end / 1e9).ceil().max(1.0) as usize;
    let mut per_second = vec![0u32; seconds + 1];
    for op in ops.iter().filter(|o| o.outcome == Outcome::Ok) {
        if let Some(slot) = per_second.get_mut((op.complete / 1_000_000_000) as usize) {
            *slot += 1;
        }
    }
    let max = f64::from(per_second.iter().copied().max().unwrap_or(1).max(1));
    let mut svg = fault_bands(faults, end);
    let points: Vec<String> = per_second
        .iter()
        .enumerate()
        .map(|(s, &n)| {
            let x = LEFT + (s as f64 * 1e9) / end * (WIDTH - LEFT);
            let y = PLOT_HEIGHT - f64::from(n) / max * PLOT_HEIGHT;
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = write!(svg, "<polyline fill='none' stroke='#1c7ed6' points='{}'/>", points.join(" "));
    svg.push_str(&axes("ops/s", &format!("{max:.0}/s"), end));
    svg
}
