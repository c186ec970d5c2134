#!/usr/bin/env python3
"""Reads the text etcd's `tools/benchmark --precise` prints (stdin) and prints
one JSON object with rtcd-bench's `--json` field names, so that
scripts/bench-vs-etcd.sh can put both tools' runs in one results file.

    benchmark --precise --endpoints ... put --total 1000 | python3 scripts/bench/etcd_tool.py

The tool reports seconds in its "Summary:" and "Latency distribution:"
sections and counts failures under "Error distribution:" as "[N]\tmessage".
Exits 1 (printing nothing) when the text has no summary.
"""

import json
import re
import sys

SUMMARY = {
    "Total": "elapsed_secs",
    "Slowest": "slowest_ms",
    "Fastest": "fastest_ms",
    "Average": "avg_ms",
    "Stddev": "stddev_ms",
}
PERCENTILES = {"50": "p50_ms", "90": "p90_ms", "99": "p99_ms", "99.9": "p999_ms"}


def parse(text):
    out, errors, samples = {}, 0, []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith(":") and not raw.startswith(" "):
            section = line[:-1]
            continue
        if section == "Summary":
            m = re.match(r"([A-Za-z/]+):\s+([0-9.eE+-]+)", line)
            if not m:
                continue
            name, value = m.group(1), float(m.group(2))
            if name == "Requests/sec":
                out["requests_per_sec"] = value
            elif name in SUMMARY:
                field = SUMMARY[name]
                out[field] = value if field == "elapsed_secs" else value * 1000
        elif section == "Latency distribution":
            m = re.match(r"([0-9.]+)% in ([0-9.eE+-]+) secs", line)
            if m and m.group(1) in PERCENTILES:
                out[PERCENTILES[m.group(1)]] = float(m.group(2)) * 1000
        elif section == "Error distribution":
            m = re.match(r"\[(\d+)\]\s+(.*)", line)
            if m:
                errors += int(m.group(1))
                if len(samples) < 5:
                    samples.append(m.group(2))
    if "requests_per_sec" not in out:
        return None
    out["requests"] = round(out["requests_per_sec"] * out.get("elapsed_secs", 0))
    out["errors"] = errors
    out["error_samples"] = samples
    return out


def main():
    summary = parse(sys.stdin.read())
    if summary is None:
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
