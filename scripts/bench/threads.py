#!/usr/bin/env python3
"""Where a server's CPU and wake-ups go during one workload, without perf:
per-thread counters read from /proc before and after, grouped by thread name.

    threads.py snap PID...            > before.json   # counters of every thread
    threads.py diff BEFORE AFTER N NAME               # markdown table, N requests

Per group of threads with one name (tokio workers, RocksDB's background
threads, rtcd's log syncer, ...), summed over the members: CPU (user +
system), the time runnable threads waited for a core (schedstat's run-queue
delay: the off-CPU time that a busier machine would turn into latency),
voluntary switches (a thread blocked: a wake-up paid on the way back) and
involuntary ones (a thread preempted), each per request. What it cannot show:
lock contention inside a thread and time blocked on I/O are both in
"voluntary switches", not apart.
"""

import json
import os
import sys

# Clock ticks per second for /proc/*/stat's utime and stime.
TICKS = os.sysconf("SC_CLK_TCK")


def thread_counters(pid, tid):
    """One thread's counters, or None when it ended meanwhile."""
    base = f"/proc/{pid}/task/{tid}"
    try:
        with open(f"{base}/stat") as f:
            stat = f.read()
        with open(f"{base}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        try:
            with open(f"{base}/schedstat") as f:
                run_ns, wait_ns, _ = (int(x) for x in f.read().split())
        except OSError:
            run_ns, wait_ns = 0, 0
    except OSError:
        return None
    # The name is in parentheses and may hold spaces: split after it.
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return {
        "name": name,
        "cpu_s": (int(fields[11]) + int(fields[12])) / TICKS,
        "wait_s": wait_ns / 1e9,
        "voluntary": int(status["voluntary_ctxt_switches"]),
        "involuntary": int(status["nonvoluntary_ctxt_switches"]),
    }


def snap(pids):
    out = {}
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            counters = thread_counters(pid, tid)
            if counters:
                out[f"{pid}/{tid}"] = counters
    return out


def group_name(name):
    """Threads of one pool share a name up to a trailing number."""
    return name.rstrip("0123456789-_ ") or name


def diff(before, after, requests):
    groups = {}
    for key, now in after.items():
        then = before.get(key, {"cpu_s": 0, "wait_s": 0, "voluntary": 0, "involuntary": 0})
        g = groups.setdefault(group_name(now["name"]), {"threads": 0, "cpu_s": 0, "wait_s": 0, "vol": 0, "invol": 0})
        g["threads"] += 1
        g["cpu_s"] += now["cpu_s"] - then["cpu_s"]
        g["wait_s"] += now["wait_s"] - then["wait_s"]
        g["vol"] += now["voluntary"] - then["voluntary"]
        g["invol"] += now["involuntary"] - then["involuntary"]
    return groups


def table(groups, requests, title):
    n = max(requests, 1)
    total_cpu = sum(g["cpu_s"] for g in groups.values())
    lines = [
        f"#### {title}",
        "",
        f"{requests} requests; CPU {total_cpu:.2f} s in all, {total_cpu / n * 1e6:.1f} us per request",
        "",
        "| threads | count | CPU s | CPU us/req | run-queue wait us/req | voluntary switches/req | involuntary/req |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["cpu_s"]):
        if g["cpu_s"] < 0.005 and g["vol"] < n / 100:
            continue
        lines.append(
            f"| {name} | {g['threads']} | {g['cpu_s']:.2f} | {g['cpu_s'] / n * 1e6:.1f} | "
            f"{g['wait_s'] / n * 1e6:.1f} | {g['vol'] / n:.2f} | {g['invol'] / n:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "snap":
        json.dump(snap(sys.argv[2:]), sys.stdout)
    elif len(sys.argv) == 6 and sys.argv[1] == "diff":
        with open(sys.argv[2]) as f:
            before = json.load(f)
        with open(sys.argv[3]) as f:
            after = json.load(f)
        requests = int(sys.argv[4])
        print(table(diff(before, after, requests), requests, sys.argv[5]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
