#!/usr/bin/env python3
"""Turns scripts/bench-vs-etcd.sh's results.jsonl into report.md plus two
hand-written SVG charts next to it (throughput.svg, latency-cdf.svg).
Standard library only.

    python3 scripts/bench/report.py RESULTS.jsonl OUT_DIR

results.jsonl holds one JSON object a line, by "kind":
  meta      date, scale, cores, cpu, kernel, mem_kib, etcd_version, rtcd_commit
  workload  server, workload (the row's name), tool (rtcd-bench, the
            default, or etcd-benchmark: etcd's tools/benchmark), round,
            client_cpu (the tool's CPU as a share of all cores), args, and
            either summary (rtcd-bench --json fields) or skipped (why not)
  memory    server, stage (matrix: after the workloads; loaded, or none:
            after the key load), keys, value_bytes, rss_kib [3],
            data_dir_bytes [3]
  restart   server, member, keys, seconds (null: never served)
Lines without "kind" are workloads (the first version of the script).
"""

import json
import math
import os
import sys
from xml.sax.saxutils import escape

SERVERS = ("etcd", "rtcd")
COLORS = {"etcd": "#1f77b4", "rtcd": "#d62728"}

# The put rows that make the throughput chart: clients -> row name.
PUT_SCALING = [
    (1, "put, 1 client"),
    (10, "put, 10 clients / 10 conns"),
    (100, "put, 100 clients / 100 conns"),
    (1000, "put, 1000 clients / 100 conns"),
]
CDF_ROW = "put, 1000 clients / 100 conns"


def load(path):
    """meta; by: (server, row) -> the run that stands for it (see
    representative); runs: (server, row, tool) -> every run; row names in
    order; memory and restart by server (memory by stage, then server)."""
    meta, runs, names, memory, restart = {}, {}, [], {}, {}
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        kind = r.get("kind", "workload")
        if kind == "meta":
            meta = r
        elif kind == "workload":
            runs.setdefault((r["server"], r["workload"], r.get("tool", "rtcd-bench")), []).append(r)
            if r["workload"] not in names:
                names.append(r["workload"])
        elif kind == "memory":
            memory.setdefault(r.get("stage", "loaded"), {})[r["server"]] = r
        elif kind == "restart":
            restart[r["server"]] = r
    by = {}
    for name in names:
        tool = primary_tool(runs, name)
        for server in SERVERS:
            rep = representative(runs.get((server, name, tool), []))
            if rep:
                by[(server, name)] = rep
    return meta, by, runs, names, memory, restart


def primary_tool(runs, name):
    """The tool a row's targets and charts are judged on: etcd's own tool
    where it measured both servers, else rtcd-bench."""
    if all(measured(runs.get((server, name, "etcd-benchmark"), [])) for server in SERVERS):
        return "etcd-benchmark"
    return "rtcd-bench"


def measured(rs):
    return [r for r in rs if r.get("summary")]


def representative(rs):
    """The run with the median throughput (the lower middle of an even
    count); a skipped run if none ran."""
    done = sorted(measured(rs), key=lambda r: r["summary"]["requests_per_sec"])
    if done:
        return done[(len(done) - 1) // 2]
    return rs[0] if rs else None


def summary(by, server, name):
    """The row's summary, or None (missing or skipped)."""
    r = by.get((server, name))
    return r.get("summary") if r else None


def why_missing(by, server, name):
    r = by.get((server, name))
    if r is None:
        return "not run"
    if "skipped" in r:
        return "skipped: " + r["skipped"]
    return ""


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(x):
    return "n/a" if x is None else f"{x:.2f}×"


def fmt_num(x, digits=0):
    return "n/a" if x is None else f"{x:,.{digits}f}"


def mib(kib_or_bytes, unit):
    return kib_or_bytes / 1024 if unit == "kib" else kib_or_bytes / (1024 * 1024)


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- targets


def targets(by, memories, restart, scale):
    """Rows: (target, goal, etcd text, rtcd text, ratio, verdict)."""
    rows = []
    memory = memories.get("loaded", {})

    def errors_note(s):
        return f", {s['errors']} errors" if s and s.get("errors") else ""

    def throughput_target(name, goal, min_ratio, extra):
        e, r = summary(by, "etcd", name), summary(by, "rtcd", name)
        if not e or not r:
            reason = why_missing(by, "rtcd", name) or why_missing(by, "etcd", name) or "missing"
            rows.append((name, goal, "n/a", "n/a", None, "not measured (" + reason + ")"))
            return
        x = ratio(r["requests_per_sec"], e["requests_per_sec"])
        ex_text_e, ex_text_r, ex_why = extra(e, r) if extra else ("", "", None)
        why = []
        if x is None or x < min_ratio:
            why.append(f"throughput {fmt_ratio(x)} < {min_ratio:g}×")
        if ex_why:
            why.append(ex_why)
        if r.get("errors"):
            why.append(f"{r['errors']} errors")
        verdict = "missed: " + "; ".join(why) if why else "met"
        rows.append(
            (
                name,
                goal,
                f"{fmt_num(e['requests_per_sec'])} req/s{ex_text_e}{errors_note(e)}",
                f"{fmt_num(r['requests_per_sec'])} req/s{ex_text_r}{errors_note(r)}",
                x,
                verdict,
            )
        )

    throughput_target(
        "put, 1 client, to leader",
        "avg ≤ 0.5× etcd's",
        0.0,
        lambda e, r: (
            f", avg {e['avg_ms']:.3f} ms",
            f", avg {r['avg_ms']:.3f} ms",
            None if r["avg_ms"] <= 0.5 * e["avg_ms"] else f"avg {r['avg_ms'] / e['avg_ms']:.2f}× etcd's > 0.5×",
        ),
    )
    for name in ("put, 1000 clients / 100 conns", "put, 1000 clients / 100 conns, one key"):
        throughput_target(
            name,
            "≥ 2× etcd's throughput; p99 ≤ etcd's",
            2.0,
            lambda e, r: (
                f", p99 {e['p99_ms']:.2f} ms",
                f", p99 {r['p99_ms']:.2f} ms",
                None if r["p99_ms"] <= e["p99_ms"] else "p99 above etcd's",
            ),
        )
    load_name = next((n for (_, n) in by if n.startswith("load ")), "load (keys)")
    throughput_target(
        load_name,
        "≥ 1.5× etcd's throughput; p99 ≤ etcd's",
        1.5,
        lambda e, r: (
            f", p99 {e['p99_ms']:.2f} ms",
            f", p99 {r['p99_ms']:.2f} ms",
            None if r["p99_ms"] <= e["p99_ms"] else "p99 above etcd's",
        ),
    )
    throughput_target("lease keep-alive, 100 clients", "≥ 1.5× etcd's throughput", 1.5, None)
    throughput_target("txn-put, 1000 clients / 100 conns", "≥ 2× etcd's throughput", 2.0, None)
    throughput_target("range linearizable, 1000 clients", "≥ 2× etcd's throughput", 2.0, None)
    throughput_target("range serializable, 1000 clients", "≥ 2× etcd's throughput", 2.0, None)

    name = "watch-latency, 1000 watchers, 200 puts/s"
    e, r = summary(by, "etcd", name), summary(by, "rtcd", name)
    if e and r:
        x = ratio(r["p99_ms"], e["p99_ms"])
        why = [] if r["p99_ms"] <= e["p99_ms"] else ["p99 above etcd's"]
        if r.get("errors"):
            why.append(f"{r['errors']} errors")
        verdict = "missed: " + "; ".join(why) if why else "met"
        rows.append(
            (name, "p99 ≤ etcd's", f"p99 {e['p99_ms']:.2f} ms{errors_note(e)}",
             f"p99 {r['p99_ms']:.2f} ms{errors_note(r)}", x, verdict)
        )
    else:
        reason = why_missing(by, "rtcd", name) or why_missing(by, "etcd", name) or "missing"
        rows.append((name, "p99 ≤ etcd's", "n/a", "n/a", None, "not measured (" + reason + ")"))

    em, rm = memories.get("matrix", {}).get("etcd"), memories.get("matrix", {}).get("rtcd")
    if em and rm:
        emax, rmax = max(em["rss_kib"]) / 1024, max(rm["rss_kib"]) / 1024
        rows.append(
            ("RSS after the matrix", "≤ etcd's (max over members)", f"max {emax:,.0f} MiB",
             f"max {rmax:,.0f} MiB", ratio(rmax, emax), "met" if rmax <= emax else "missed: more than etcd")
        )
    keys = next((m["keys"] for m in memory.values()), 1_000_000 // max(scale, 1))
    name = f"RSS after loading {keys:,} keys (256 B values)"
    em, rm = memory.get("etcd"), memory.get("rtcd")
    if em and rm:
        emax, rmax = max(em["rss_kib"]) / 1024, max(rm["rss_kib"]) / 1024
        emean = sum(em["rss_kib"]) / len(em["rss_kib"]) / 1024
        rmean = sum(rm["rss_kib"]) / len(rm["rss_kib"]) / 1024
        rows.append(
            (name, "≤ etcd's (max over members)", f"max {emax:,.0f} MiB (mean {emean:,.0f})",
             f"max {rmax:,.0f} MiB (mean {rmean:,.0f})", ratio(rmax, emax), "met" if rmax <= emax else "missed: more than etcd")
        )
    else:
        rows.append((name, "≤ etcd's", "n/a", "n/a", None, "not measured"))

    name = f"restart of a follower holding {keys:,} keys until it serves"
    er, rr = restart.get("etcd"), restart.get("rtcd")
    es = er["seconds"] if er else None
    rs = rr["seconds"] if rr else None
    verdict = "not measured" if rr is None else ("missed (never served)" if rs is None else ("met" if rs <= 10 else "missed: over 10 s"))
    rows.append(
        (name, "≤ 10 s", "n/a" if es is None else f"{es:.2f} s", "n/a" if rs is None else f"{rs:.2f} s",
         ratio(rs, es), verdict)
    )
    return rows


# ---------------------------------------------------------------- SVG


def nice_step(span, count):
    raw = span / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def log_ticks(lo, hi):
    """Tick values covering [lo, hi] on a log axis: decades, plus 2 and 5
    when the range is narrow."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b == a:
        b = a + 1
    mults = (1,) if b - a > 3 else (1, 2, 5)
    ticks = [m * 10**k for k in range(a, b + 1) for m in mults if m * 10**k <= 10**b]
    # The axis runs from the last tick at or below lo to the first at or above hi.
    start = max(t for t in ticks if t <= lo * 1.0001)
    end = min(t for t in ticks if t >= hi * 0.9999)
    if end == start:
        # One value on a tick: widen to the next tick so the axis has a span.
        end = min(t for t in ticks if t > start)
    ticks = [t for t in ticks if start <= t <= end]
    return ticks, start, end


def fmt_tick(v):
    if v >= 1000:
        return f"{v / 1000:g}k" if v < 1_000_000 else f"{v / 1_000_000:g}M"
    if v >= 1:
        return f"{v:g}"
    return f"{v:.3g}"


class Chart:
    W, H = 760, 460
    L, R, T, B = 80, 170, 50, 60

    def __init__(self, title, xlabel, ylabel, xlog, ylog=False):
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.xlog, self.ylog = xlog, ylog
        self.series = []
        self.notes = []

    def add(self, label, color, points, markers=True, step=False, annotate=None):
        pts = [(x, y) for x, y in points if x is not None and y is not None]
        if self.xlog:
            pts = [(max(x, 1e-6), y) for x, y in pts]
        self.series.append((label, color, pts, markers, step, annotate))

    def _axis(self, values, log, zero):
        lo, hi = min(values), max(values)
        if log:
            ticks, lo, hi = log_ticks(lo, hi)
            return lo, hi, ticks
        if zero:
            lo = min(lo, 0)
        if hi == lo:
            hi = lo + 1
        step = nice_step(hi - lo, 6)
        lo = math.floor(lo / step) * step
        hi = math.ceil(hi / step) * step
        n = int(round((hi - lo) / step))
        return lo, hi, [lo + i * step for i in range(n + 1)]

    def render(self, x_range=None, y_range=None, y_ticks=None, y_fmt=fmt_tick, x_fmt=fmt_tick):
        pw, ph = self.W - self.L - self.R, self.H - self.T - self.B
        xs = [x for s in self.series for x, _ in s[2]]
        ys = [y for s in self.series for _, y in s[2]]
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.W}" height="{self.H}" '
            f'viewBox="0 0 {self.W} {self.H}" font-family="sans-serif" font-size="12">',
            f'<rect width="{self.W}" height="{self.H}" fill="white"/>',
            f'<text x="{self.L + pw / 2}" y="24" text-anchor="middle" font-size="15" '
            f'font-weight="bold">{escape(self.title)}</text>',
        ]
        if not xs:
            out.append(f'<text x="{self.W / 2}" y="{self.H / 2}" text-anchor="middle">no data</text></svg>')
            return "\n".join(out) + "\n"
        if x_range:
            xs = xs + list(x_range)
        if y_range:
            ys = ys + list(y_range)
        x0, x1, xt = self._axis(xs, self.xlog, zero=False)
        y0, y1, yt = self._axis(ys, self.ylog, zero=True)
        if y_ticks is not None:
            yt = y_ticks

        def sx(x):
            if self.xlog:
                return self.L + (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * pw
            return self.L + (x - x0) / (x1 - x0) * pw

        def sy(y):
            return self.T + ph - (y - y0) / (y1 - y0) * ph

        # Grid, ticks, labels.
        for t in xt:
            X = sx(t)
            out.append(f'<line x1="{X:.1f}" y1="{self.T}" x2="{X:.1f}" y2="{self.T + ph}" stroke="#e5e5e5"/>')
            out.append(
                f'<text x="{X:.1f}" y="{self.T + ph + 18}" text-anchor="middle">{escape(x_fmt(t))}</text>'
            )
        for t in yt:
            Y = sy(t)
            out.append(f'<line x1="{self.L}" y1="{Y:.1f}" x2="{self.L + pw}" y2="{Y:.1f}" stroke="#e5e5e5"/>')
            out.append(f'<text x="{self.L - 8}" y="{Y + 4:.1f}" text-anchor="end">{escape(y_fmt(t))}</text>')
        out.append(
            f'<rect x="{self.L}" y="{self.T}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>'
        )
        out.append(
            f'<text x="{self.L + pw / 2}" y="{self.H - 16}" text-anchor="middle">{escape(self.xlabel)}</text>'
        )
        out.append(
            f'<text x="18" y="{self.T + ph / 2}" text-anchor="middle" '
            f'transform="rotate(-90 18 {self.T + ph / 2})">{escape(self.ylabel)}</text>'
        )
        # Series.
        for i, (label, color, pts, markers, step, annotate) in enumerate(self.series):
            if not pts:
                continue
            coords = []
            for j, (x, y) in enumerate(pts):
                if step and j > 0:
                    coords.append((sx(x), sy(pts[j - 1][1])))
                coords.append((sx(x), sy(y)))
            path = " ".join(f"{X:.1f},{Y:.1f}" for X, Y in coords)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
            if markers:
                for x, y in pts:
                    out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" fill="{color}"/>')
            if annotate:
                # First series' labels up and to the left, the second's down
                # and to the right: close points do not print over each other.
                dx, dy, anchor = (-6, -6, "end") if i % 2 == 0 else (6, 14, "start")
                for x, y in pts:
                    out.append(
                        f'<text x="{sx(x) + dx:.1f}" y="{sy(y) + dy:.1f}" text-anchor="{anchor}" '
                        f'font-size="10" fill="{color}">{escape(annotate(x, y))}</text>'
                    )
            # Legend on the right.
            ly = self.T + 10 + i * 22
            lx = self.L + pw + 16
            out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
            if markers:
                out.append(f'<circle cx="{lx + 12}" cy="{ly}" r="3.5" fill="{color}"/>')
            out.append(f'<text x="{lx + 30}" y="{ly + 4}">{escape(label)}</text>')
        for k, note in enumerate(self.notes):
            out.append(
                f'<text x="{self.L + pw + 16}" y="{self.T + 10 + len(self.series) * 22 + 12 + k * 15}" '
                f'font-size="10" fill="#555">{escape(note)}</text>'
            )
        out.append("</svg>")
        return "\n".join(out) + "\n"


def throughput_svg(by):
    chart = Chart("put throughput against clients", "clients (conns = min(clients, 100)); log scale",
                  "requests per second", xlog=True)
    for server in SERVERS:
        pts = []
        for clients, name in PUT_SCALING:
            s = summary(by, server, name)
            if s:
                pts.append((clients, s["requests_per_sec"]))
        chart.add(server, COLORS[server], pts, annotate=lambda x, y: f"{y:,.0f}")
    return chart.render(y_fmt=lambda v: f"{v:,.0f}")


def cdf_points(s):
    """(ms, quantile) pairs, ascending: the summary's own cdf if it has
    one, else fastest (0), p50, p90, p99, p99.9 and slowest (1)."""
    if isinstance(s.get("cdf"), list) and s["cdf"]:
        pts = [(float(ms), float(q)) for q, ms in s["cdf"]]
        derived = False
    else:
        # etcd's tool reports no p99.9: the points a summary has.
        fields = [("fastest_ms", 0.0), ("p50_ms", 0.5), ("p90_ms", 0.9), ("p99_ms", 0.99), ("p999_ms", 0.999),
                  ("slowest_ms", 1.0)]
        pts = [(s[field], q) for field, q in fields if s.get(field) is not None]
        derived = True
    pts.sort(key=lambda p: (p[1], p[0]))
    # Monotone in latency too (histogram quantiles are, rounding aside).
    mono, hi = [], 0.0
    for ms, q in pts:
        hi = max(hi, ms)
        mono.append((hi, q))
    return mono, derived


def cdf_svg(by):
    chart = Chart(f"latency CDF: {CDF_ROW}", "latency (ms); log scale", "fraction of requests", xlog=True)
    any_derived = False
    for server in SERVERS:
        s = summary(by, server, CDF_ROW)
        if not s:
            continue
        pts, derived = cdf_points(s)
        any_derived |= derived
        chart.add(server, COLORS[server], pts, markers=derived)
    if any_derived:
        chart.notes = ["dots: fastest, p50, p90,", "p99, p99.9 (rtcd-bench),", "slowest; lines interpolate"]
    ticks = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    return chart.render(y_range=(0, 1), y_ticks=ticks, y_fmt=lambda v: f"{v * 100:.0f}%")


# ---------------------------------------------------------------- tables


def median(values):
    v = sorted(values)
    if not v:
        return None
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def rps_spread(rs):
    """'median [min–max]' requests per second over the measured runs."""
    v = [r["summary"]["requests_per_sec"] for r in measured(rs)]
    if not v:
        return None, ""
    text = fmt_num(median(v))
    if len(v) > 1:
        text += f" [{fmt_num(min(v))}–{fmt_num(max(v))}]"
    errors = sum(r["summary"].get("errors", 0) for r in measured(rs))
    if errors:
        text += f" ({errors} errors)"
    return median(v), text


def cpu_text(rs):
    v = [r["client_cpu"] for r in measured(rs) if r.get("client_cpu") is not None]
    return f"{median(v) * 100:.0f}%" if v else "n/a"


def skipped_text(rs):
    reasons = [r["skipped"] for r in rs if "skipped" in r]
    return "skipped: " + reasons[0] if reasons else "not run"


def workload_table(runs, names):
    """One row per workload and tool: both servers' median throughput with
    its spread, the ratio of medians, the median run's p50 / p99, and the
    tool's median CPU share on each server."""
    lines = [
        "",
        "## Workloads",
        "",
        "Throughput counts successful requests: median [slowest–fastest run]; the ratio is rtcd's median over"
        " etcd's. Client CPU is the load generator's user + system time as a share of all cores over its run"
        " (median): what it took from the servers it measured.",
        "",
        "| workload | tool | etcd req/s | rtcd req/s | ratio | etcd p50 / p99 ms | rtcd p50 / p99 ms"
        " | client CPU etcd / rtcd |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for n in names:
        for tool in ("rtcd-bench", "etcd-benchmark"):
            e_runs, r_runs = runs.get(("etcd", n, tool), []), runs.get(("rtcd", n, tool), [])
            if not e_runs and not r_runs:
                continue
            (e, e_text), (r, r_text) = rps_spread(e_runs), rps_spread(r_runs)
            e_text, r_text = e_text or skipped_text(e_runs), r_text or skipped_text(r_runs)

            def lat(rs):
                rep = representative(rs)
                s = rep.get("summary") if rep else None
                # etcd's tool prints no percentiles for some workloads.
                return f"{s['p50_ms']:.2f} / {s['p99_ms']:.2f}" if s and "p99_ms" in s else ""

            lines.append(
                f"| {md_cell(n)} | {tool} | {md_cell(e_text)} | {md_cell(r_text)} | {fmt_ratio(ratio(r, e))}"
                f" | {lat(e_runs)} | {lat(r_runs)} | {cpu_text(e_runs)} / {cpu_text(r_runs)} |"
            )
    return lines


def agreement_table(runs, names):
    """Where both tools ran a workload: rtcd-bench's median throughput over
    etcd's tool's, on each server (1.00× is perfect agreement)."""
    rows = []
    for n in names:
        for server in SERVERS:
            ours = measured(runs.get((server, n, "rtcd-bench"), []))
            theirs = measured(runs.get((server, n, "etcd-benchmark"), []))
            if not ours or not theirs:
                continue
            a, a_text = rps_spread(ours)
            b, b_text = rps_spread(theirs)
            rows.append(
                f"| {md_cell(n)} | {server} | {md_cell(a_text)} | {md_cell(b_text)} | {fmt_ratio(ratio(a, b))}"
                f" | {cpu_text(ours)} / {cpu_text(theirs)} |"
            )
    if not rows:
        return []
    return [
        "",
        "## rtcd-bench against etcd's tools/benchmark",
        "",
        "The same workload, server and round, run by both tools: how far rtcd-bench's throughput is from etcd's"
        " own tool (the goal is within 10%, 0.90–1.10×).",
        "",
        "| workload | server | rtcd-bench req/s | etcd tool req/s | rtcd-bench / etcd tool | client CPU rtcd-bench / etcd tool |",
        "|---|---|---:|---:|---:|---:|",
    ] + rows


# ---------------------------------------------------------------- report


def main():
    results, out_dir = sys.argv[1], sys.argv[2]
    meta, by, runs, names, memories, restart = load(results)
    memory = memories.get("loaded", {})
    scale = int(meta.get("scale", 1) or 1)

    with open(os.path.join(out_dir, "throughput.svg"), "w") as f:
        f.write(throughput_svg(by))
    with open(os.path.join(out_dir, "latency-cdf.svg"), "w") as f:
        f.write(cdf_svg(by))

    mem_gib = meta.get("mem_kib", 0) / 1024 / 1024
    lines = [
        "# rtcd vs etcd, same machine, same run",
        "",
        "Three members each on loopback (etcd first, then rtcd, one cluster at a time, the same flags)."
        " Every workload is driven by `rtcd-bench`; the put, txn-put and range workloads also by etcd's own"
        " `tools/benchmark` when the run had it (`ETCD_BENCHMARK`), alternating which tool goes first."
        f" Each workload ran {meta.get('rounds', 1)} time(s) per server and tool: a number is the median run's,"
        " with the slowest and fastest runs' throughput in brackets. Targets are judged on etcd's tool where it"
        " measured both servers, else on rtcd-bench. Regenerate with `scripts/bench-vs-etcd.sh`.",
        "",
        f"- Date: {meta.get('date', '?')}",
        f"- Machine: {meta.get('cores', '?')} cores, {meta.get('cpu', '?')}, {mem_gib:.0f} GiB,"
        f" {meta.get('kernel', '?')}",
        f"- etcd: {meta.get('etcd_version', '?')} (Debian etcd-server)",
        f"- rtcd: commit {meta.get('rtcd_commit', '?')}",
        f"- Scale: 1/{scale} of the full request counts",
        f"- etcd's tools/benchmark: {meta.get('etcd_tool') or 'not run (ETCD_BENCHMARK unset)'}",
    ]
    if scale != 1:
        lines += [
            "",
            f"**Smoke run at 1/{scale} scale**: runs are short and the key count is"
            f" {1_000_000 // scale:,}, not 1M; the targets below are judged on these numbers anyway.",
        ]

    lines += [
        "",
        "## Targets",
        "",
        "| target | goal | etcd | rtcd | rtcd / etcd | verdict |",
        "|---|---|---:|---:|---:|---|",
    ]
    for name, goal, e, r, x, verdict in targets(by, memories, restart, scale):
        v = f"**{verdict}**" if verdict.startswith("missed") else verdict
        lines.append(f"| {md_cell(name)} | {md_cell(goal)} | {md_cell(e)} | {md_cell(r)} | {fmt_ratio(x)} | {md_cell(v)} |")

    lines += workload_table(runs, names)
    lines += agreement_table(runs, names)

    failed = [
        (n, server, s) for n in names for server in ("etcd", "rtcd")
        if (s := summary(by, server, n)) and s.get("errors")
    ]
    if failed:
        lines += ["", "Requests that failed, with the errors rtcd-bench sampled:", ""]
        for n, server, s in failed:
            why = "; ".join(f"`{e}`" for e in s.get("error_samples", [])) or "(no samples recorded)"
            lines.append(f"- {md_cell(n)}, {server}: {s['errors']} errors: {md_cell(why)}")

    lines += ["", "## Memory and restart", ""]
    if memory or restart:
        keys = next((m["keys"] for m in memory.values()), None)
        if keys is not None:
            lines.append(
                f"After the matrix, {keys:,} distinct keys with 256-byte values were put (sequential keys,"
                " 1000 clients over 100 conns), then, 5 s later, each member's VmRSS and `du -sb` of its data dir"
                " were read. Then one follower was killed with SIGKILL and restarted with the same flags and"
                " data dir; the time is from its exec until it answers a serializable read (polled every 50 ms)."
                " etcd preallocates its WAL in 64 MiB segments, so at small key counts its data dir size is"
                " mostly that."
            )
            lines.append("")
        lines += ["| | etcd | rtcd | rtcd / etcd |", "|---|---:|---:|---:|"]

        def stat(server, field, fn, unit):
            m = memory.get(server)
            return mib(fn(m[field]), unit) if m else None

        mean = lambda v: sum(v) / len(v)  # noqa: E731
        for label, field, fn, unit in [
            ("RSS, max over members (MiB)", "rss_kib", max, "kib"),
            ("RSS, mean over members (MiB)", "rss_kib", mean, "kib"),
            ("data dir, max over members (MiB)", "data_dir_bytes", max, "bytes"),
            ("data dir, mean over members (MiB)", "data_dir_bytes", mean, "bytes"),
        ]:
            e, r = stat("etcd", field, fn, unit), stat("rtcd", field, fn, unit)
            lines.append(f"| {label} | {fmt_num(e)} | {fmt_num(r)} | {fmt_ratio(ratio(r, e))} |")
        after_matrix = memories.get("matrix", {})
        e, r = (after_matrix.get(server) for server in ("etcd", "rtcd"))
        e, r = (mib(max(m["rss_kib"]), "kib") if m else None for m in (e, r))
        lines.append(f"| RSS after the matrix, before the load, max over members (MiB) | {fmt_num(e)} | {fmt_num(r)} | {fmt_ratio(ratio(r, e))} |")
        es = restart.get("etcd", {}).get("seconds")
        rs = restart.get("rtcd", {}).get("seconds")
        lines.append(
            f"| follower restart until it serves (s) | {fmt_num(es, 2)} | {fmt_num(rs, 2)} | {fmt_ratio(ratio(rs, es))} |"
        )
    else:
        lines.append("Not measured.")

    lines += [
        "",
        "## Charts",
        "",
        "put throughput against the number of clients (log x):",
        "",
        "![put throughput against clients](throughput.svg)",
        "",
        f"Latency CDF of `{CDF_ROW}` (log x):",
        "",
        "![latency CDF](latency-cdf.svg)",
        "",
        "## Command lines",
        "",
        "Each row is `rtcd-bench --endpoints <the three members> --json ARGS`, and where etcd's tool ran it,"
        " `benchmark --endpoints <the three members> --precise ARGS`:",
        "",
    ]
    for n in names:
        r = by.get(("etcd", n)) or by.get(("rtcd", n))
        if r and r.get("args"):
            lines.append(f"- {n}: `{r['args']}`")

    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
