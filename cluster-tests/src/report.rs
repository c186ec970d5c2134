//! `report.html`: what a person looks at after a run. Latency of every
//! operation over time (one colour per outcome, one row per operation type)
//! with fault windows shaded, throughput per second, and outcome counts.
//! Plain inline SVG: no scripts, opens anywhere.

use std::fmt::Write;

use crate::history::{FaultWindow, Operation, Outcome, Record, RegisterOp};
use crate::run::Summary;

const WIDTH: f64 = 1000.0;
const PLOT_HEIGHT: f64 = 180.0;
const LEFT: f64 = 70.0;

fn kind(op: &Operation) -> &'static str {
    match op.op {
        RegisterOp::Read { .. } => "read",
        RegisterOp::Write { .. } => "write",
        RegisterOp::Cas { .. } => "cas",
    }
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

/// The whole page for one run.
pub fn html(summary: &Summary, history: &[Record]) -> String {
    let ops: Vec<&Operation> =
        history.iter().filter_map(|r| if let Record::Op(op) = r { Some(op) } else { None }).collect();
    let faults: Vec<&FaultWindow> =
        history.iter().filter_map(|r| if let Record::Fault(f) = r { Some(f) } else { None }).collect();
    let end =
        ops.iter().map(|o| o.complete).chain(faults.iter().map(|f| f.end)).max().unwrap_or(1).max(1) as f64;
    let verdict = match summary.valid() {
        Some(true) => "valid",
        Some(false) => "INVALID",
        None => "unknown",
    };
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html><meta charset=utf-8><title>rtcd-jepsen: {target} seed {seed}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:2px 10px;text-align:right}}</style>\
         <h1>{target}, seed {seed}: {verdict}</h1><p>{secs} s, faults: {faults_list}</p>",
        target = summary.target,
        seed = summary.seed,
        secs = summary.seconds,
        faults_list = escape(&summary.faults.join(", ")),
    );
    page.push_str(&counts_table(&ops));
    for k in ["read", "write", "cas"] {
        let of_kind: Vec<&Operation> = ops.iter().copied().filter(|o| kind(o) == k).collect();
        let _ = write!(page, "<h2>{k} latency</h2>");
        page.push_str(&latency_plot(&of_kind, &faults, end));
    }
    page.push_str("<h2>throughput (completed ok per second)</h2>");
    page.push_str(&throughput_plot(&ops, &faults, end));
    page.push_str("<h2>faults</h2><table><tr><th>kind<th>targets<th>from (s)<th>to (s)</tr>");
    for f in &faults {
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

fn counts_table(ops: &[&Operation]) -> String {
    let mut t = String::from("<table><tr><th>operation<th>ok<th>fail<th>info</tr>");
    for k in ["read", "write", "cas"] {
        let n = |o: Outcome| ops.iter().filter(|op| kind(op) == k && op.outcome == o).count();
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

/// Latency (log scale, 0.1 ms .. 10 s) against completion time.
fn latency_plot(ops: &[&Operation], faults: &[&FaultWindow], end: f64) -> String {
    let mut svg = format!("<svg width='{WIDTH}' height='{}'>", PLOT_HEIGHT + 16.0);
    svg.push_str(&fault_bands(faults, end));
    let (lo, hi) = (1e5_f64.log10(), 1e10_f64.log10());
    for op in ops {
        let latency = (op.complete.saturating_sub(op.invoke).max(1) as f64).log10().clamp(lo, hi);
        let x = LEFT + op.complete as f64 / end * (WIDTH - LEFT);
        let y = PLOT_HEIGHT - (latency - lo) / (hi - lo) * PLOT_HEIGHT;
        let _ = write!(svg, "<circle cx='{x:.1}' cy='{y:.1}' r='1.5' fill='{}'/>", color(op.outcome));
    }
    svg.push_str(&axes("latency (log)", "10 s", end));
    svg.push_str("</svg>");
    svg
}

fn throughput_plot(ops: &[&Operation], faults: &[&FaultWindow], end: f64) -> String {
    let seconds = (end / 1e9).ceil().max(1.0) as usize;
    let mut per_second = vec![0u32; seconds + 1];
    for op in ops.iter().filter(|o| o.outcome == Outcome::Ok) {
        if let Some(slot) = per_second.get_mut((op.complete / 1_000_000_000) as usize) {
            *slot += 1;
        }
    }
    let max = f64::from(per_second.iter().copied().max().unwrap_or(1).max(1));
    let mut svg = format!("<svg width='{WIDTH}' height='{}'>", PLOT_HEIGHT + 16.0);
    svg.push_str(&fault_bands(faults, end));
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
    svg.push_str("</svg>");
    svg
}
